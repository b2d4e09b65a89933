//go:build !dpdk

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/internal/stackproc"
	"github.com/savanna-sim/savanna/stack/rt"
)

// The mariadbd specs (docs/preload.md, "mariadbd"): Debian's mariadbd,
// unmodified, preloaded on Savanna's stack, under sysbench's
// oltp_read_write, then stopped with SIGTERM.

// sysbenchEvents bounds each sysbench run by count (--events, and
// --time=0: no time limit but the spec's own).
const sysbenchEvents = 1000

// mariadbTools returns the Debian programs the specs run by name, or
// skips the spec naming what is missing.
func mariadbTools() map[string]string {
	if os.Geteuid() != 0 {
		Skip("the mariadbd specs run mariadbd as root (--user=root) in a namespace: need root")
	}
	tools := map[string]string{}
	for _, p := range []string{"mariadbd", "mariadb-install-db", "mariadb", "sysbench", "gcc"} {
		path, err := exec.LookPath(p)
		if err != nil && p == "mariadbd" {
			path, err = "/usr/sbin/mariadbd", nil
			if _, e := os.Stat(path); e != nil {
				err = e
			}
		}
		if err != nil {
			Skip(fmt.Sprintf("the mariadbd spec needs %s (apt-get install -y mariadb-server mariadb-client sysbench gcc)", p))
		}
		tools[p] = path
	}
	return tools
}

// mariadbServer is a private server made by preload/test/mariadb/initdb
// in a temporary folder: never the system's datadir.
type mariadbServer struct {
	dir  string
	done chan int // the server's (or simrun exec's) exit code
	out  *syncBuffer
}

// initMariaDB makes a server's datadir, options and init.sql.
func initMariaDB() *mariadbServer {
	dir := shortTempDir()
	out, err := exec.Command("../../preload/test/mariadb/initdb", dir, "3306").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "preload/test/mariadb/initdb: %s", out)
	m := &mariadbServer{dir: dir, done: make(chan int, 1), out: &syncBuffer{}}
	// A server that outlived a failed spec (simrun exec killed before
	// it) is killed by the PID in its pid-file, when that process is
	// still this server (its command line names the folder).
	DeferCleanup(func() {
		b, err := os.ReadFile(filepath.Join(dir, "mysqld.pid"))
		if err != nil {
			return
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return
		}
		if cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(string(cl), dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return m
}

func (m *mariadbServer) cnf() string  { return "--defaults-file=" + filepath.Join(m.dir, "my.cnf") }
func (m *mariadbServer) sock() string { return filepath.Join(m.dir, "mysqld.sock") }

// log returns the server's error log.
func (m *mariadbServer) log() string {
	b, _ := os.ReadFile(filepath.Join(m.dir, "error.log"))
	return string(b)
}

// waitReady waits until the server says it is ready for connections,
// failing the spec with its log if it exits first.
func (m *mariadbServer) waitReady() {
	Eventually(func(g Gomega) {
		select {
		case code := <-m.done:
			m.done <- code
			Fail(fmt.Sprintf("mariadbd exited %d before it was ready:\n%s\n%s", code, m.out.String(), m.log()))
		default:
		}
		g.Expect(m.log()).To(ContainSubstring("ready for connections"))
	}).WithTimeout(2*time.Minute).WithPolling(100*time.Millisecond).Should(Succeed(), "mariadbd's start:\n%s", m.log())
}

// stop sends the server SIGTERM, by the PID in its pid-file (a process
// this spec started), and returns its exit code and log tail.
func (m *mariadbServer) stop() (int, string) {
	b, err := os.ReadFile(filepath.Join(m.dir, "mysqld.pid"))
	Expect(err).NotTo(HaveOccurred())
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	Expect(err).NotTo(HaveOccurred())
	Expect(syscall.Kill(pid, syscall.SIGTERM)).To(Succeed())
	var code int
	Eventually(m.done).WithTimeout(2*time.Minute).Should(Receive(&code), "mariadbd's shutdown:\n%s", m.log())
	m.done <- code
	lines := strings.Split(strings.TrimRight(m.log(), "\n"), "\n")
	return code, strings.Join(lines[max(0, len(lines)-10):], "\n")
}

// sysbenchArgs is sysbench's oltp_read_write against host:3306 as the
// user initdb makes, then cmd (prepare or run).
func sysbenchArgs(host, cmd string) []string {
	a := []string{"oltp_read_write", "--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=3306",
		"--mysql-user=sb", "--mysql-password=sb", "--mysql-db=sbtest", "--tables=2", "--table-size=2000"}
	if cmd == "run" {
		a = append(a, "--threads=4", fmt.Sprintf("--events=%d", sysbenchEvents), "--time=0")
	}
	return append(a, cmd)
}

// sysbenchFigures are the lines of sysbench's summary a report quotes.
var sysbenchFigures = regexp.MustCompile(`(?m)^\s*(transactions|queries|ignored errors|reconnects|min|avg|max|95th percentile):.*$`)

// sysbenchRun checks a run's summary: every event a transaction, no
// reconnect (sysbench exits non-zero on any error but the deadlocks it
// retries, counted as ignored errors); it returns the summary's lines.
func sysbenchRun(out string) string {
	Expect(out).To(MatchRegexp(`transactions:\s+%d\s`, sysbenchEvents), out)
	Expect(out).To(MatchRegexp(`reconnects:\s+0\s`), out)
	Expect(out).NotTo(ContainSubstring("FATAL"), out)
	return strings.Join(sysbenchFigures.FindAllString(out, -1), "\n")
}

// mariadbProcLine is serve's statistics line for the mariadbd process.
var mariadbProcLine = regexp.MustCompile(`(?m)^preload process pid=\d+ comm=mariadbd .*$`)

// checkMariadbStats checks the stack's statistics for mariadbd: it
// exited, accepted at least the connections sysbench made (prepare and
// 4 threads) on its listener on 0.0.0.0:3306, none ended by an error,
// and no call was refused.
func checkMariadbStats(out, peer string) string {
	line := mariadbProcLine.FindString(out)
	Expect(line).NotTo(BeEmpty(), out)
	Expect(line).To(ContainSubstring(" exited=true "))
	Expect(line).NotTo(ContainSubstring("refused="), "a call mariadbd made was refused")
	m := regexp.MustCompile(` accepted=(\d+) `).FindStringSubmatch(line)
	Expect(m).NotTo(BeNil(), line)
	n, _ := strconv.Atoi(m[1])
	Expect(n).To(BeNumerically(">=", 5), line)
	Expect(out).To(ContainSubstring("kind=listen local=0.0.0.0:3306"))
	acc := regexp.MustCompile(`(?m)^preload socket .* kind=accepted local=\S+:3306 remote=`+regexp.QuoteMeta(peer)+`:\d+ .* end=(\w*)$`).FindAllStringSubmatch(out, -1)
	Expect(acc).To(HaveLen(n), out)
	for _, a := range acc {
		// "eof" when the client's FIN came before mariadbd closed
		// (after COM_QUIT), "" when mariadbd closed first; an errno
		// (a reset, a timeout) would name itself.
		Expect(a[1]).To(BeElementOf("eof", ""), a[0])
	}
	return line
}

// startGroup starts a program in a process group of its own, its output
// into out and its exit code into done (-1 when it cannot be waited
// for); the spec's cleanup kills the group (by the program's PID) if it
// is still running.
func startGroup(out *syncBuffer, done chan int, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	Expect(cmd.Start()).To(Succeed())
	exited := make(chan struct{})
	go func() {
		err := cmd.Wait()
		close(exited)
		code := cmd.ProcessState.ExitCode()
		if err != nil && code == 0 {
			code = -1
		}
		done <- code
	}()
	DeferCleanup(func() {
		select {
		case <-exited:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
}

// runGroup runs a program in a process group of its own for at most
// limit (then the group is killed and the code is -1) and returns what
// it printed and its exit code.
func runGroup(limit time.Duration, name string, args ...string) (string, int) {
	out, done := &syncBuffer{}, make(chan int, 1)
	startGroup(out, done, name, args...)
	select {
	case code := <-done:
		return out.String(), code
	case <-time.After(limit):
		return fmt.Sprintf("%s\n(killed after %v)", out.String(), limit), -1
	}
}

// exitCodeOf waits for p and sends its exit code (-1 when it did not
// exit by itself).
func exitCodeOf(p *livetest.Proc, done chan int) {
	err := p.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	done <- code
}

// serveToKill is liveServe's stack (serve --preload on a TAP in a
// namespace of its own, the kernel's side 10.77.0.1) for a spec that
// kills it: its cleanup does not require exit 0.
func serveToKill(stackSock string) *livetest.Serve {
	if os.Geteuid() != 0 {
		Skip("live specs need root (network namespaces, TAP)")
	}
	bin := liveSimrun()
	liveSeq++
	ns := fmt.Sprintf("svk-%d-%d", os.Getpid(), liveSeq)
	out, err := livetest.Run(10*time.Second, "ip", "netns", "add", ns)
	Expect(err).NotTo(HaveOccurred(), out)
	DeferCleanup(func() { livetest.DeleteNetns(ns) })
	out, err = livetest.Run(10*time.Second, "ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
	Expect(err).NotTo(HaveOccurred(), out)
	s, err := livetest.StartServe(ns, bin, GinkgoWriter, "--tap", "sv0", "--ip", "10.77.0.2/24", "--app", "kv", "--port", "6379",
		"--preload", stackSock, "--ctl", "none")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = s.Stop() })
	Eventually(s.Output).WithTimeout(20 * time.Second).WithPolling(20 * time.Millisecond).Should(ContainSubstring("savanna: serving"))
	out, err = s.Exec(10*time.Second, "ip", "addr", "add", "10.77.0.1/24", "dev", "sv0")
	Expect(err).NotTo(HaveOccurred(), out)
	return s
}

var _ = Describe("Debian's mariadbd on simrun serve --preload", Label("live", "slow"), func() {
	It("serves sysbench oltp_read_write from the kernel side of the TAP with no error, run unmodified by simrun exec --stack (its Unix socket passed through), and SIGTERM shuts it down cleanly", func() {
		tools := mariadbTools()
		dir, err := preloadBuild()
		Expect(err).NotTo(HaveOccurred())
		stackSock := filepath.Join(shortTempDir(), "stack.sock")
		s := liveServe([]string{"--preload", stackSock, "--ctl", "none"})
		db := initMariaDB()
		p, err := livetest.StartInNetns(s.NS, 10*time.Minute, liveBin, "exec", "--stack", stackSock, "--preload-lib", dir, "--",
			tools["mariadbd"], db.cnf())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = p.Stop() })
		go exitCodeOf(p, db.done)
		db.waitReady()
		Expect(db.log()).To(ContainSubstring("Server socket created on IP: '0.0.0.0', port: '3306'"))

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// The Unix socket is not the stack's: it must pass through.
		out, errOut, err := inNS(ctx, s.NS, nil, tools["mariadb"], "--no-defaults", "-S", db.sock(), "-uroot", "-N", "-e", "SELECT 'unix socket ok'")
		Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
		Expect(out).To(Equal("unix socket ok\n"))
		out, errOut, err = inNS(ctx, s.NS, nil, tools["sysbench"], sysbenchArgs("10.77.0.2", "prepare")...)
		Expect(err).NotTo(HaveOccurred(), "sysbench prepare: %s%s", out, errOut)
		out, errOut, err = inNS(ctx, s.NS, nil, tools["sysbench"], sysbenchArgs("10.77.0.2", "run")...)
		Expect(err).NotTo(HaveOccurred(), "sysbench run: %s%s", out, errOut)
		summary := sysbenchRun(out)
		// Every connection ended cleanly on the server's side too.
		out, errOut, err = inNS(ctx, s.NS, nil, tools["mariadb"], "--no-defaults", "-h", "10.77.0.2", "-P", "3306", "-usb", "-psb", "-N",
			"-e", "SHOW GLOBAL STATUS WHERE Variable_name IN ('Aborted_clients', 'Aborted_connects')")
		Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
		Expect(out).To(Equal("Aborted_clients\t0\nAborted_connects\t0\n"))

		code, tail := db.stop()
		Expect(code).To(Equal(0), "mariadbd's exit code after SIGTERM (simrun exec passes it on):\n%s", tail)
		Expect(tail).To(ContainSubstring("Normal shutdown"))
		Expect(tail).To(ContainSubstring("mariadbd: Shutdown complete"))
		Expect(s.Stop()).To(Succeed())
		line := checkMariadbStats(s.Output(), "10.77.0.1")
		GinkgoWriter.Printf("sysbench (kernel side, over the TAP):\n%s\nmariadbd's log at SIGTERM:\n%s\nserve: %s\n", summary, tail, line)
	})

	It("still shuts down cleanly on SIGTERM after the stack process dies under an idle connection: its calls fail ENETDOWN rather than EAGAIN for ever", func() {
		tools := mariadbTools()
		dir, err := preloadBuild()
		Expect(err).NotTo(HaveOccurred())
		stackSock := filepath.Join(shortTempDir(), "stack.sock")
		s := serveToKill(stackSock)
		db := initMariaDB()
		p, err := livetest.StartInNetns(s.NS, 5*time.Minute, liveBin, "exec", "--stack", stackSock, "--preload-lib", dir, "--",
			tools["mariadbd"], db.cnf())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = p.Stop() })
		go exitCodeOf(p, db.done)
		db.waitReady()
		// An idle client: mariadbd's thread for it waits in poll for
		// its first packet (the handshake's answer).
		c, err := livetest.DialInNetns(s.NS, "10.77.0.2:3306", 10*time.Second)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		greeting := make([]byte, 4)
		Expect(c.SetReadDeadline(time.Now().Add(30 * time.Second))).To(Succeed())
		_, err = c.Read(greeting)
		Expect(err).NotTo(HaveOccurred(), "mariadbd's greeting")
		Expect(syscall.Kill(s.PID(), syscall.SIGKILL)).To(Succeed()) // serve, started by serveToKill
		Expect(s.Stop()).To(HaveOccurred(), "simrun serve was killed")
		code, tail := db.stop()
		Expect(code).To(Equal(0), "mariadbd's exit code after SIGTERM with its stack gone:\n%s", tail)
		Expect(tail).To(ContainSubstring("mariadbd: Shutdown complete"))
		GinkgoWriter.Printf("mariadbd's log at SIGTERM, its stack gone:\n%s\n", tail)
	})

	It("serves sysbench preloaded too, on a second stack process joined by an in-memory wire (no kernel in the data path), with no error, and stops cleanly on SIGTERM", func() {
		tools := mariadbTools()
		dir, err := preloadBuild()
		Expect(err).NotTo(HaveOccurred())
		rp, err := livetest.NewRingPair(1, 1)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(rp.Stop)
		srvs := make([]*stackproc.Server, 2)
		sockets := make([]string, 2)
		for i, r := range []*rt.Runtime{rp.A, rp.B} {
			srvs[i], err = stackproc.NewServer(stackproc.Config{Runtime: r})
			Expect(err).NotTo(HaveOccurred())
			sockets[i] = filepath.Join(shortTempDir(), "stack.sock")
			Expect(srvs[i].Listen(sockets[i])).To(Succeed())
			go func(s *stackproc.Server) { _ = s.Serve() }(srvs[i])
			DeferCleanup(srvs[i].Close)
		}
		db := initMariaDB()
		bin := liveSimrun()
		startGroup(db.out, db.done, bin, "exec", "--stack", sockets[0], "--preload-lib", dir, "--", tools["mariadbd"], db.cnf())
		db.waitReady()
		sysbench := func(cmd string) string {
			out, code := runGroup(3*time.Minute, bin, append([]string{"exec", "--stack", sockets[1], "--preload-lib", dir, "--", tools["sysbench"]},
				sysbenchArgs("10.9.0.1", cmd)...)...)
			Expect(code).To(Equal(0), "sysbench %s: %s\nstack A:\n%s\nstack B:\n%s", cmd, out,
				stackproc.FormatStats(srvs[0].Stats()), stackproc.FormatStats(srvs[1].Stats()))
			return out
		}
		sysbench("prepare")
		summary := sysbenchRun(sysbench("run"))
		code, tail := db.stop()
		Expect(code).To(Equal(0), "mariadbd's exit code after SIGTERM:\n%s", tail)
		Expect(tail).To(ContainSubstring("mariadbd: Shutdown complete"))
		_ = srvs[0].Close()
		_ = srvs[1].Close()
		server, client := stackproc.FormatStats(srvs[0].Stats()), stackproc.FormatStats(srvs[1].Stats())
		line := checkMariadbStats(server, "10.9.0.2")
		cls := regexp.MustCompile(`(?m)^preload process pid=\d+ comm=sysbench .*$`).FindAllString(client, -1)
		Expect(cls).To(HaveLen(2), "sysbench prepare and run:\n%s", client)
		for _, cl := range cls {
			Expect(cl).To(ContainSubstring(" exited=true "))
			Expect(cl).To(ContainSubstring(" connect_failed=0 "))
			// libmariadb sets SO_RCVTIMEO and SO_SNDTIMEO on each
			// connection, refused ENOPROTOOPT (docs/preload.md); it
			// ignores the result and bounds its waits with poll.
			m := regexp.MustCompile(` connected=(\d+) `).FindStringSubmatch(cl)
			Expect(m).NotTo(BeNil(), cl)
			n, _ := strconv.Atoi(m[1])
			Expect(cl).To(HaveSuffix(fmt.Sprintf(" refused=setsockopt:%d", 2*n)), "sysbench's refused calls")
		}
		GinkgoWriter.Printf("sysbench (preloaded, second stack):\n%s\nmariadbd's log at SIGTERM:\n%s\nstack A: %s\nstack B:\n%s\n", summary, tail, line, strings.Join(cls, "\n"))
	})
})
