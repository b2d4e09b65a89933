package preloadtest

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/stackproc"
)

var _ = Describe("inherittrace: a connection the parent accepted, served by the child it forked", func() {
	DescribeTable("returns the same on Linux's stack and preloaded on Savanna's: the parent's close does not end it, the child echoes every byte (those the parent left unread first)",
		func(asan bool) {
			const n = "8"
			dir := needBuild()
			bin, preload := program(dir, "inherittrace", asan)
			linuxSrv, linuxCli := pairArgs(nil, nil, bin, []string{"server", "17781", n}, []string{"client", "127.0.0.1", "17781", n})
			Expect(linuxSrv).To(HaveSuffix("server done\n"))
			Expect(linuxCli).To(HaveSuffix("client done\n"))
			Expect(linuxSrv + linuxCli).NotTo(ContainSubstring("FAIL"))

			a, b, pa, pb := twoStacks()
			svSrv, svCli := pairArgs([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pa},
				[]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}, bin,
				[]string{"server", "17781", n}, []string{"client", "10.9.0.1", "17781", n})
			Expect(svSrv).To(Equal(linuxSrv), "the server's trace")
			Expect(svCli).To(Equal(linuxCli), "the client's trace")
			allExited(a, b)
			st := a.Stats()
			GinkgoWriter.Print(stackproc.FormatStats(st))
			Expect(st.Server.Forks).To(BeEquivalentTo(8))
			Expect(st.Server.ForkChildren).To(BeEquivalentTo(8))
			Expect(st.Server.InheritedConns).To(BeEquivalentTo(8), "each child took over its connection")
			var childRx, parentRx uint64
			children := 0
			for _, p := range st.Processes {
				for _, k := range p.Sockets {
					switch k.Kind {
					case "inherited":
						children++
						childRx += k.RxBytes
						Expect(k.End).To(Equal("eof"))
					case "accepted":
						parentRx += k.RxBytes
					}
				}
			}
			Expect(children).To(Equal(8))
			// Every byte the parent's side received and did not read
			// (all but the greetings) moved to the child's ring; the
			// rest came to the child's side from TCP.
			Expect(parentRx).To(Equal(st.Server.HandoverBytes+8*5), "the parent's unread bytes moved")
			Expect(childRx+st.Server.HandoverBytes).To(BeEquivalentTo(8*100000), "the payload, once")
			Expect(st.Server.Handovers).To(BeEquivalentTo(8))
		},
		Entry("built plainly", false),
		Entry("under AddressSanitizer", true),
	)
})
