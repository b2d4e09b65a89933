package preloadtest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/internal/stackproc"
)

var _ = Describe("epolltrace: epoll, poll and select over sockets of the stack and a pipe", func() {
	DescribeTable("report the same readiness on Linux's stack and preloaded on Savanna's (level and edge triggered, a listener, partial reads, EPOLLONESHOT, EOF, backpressure)",
		func(asan bool) {
			dir := needBuild()
			bin, lib := filepath.Join(dir, "epolltrace"), filepath.Join(dir, "libsavanna_preload.so")
			preload := lib
			if asan {
				out, err := exec.Command("gcc", "-print-file-name=libasan.so").Output()
				Expect(err).NotTo(HaveOccurred())
				bin, lib = filepath.Join(dir, "asan", "epolltrace"), filepath.Join(dir, "asan", "libsavanna_preload.so")
				preload = strings.TrimSpace(string(out)) + " " + lib
			}
			linuxSrv, linuxCli := pair(nil, nil, bin, "127.0.0.1", 17712)
			Expect(linuxSrv).To(HaveSuffix("server ok\n"), "the server on Linux:\n%s", linuxSrv)
			Expect(linuxCli).To(HaveSuffix("client ok\n"), "the client on Linux:\n%s", linuxCli)

			rp, err := livetest.NewRingPair(1, 1)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(rp.Stop)
			a, err := stackproc.NewServer(stackproc.Config{Runtime: rp.A})
			Expect(err).NotTo(HaveOccurred())
			b, err := stackproc.NewServer(stackproc.Config{Runtime: rp.B})
			Expect(err).NotTo(HaveOccurred())
			pa, pb := stackServer(a), stackServer(b)
			svSrv, svCli := pair([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pa},
				[]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}, bin, "10.9.0.1", 17712)

			Expect(svSrv).To(Equal(linuxSrv), "the server's trace")
			Expect(svCli).To(Equal(linuxCli), "the client's trace")
			Eventually(func() bool {
				for _, s := range []*stackproc.Server{a, b} {
					ps := s.Stats().Processes
					if len(ps) == 0 {
						return false
					}
					for _, p := range ps {
						if !p.Exited {
							return false
						}
					}
				}
				return true
			}).WithTimeout(10 * time.Second).Should(BeTrue())
			sa := a.Stats()
			GinkgoWriter.Print(stackproc.FormatStats(sa), stackproc.FormatStats(b.Stats()))
			ps := sa.Processes[0]
			Expect(ps.Calls).To(HaveKey("poll"), "epoll_ctl, poll and select on sockets of the stack are counted")
			Expect(ps.Refused).To(HaveKeyWithValue("poll", uint64(3)), "epoll_ctl's EEXIST, EINVAL (EPOLLEXCLUSIVE with MOD) and ENOENT")
		},
		Entry("built plainly", false),
		Entry("under AddressSanitizer", true),
	)
})
