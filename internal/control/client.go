package control

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"
)

// ErrNoServer is wrapped by the errors of Dial and Call when no serve
// process answers at the socket (gone, never started, or stopped while
// the client talked to it).
var ErrNoServer = errors.New("no simrun serve answers")

// Client is one connection to a serve process's control socket. It is
// not safe for concurrent use.
type Client struct {
	path    string
	c       net.Conn
	sc      *bufio.Scanner
	next    uint64
	timeout time.Duration
}

// Dial connects to the control socket at path; each call waits at most
// timeout for its answer.
func Dial(path string, timeout time.Duration) (*Client, error) {
	c, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return nil, noServer(path, err)
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	return &Client{path: path, c: c, sc: sc, timeout: timeout}, nil
}

// noServer explains a failed connection in the terms of the user's
// situation: no file (serve not started, or started with another
// --ctl), or a file nobody listens on (serve killed).
func noServer(path string, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w at %s: no such socket; is simrun serve running, and with --ctl %s?", ErrNoServer, path, path)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w at %s: connection refused; the serve process that made it has gone", ErrNoServer, path)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("control socket %s: permission denied; run ctl as the user that runs serve", path)
	}
	return fmt.Errorf("control socket %s: %w", path, err)
}

// Call sends req (numbering it) and decodes the answer's Result into
// result; an answer with OK false is returned as an error with its text.
func (c *Client) Call(req Request, result any) error {
	c.next++
	req.ID = c.next
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	_ = c.c.SetDeadline(time.Now().Add(c.timeout))
	if _, err := c.c.Write(append(b, '\n')); err != nil {
		return c.lost(err)
	}
	if !c.sc.Scan() {
		err := c.sc.Err()
		if err == nil {
			err = io.EOF
		}
		return c.lost(err)
	}
	var resp Response
	if err := json.Unmarshal(c.sc.Bytes(), &resp); err != nil {
		return fmt.Errorf("control socket %s: unreadable answer: %w", c.path, err)
	}
	if !resp.OK {
		return fmt.Errorf("simrun serve: %s", resp.Error)
	}
	if resp.ID != req.ID {
		return fmt.Errorf("control socket %s: answer %d to request %d", c.path, resp.ID, req.ID)
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Result, result); err != nil {
		return fmt.Errorf("control socket %s: unreadable %s answer: %w", c.path, req.Cmd, err)
	}
	return nil
}

// lost explains an error on an open connection.
func (c *Client) lost(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("control socket %s: no answer within %v", c.path, c.timeout)
	}
	return fmt.Errorf("%w at %s any more: the connection closed (%v); did serve stop?", ErrNoServer, c.path, err)
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

// DefaultDir is the folder serve makes its socket in when --ctl is not
// given: $XDG_RUNTIME_DIR/savanna when that is set (a user's session),
// /run/savanna otherwise (root, systemd's runtime folder).
func DefaultDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "savanna")
	}
	return "/run/savanna"
}

// DefaultPath is the socket of the serve process pid in DefaultDir:
// serve-PID.sock.
func DefaultPath(pid int) string {
	return filepath.Join(DefaultDir(), "serve-"+strconv.Itoa(pid)+".sock")
}

// FindSocket returns the socket ctl talks to when it is given none: the
// only serve-*.sock in DefaultDir. With none, or several, the error says
// so and lists them, so the user can pick one with --socket.
func FindSocket() (string, error) {
	dir := DefaultDir()
	found, _ := filepath.Glob(filepath.Join(dir, "serve-*.sock"))
	sort.Strings(found)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%w: no serve-*.sock in %s; start simrun serve, or give --socket PATH (serve's --ctl)", ErrNoServer, dir)
	}
	return "", fmt.Errorf("several serve processes in %s (%v): choose one with --socket PATH", dir, found)
}
