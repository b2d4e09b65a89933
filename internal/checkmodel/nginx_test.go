package checkmodel_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/checkmodel"
	"github.com/savanna-sim/savanna/rig/scenario"
)

var _ = Describe("the nginx workload's live side", func() {
	It("serves a page of exactly the stated size, the same on every run", func() {
		for _, n := range []int{1, 10, 100, checkmodel.NginxPageBytes, 4096} {
			p := checkmodel.NginxPage(n)
			Expect(p).To(HaveLen(n))
			Expect(checkmodel.NginxPage(n)).To(Equal(p))
		}
		Expect(string(checkmodel.NginxPage(checkmodel.NginxPageBytes))).To(HavePrefix("<!DOCTYPE html>"))
	})

	It("writes a configuration of its own: one worker, room for the connections, no log, keep-alive unbounded, nothing under /etc", func() {
		conf := checkmodel.NginxConfig("/tmp/x", 1000)
		for _, want := range []string{"worker_processes 1;", "worker_connections 2064;", "worker_rlimit_nofile 4128;",
			"access_log off;", "sendfile off;", "keepalive_requests 1000000000;", "listen 10.99.0.1:80 backlog=4096;",
			"root /tmp/x/html;", "pid /tmp/x/nginx.pid;", "error_log stderr notice;", "client_body_temp_path /tmp/x/tmp/body;"} {
			Expect(conf).To(ContainSubstring(want))
		}
		Expect(conf).NotTo(ContainSubstring("/etc/"))
		Expect(conf).NotTo(ContainSubstring("daemon"), "daemon off is given with -g; twice is an error")
		Expect(checkmodel.NginxConfig("/tmp/x", 1)).To(ContainSubstring("worker_connections 1024;"))
		// nginx closes idle keep-alive connections once fewer than a
		// sixteenth of worker_connections are free (ngx_drain_connections):
		// the clients and the listener must leave more than that.
		for _, n := range []int{1, 10, 50, 200, 1000, 10000} {
			var wc int
			c := checkmodel.NginxConfig("/tmp/x", n)
			_, err := fmt.Sscanf(c[strings.Index(c, "worker_connections"):], "worker_connections %d;", &wc)
			Expect(err).NotTo(HaveOccurred())
			Expect(wc-(n+1)).To(BeNumerically(">=", wc/16), "%d clients, %d worker_connections", n, wc)
		}
		Expect(checkmodel.NginxConfig("/tmp/x", 1000)).To(Equal(conf))
	})

	It("reads the worker from nginx's log and counts its warnings and errors, not its notices", func() {
		// Lines nginx 1.22.1 printed at 1,000 connections with too few
		// worker_connections.
		workers, problems, last := checkmodel.NginxLogCounts(
			"2026/12/01 22:28:03 [notice] 29743#29743: nginx/1.22.1",
			"2026/12/01 22:28:03 [notice] 29743#29743: start worker processes",
			"2026/12/01 22:28:03 [notice] 29743#29743: start worker process 29744",
			"2026/12/01 22:28:05 [info] 29744#29744: *1 client closed connection while waiting for request, client: 10.99.0.2, server: 10.99.0.1:80",
			"2026/12/01 22:28:06 [warn] 29744#29744: 1064 worker_connections are not enough, reusing connections",
			"2026/12/01 22:28:07 [alert] 29744#29744: accept4() failed (24: Too many open files)")
		Expect(workers).To(Equal(1))
		Expect(problems).To(Equal(2))
		Expect(last).To(ContainSubstring("Too many open files"))
	})

	It("is a configuration Debian's nginx accepts (nginx -t, in a namespace with the server's address)", Label("live"), func() {
		if _, err := exec.LookPath("nginx"); err != nil {
			Skip("nginx not installed (Debian: nginx)")
		}
		// nginx -t binds the listen address as the master would.
		if err := checkmodel.CheckHost(); err != nil {
			Skip(err.Error())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		pair, err := checkmodel.NewPair(ctx, fmt.Sprintf("scmt%d", os.Getpid()%10000))
		Expect(err).NotTo(HaveOccurred())
		defer pair.Close()
		dir := GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(dir, "tmp"), 0o755)).To(Succeed())
		conf := filepath.Join(dir, "nginx.conf")
		Expect(os.WriteFile(conf, []byte(checkmodel.NginxConfig(dir, 1000)), 0o644)).To(Succeed())
		out, err := checkmodel.Exec(ctx, pair.Server, "nginx", "-t", "-p", dir, "-c", conf, "-e", "stderr", "-g", "daemon off;").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(string(out)).To(ContainSubstring("test is successful"))
	})
})

var _ = Describe("the nginx workload's simulated twin", func() {
	It("is the model's HTTP server and wrk on the kernel's stack, with request_cpu 0, the same bytes on every rendering", func() {
		c := checkmodel.SimConfig{System: checkmodel.SystemNginx, Command: "GET", Clients: 1000}
		data, err := checkmodel.Scenario(c)
		Expect(err).NotTo(HaveOccurred())
		again, err := checkmodel.Scenario(c)
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(Equal(data))
		s, err := scenario.Parse("twin.yaml", data)
		Expect(err).NotTo(HaveOccurred(), string(data))
		Expect(s.File.Hosts).To(HaveKey("server"))
		Expect(s.File.Hosts).To(HaveKey("client"))
		text := string(data)
		for _, want := range []string{"name: check-model-nginx-GET-1000", "machine: host", "stack: {kind: kernel, cores: [1]",
			"stack: {kind: kernel, cores: [0]", "{kind: http, port: 80, pages: [1024], request_cpu: 0s, gzip: {enabled: false}}",
			`{kind: wrk, target: "10.99.0.1:80", connections: 1000, paths: ["/0"], gzip: false}`, "duration: 1s", "warmup: 100ms"} {
			Expect(text).To(ContainSubstring(want))
		}
		Expect(text).NotTo(ContainSubstring("cost:"))
		withCost, err := checkmodel.Scenario(checkmodel.SimConfig{System: checkmodel.SystemNginx, Clients: 1, CostFile: "testdata/x.yaml"})
		Expect(err).NotTo(HaveOccurred())
		abs, err := filepath.Abs("testdata/x.yaml")
		Expect(err).NotTo(HaveOccurred())
		Expect(bytes.Count(withCost, []byte(`cost: {file: "`+abs+`"}`))).To(Equal(2))
	})

	It("gives every figure positive and finite, the same on every run", func() {
		c := checkmodel.SimConfig{System: checkmodel.SystemNginx, Command: "GET", Clients: 10}
		a, err := checkmodel.RunSim(c)
		Expect(err).NotTo(HaveOccurred())
		for _, v := range []float64{a.RPS, a.MeanMS, a.P99MS, a.ServerCPUus, a.ClientCPUus} {
			Expect(v > 0 && !math.IsInf(v, 0)).To(BeTrue(), "%+v", a)
		}
		Expect(a.Notes).To(BeEmpty())
		// The window is a second: the requests are its throughput.
		Expect(a.Requests).To(BeNumerically("~", a.RPS, 1))
		// The mean is taken as the live point's is, by Little's law on
		// ten connections (wrk's own mean is corrected for coordinated
		// omission, livewrk.go).
		Expect(a.MeanMS).To(BeNumerically("~", 10/a.RPS*1e3, 1e-9))
		b, err := checkmodel.RunSim(c)
		Expect(err).NotTo(HaveOccurred())
		Expect(b).To(Equal(a))
	})

	It("puts nginx's misses under the held-out workload's own mechanisms", func() {
		res := &checkmodel.Result{Config: checkmodel.Config{Clients: []int{10}, Workloads: []string{checkmodel.WorkloadNginx},
			Duration: 5 * time.Second, Requests: 1, DataSize: 3}, Versions: []string{"nginx version: nginx/1.22.1", "wrk 4.1.0"}, Pinned: true}
		real := checkmodel.Point{System: checkmodel.SystemNginx, Command: "GET", Clients: 10, Requests: 1000,
			RPS: 1000, MeanMS: 1, P99MS: 2, ServerCPUus: 30, ClientCPUus: 20}
		sim := real
		sim.RPS, sim.ServerCPUus = 3000, 10
		res.Real, res.Sim, res.Rows = []checkmodel.Point{real}, []checkmodel.Point{sim}, checkmodel.Compare(real, sim)
		var b bytes.Buffer
		Expect(checkmodel.WriteMarkdown(&b, res)).To(Succeed())
		md := b.String()
		Expect(md).To(ContainSubstring("| nginx | GET | 10 | throughput (req/s) | 1000 | 3000 | +200.0% | ±25% | MISS |"))
		Expect(md).To(ContainSubstring("\n- **throughput (req/s)** (nginx GET c=10 +200.0%): " + checkmodel.NginxMechanism(checkmodel.FigRPS)))
		Expect(md).To(ContainSubstring("nginx, the held-out workload. The model's price of nginx's request is `http_request` alone"))
		Expect(md).To(ContainSubstring("the mechanism missing from the model is a price for a static file's request"))
		Expect(md).NotTo(ContainSubstring("The twin's GET finds no key"))
		Expect(md).To(ContainSubstring("- **server CPU/request (us)** (nginx GET c=10 -66.7%): " + checkmodel.NginxMechanism(checkmodel.FigServerCPU)))
		Expect(md).To(ContainSubstring("`simrun check-model --clients 10 --workloads nginx --duration 5s`"))
		Expect(md).To(ContainSubstring("-d 5s"))
		Expect(md).To(ContainSubstring("template_http.yaml"))
		Expect(md).NotTo(ContainSubstring("Real, redis"))
		for _, f := range checkmodel.Figures() {
			Expect(checkmodel.NginxMechanism(f)).NotTo(BeEmpty(), string(f))
		}
		Expect(strings.Count(md, "nginx, the held-out workload.")).To(Equal(1))
	})
})
