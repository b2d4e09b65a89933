package zlibshim

import "errors"

// zlib's return codes as Go errors (zlib.h: Z_OK is a nil error). Callers
// test them with errors.Is; the shim wraps them with context.
var (
	// ErrStreamEnd is Z_STREAM_END: Deflate(Finish) has written all its
	// output, or Inflate reached the end of the compressed stream.
	ErrStreamEnd = errors.New("zlibshim: stream end")
	// ErrBuf is Z_BUF_ERROR: no progress was possible (no input, or no
	// room for output). It is not fatal: call again with more of either.
	ErrBuf = errors.New("zlibshim: buffer error (no progress possible)")
	// ErrData is Z_DATA_ERROR: the compressed input is corrupt (bad
	// header, bad block, bad checksum). The stream cannot continue.
	ErrData = errors.New("zlibshim: data error")
	// ErrStream is Z_STREAM_ERROR: bad parameters or the stream was used
	// after its End or after Finish.
	ErrStream = errors.New("zlibshim: stream error")
	// ErrHardware is returned only under the hardware-only policy, when
	// the accelerator cannot serve a request (the failover policy serves
	// it in software instead).
	ErrHardware = errors.New("zlibshim: hardware unavailable")
)
