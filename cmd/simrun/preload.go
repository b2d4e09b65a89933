package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/savanna-sim/savanna/internal/stackproc"
	"github.com/savanna-sim/savanna/stack/rt"
)

// preloadServer is serve's stack process for preloaded programs
// (--preload SOCKET, docs/preload.md): unmodified programs run with
// libsavanna_preload.so and SAVANNA_STACK=SOCKET get their AF_INET
// stream sockets on serve's stack.
type preloadServer struct {
	srv  *stackproc.Server
	done chan error
}

// startPreload listens on path and serves preloaded processes on r; a
// nil server and nil error when path is "".
func startPreload(path string, r *rt.Runtime) (*preloadServer, error) {
	if path == "" {
		return nil, nil
	}
	srv, err := stackproc.NewServer(stackproc.Config{Runtime: r})
	if err != nil {
		return nil, fmt.Errorf("--preload: %w", err)
	}
	if err := srv.Listen(path); err != nil {
		return nil, fmt.Errorf("--preload: %w", err)
	}
	p := &preloadServer{srv: srv, done: make(chan error, 1)}
	go func() { p.done <- srv.Serve() }()
	return p, nil
}

// close ends every preloaded process's sockets (nil-safe).
func (p *preloadServer) close() {
	if p != nil {
		_ = p.srv.Close()
	}
}

// print closes the server and prints its statistics per process and
// per socket (nil-safe).
func (p *preloadServer) print(w io.Writer, asJSON bool) {
	if p == nil {
		return
	}
	p.close()
	st := p.srv.Stats()
	if asJSON {
		b, _ := json.Marshal(map[string]any{"preload": st})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	fmt.Fprint(w, stackproc.FormatStats(st))
}
