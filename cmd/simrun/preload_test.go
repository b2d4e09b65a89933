//go:build !dpdk

package main

import (
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
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var srv, srvErr string
			var sErr error
			done := make(chan struct{})
			go func() {
				defer close(done)
				srv, srvErr, sErr = inNS(ctx, s.NS, srvEnv, bin, "server", "17711")
			}()
			cli, cliErr, cErr := inNS(ctx, s.NS, nil, bin, "client", ip, "17711")
			<-done
			Expect(sErr).NotTo(HaveOccurred(), "server: %s\n%s", srv, srvErr)
			Expect(cErr).NotTo(HaveOccurred(), "client: %s\n%s", cli, cliErr)
			return srv, cli
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
