// Package control is the request/response protocol between simrun serve
// and simrun ctl, over a Unix socket of the serving process: the shape of
// Gazelle's gazellectl, which talks to a running lstack process the same
// way.
//
// The protocol is JSON lines: the client writes one Request object on a
// line, the server answers with one Response object on a line, in order,
// on the same connection; a client may send any number of requests (ctl
// show --rate sends one a second). A line is at most MaxLine bytes. A
// request the server cannot parse or does not know gets a Response with
// OK false and an Error saying what was wrong; the connection stays open
// unless the line was too long to read.
package control

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MaxLine bounds one request or response line in bytes. A response
// listing ten thousand sockets fits (about 250 bytes each).
const MaxLine = 16 << 20

// maxRequest bounds a request line: requests are small.
const maxRequest = 4 << 10

// The commands.
const (
	// CmdShow returns Totals: every counter of the runtime, the port's
	// xstats and the app's counters.
	CmdShow = "show"
	// CmdSockets returns Sockets, one per listener and connection.
	CmdSockets = "sockets"
	// CmdLatency returns Latency, the read-latency percentiles.
	CmdLatency = "latency"
	// CmdXStats returns XStats.
	CmdXStats = "xstats"
	// CmdSetLogLevel sets the log level to Request.Level and returns
	// LogLevel.
	CmdSetLogLevel = "set-loglevel"
)

// Commands lists the commands, as errors name them.
var commands = []string{CmdShow, CmdSockets, CmdLatency, CmdXStats, CmdSetLogLevel}

// Request is one request line.
type Request struct {
	// ID is echoed in the response; the client numbers its requests.
	ID uint64 `json:"id"`
	// Cmd is one of the commands.
	Cmd string `json:"cmd"`
	// Level is CmdSetLogLevel's argument: debug, info, warn or error.
	Level string `json:"level,omitempty"`
}

// Response is one response line.
type Response struct {
	ID uint64 `json:"id"`
	OK bool   `json:"ok"`
	// Error says why the request failed when OK is false.
	Error string `json:"error,omitempty"`
	// Result is the command's answer when OK is true.
	Result json.RawMessage `json:"result,omitempty"`
}

// ParseRequest reads one request line (without its newline). It refuses,
// with an error naming what is wrong, a line that is not one JSON object,
// has fields other than Request's, or is longer than 4 KiB.
func ParseRequest(line []byte) (Request, error) {
	var r Request
	if len(line) > maxRequest {
		return r, fmt.Errorf("bad request: %d bytes, at most %d", len(line), maxRequest)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Request{}, fmt.Errorf("bad request: %w", err)
	}
	if dec.More() {
		return Request{}, errors.New("bad request: more than one JSON value on the line")
	}
	if r.Cmd == "" {
		return Request{}, fmt.Errorf("bad request: no cmd (want one of %s)", strings.Join(commands, ", "))
	}
	return r, nil
}

// unknownCommand is the error for a Cmd no handler serves.
func unknownCommand(cmd string) error {
	return fmt.Errorf("unknown command %q (want one of %s)", cmd, strings.Join(commands, ", "))
}
