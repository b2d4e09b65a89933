package preloadtest

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/stackproc"
)

var _ = Describe("apitrace: dup, sendmsg/recvmsg, sendfile, FIONREAD, accept4 flags, recvmmsg/sendmmsg, splice", func() {
	DescribeTable("return the same on Linux's stack and preloaded on Savanna's; refusals and the IPv6 socket are counted",
		func(asan bool) {
			dir := needBuild()
			bin, preload := program(dir, "apitrace", asan)
			linuxSrv, linuxCli := pairArgs(nil, nil, bin, []string{"server", "17731"}, []string{"client", "127.0.0.1", "17731"})
			Expect(linuxSrv).To(HaveSuffix("server done\n"))
			Expect(linuxCli).To(ContainSubstring("file bytes 5000, as sent 1\n"))

			a, b, pa, pb := twoStacks()
			svSrv, svCli := pairArgs([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pa},
				[]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}, bin,
				[]string{"server", "17731"}, []string{"client", "10.9.0.1", "17731"})
			Expect(svSrv).To(Equal(linuxSrv), "the server's trace")
			Expect(svCli).To(Equal(linuxCli), "the client's trace")
			allExited(a, b)
			st := a.Stats()
			GinkgoWriter.Print(stackproc.FormatStats(st))
			p := st.Processes[0]
			Expect(p.Calls).To(HaveKeyWithValue("dup", uint64(3)), "dup, F_DUPFD_CLOEXEC, dup2")
			Expect(p.Calls).To(HaveKey("sendfile"))
			Expect(p.Calls).To(HaveKey("recvmsg"))
			Expect(p.Refused).To(HaveKeyWithValue("sendmsg", uint64(1)), "the control message")
			Expect(p.Refused).To(HaveKeyWithValue("sendfile", uint64(1)), "a socket as sendfile's input")
			Expect(p.Refused).To(HaveKeyWithValue("socket", uint64(1)), "socket(AF_INET6): EAFNOSUPPORT, the live stack has no IPv6")
			Expect(p.Refused).To(HaveKeyWithValue("accept", uint64(1)), "accept4's unknown flag")
			Expect(p.Calls).To(HaveKeyWithValue("recvmmsg", uint64(3)))
			Expect(p.Calls).To(HaveKeyWithValue("sendmmsg", uint64(2)))
			Expect(p.Calls).To(HaveKeyWithValue("splice", uint64(10)))
			Expect(p.Refused).To(HaveKeyWithValue("splice", uint64(5)), "socket to socket, the socket's offset, the two pipe offsets, a regular file")
			Expect(p.Sockets).To(HaveLen(2), "the listener and the connection: its three descriptors closed it once")
		},
		Entry("built plainly", false),
		Entry("under AddressSanitizer", true),
	)
})
