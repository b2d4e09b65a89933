package preloadtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const nginxConf = `daemon off;
master_process on;
worker_processes 2;
user root;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 256; accept_mutex off; }
http {
    access_log off;
    sendfile on;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    server {
        listen %[2]d;
        root %[1]s/www;
    }
}
`

var _ = Describe("real nginx preloaded", Label("live"), func() {
	It("serves a static file with sendfile from a master and 2 forked workers to a preloaded curl, every byte intact", func() {
		nginx := "/usr/sbin/nginx"
		if _, err := os.Stat(nginx); err != nil {
			Skip("nginx not installed (.ci/run installs it)")
		}
		if _, err := exec.LookPath("curl"); err != nil {
			Skip("curl not installed")
		}
		if os.Geteuid() != 0 {
			Skip("nginx's master starts as root here (user root)")
		}
		dir := needBuild()
		_, preload := program(dir, "echotrace", false)
		work := GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(work, "www"), 0o755)).To(Succeed())
		body := bytes.Repeat([]byte("savanna nginx sendfile 0123456789\n"), 3000) // 102 KB: more than a ring
		Expect(os.WriteFile(filepath.Join(work, "www", "f.txt"), body, 0o644)).To(Succeed())
		conf := filepath.Join(work, "nginx.conf")
		Expect(os.WriteFile(conf, []byte(fmt.Sprintf(nginxConf, work, 17761)), 0o644)).To(Succeed())

		a, _, pa, pb := twoStacks()
		stop := startServer([]string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pa}, nginx, "-p", work, "-c", conf, "-e", "stderr")
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		env := []string{"LD_PRELOAD=" + preload, "SAVANNA_STACK=" + pb}
		got := 0
		for i := 0; i < 200 && got < 20; i++ {
			out, errOut, err := run(ctx, env, "curl", "-sS", "--max-time", "10", "http://10.9.0.1:17761/f.txt")
			if err != nil {
				if got == 0 && strings.Contains(errOut, "onnect") {
					time.Sleep(100 * time.Millisecond) // not listening yet
					continue
				}
				Fail(fmt.Sprintf("curl %d: %v %s", got, err, errOut))
			}
			Expect([]byte(out)).To(Equal(body), "response %d", got)
			got++
		}
		Expect(got).To(Equal(20))
		log := stop()
		GinkgoWriter.Printf("nginx:\n%s", log)
		allExited(a)
		st := a.Stats()
		GinkgoWriter.Printf("%+v\n", st.Server)
		Expect(st.Server.Inherited).To(BeNumerically(">=", 2), "both workers took the master's listener over")
		var accepted uint64
		for _, p := range st.Processes {
			accepted += p.Accepted
			if p.Accepted > 0 {
				Expect(p.Calls).To(HaveKey("sendfile"))
			}
		}
		Expect(accepted).To(BeEquivalentTo(20))
	})
})
