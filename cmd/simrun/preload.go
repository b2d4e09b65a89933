package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

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

// preloadLibName is the preload library's file (preload/build).
const preloadLibName = "libsavanna_preload.so"

// preloadLibrary finds the preload library exec --stack puts on
// LD_PRELOAD: in dir when given; else preload/out of the checkout around
// the working directory, built by preload/build when missing or older
// than a source in preload/lib; else beside the simrun binary (a
// release ships it there).
func preloadLibrary(dir string, stderr io.Writer) (string, error) {
	if dir != "" {
		lib, err := filepath.Abs(filepath.Join(dir, preloadLibName))
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(lib); err != nil {
			return "", fmt.Errorf("--preload-lib %s: %w (build it with preload/build %s)", dir, err, dir)
		}
		return lib, nil
	}
	root, err := findUp("preload", "--preload-lib")
	if err != nil {
		if exe, e := os.Executable(); e == nil {
			if lib := filepath.Join(filepath.Dir(exe), preloadLibName); fileExists(lib) {
				return lib, nil
			}
		}
		return "", err
	}
	out := filepath.Join(root, "preload", "out")
	lib := filepath.Join(out, preloadLibName)
	built := oldestMod([]string{lib})
	src := newestMod(filepath.Join(root, "preload", "lib"), filepath.Join(root, "preload", "build"))
	if !built.IsZero() && !src.After(built) {
		return lib, nil
	}
	fmt.Fprintf(stderr, "simrun exec: building the preload library (preload/build %s)\n", out)
	b := exec.Command(filepath.Join(root, "preload", "build"), out)
	b.Dir, b.Stdout, b.Stderr = root, stderr, stderr
	if err := b.Run(); err != nil {
		return "", fmt.Errorf("preload/build: %w (or give --preload-lib DIR)", err)
	}
	return lib, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// preloadEnv is base with lib first on LD_PRELOAD (a sanitizer's runtime
// already there must stay first, so lib goes after an entry naming
// libasan) and SAVANNA_STACK set to sock.
func preloadEnv(base []string, lib, sock string) []string {
	var env []string
	pre := lib
	for _, kv := range base {
		switch {
		case strings.HasPrefix(kv, "SAVANNA_STACK="):
			continue
		case strings.HasPrefix(kv, "LD_PRELOAD="):
			old := strings.Fields(strings.ReplaceAll(strings.TrimPrefix(kv, "LD_PRELOAD="), ":", " "))
			var first, rest []string
			for _, o := range old {
				if strings.Contains(o, "libasan") {
					first = append(first, o)
				} else {
					rest = append(rest, o)
				}
			}
			pre = strings.Join(append(append(first, lib), rest...), " ")
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LD_PRELOAD="+pre, "SAVANNA_STACK="+sock)
}

// printStackStats is exec --stack SOCKET --stack-stats: the statistics
// of the running stack process at sock (docs/preload.md), as serve prints
// them at exit, with the sockets still open marked open=true.
func printStackStats(sock string, stats, asJSON, prog bool, stdout, stderr io.Writer) int {
	switch {
	case !stats:
		fmt.Fprintln(stderr, "simrun exec: --json goes with --stack-stats")
		return 2
	case sock == "":
		fmt.Fprintln(stderr, "simrun exec: --stack-stats goes with --stack SOCKET")
		return 2
	case prog:
		fmt.Fprintln(stderr, "simrun exec: --stack-stats runs no program")
		return 2
	}
	st, err := stackproc.RequestStats(sock)
	if err != nil {
		fmt.Fprintf(stderr, "simrun exec: --stack-stats: %v\n", err)
		return 1
	}
	if asJSON {
		b, _ := json.Marshal(map[string]any{"preload": st})
		fmt.Fprintf(stdout, "%s\n", b)
		return 0
	}
	fmt.Fprint(stdout, stackproc.FormatStats(st))
	return 0
}
