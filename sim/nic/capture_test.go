package nic_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/nic"
)

// captured runs an impaired exchange between two ports, capturing both,
// and returns the pcapng bytes.
func captured(seed uint64) ([]byte, *nic.Capture) {
	bo := defaultOpts()
	bo.rxOffloads = hw.RxOffloadIPv4Checksum | hw.RxOffloadUDPChecksum
	cfg := nic.LinkConfig{Latency: 2 * time.Microsecond, Jitter: time.Microsecond, Loss: 0.1, Duplicate: 0.05, Reorder: 0.05}
	p := newPair(seed, defaultOpts(), bo, cfg, func(i int) []byte { return udpFrame(64+i%1400, uint32(i)) }, 500, true)
	var buf bytes.Buffer
	c, err := nic.NewCapture(&buf, 0, p.a, p.b)
	must(err)
	p.eng.Run()
	must(c.Flush())
	return buf.Bytes(), c
}

var _ = Describe("Capture", func() {
	It("writes pcapng that gopacket reads back, with simulated timestamps", func() {
		data, c := captured(1)
		r, err := pcapgo.NewNgReader(bytes.NewReader(data), pcapgo.DefaultNgReaderOptions)
		Expect(err).NotTo(HaveOccurred())
		frames, udp := 0, 0
		var first time.Time
		for {
			pkt, ci, err := r.ReadPacketData()
			if err != nil {
				break
			}
			if frames == 0 {
				first = ci.Timestamp
			}
			frames++
			dec := gopacket.NewPacket(pkt, layers.LayerTypeEthernet, gopacket.Default)
			Expect(dec.ErrorLayer()).To(BeNil())
			if dec.Layer(layers.LayerTypeUDP) != nil {
				udp++
			}
		}
		Expect(frames).To(Equal(int(c.Stats().Frames)))
		Expect(udp).To(Equal(frames))
		Expect(r.NInterfaces()).To(Equal(2))
		intf, err := r.Interface(1)
		Expect(err).NotTo(HaveOccurred())
		Expect(intf.Name).To(Equal("b"))
		Expect(first).To(Equal(nic.CaptureEpoch())) // the first frame leaves at t=0
		// 500 sent by a, and what reached b.
		Expect(c.Stats().Frames).To(BeNumerically(">", 800))
	})

	It("is byte-identical for the same seed and differs for another", func() {
		a, _ := captured(9)
		b, _ := captured(9)
		c, _ := captured(10)
		Expect(a).To(Equal(b))
		Expect(a).NotTo(Equal(c))
	})

	It("opens in tshark without malformed frames", func() {
		tshark, err := exec.LookPath("tshark")
		if err != nil {
			Skip("tshark is not installed")
		}
		data, _ := captured(1)
		path := filepath.Join(GinkgoT().TempDir(), "cap.pcapng")
		if keep := os.Getenv("SAVANNA_NIC_CAPTURE"); keep != "" {
			path = keep // to inspect by hand
		}
		Expect(os.WriteFile(path, data, 0o644)).To(Succeed())
		out, err := exec.Command(tshark, "-r", path, "-o", "udp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(strings.ToLower(string(out))).NotTo(ContainSubstring("malformed"))
		Expect(strings.Count(string(out), "\n")).To(BeNumerically(">", 800))
	})

	It("truncates to the snap length", func() {
		p := newPair(1, defaultOpts(), defaultOpts(), nic.LinkConfig{}, func(i int) []byte { return udpFrame(1000, 0) }, 3, true)
		var buf bytes.Buffer
		c, err := nic.NewCapture(&buf, 128, p.a)
		Expect(err).NotTo(HaveOccurred())
		p.eng.Run()
		Expect(c.Flush()).To(Succeed())
		r, err := pcapgo.NewNgReader(&buf, pcapgo.DefaultNgReaderOptions)
		Expect(err).NotTo(HaveOccurred())
		pkt, ci, err := r.ReadPacketData()
		Expect(err).NotTo(HaveOccurred())
		Expect(pkt).To(HaveLen(128))
		Expect(ci.Length).To(Equal(996))
		_, err = nic.NewCapture(&buf, 0)
		Expect(err).To(MatchError(ContainSubstring("no ports")))
	})
})
