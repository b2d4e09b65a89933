package preloadtest

import (
	"fmt"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/internal/stackproc"
)

// dualStacks is twoStacks with both families: A is 10.9.0.1 and
// fd09::1, B 10.9.0.2 and fd09::2, each past Duplicate Address Detection.
func dualStacks() (a, b *stackproc.Server, pa, pb string) {
	rp, err := livetest.NewRingPairWith(livetest.RingPairConfig{A4: "10.9.0.1/24", A6: "fd09::1/64",
		B4: "10.9.0.2/24", B6: "fd09::2/64", FastDAD: true})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(rp.Stop)
	Eventually(func() bool { return livetest.Assigned6(rp.A) && livetest.Assigned6(rp.B) }).
		WithTimeout(10 * time.Second).Should(BeTrue())
	a, err = stackproc.NewServer(stackproc.Config{Runtime: rp.A})
	Expect(err).NotTo(HaveOccurred())
	b, err = stackproc.NewServer(stackproc.Config{Runtime: rp.B})
	Expect(err).NotTo(HaveOccurred())
	return a, b, stackServer(a), stackServer(b)
}

var _ = Describe("sixtrace: AF_INET6 sockets", func() {
	DescribeTable("return the same on Linux's stack and preloaded on Savanna's: IPv6 echo, a dual-stack listener (IPv4 peers IPv4-mapped), IPV6_V6ONLY refusing IPv4",
		func(asan bool) {
			dir := needBuild()
			bin, preload := program(dir, "sixtrace", asan)
			linuxSrv, linuxCli := pairArgs(nil, nil, bin, []string{"server", "17751"}, []string{"client", "127.0.0.1", "::1", "17751"})
			Expect(linuxSrv).To(HaveSuffix("server done\n"))
			Expect(linuxCli).To(HaveSuffix("client done\n"))
			Expect(linuxSrv + linuxCli).NotTo(ContainSubstring("FAIL"))

			a, b, pa, pb := dualStacks()
			svSrv, svCli := pairArgs([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pa},
				[]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}, bin,
				[]string{"server", "17751"}, []string{"client", "10.9.0.1", "fd09::1", "17751"})
			Expect(svSrv).To(Equal(linuxSrv), "the server's trace")
			Expect(svCli).To(Equal(linuxCli), "the client's trace")
			allExited(a, b)
			st := a.Stats()
			GinkgoWriter.Print(stackproc.FormatStats(st), stackproc.FormatStats(b.Stats()))
			p := st.Processes[0]
			Expect(p.Accepted).To(BeEquivalentTo(4))
			Expect(p.Refused).To(HaveKeyWithValue("bind", uint64(2)), "a sockaddr_in on an AF_INET6 socket, twice")
			var remotes []string
			for _, k := range p.Sockets {
				if k.Kind == "accepted" {
					remotes = append(remotes, k.Remote)
				}
			}
			Expect(remotes).To(ConsistOf(HavePrefix("[fd09::2]:"), HavePrefix("10.9.0.2:"), HavePrefix("10.9.0.2:"), HavePrefix("[fd09::2]:")))
			Expect(b.Stats().Processes[0].Refused).NotTo(HaveKey("socket"), "AF_INET6 sockets made on a stack with IPv6")
		},
		Entry("built plainly", false),
		Entry("under AddressSanitizer", true),
	)

	It("fails AF_INET6 with EAFNOSUPPORT on a stack without IPv6, counted", func() {
		dir := needBuild()
		bin, preload := program(dir, "sixtrace", false)
		a, _, pa, _ := twoStacks()
		out, _, err := run(GinkgoT().Context(), []string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pa}, bin, "server", "17761")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("socket AF_INET6 = -1 EAFNOSUPPORT"))
		allExited(a)
		Expect(a.Stats().Processes[0].Refused).To(HaveKeyWithValue("socket", uint64(2)), "the dual-stack and the V6ONLY listener")
	})
})

var _ = Describe("real redis-server preloaded on a dual-stack Savanna", Label("live"), func() {
	It("serves with its default bind \"* -::*\" on both families: redis-benchmark -n 20000 -c 50 -t set,get over IPv6 and over IPv4, every request answered", func() {
		for _, p := range []string{"redis-server", "redis-benchmark", "redis-cli"} {
			if _, err := exec.LookPath(p); err != nil {
				Skip(p + " not installed (.ci/run installs redis-server and redis-tools)")
			}
		}
		dir := needBuild()
		_, preload := program(dir, "echotrace", false)
		work := GinkgoT().TempDir()
		a, b, pa, pb := dualStacks()
		// No --bind: redis's default, IPv4 and (optionally) IPv6.
		stop := startServer([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pa}, "redis-server",
			"--port", "17743", "--save", "", "--appendonly", "no", "--protected-mode", "no", "--daemonize", "no",
			"--dir", work, "--logfile", "")
		env := []string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}
		diag := func() string { return stackproc.FormatStats(a.Stats()) }
		six := redisBench(env, "fd09::1", 17743, benchRequests, diag)
		four := redisBench(env, "10.9.0.1", 17743, benchRequests, diag)
		fmt.Fprintf(GinkgoWriter, "IPv6: %+v\nIPv4: %+v\n", six, four)
		for _, r := range append(six, four...) {
			Expect(r.RPS).To(BeNumerically(">", 0), "%s answered", r.Test)
		}
		log := stop()
		Expect(log).NotTo(ContainSubstring("Could not create server TCP listening socket ::"), "redis bound IPv6")
		allExited(a)
		st := a.Stats()
		GinkgoWriter.Print(stackproc.FormatStats(st)[:600])
		var listens []string
		v6peers, v4peers := 0, 0
		for _, p := range st.Processes {
			Expect(p.Refused).NotTo(HaveKey("socket"), "AF_INET6 made")
			for _, k := range p.Sockets {
				switch {
				case k.Kind == "listen":
					listens = append(listens, k.Local)
				case strings.HasPrefix(k.Remote, "[fd09::2]:"):
					v6peers++
				case strings.HasPrefix(k.Remote, "10.9.0.2:"):
					v4peers++
				}
			}
		}
		Expect(listens).To(ConsistOf("0.0.0.0:17743", "[::]:17743"), "redis's two listeners (its IPv6 one IPV6_V6ONLY)")
		Expect(v6peers).To(BeNumerically(">=", 100), "redis-benchmark's 50 clients per test over IPv6")
		Expect(v4peers).To(BeNumerically(">=", 100))
		Expect(b.Stats().Server.BadHellos).To(BeZero())
	})
})
