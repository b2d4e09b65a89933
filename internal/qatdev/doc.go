// Package qatdev runs the QAT model (sim/qat) as a device process that
// several OS processes share, in the shape of qatlib's qatmgr and the
// device behind it, and gives those processes a client that implements
// hw.CompressService over the socket.
//
// The Server owns one qat.Service, run in real time: its Options.Clock is
// the wall clock since the server started, so a request becomes
// dequeuable when its modelled service time has passed in wall time (the
// model computes completions at enqueue from that clock and DequeueBurst
// returns those whose time has come). Processes connect over a Unix
// socket; each is known by the PID the kernel gives for the connection
// (SO_PEERCRED), not by what it says. At hello the server creates a memfd
// for the process and passes it with SCM_RIGHTS: both sides map it, the
// pinned buffers the process allocates are regions of it, and a request
// on the socket carries only offsets and lengths into it. When the
// connection closes, for whatever reason, the server calls the model's
// Exit for the process, which takes back its instances and counts what
// pinned memory it still held as leaked.
//
// The protocol is framed JSON (proto.go): a 4-byte big-endian length and
// a JSON object, one request and one response at a time per connection.
// It carries control requests as well: fault injection, clearing, and
// telemetry (Telemetry).
//
// The Client (Dial) implements hw.CompressService; the instances it hands
// out have a Device that implements hw.CompressDev and
// hw.CompletionWaiter, so zlibshim.NewProcess(client, pid,
// client.Meter(), cfg) runs the simulation's shim unchanged against the
// device process.
package qatdev
