package livetest

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// StartServeInNamespace makes the network namespace ns (skipping the spec
// when it cannot: no root, no iproute2), brings its loopback up, starts
// "bin serve ARGS..." in it and waits up to ready for serve's ready line.
// Cleanup stops serve, requiring exit 0, prints its output and deletes
// the namespace.
func StartServeInNamespace(ns, bin string, ready time.Duration, args ...string) *Serve {
	return StartServeInNamespaceAfter(ns, bin, ready, nil, args...)
}

// StartServeInNamespaceAfter is StartServeInNamespace with before run in
// the new namespace's setup, after its loopback is up and before serve
// starts (to give the kernel an address first, or make the TAP).
func StartServeInNamespaceAfter(ns, bin string, ready time.Duration, before func(ns string), args ...string) *Serve {
	if out, err := Run(10*time.Second, "ip", "netns", "add", ns); err != nil {
		Skip(fmt.Sprintf("ip netns add failed (%v): %s", err, out))
	}
	DeferCleanup(func() { DeleteNetns(ns) })
	out, err := Run(10*time.Second, "ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
	Expect(err).NotTo(HaveOccurred(), out)
	if before != nil {
		before(ns)
	}

	s, err := StartServe(ns, bin, GinkgoWriter, args...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		err := s.Stop()
		GinkgoWriter.Printf("simrun serve output:\n%s", s.Output())
		Expect(err).NotTo(HaveOccurred(), "simrun serve must exit 0 on SIGTERM")
	})
	Eventually(s.Output).WithTimeout(ready).WithPolling(20*time.Millisecond).
		Should(ContainSubstring("savanna: serving"), "waiting for the ready line")
	return s
}
