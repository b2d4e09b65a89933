package gonet_test

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/nettest"

	"github.com/savanna-sim/savanna/stack/gonet"
)

// TestNettestConn runs golang.org/x/net/nettest's conformance suite for
// net.Conn on two Savanna stacks in real time joined by ring ports.
// nettest.TestConn needs a *testing.T, which a Ginkgo spec cannot give,
// hence a plain test beside the suite.
func TestNettestConn(t *testing.T) {
	for _, k := range []int{1, 2} {
		t.Run(fmt.Sprintf("lcores=%d", k), func(t *testing.T) {
			w, err := newWire(k, k)
			if err != nil {
				t.Fatal(err)
			}
			defer w.stop()
			var port atomic.Uint32
			port.Store(20000)
			nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) {
				p := uint16(port.Add(1))
				ln, err := gonet.Listen(w.b, p)
				if err != nil {
					return nil, nil, nil, err
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				type acc struct {
					c   net.Conn
					err error
				}
				ch := make(chan acc, 1)
				go func() { c, err := ln.Accept(); ch <- acc{c, err} }()
				c1, err = gonet.Dial(ctx, w.a, fmt.Sprintf("10.9.0.2:%d", p))
				if err != nil {
					ln.Close()
					return nil, nil, nil, err
				}
				a := <-ch
				if a.err != nil {
					c1.Close()
					ln.Close()
					return nil, nil, nil, a.err
				}
				return c1, a.c, func() { c1.Close(); a.c.Close(); ln.Close() }, nil
			})
		})
	}
}
