package stackproc

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"

	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/stack/gonet"
)

var _ = Describe("the stack process on a dual-stack runtime", func() {
	It("binds AF_INET6 sockets by family: [::] takes both (an AF_INET bind on the port is EADDRINUSE), V6ONLY shares the port with AF_INET, and a V6ONLY listener refuses IPv4", func() {
		pair, err := livetest.NewRingPairWith(livetest.RingPairConfig{A4: "10.9.0.1/24", A6: "fd09::1/64",
			B4: "10.9.0.2/24", B6: "fd09::2/64", FastDAD: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(pair.Stop)
		Eventually(func() bool { return livetest.Assigned6(pair.A) && livetest.Assigned6(pair.B) }).
			WithTimeout(10 * time.Second).Should(BeTrue())
		srv, err := NewServer(Config{Runtime: pair.A, Geometry: Geometry{Slots: 8, Ring: 4096, Recs: 16}})
		Expect(err).NotTo(HaveOccurred())
		d := GinkgoT().TempDir()
		path := filepath.Join(d, "stack.sock")
		Expect(srv.Listen(path)).To(Succeed())
		go func() { _ = srv.Serve() }()
		DeferCleanup(srv.Close)
		DeferCleanup(os.RemoveAll, d)

		f, err := dialFake(path)
		Expect(err).NotTo(HaveOccurred())
		defer f.close()
		sock := func(fam int32) int { s, _, _, _ := f.call(opSocket, -1, fam, [4]byte{}, 0); return int(s) }
		_, errno, _, _ := f.call(opSocket, -1, unix.AF_PACKET, [4]byte{}, 0)
		Expect(errno).To(Equal(unix.EAFNOSUPPORT))

		dual, v4 := sock(unix.AF_INET6), sock(unix.AF_INET)
		_, errno, _, _ = f.call(opBind, dual, 0, [4]byte{}, 7400) // [::]
		Expect(errno).To(BeZero())
		_, errno, _, _ = f.call(opBind, v4, 0, [4]byte{}, 7400)
		Expect(errno).To(Equal(unix.EADDRINUSE), "[::] without V6ONLY takes IPv4 too")

		only, v4b := sock(unix.AF_INET6), sock(unix.AF_INET)
		_, errno, _, _ = f.call(opBind, only, 2, [4]byte{}, 7401) // V6ONLY
		Expect(errno).To(BeZero())
		_, errno, _, _ = f.call(opBind, v4b, 0, [4]byte{}, 7401)
		Expect(errno).To(BeZero(), "an AF_INET socket beside a V6ONLY one")
		_, errno, _, _ = f.call(opListen, only, 8, [4]byte{}, 0)
		Expect(errno).To(BeZero())

		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err = gonet.Dial(ctx, pair.B, "10.9.0.1:7401")
		Expect(err).To(MatchError(ContainSubstring("refused")), "V6ONLY takes no IPv4")
		c, err := gonet.Dial(ctx, pair.B, "[fd09::1]:7401")
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		Expect(f.until(10*time.Second, func() bool { return f.slotU32(only, sAccq) == 1 })).To(BeTrue())
		cs, errno, peer, peerPort := f.call(opAccept, only, 0, [4]byte{}, 0)
		Expect(errno).To(BeZero())
		Expect(int(peerPort)).To(Equal(c.LocalAddr().(*net.TCPAddr).Port))
		Expect(peer).To(Equal([4]byte{0xfd, 0x09, 0, 0}), "the response's 16-byte address begins fd09::")
		var ra [16]byte
		for i := 0; i < 16; i += 4 {
			binary.LittleEndian.PutUint32(ra[i:], f.slotU32(int(cs), sRAddr+i))
		}
		Expect(netip.AddrFrom16(ra)).To(Equal(netip.MustParseAddr("fd09::2")), "the slot's peer address")
	})
})
