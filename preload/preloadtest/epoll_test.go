package preloadtest

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/stackproc"
)

var _ = Describe("epolltrace: epoll, poll and select over sockets of the stack and a pipe", func() {
	DescribeTable("report the same readiness on Linux's stack and preloaded on Savanna's (level and edge triggered, a listener, partial reads, EPOLLONESHOT, EOF, backpressure)",
		func(asan bool) {
			dir := needBuild()
			bin, preload := program(dir, "epolltrace", asan)
			linuxSrv, linuxCli := pair(nil, nil, bin, "127.0.0.1", 17712)
			Expect(linuxSrv).To(HaveSuffix("server ok\n"), "the server on Linux:\n%s", linuxSrv)
			Expect(linuxCli).To(HaveSuffix("client ok\n"), "the client on Linux:\n%s", linuxCli)

			a, b, pa, pb := twoStacks()
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
