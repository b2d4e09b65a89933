package unixsock_test

import (
	"net"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/unixsock"
)

var _ = Describe("serving on a Unix socket", func() {
	It("replaces a stale socket file, refuses a live one, and names the peer's PID", func() {
		path := filepath.Join(GinkgoT().TempDir(), "s.sock")
		stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		Expect(err).NotTo(HaveOccurred())
		stale.SetUnlinkOnClose(false)
		Expect(stale.Close()).To(Succeed())
		Expect(path).To(BeAnExistingFile(), "a dead server's file stays")

		ln, err := unixsock.Listen(path, "a test server")
		Expect(err).NotTo(HaveOccurred())
		_, err = unixsock.Listen(path, "a test server")
		Expect(err).To(MatchError(ContainSubstring("a test server already serves it")))

		done := make(chan int, 1)
		go func() {
			defer GinkgoRecover()
			c, err := unixsock.Accept(ln, func() bool { return false })
			Expect(err).NotTo(HaveOccurred())
			pid, err := unixsock.PeerPID(c)
			Expect(err).NotTo(HaveOccurred())
			_ = c.Close()
			done <- pid
		}()
		c, err := net.Dial("unix", path)
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		Eventually(done).Should(Receive(Equal(os.Getpid())))
	})

	It("stops accepting without an error once the server closed", func() {
		path := filepath.Join(GinkgoT().TempDir(), "s.sock")
		ln, err := unixsock.Listen(path, "a test server")
		Expect(err).NotTo(HaveOccurred())
		Expect(ln.Close()).To(Succeed())
		c, err := unixsock.Accept(ln, func() bool { return true })
		Expect(err).NotTo(HaveOccurred())
		Expect(c).To(BeNil())
		Expect(path).NotTo(BeAnExistingFile(), "unlinked on close")
		_, err = unixsock.Accept(ln, func() bool { return false })
		Expect(err).To(MatchError(ContainSubstring("accept")))
	})
})
