// Package stackproc is Savanna's stack in a process of its own, serving
// unmodified Linux programs that run with libsavanna_preload.so
// (preload/): each process connects to a Unix socket, says hello, and
// gets a memfd holding its control rings and one pair of byte rings per
// socket, with an eventfd doorbell each way (SCM_RIGHTS, as
// internal/qatdev hands its memfd over). The stack side serves each
// socket on a live stack (stack/rt) through stack/gonet's connections and
// listeners, which run on stack/sockring's rings. This is the VPP VCL /
// Gazelle ltran shape: no Go runtime in the application process, since a
// Go runtime does not survive fork (docs/preload.md).
//
// The layout is preload/lib/svshm.h's; layout.go mirrors its constants.
package stackproc
