package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/savanna-sim/savanna/internal/qatdev"
)

// syncBuf is a buffer the serving goroutine writes and the spec reads.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// qatCmd runs simrun qat with args and returns its exit code and output.
func qatCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := cmdQAT(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

var _ = Describe("simrun qat", func() {
	It("serves the device process until a stop signal, answers stats, fault and clear, and prints its statistics at exit", func() {
		dir, err := os.MkdirTemp("", "simrun-qat")
		Expect(err).NotTo(HaveOccurred())
		defer os.RemoveAll(dir)
		sock := filepath.Join(dir, "qat.sock")
		stop := make(chan os.Signal, 1)
		var out, errOut syncBuf
		done := make(chan int, 1)
		go func() {
			done <- cmdQATWith([]string{"serve", "--socket", sock, "--model", "dh895xcc", "--instances", "6",
				"--driver", "oot31092", "--usdm-limit", "8388608", "--json"}, &out, &errOut,
				func() (<-chan os.Signal, func()) { return stop, func() {} })
		}()
		Eventually(func() error { _, err := qatdev.QueryStats(sock); return err }).Should(Succeed())
		Expect(errOut.String()).To(ContainSubstring("qat0 (dh895xcc, oot31092, 6 instances) serving on " + sock))

		code, stdout, stderr := qatCmd("stats", "--socket", sock, "--json")
		Expect(code).To(Equal(0), stderr)
		var t qatdev.Telemetry
		Expect(json.Unmarshal([]byte(stdout), &t)).To(Succeed())
		Expect(t.Model.InstancesFree).To(Equal(6))
		Expect(t.Instances).To(HaveLen(6))
		Expect(t.Model.Nodes[0].MaxHugePages).To(Equal(4))

		code, stdout, stderr = qatCmd("fault", "--socket", sock, "engine_error", "--rate", "0.25")
		Expect(code).To(Equal(0), stderr)
		Expect(stdout).To(Equal("fault: engine_error\n"))
		code, _, stderr = qatCmd("fault", "--socket", sock, "instance_exhaustion", "--instances", "2")
		Expect(code).To(Equal(0), stderr)
		code, stdout, _ = qatCmd("stats", "--socket", sock)
		Expect(code).To(Equal(0))
		Expect(stdout).To(ContainSubstring("instances: 0 in use, 4 free"))
		Expect(stdout).To(ContainSubstring("faults: 2 injected, 0 cleared"))

		code, stdout, stderr = qatCmd("clear", "--socket", sock)
		Expect(code).To(Equal(0), stderr)
		Expect(stdout).To(Equal("clear: every fault\n"))
		code, stdout, _ = qatCmd("stats", "--socket", sock)
		Expect(code).To(Equal(0))
		Expect(stdout).To(ContainSubstring("instances: 0 in use, 6 free"))

		code, _, stderr = qatCmd("fault", "--socket", sock, "meteor")
		Expect(code).To(Equal(2))
		Expect(stderr).To(ContainSubstring(`"meteor" is not one of`))

		stop <- syscall.SIGTERM
		Eventually(done).Should(Receive(Equal(0)))
		var final qatdev.Telemetry
		Expect(json.Unmarshal([]byte(out.String()), &final)).To(Succeed())
		Expect(final.Server.FaultsInjected).To(BeEquivalentTo(2))
		Expect(final.Server.FaultsCleared).To(BeEquivalentTo(1))
		Expect(final.Server.Connections).To(BeNumerically(">=", 7))
		_, err = os.Stat(sock)
		Expect(os.IsNotExist(err)).To(BeTrue(), "the socket is removed at exit")
	})

	It("refuses bad options by name", func() {
		code, _, stderr := qatCmd("serve", "--model", "c62x")
		Expect(code).To(Equal(2))
		Expect(stderr).To(ContainSubstring("--socket: a path is required"))
		code, _, stderr = qatCmd("serve", "--socket", "/nonexistent/x.sock", "--model", "zx81")
		Expect(code).To(Equal(2))
		Expect(stderr).To(ContainSubstring("--model"))
		code, _, stderr = qatCmd("serve", "--socket", "/nonexistent/x.sock", "--completion", "sometimes")
		Expect(code).To(Equal(2))
		Expect(stderr).To(ContainSubstring("completion"))
		code, _, stderr = qatCmd("stats")
		Expect(code).To(Equal(2))
		Expect(stderr).To(ContainSubstring("--socket PATH is required"))
		code, _, stderr = qatCmd("stats", "--socket", "/nonexistent/x.sock")
		Expect(code).To(Equal(1))
		Expect(stderr).To(ContainSubstring("dial /nonexistent/x.sock"))
		code, _, stderr = qatCmd("fault", "--socket", "/nonexistent/x.sock")
		Expect(code).To(Equal(2))
		Expect(stderr).To(ContainSubstring("KIND is required"))
		code, _, _ = qatCmd("reboot")
		Expect(code).To(Equal(2))
	})
})

var _ = Describe("simrun serve --qat", func() {
	It("takes the socket and starts the default device there, which a worker can attach to", func() {
		var errOut bytes.Buffer
		c, _, ok := parseServeFlags([]string{"--tap", "x", "--ip", "10.78.0.2/24", "--app", "kv", "--port", "6379",
			"--qat", filepath.Join(GinkgoT().TempDir(), "q.sock")}, &errOut)
		Expect(ok).To(BeTrue(), errOut.String())
		d, code := startQATDevice(qatServeFlags{socket: c.qat, model: "c62x"}, "simrun serve: --qat", &errOut)
		Expect(d).NotTo(BeNil(), "exit %d: %s", code, errOut.String())
		defer d.close()
		Expect(errOut.String()).To(ContainSubstring("serving on " + c.qat))

		cl, err := qatdev.Dial(c.qat)
		Expect(err).NotTo(HaveOccurred())
		inst, err := cl.Attach(cl.PID(), -1)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.srv.Telemetry().Model.InstancesInUse).To(Equal(1))
		Expect(cl.Detach(cl.PID(), inst)).To(Succeed())
		Expect(cl.Close()).To(Succeed())
	})

	It("names the flag when the socket cannot be made", func() {
		var errOut bytes.Buffer
		d, code := startQATDevice(qatServeFlags{socket: "/nonexistent-dir/q.sock", model: "c62x"}, "simrun serve: --qat", &errOut)
		Expect(d).To(BeNil())
		Expect(code).To(Equal(1))
		Expect(errOut.String()).To(HavePrefix("simrun serve: --qat: "))
	})
})
