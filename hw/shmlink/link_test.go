package shmlink_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"unsafe"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/shmlink"
)

// rawPeer maps path as a misbehaving attacher would, to write into the
// attacher-to-creator direction what it likes. The offsets are the
// region's format (layout.go): the header's ring and slot offsets of
// direction 1 at bytes 48 and 64, head at the ring's start.
type rawPeer struct {
	mem        []byte
	ring, area int
}

func mapRaw(path string) *rawPeer {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	st, err := f.Stat()
	Expect(err).NotTo(HaveOccurred())
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(syscall.Munmap, mem)
	le := binary.LittleEndian
	return &rawPeer{mem: mem, ring: int(le.Uint64(mem[48:])), area: int(le.Uint64(mem[64:]))}
}

func (r *rawPeer) head() *atomic.Uint32 { return (*atomic.Uint32)(unsafe.Pointer(&r.mem[r.ring])) }

// desc writes descriptor i (offset, length, flags).
func (r *rawPeer) desc(i int, off, n, flags uint32) {
	d := r.mem[r.ring+256+16*i:]
	le := binary.LittleEndian
	le.PutUint32(d[0:], off)
	le.PutUint32(d[4:], n)
	le.PutUint32(d[8:], flags)
	le.PutUint32(d[12:], 0)
}

var _ = Describe("a link's peer writing garbage", func() {
	It("counts and drops each bad descriptor and an impossible head, and goes on receiving", func() {
		a, _, path := openPair(shmlink.Config{})
		pool := newPool("bad", 64)
		startPort(a, pool)
		r := mapRaw(path)
		good := make([]byte, 64)
		fill(good, 7)
		copy(r.mem[r.area:], good)
		r.desc(0, 1<<30, 64, 0)        // offset far outside the slots
		r.desc(1, 0, 0, 0)             // empty
		r.desc(2, 0, 9000, 0)          // longer than the MTU's frame
		r.desc(3, 0, 64, 1)            // unknown flags
		r.desc(4, 1024*1536-10, 64, 0) // runs off the slots' end
		r.desc(5, 0, 64, 0)            // good
		r.head().Add(6)
		rx := make([]*hw.Mbuf, 32)
		Expect(a.RxBurst(0, rx)).To(Equal(1))
		Expect(rx[0].Data()).To(Equal(good))
		rx[0].Free()
		Expect(xstat(a, "rx_bad_descriptors")).To(BeEquivalentTo(5))
		Expect(a.Stats().IErrors).To(BeEquivalentTo(5))

		r.head().Add(1 << 20) // a million frames "published" on a ring of 1024
		Expect(a.RxBurst(0, rx)).To(BeZero())
		Expect(xstat(a, "rx_bad_ring_index")).To(BeEquivalentTo(1))
		i := int(r.head().Load()) & 1023
		r.desc(i, 0, 64, 0)
		r.head().Add(1)
		Expect(a.RxBurst(0, rx)).To(Equal(1), "in step again")
		rx[0].Free()
		Expect(pool.Stats().InUse).To(BeZero())
	})
})

var _ = Describe("opening a link", func() {
	It("refuses an attacher whose MTU or ring size differs, naming both", func() {
		path := filepath.Join(GinkgoT().TempDir(), "link")
		a, err := shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleCreate, MTU: 9000})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(a.Close)
		_, err = shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleAttach, MTU: 1500})
		Expect(err).To(MatchError(ContainSubstring("the creator's MTU is 9000, this side's 1500")))
		_, err = shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleAttach, Slots: 256})
		Expect(err).To(MatchError(ContainSubstring("the creator's rings have 1024 slots, this side asks for 256")))
		b, err := shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleAttach})
		Expect(err).NotTo(HaveOccurred(), "MTU 0 takes the creator's")
		DeferCleanup(b.Close)
		Expect(b.MTU()).To(Equal(9000))
		Expect(b.Info().MaxFrameLen).To(Equal(9014))
	})

	It("refuses a second creator and a second attacher while the first run", func() {
		a, _, path := openPair(shmlink.Config{})
		_, err := shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleCreate})
		Expect(err).To(MatchError(ContainSubstring("a running creator holds it")))
		_, err = shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleAttach})
		Expect(err).To(MatchError(ContainSubstring("another process is attached")))
		Expect(a.Path()).To(Equal(path))
	})

	It("refuses a file that is not a region, one of another version, and a missing one", func() {
		dir := GinkgoT().TempDir()
		junk := filepath.Join(dir, "junk")
		Expect(os.WriteFile(junk, make([]byte, 8192), 0o600)).To(Succeed())
		_, err := shmlink.Open(shmlink.Config{Path: junk, Role: shmlink.RoleAttach})
		Expect(err).To(MatchError(ContainSubstring("the creator has not finished the header")))
		b := make([]byte, 8192)
		copy(b, "SVSHMLNK")
		binary.LittleEndian.PutUint32(b[8:], 99)
		binary.LittleEndian.PutUint32(b[72:], 1)
		Expect(os.WriteFile(junk, b, 0o600)).To(Succeed())
		_, err = shmlink.Open(shmlink.Config{Path: junk, Role: shmlink.RoleAttach})
		Expect(err).To(MatchError(ContainSubstring("layout version 99, this build speaks 1")))
		copy(b, "NOTALINK")
		Expect(os.WriteFile(junk, b, 0o600)).To(Succeed())
		_, err = shmlink.Open(shmlink.Config{Path: junk, Role: shmlink.RoleAttach})
		Expect(err).To(MatchError(ContainSubstring("not a shmlink region")))
		_, err = shmlink.Open(shmlink.Config{Path: filepath.Join(dir, "none"), Role: shmlink.RoleAttach})
		Expect(err).To(MatchError(ContainSubstring("start the creating side first")))
	})

	It("replaces a region whose creator is gone, and refuses a stale one to an attacher", func() {
		path := filepath.Join(GinkgoT().TempDir(), "link")
		a, err := shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleCreate})
		Expect(err).NotTo(HaveOccurred())
		// Keep a copy of the file as a creator that died would leave it.
		raw := mapRaw(path)
		stale := append([]byte(nil), raw.mem...)
		Expect(a.Close()).To(Succeed())
		Expect(os.WriteFile(path, stale, 0o600)).To(Succeed())
		_, err = shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleAttach})
		Expect(err).To(MatchError(ContainSubstring("stale region: its creator is gone")))
		c, err := shmlink.Open(shmlink.Config{Path: path, Role: shmlink.RoleCreate})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
	})

	It("names the bad key of a configuration", func() {
		for c, want := range map[shmlink.Config]string{
			{Role: shmlink.RoleCreate}:                                       "path: empty",
			{Path: "/x", Role: "both"}:                                       `role: "both"`,
			{Path: "/x", Role: shmlink.RoleCreate, MTU: 20}:                  "mtu: 20",
			{Path: "/x", Role: shmlink.RoleCreate, Slots: 100}:               "slots: 100",
			{Path: "/x", Role: shmlink.RoleCreate, MAC: "01:00:00:00:00:01"}: "not a unicast",
		} {
			_, err := shmlink.Open(c)
			Expect(err).To(MatchError(ContainSubstring(want)))
		}
	})

	It("refuses two queues, checksum offloads and RSS with a reason", func() {
		a, _, _ := openPair(shmlink.Config{})
		Expect(a.Configure(hw.PortConf{RxQueues: 2, TxQueues: 2})).To(MatchError(ContainSubstring("--cores 1")))
		Expect(a.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, TxOffloads: hw.TxOffloadTCPChecksum})).To(MatchError(ContainSubstring("no checksum offloads")))
		Expect(a.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, RSSHashTypes: hw.RSSIPv4})).To(MatchError(shmlink.ErrNoRSS))
		Expect(a.SetRETA(nil)).To(MatchError(shmlink.ErrNoRSS))
	})
})
