package checkmodel

import (
	"context"
	"fmt"
	"os"
)

// The server namespace's devices for simrun serve: its TAP and the
// bridge that joins the TAP's kernel side to the veth, so Savanna's stack
// owns ServerIP on the same wire redis-server used.
const (
	savannaTAP    = "svtap0"
	savannaBridge = "svbr0"
)

// savannaArgv is simrun serve with the key-value app on one lcore, as the
// simulated twin's single server core; no control socket (nothing asks).
func savannaArgv(simrun string) []string {
	return []string{simrun, "serve", "--tap", savannaTAP, "--ip", ServerIP + prefixLen, "--app", "kv",
		"--port", "6379", "--cores", "1", "--ctl", "none"}
}

// savannaSetup readies the server namespace for simrun serve: the veth
// end gives up ServerIP (the stack answers for it) and joins a bridge
// the TAP will join once serve has made it.
func savannaSetup(ctx context.Context, p *Pair) error {
	steps := [][]string{
		{"-n", p.Server, "addr", "flush", "dev", p.ServerVeth},
		{"-n", p.Server, "link", "add", savannaBridge, "type", "bridge"},
		{"-n", p.Server, "link", "set", p.ServerVeth, "master", savannaBridge},
		{"-n", p.Server, "link", "set", savannaBridge, "up"},
	}
	for _, s := range steps {
		if err := ipCmd(ctx, s...); err != nil {
			return err
		}
	}
	return nil
}

// savannaJoin puts serve's TAP on the bridge (serve brings it up).
func savannaJoin(ctx context.Context, p *Pair) error {
	if err := ipCmd(ctx, "-n", p.Server, "link", "set", savannaTAP, "master", savannaBridge); err != nil {
		return err
	}
	return ipCmd(ctx, "-n", p.Server, "link", "set", savannaTAP, "up")
}

// savannaPossible says why simrun serve cannot run over a TAP here.
func savannaPossible() error {
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("no TAP device (%w): simrun serve needs /dev/net/tun", err)
	}
	return nil
}
