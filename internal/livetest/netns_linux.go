//go:build linux

package livetest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// InNetns runs fn on an OS thread moved into the network namespace ns
// (made by ip netns add): sockets fn creates belong to ns and stay there
// when other goroutines use them. The thread is thrown away afterwards
// (never unlocked), so no other goroutine ever runs in ns by accident.
func InNetns(ns string, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open(filepath.Join("/var/run/netns", ns))
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		done <- fn()
	}()
	return <-done
}
