package checkmodel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// The live run's addresses: the server's namespace holds .1, the
// client's .2, as the simulated twin's two hosts.
const (
	ServerIP  = "10.99.0.1"
	ClientIP  = "10.99.0.2"
	prefixLen = "/24"
)

// Pair is two network namespaces joined by a veth pair, made by this
// process and removed by Close.
type Pair struct {
	// Server and Client are the namespaces' names (ip netns).
	Server, Client string
	// ServerVeth and ClientVeth are the veth's ends in them.
	ServerVeth, ClientVeth string
	// made are the namespaces created so far, for Close.
	made []string
}

// CheckHost refuses, with what to do, when the live run cannot work
// here: it needs root (namespaces and veth pairs) and iproute2's ip with
// netns support.
func CheckHost() error {
	if os.Geteuid() != 0 {
		return errors.New("the live runs create network namespaces and a veth pair (ip netns add, ip link add type veth): run check-model as root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("ip not found: install iproute2 (Debian package iproute2)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "ip", "netns", "list").CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns is unavailable here (%v: %s); the live runs need network namespaces", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// NewPair creates namespaces tag+"s" and tag+"c" joined by a veth pair
// with ServerIP and ClientIP on its ends, loopback up in both. On an
// error it removes what it made.
func NewPair(ctx context.Context, tag string) (*Pair, error) {
	p := &Pair{Server: tag + "s", Client: tag + "c", ServerVeth: tag + "a", ClientVeth: tag + "b"}
	va, vb := p.ServerVeth, p.ClientVeth
	steps := [][]string{
		{"netns", "add", p.Server},
		{"netns", "add", p.Client},
		{"link", "add", va, "type", "veth", "peer", "name", vb},
		{"link", "set", va, "netns", p.Server},
		{"link", "set", vb, "netns", p.Client},
		{"-n", p.Server, "addr", "add", ServerIP + prefixLen, "dev", va},
		{"-n", p.Client, "addr", "add", ClientIP + prefixLen, "dev", vb},
		{"-n", p.Server, "link", "set", "lo", "up"},
		{"-n", p.Client, "link", "set", "lo", "up"},
		{"-n", p.Server, "link", "set", va, "up"},
		{"-n", p.Client, "link", "set", vb, "up"},
	}
	for i, s := range steps {
		if err := ipCmd(ctx, s...); err != nil {
			if i == 2 {
				// The veth is still in this namespace until moved.
				_ = ipCmd(context.Background(), "link", "del", va)
			}
			p.Close()
			return nil, err
		}
		if i < 2 {
			p.made = append(p.made, s[2])
		}
	}
	return p, nil
}

// Close removes the namespaces (and with them the veth pair, once no
// process of ours is left in them). It runs without the caller's context:
// cleaning up after a signal must still happen.
func (p *Pair) Close() error {
	var errs []error
	for i := len(p.made) - 1; i >= 0; i-- {
		if err := ipCmd(context.Background(), "netns", "del", p.made[i]); err != nil {
			errs = append(errs, err)
		}
	}
	p.made = nil
	return errors.Join(errs...)
}

// Exec returns a command that runs argv in namespace ns.
func Exec(ctx context.Context, ns string, argv ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns}, argv...)...)
}

// ipCmd runs ip with args, bounded in time.
func ipCmd(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
