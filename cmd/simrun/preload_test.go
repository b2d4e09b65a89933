//go:build !dpdk

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/internal/stackproc"
	"github.com/savanna-sim/savanna/stack/rt"
)

// preloadBuild builds preload/ once for the live specs.
var preloadBuild = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "svpre")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command("../../preload/build", dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("preload/build: %v\n%s", err, out)
	}
	return dir, nil
})

// inNS runs a program in namespace ns with env, bounded by limit, and
// returns its standard output and error apart.
func inNS(ctx context.Context, ns string, env []string, name string, args ...string) (string, string, error) {
	full := append([]string{"netns", "exec", ns, "env"}, env...)
	cmd := exec.CommandContext(ctx, "ip", append(append(full, name), args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// serverAndClient runs server (with srvEnv) and then client in namespace
// ns at once, within timeout, and returns what each printed; either
// failing fails the spec with its output.
func serverAndClient(ns string, timeout time.Duration, srvEnv, server, client []string) (string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var srv, srvErr string
	var sErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv, srvErr, sErr = inNS(ctx, ns, srvEnv, server[0], server[1:]...)
	}()
	cli, cliErr, cErr := inNS(ctx, ns, nil, client[0], client[1:]...)
	<-done
	Expect(sErr).NotTo(HaveOccurred(), "server: %s\n%s", srv, srvErr)
	Expect(cErr).NotTo(HaveOccurred(), "client: %s\n%s", cli, cliErr)
	return srv, cli
}

var _ = Describe("simrun serve --preload", Label("live"), func() {
	It("serves echotrace's server preloaded on the TAP stack to a Linux client, with the traces of an all-Linux run; statistics per process and socket at exit", func() {
		if _, err := exec.LookPath("gcc"); err != nil {
			Skip("needs gcc")
		}
		dir, err := preloadBuild()
		Expect(err).NotTo(HaveOccurred())
		sock := filepath.Join(shortTempDir(), "stack.sock")
		s := liveServe([]string{"--preload", sock, "--ctl", "none"})
		bin := filepath.Join(dir, "echotrace")
		both := func(srvEnv []string, ip string) (string, string) {
			return serverAndClient(s.NS, 60*time.Second, srvEnv, []string{bin, "server", "17711"}, []string{bin, "client", ip, "17711"})
		}
		linuxSrv, linuxCli := both(nil, "127.0.0.1")
		svSrv, svCli := both([]string{"LD_PRELOAD=" + filepath.Join(dir, "libsavanna_preload.so"), "SAVANNA_STACK=" + sock}, "10.77.0.2")
		Expect(svSrv).To(Equal(linuxSrv), "the preloaded server's trace")
		Expect(svCli).To(Equal(linuxCli), "the Linux client's trace against it")
		Expect(s.Stop()).To(Succeed())
		out := s.Output()
		Expect(out).To(MatchRegexp(`preload process pid=\d+ comm=echotrace exited=true opened=2 accepted=1`))
		Expect(out).To(ContainSubstring("kind=accepted local=10.77.0.2:17711 remote=10.77.0.1:"))
		Expect(out).To(ContainSubstring("kind=listen local=0.0.0.0:17711"))
	})
})

var _ = Describe("simrun exec --stack", func() {
	It("puts the preload library on LD_PRELOAD after a sanitizer's runtime and names the stack process", func() {
		env := preloadEnv([]string{"PATH=/bin", "LD_PRELOAD=/x/libasan.so.8 /y/other.so", "SAVANNA_STACK=old"}, "/l/libsavanna_preload.so", "/run/s.sock")
		Expect(env).To(ContainElements("PATH=/bin", "LD_PRELOAD=/x/libasan.so.8 /l/libsavanna_preload.so /y/other.so", "SAVANNA_STACK=/run/s.sock"))
		Expect(env).NotTo(ContainElement("SAVANNA_STACK=old"))
		Expect(preloadEnv(nil, "/l/p.so", "/s")).To(Equal([]string{"LD_PRELOAD=/l/p.so", "SAVANNA_STACK=/s"}))
	})

	It("refuses --preload-lib and --zlib without --stack, and a folder without the library", func() {
		var out, errb bytes.Buffer
		Expect(cmdExec([]string{"--zlib", "--", "true"}, &out, &errb)).To(Equal(2))
		Expect(errb.String()).To(ContainSubstring("go with --stack"))
		errb.Reset()
		Expect(cmdExec([]string{"--stack", "/nonexistent.sock", "--preload-lib", GinkgoT().TempDir(), "--", "true"}, &out, &errb)).To(Equal(127))
		Expect(errb.String()).To(ContainSubstring("libsavanna_preload.so"))
	})

	It("runs echotrace's server and client preloaded on two stack processes (an in-memory wire) with the traces of a run on Linux, and passes the program's exit code on", func() {
		if _, err := exec.LookPath("gcc"); err != nil {
			Skip("needs gcc")
		}
		dir, err := preloadBuild()
		Expect(err).NotTo(HaveOccurred())
		bin := filepath.Join(dir, "echotrace")
		rp, err := livetest.NewRingPair(1, 1)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(rp.Stop)
		sockets := make([]string, 2)
		for i, r := range []*rt.Runtime{rp.A, rp.B} {
			srv, err := stackproc.NewServer(stackproc.Config{Runtime: r})
			Expect(err).NotTo(HaveOccurred())
			sockets[i] = filepath.Join(shortTempDir(), "stack.sock")
			Expect(srv.Listen(sockets[i])).To(Succeed())
			go func() { _ = srv.Serve() }()
			DeferCleanup(srv.Close)
		}
		both := func(pre bool, ip string) (string, string) {
			var srvOut, srvErr, cliOut, cliErr bytes.Buffer
			args := func(i int, prog ...string) []string {
				if !pre {
					return prog
				}
				return append([]string{"--stack", sockets[i], "--preload-lib", dir, "--"}, prog...)
			}
			runIt := func(a []string, o, e *bytes.Buffer) int {
				if !pre {
					cmd := exec.Command(a[0], a[1:]...)
					cmd.Stdout, cmd.Stderr = o, e
					if err := cmd.Run(); err != nil {
						return 1
					}
					return 0
				}
				return cmdExec(a, o, e)
			}
			done := make(chan int, 1)
			go func() { done <- runIt(args(0, bin, "server", "17715"), &srvOut, &srvErr) }()
			Expect(runIt(args(1, bin, "client", ip, "17715"), &cliOut, &cliErr)).To(Equal(0), cliErr.String())
			Eventually(done).WithTimeout(60 * time.Second).Should(Receive(Equal(0)))
			return srvOut.String(), cliOut.String()
		}
		ls, lc := both(false, "127.0.0.1")
		ss, sc := both(true, "10.9.0.1")
		Expect(ss).To(Equal(ls))
		Expect(sc).To(Equal(lc))
		var out, errb bytes.Buffer
		Expect(cmdExec([]string{"--stack", sockets[0], "--preload-lib", dir, "--", "sh", "-c", "exit 3"}, &out, &errb)).To(Equal(3))
		Expect(cmdExec([]string{"--stack", sockets[0], "--preload-lib", dir, "--", "sh", "-c", "kill -TERM $$"}, &out, &errb)).To(Equal(128 + 15))
		Expect(cmdExec([]string{"--stack", sockets[0], "--preload-lib", dir, "--", "/nonexistent/program"}, &out, &errb)).To(Equal(127))
	})
})

var _ = Describe("forked workers on simrun serve --preload", Label("live"), func() {
	It("serves a Linux client's 64 connections from 4 workers forked by a parent run with simrun exec --stack, with the trace of an all-Linux run", func() {
		if _, err := exec.LookPath("gcc"); err != nil {
			Skip("needs gcc")
		}
		dir, err := preloadBuild()
		Expect(err).NotTo(HaveOccurred())
		sock := filepath.Join(shortTempDir(), "stack.sock")
		s := liveServe([]string{"--preload", sock, "--ctl", "none"})
		bin := filepath.Join(dir, "forktrace")
		both := func(server []string, ip string) (string, string) {
			return serverAndClient(s.NS, 90*time.Second, nil, server, []string{bin, "client", ip, "17725", "64"})
		}
		linuxSrv, linuxCli := both([]string{bin, "server", "shared", "17725", "64"}, "127.0.0.1")
		Expect(linuxSrv).To(HaveSuffix("server ok\n"))
		svSrv, svCli := both([]string{liveBin, "exec", "--stack", sock, "--preload-lib", dir, "--", bin, "server", "shared", "17725", "64"}, "10.77.0.2")
		Expect(svSrv).To(Equal(linuxSrv), "the preloaded server's trace")
		Expect(svCli).To(Equal(linuxCli), "the Linux client's trace")
		Expect(s.Stop()).To(Succeed())
		out := s.Output()
		Expect(out).To(MatchRegexp(`preload process pid=\d+ comm=forktrace exited=true opened=\d+ accepted=\d+ .* inherited=1`))
	})
})

var _ = Describe("an AF_INET6 program on simrun serve --preload with an IPv6 address", Label("live"), func() {
	It("serves Linux's IPv6 and IPv4 clients across the TAP from a dual-stack listener (IPv4 peers IPv4-mapped) and refuses IPv4 on a V6ONLY one, with the trace of an all-Linux run", func() {
		live6Skip("gcc")
		dir, err := preloadBuild()
		Expect(err).NotTo(HaveOccurred())
		sock := filepath.Join(shortTempDir(), "stack.sock")
		s := liveServe6(func(string) {}, false, "--ip", "10.77.0.2/24", "--ip", live6Stack+"/64", "--app", "echo", "--port", "7",
			"--preload", sock, "--ctl", "none")
		bin := filepath.Join(dir, "sixtrace")
		both := func(server []string, ip4, ip6 string) (string, string) {
			return serverAndClient(s.NS, 60*time.Second, nil, server, []string{bin, "client", ip4, ip6, "17751"})
		}
		linuxSrv, linuxCli := both([]string{bin, "server", "17751"}, "127.0.0.1", "::1")
		Expect(linuxSrv).To(HaveSuffix("server done\n"))
		svSrv, svCli := both([]string{liveBin, "exec", "--stack", sock, "--preload-lib", dir, "--", bin, "server", "17751"},
			"10.77.0.2", live6Stack)
		Expect(svSrv).To(Equal(linuxSrv), "the preloaded server's trace")
		Expect(svCli).To(Equal(linuxCli), "the Linux client's trace against it")
		Expect(s.Stop()).To(Succeed())
		out := s.Output()
		Expect(out).To(MatchRegexp(`preload process pid=\d+ comm=sixtrace exited=true opened=\d+ accepted=4 `))
		Expect(out).To(ContainSubstring("kind=listen local=[::]:17751"))
		Expect(out).To(ContainSubstring("remote=[" + live6Kernel + "]:"))
		Expect(out).To(ContainSubstring("remote=10.77.0.1:"))
	})
})
