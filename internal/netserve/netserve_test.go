package netserve_test

import (
	"net"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/netserve"
)

var _ = Describe("Listeners", func() {
	It("hands each accepted connection over, and Serve returns nil once Close closed the listener", func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		var l netserve.Listeners
		got := make(chan net.Conn, 2)
		done := make(chan error, 1)
		go func() { done <- l.Serve(ln, func(c net.Conn) { got <- c }) }()
		for range 2 {
			c, err := net.Dial("tcp", ln.Addr().String())
			Expect(err).NotTo(HaveOccurred())
			defer c.Close()
			Eventually(got).Should(Receive())
		}
		l.Close()
		Eventually(done).Should(Receive(BeNil()))
	})
})
