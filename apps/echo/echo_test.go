package echo_test

import (
	"bytes"
	"io"
	"net"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/echo"
)

var _ = Describe("echo server", func() {
	It("sends back every byte and closes after the client half-closes", func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		s := &echo.Server{}
		go func() { _ = s.Serve(ln) }()
		defer s.Close()
		c, err := net.Dial("tcp", ln.Addr().String())
		Expect(err).NotTo(HaveOccurred())
		msg := bytes.Repeat([]byte("0123456789"), 100_000)
		go func() {
			_, _ = c.Write(msg)
			_ = c.(*net.TCPConn).CloseWrite()
		}()
		got, err := io.ReadAll(c)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(msg))
		Eventually(func() uint64 { return s.Stats().Bytes }).Should(BeEquivalentTo(len(msg)))
	})
})
