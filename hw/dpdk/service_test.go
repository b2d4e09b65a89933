//go:build dpdk

package dpdk_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os/exec"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/dpdk"
	"github.com/savanna-sim/savanna/zlibshim"
)

var _ = Describe("the zlib shim on DPDK compress devices", Label("dpdk"), Ordered, func() {
	for _, name := range []string{"compress_isal", "compress_zlib"} {
		Context(name, Ordered, func() {
			var svc *dpdk.Service

			BeforeAll(func() {
				dev, err := eal.OpenCompressDev(name, dpdk.CompressConfig{QueuePairs: 2, Depth: 16, Mbufs: 128, Socket: dpdk.AnySocket})
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(dev.Close)
				svc = dpdk.NewService(dev)
			})

			for _, format := range []zlibshim.Format{zlibshim.FormatGzip, zlibshim.FormatGzipExt, zlibshim.FormatZlib, zlibshim.FormatRaw} {
				for _, size := range []int{0, 1, 1000, 65535, 65536, 65537, 300_000} {
					It("round-trips "+format.String()+" through the device, read back by Go and by gzip -d", func() {
						src := corpus(size, uint64(size)+7)
						p, err := zlibshim.NewProcess(svc, 1, nil, zlibshim.Config{SoftwareThreshold: 1})
						Expect(err).NotTo(HaveOccurred())
						defer p.Exit()
						var out bytes.Buffer
						w, err := p.NewWriterLevel(&out, format, 6)
						Expect(err).NotTo(HaveOccurred())
						_, err = w.Write(src)
						Expect(err).NotTo(HaveOccurred())
						Expect(w.Close()).To(Succeed())
						st := p.Stats()
						if format == zlibshim.FormatGzipExt && size > 0 {
							// One gzip member per request, each ended with
							// FlushFinal: all of it runs on the device.
							Expect(st.HWRequests).To(BeNumerically(">", 0))
							Expect(st.SWRequests).To(BeZero())
						}
						// These PMDs end every stateless output with a final
						// block (FinalOnlyStateless): requests that must join
						// the next go to software, counted, never joined wrongly.
						Expect(st.HWRequests + st.SWRequests).To(BeNumerically(">=", min(size, 1)))

						r, err := p.NewReader(bytes.NewReader(out.Bytes()), format)
						Expect(err).NotTo(HaveOccurred())
						got, err := io.ReadAll(r)
						Expect(err).NotTo(HaveOccurred())
						Expect(bytes.Equal(got, src)).To(BeTrue())
						if format == zlibshim.FormatGzip || format == zlibshim.FormatGzipExt {
							zr, err := gzip.NewReader(bytes.NewReader(out.Bytes()))
							Expect(err).NotTo(HaveOccurred())
							got, err = io.ReadAll(zr)
							Expect(err).NotTo(HaveOccurred())
							Expect(bytes.Equal(got, src)).To(BeTrue())
							if _, err := exec.LookPath("gzip"); err == nil {
								cmd := exec.Command("gzip", "-dc")
								cmd.Stdin = bytes.NewReader(out.Bytes())
								got, err = cmd.Output()
								Expect(err).NotTo(HaveOccurred())
								Expect(bytes.Equal(got, src)).To(BeTrue())
							}
						}
					})
				}
			}

			It("hands out one instance per queue pair and refuses the next", func() {
				a, err := svc.Attach(1, -1)
				Expect(err).NotTo(HaveOccurred())
				_, err = svc.Attach(2, -1)
				Expect(err).NotTo(HaveOccurred())
				_, err = svc.Attach(3, -1)
				Expect(err).To(MatchError(hw.ErrNoInstance))
				Expect(svc.Detach(1, a)).To(Succeed())
				svc.Exit(2)
				Expect(svc.Stats().LeakedInsts).To(BeEquivalentTo(1))
			})
		})
	}
})
