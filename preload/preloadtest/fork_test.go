package preloadtest

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/stackproc"
)

// pairArgs runs a server and a client program at once with their own
// arguments and returns both standard outputs.
func pairArgs(serverEnv, clientEnv []string, bin string, srvArgs, cliArgs []string) (srv, cli string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var sErr error
	var sStderr string
	wg.Add(1)
	go func() {
		defer wg.Done()
		srv, sStderr, sErr = run(ctx, serverEnv, bin, srvArgs...)
	}()
	cli, cStderr, cErr := run(ctx, clientEnv, bin, cliArgs...)
	wg.Wait()
	Expect(sErr).NotTo(HaveOccurred(), "server: %s\n%s", srv, sStderr)
	Expect(cErr).NotTo(HaveOccurred(), "client: %s\n%s", cli, cStderr)
	GinkgoWriter.Printf("server stderr: %s", sStderr)
	return srv, cli
}

// allExited waits until every process a server saw has gone.
func allExited(servers ...*stackproc.Server) {
	Eventually(func() bool {
		for _, s := range servers {
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
	}).WithTimeout(20 * time.Second).Should(BeTrue())
}

const forkConns = 64

var _ = Describe("forktrace: forked workers sharing a listener", func() {
	DescribeTable("serve every connection, each worker some, no descriptor leaked, with the trace of a run on Linux's stack",
		func(mode string, asan bool) {
			dir := needBuild()
			bin, preload := program(dir, "forktrace", asan)
			port := map[string]string{"shared": "17721", "exclusive": "17722", "reuseport": "17723"}[mode]
			n := "64"
			linuxSrv, linuxCli := pairArgs(nil, nil, bin, []string{"server", mode, port, n}, []string{"client", "127.0.0.1", port, n})
			Expect(linuxSrv).To(HaveSuffix("server ok\n"), "on Linux:\n%s", linuxSrv)
			Expect(linuxCli).To(HaveSuffix("client ok\n"), "on Linux:\n%s", linuxCli)

			a, b, pa, pb := twoStacks()
			svSrv, svCli := pairArgs([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pa},
				[]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}, bin,
				[]string{"server", mode, port, n}, []string{"client", "10.9.0.1", port, n})
			Expect(svSrv).To(Equal(linuxSrv), "the server's trace")
			Expect(svCli).To(Equal(linuxCli), "the client's trace")
			allExited(a, b)
			st := a.Stats()
			GinkgoWriter.Printf("%+v\n", st.Server)
			var accepted uint64
			workers := 0
			for _, p := range st.Processes {
				accepted += p.Accepted
				if p.Accepted > 0 {
					workers++
					Expect(p.Opened).To(Equal(p.Accepted+p.Inherited+map[bool]uint64{true: 1, false: 0}[mode == "reuseport"]),
						"a worker's sockets: its listener and the connections it accepted")
				}
				for _, k := range p.Sockets {
					Expect(k.End).To(BeElementOf("", "eof"), "socket %+v ended in an error", k)
				}
			}
			Expect(accepted).To(BeEquivalentTo(forkConns))
			if mode == "exclusive" {
				// Which waiters EPOLLEXCLUSIVE wakes is the scheduler's
				// (forktrace.c says why); more than one must serve.
				Expect(workers).To(BeNumerically(">=", 2))
			} else {
				Expect(workers).To(Equal(4))
			}
			c := st.Server
			switch mode {
			case "shared":
				Expect(c.Forks).To(BeEquivalentTo(4), "the parent registered each fork")
				Expect(c.ForkChildren).To(BeEquivalentTo(4))
				Expect(c.Inherited).To(BeEquivalentTo(4), "each worker took the listener over")
				Expect(c.ExclusiveWakes).To(BeZero())
			case "exclusive":
				Expect(c.Inherited).To(BeEquivalentTo(4))
				Expect(c.ExclusiveWakes).To(BeNumerically(">", 0), "new connections woke one exclusive worker")
				Expect(c.ExclusiveSkipped).To(BeNumerically(">=", c.ExclusiveWakes), "and left at least one other asleep")
			case "reuseport":
				Expect(c.Forks).To(BeZero(), "the parent held no socket when it forked")
				Expect(c.ReuseportSpread).To(BeNumerically(">", 0), "connections spread over the group by the flow hash")
			}
		},
		Entry("shared listener", "shared", false),
		Entry("shared listener, EPOLLEXCLUSIVE", "exclusive", false),
		Entry("SO_REUSEPORT listeners", "reuseport", false),
		Entry("shared listener under AddressSanitizer", "shared", true),
		Entry("SO_REUSEPORT listeners under AddressSanitizer", "reuseport", true),
	)
})
