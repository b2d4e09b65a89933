package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("simrun exec", func() {
	It("refuses a missing program and a contradictory device", func() {
		var out, errb bytes.Buffer
		Expect(cmdExec(nil, &out, &errb)).To(Equal(2))
		Expect(errb.String()).To(ContainSubstring("no program given"))
		errb.Reset()
		Expect(cmdExec([]string{"--qat", "/x", "--sw", "--", "true"}, &out, &errb)).To(Equal(2))
		Expect(errb.String()).To(ContainSubstring("exclude each other"))
	})

	It("names a drop-in folder that lacks the libraries", func() {
		var out, errb bytes.Buffer
		Expect(cmdExec([]string{"--dropin", GinkgoT().TempDir(), "--", "true"}, &out, &errb)).To(Equal(127))
		Expect(errb.String()).To(ContainSubstring("libz.so.1"))
	})

	It("puts the drop-in first on the library path and passes the device through", func() {
		env := execEnv([]string{"PATH=/bin", "LD_LIBRARY_PATH=/opt/lib", "SAVANNA_QAT=old"}, "/d", "/run/qat.sock", false, "/tmp/s")
		Expect(env).To(ContainElements("PATH=/bin", "LD_LIBRARY_PATH=/d:/opt/lib", "SAVANNA_QAT=/run/qat.sock",
			"SAVANNA_ZLIBGO=/d/libsavanna_zlibgo.so", "SAVANNA_ZLIB_STATS=/tmp/s"))
		Expect(env).NotTo(ContainElement("SAVANNA_QAT=old"))
		env = execEnv(nil, "/d", "", true, "")
		Expect(env).To(ContainElements("LD_LIBRARY_PATH=/d", "SAVANNA_ZLIB_SW=1"))
	})

	It("sums the processes' counters and names every reason", func() {
		f := filepath.Join(GinkgoT().TempDir(), "s.jsonl")
		Expect(os.WriteFile(f, []byte(
			`{"pid":1,"streams_shim":3,"streams_system":{"window_bits":1,"disabled":0},"refused":{"copy_after_data":1},"shim_bytes_in":10,"shim_bytes_out":5,"shim":{"service":"simulated-c62x","stats":{"hw_requests":2,"fallbacks":{"timeout":1}}}}`+"\n"+
				`{"pid":2,"streams_shim":4,"streams_system":{"window_bits":2},"refused":{},"shim_bytes_in":20,"shim_bytes_out":6}`+"\n"), 0o644)).To(Succeed())
		var b bytes.Buffer
		Expect(printDropinStats(&b, f)).To(Succeed())
		Expect(b.String()).To(ContainSubstring("2 processes"))
		Expect(b.String()).To(ContainSubstring("streams: shim 7, system 3 (window_bits 3)"))
		Expect(b.String()).To(ContainSubstring("shim bytes: in 30, out 11"))
		Expect(b.String()).To(ContainSubstring("fallbacks 1 (timeout 1); refused calls 1 (copy_after_data 1)"))
		Expect(os.WriteFile(f, []byte("{\"pid\":1}\nnot json\n"), 0o644)).To(Succeed())
		Expect(printDropinStats(&b, f)).To(MatchError(ContainSubstring("s.jsonl:2")))
	})
})

// dropinOnce builds the drop-in once for the specs that run programs on it.
var dropinOnce struct {
	sync.Once
	dir string
	err error
}

func builtDropin() string {
	for _, t := range []string{"gcc", "objdump"} {
		if _, err := exec.LookPath(t); err != nil {
			Skip(t + " not installed (apt-get install -y gcc binutils zlib1g-dev)")
		}
	}
	dropinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "simrun-dropin-")
		if err == nil {
			root, _ := filepath.Abs("../..")
			var b []byte
			b, err = exec.Command(filepath.Join(root, "dropin", "build"), dir).CombinedOutput()
			if err != nil {
				err = fmt.Errorf("dropin/build: %v: %s", err, b)
			}
		}
		dropinOnce.dir, dropinOnce.err = dir, err
	})
	Expect(dropinOnce.err).NotTo(HaveOccurred())
	return dropinOnce.dir
}

var _ = Describe("simrun exec on the drop-in", func() {
	It("runs a zlib program with the drop-in and prints its counters", func() {
		dir := builtDropin()
		var out, errb bytes.Buffer
		code := cmdExec([]string{"--dropin", dir, "--stats", "--", filepath.Join(dir, "zlibcheck"), "--quick"}, &out, &errb)
		Expect(code).To(Equal(0), out.String()+errb.String())
		Expect(out.String()).To(ContainSubstring("drop-in loaded"))
		Expect(errb.String()).To(MatchRegexp(`streams: shim [1-9]\d*, system`))
		Expect(errb.String()).To(ContainSubstring("simulated-c62x"))
	})
})

var _ = Describe("nginx from Debian on the drop-in", Label("live"), func() {
	It("serves gzip through the shim from 4 workers, every response intact", func() {
		nginx, err := exec.LookPath("nginx")
		if err != nil {
			nginx = "/usr/sbin/nginx"
			if _, err := os.Stat(nginx); err != nil {
				Skip("nginx not installed (apt-get install -y nginx)")
			}
		}
		if os.Geteuid() != 0 {
			Skip("nginx's master needs root here")
		}
		for _, t := range []string{"curl", "gzip"} {
			if _, err := exec.LookPath(t); err != nil {
				Skip(t + " not installed")
			}
		}
		dir := builtDropin()
		prefix := GinkgoT().TempDir()
		for _, d := range []string{"html", "logs", "tmp"} {
			Expect(os.MkdirAll(filepath.Join(prefix, d), 0o755)).To(Succeed())
		}
		// Pages of a few sizes, text that compresses as HTML does.
		sizes := []int{100, 5_000, 70_000, 300_000, 1_200_000}
		pages := map[string][]byte{}
		for i, n := range sizes {
			var b bytes.Buffer
			for j := 0; b.Len() < n; j++ {
				fmt.Fprintf(&b, "<p class=\"row%d\">savanna page %d line %d</p>\n", j%7, i, j)
			}
			name := fmt.Sprintf("p%d.html", i)
			if i%2 == 1 {
				name = fmt.Sprintf("p%d.txt", i)
			}
			pages[name] = b.Bytes()[:n]
			Expect(os.WriteFile(filepath.Join(prefix, "html", name), pages[name], 0o644)).To(Succeed())
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		conf := fmt.Sprintf(`user root;
worker_processes 4;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/logs/error.log info;
events { worker_connections 256; }
http {
    access_log off;
    types { text/html html; text/plain txt; }
    client_body_temp_path %[1]s/tmp/body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fastcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
    gzip on;
    gzip_comp_level 1;
    gzip_types text/plain text/html;
    server {
        listen 127.0.0.1:%[2]d;
        root %[1]s/html;
    }
}
`, prefix, port)
		confPath := filepath.Join(prefix, "nginx.conf")
		Expect(os.WriteFile(confPath, []byte(conf), 0o644)).To(Succeed())
		statsPath := filepath.Join(prefix, "stats.jsonl")

		var out, errb syncBuffer
		exited := make(chan int, 1)
		go func() {
			exited <- cmdExec([]string{"--dropin", dir, "--stats", "--stats-file", statsPath, "--",
				nginx, "-p", prefix, "-c", confPath, "-e", filepath.Join(prefix, "logs", "error.log")}, &out, &errb)
		}()
		stopped := false
		pidFile := filepath.Join(prefix, "nginx.pid")
		stop := func() {
			if stopped {
				return
			}
			stopped = true
			b, err := os.ReadFile(pidFile)
			Expect(err).NotTo(HaveOccurred())
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			Expect(err).NotTo(HaveOccurred())
			Expect(syscall.Kill(pid, syscall.SIGQUIT)).To(Succeed()) // graceful: workers exit and write their counters
			select {
			case code := <-exited:
				Expect(code).To(Equal(0), errb.String())
			case <-time.After(30 * time.Second):
				_ = syscall.Kill(pid, syscall.SIGKILL)
				Fail("nginx did not stop within 30 s of SIGQUIT")
			}
		}
		DeferCleanup(func() {
			if !stopped {
				if b, err := os.ReadFile(pidFile); err == nil {
					if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
		})
		Eventually(func() error {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err == nil {
				c.Close()
			}
			return err
		}, 15*time.Second, 100*time.Millisecond).Should(Succeed(), "nginx did not listen: %s", errb.String())
		Eventually(func() error { _, err := os.Stat(pidFile); return err }, 5*time.Second, 50*time.Millisecond).Should(Succeed())

		// 200 requests from 4 clients at once, so that every worker
		// serves: even ones read by curl --compressed, odd ones fetched
		// gzip-encoded and read by gzip -d.
		names := []string{}
		for n := range pages {
			names = append(names, n)
		}
		var mu sync.Mutex
		var failures []string
		var wg sync.WaitGroup
		for c := 0; c < 4; c++ {
			wg.Add(1)
			go func(c int) {
				defer GinkgoRecover()
				defer wg.Done()
				for i := c; i < 200; i += 4 {
					name := names[i%len(names)]
					url := fmt.Sprintf("http://127.0.0.1:%d/%s", port, name)
					var body []byte
					var err error
					if i%2 == 0 {
						body, err = exec.Command("curl", "-sS", "--max-time", "20", "--compressed", url).Output()
					} else {
						body, err = exec.Command("sh", "-c", "curl -sS --max-time 20 -H 'Accept-Encoding: gzip' '"+url+"' | gzip -d").Output()
					}
					if err != nil || !bytes.Equal(body, pages[name]) {
						mu.Lock()
						failures = append(failures, fmt.Sprintf("request %d %s: %v, %d bytes of %d", i, name, err, len(body), len(pages[name])))
						mu.Unlock()
					}
				}
			}(c)
		}
		wg.Wait()
		stop()
		Expect(failures).To(BeEmpty())

		lines, err := readDropinStats(statsPath)
		Expect(err).NotTo(HaveOccurred())
		var shim, hw uint64
		workers := 0
		for _, s := range lines {
			if s.StreamsShim > 0 {
				workers++
			}
			shim += s.StreamsShim
			for k, v := range s.StreamsSystem {
				Expect(v).To(BeZero(), "pid %d: streams_system.%s", s.PID, k)
			}
			for k, v := range s.Refused {
				Expect(v).To(BeZero(), "pid %d: refused.%s", s.PID, k)
			}
			Expect(s.Shim).NotTo(BeNil())
			Expect(s.Shim.Service).To(Equal("simulated-c62x"))
			for k, v := range s.Shim.Stats.Fallbacks {
				Expect(v).To(BeZero(), "pid %d: fallbacks.%s", s.PID, k)
			}
			hw += s.Shim.Stats.HWRequests
		}
		// Every response was gzipped (200 gzip streams; curl asks for
		// gzip too), by more than one worker, on the device.
		Expect(shim).To(BeNumerically(">=", 200))
		Expect(workers).To(BeNumerically(">", 1))
		Expect(hw).To(BeNumerically(">", 0))
		Expect(errb.String()).To(ContainSubstring("streams: shim"))
		GinkgoWriter.Println(errb.String())
	})
})

// syncBuffer is a bytes.Buffer for a writer in another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
