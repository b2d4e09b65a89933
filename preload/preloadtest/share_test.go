package preloadtest

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/stackproc"
)

var _ = Describe("sharetrace: a parent and its forked children writing one inherited connection at once", func() {
	DescribeTable("returns the same on Linux's stack and preloaded on Savanna's: a child's writes reach the peer while the parent holds its copy, both processes' bulks arrive whole, a child's SHUT_WR shuts the socket for the parent too",
		func(asan bool) {
			dir := needBuild()
			bin, preload := program(dir, "sharetrace", asan)
			linuxSrv, linuxCli := pairArgs(nil, nil, bin, []string{"server", "17791"}, []string{"client", "127.0.0.1", "17791"})
			Expect(linuxSrv).To(HaveSuffix("server done\n"))
			Expect(linuxCli).To(ContainSubstring("C bytes 100000 P bytes 100000\n"))

			a, b, pa, pb := twoStacks()
			svSrv, svCli := pairArgs([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pa},
				[]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}, bin,
				[]string{"server", "17791"}, []string{"client", "10.9.0.1", "17791"})
			Expect(svSrv).To(Equal(linuxSrv), "the server's trace")
			Expect(svCli).To(Equal(linuxCli), "the client's trace")
			allExited(a, b)
			st := a.Stats()
			GinkgoWriter.Print(stackproc.FormatStats(st))
			Expect(st.Server.ForkChildren).To(BeEquivalentTo(3))
			Expect(st.Server.InheritedConns).To(BeEquivalentTo(3))
			// The parent held the connection to the end; its last close
			// may still hand it over to the third child when the stack
			// has not yet seen that child's exit (its Unix connection's
			// end comes asynchronously), which then closes it.
			Expect(st.Server.Handovers).To(BeNumerically("<=", 1))
			var childTx uint64
			for _, p := range st.Processes {
				for _, k := range p.Sockets {
					if k.Kind == "inherited" {
						childTx += k.TxBytes
					}
				}
			}
			Expect(childTx).To(BeEquivalentTo(11+100000), "the children's writes went out from their own rings")
		},
		Entry("built plainly", false),
		Entry("under AddressSanitizer", true),
	)
})
