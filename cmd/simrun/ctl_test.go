package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/control"
	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/stack/gonet"
)

// ctlRig is serve's watching side (the handlers simrun serve gives its
// control socket) over an echo server on B of a ring pair, with A as
// the client: simrun ctl runs against it in-process, no root needed.
type ctlRig struct {
	pair *livetest.RingPair
	w    *watched
	sock string
}

func newCtlRig() *ctlRig {
	pair, err := livetest.NewRingPair(1, 2)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(pair.Stop)
	lat := gonet.NewReadLatency(2)
	ln, err := gonet.ListenOptions(pair.B, 7, gonet.DefaultBacklog, gonet.Options{Latency: lat})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(ln.Close)
	app, err := newServeApp(serveConfig{app: "echo"})
	Expect(err).NotTo(HaveOccurred())
	go func() { _ = app.serve(ln) }()
	dir, err := os.MkdirTemp("", "ctl")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	level := new(slog.LevelVar)
	w := &watched{r: pair.B, dev: pair.PB, app: "echo", appStats: app.stats, lat: lat, started: time.Now(),
		level: level, log: slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: level}))}
	sock := filepath.Join(dir, "serve.sock")
	stop, err := w.start(serveConfig{ctl: sock})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stop)
	return &ctlRig{pair: pair, w: w, sock: sock}
}

// dial opens n connections from A to the echo server, held open until
// the spec ends, each having echoed one message.
func (c *ctlRig) dial(n int) []net.Conn {
	var out []net.Conn
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, err := gonet.Dial(ctx, c.pair.A, "10.9.0.2:7")
		cancel()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(conn.Close)
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		msg := []byte("hello savanna")
		_, err = conn.Write(msg)
		Expect(err).NotTo(HaveOccurred())
		_, err = io.ReadFull(conn, msg)
		Expect(err).NotTo(HaveOccurred())
		out = append(out, conn)
	}
	return out
}

func (c *ctlRig) ctl(args ...string) (int, string, string) {
	return simrun(append([]string{"ctl", "--socket", c.sock}, args...)...)
}

var _ = Describe("simrun ctl", func() {
	It("shows every counter as serve prints them on exit, and as JSON", func() {
		c := newCtlRig()
		c.dial(2)
		code, out, errOut := c.ctl("show")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(MatchRegexp(`(?m)^app echo, up \S+$`))
		Expect(out).To(MatchRegexp(`(?m)^nic: .*ipackets=\d+`))
		Expect(out).To(MatchRegexp(`(?m)^lcore1 tcp: .*in_segs=\d+`))
		Expect(out).To(MatchRegexp(`(?m)^app echo: .*bytes=26 conns=2`))

		code, out, errOut = c.ctl("show", "--json")
		Expect(code).To(Equal(0), errOut)
		var t control.Totals
		Expect(json.Unmarshal([]byte(out), &t)).To(Succeed())
		Expect(t.App).To(Equal("echo"))
		Expect(t.Runtime.Lcores).To(HaveLen(2))
		Expect(string(t.AppStats)).To(ContainSubstring(`"conns":2`))
	})

	It("lists the connections with addresses, state, queues, srtt and cwnd", func() {
		c := newCtlRig()
		conns := c.dial(3)
		code, out, errOut := c.ctl("show", "--conn")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(MatchRegexp(`(?m)^LCORE +LOCAL +REMOTE +STATE +SEND-Q +RECV-Q +TX-RING +RX-RING +SRTT +CWND$`))
		Expect(out).To(MatchRegexp(`(?m)^0 +0\.0\.0\.0:7 +\* +LISTEN +1024 +0 `))
		for _, conn := range conns {
			Expect(out).To(MatchRegexp(`(?m)^\d +10\.9\.0\.2:7 +%s +ESTABLISHED +\d+ +\d+ +\d+ +\d+ +\S+s +\d+$`,
				strings.ReplaceAll(conn.LocalAddr().String(), ".", `\.`)))
		}
		Expect(out).To(ContainSubstring("5 sockets"))

		code, out, errOut = c.ctl("--json", "show", "--conn")
		Expect(code).To(Equal(0), errOut)
		var s control.Sockets
		Expect(json.Unmarshal([]byte(out), &s)).To(Succeed())
		var est []control.Socket
		for _, x := range s.Sockets {
			if x.State == "ESTABLISHED" {
				est = append(est, x)
			}
		}
		Expect(est).To(HaveLen(3))
		for _, x := range est {
			Expect(x.Remote).To(HavePrefix("10.9.0.1:"))
			Expect(x.Local).To(Equal("10.9.0.2:7"))
			Expect(x.SRTTNanos).To(BeNumerically(">", 0), "the echo's data was acknowledged")
			Expect(x.Cwnd).To(BeNumerically(">", 0))
		}
	})

	It("shows rates per second, bounded by --count, counters only", func() {
		c := newCtlRig()
		conns := c.dial(1)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := make([]byte, 100)
			for i := 0; i < 100000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := conns[0].Write(msg); err != nil {
					return
				}
				if _, err := io.ReadFull(conns[0], msg); err != nil {
					return
				}
			}
		}()
		defer func() { close(stop); wg.Wait() }()
		code, out, errOut := c.ctl("show", "--rate", "--count", "2", "--interval", "200ms", "--json")
		Expect(code).To(Equal(0), errOut)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		Expect(lines).To(HaveLen(2))
		for _, l := range lines {
			var s ctlRateSample
			Expect(json.Unmarshal([]byte(l), &s)).To(Succeed())
			Expect(s.IntervalSeconds).To(BeNumerically(">", 0))
			Expect(s.Rates).To(HaveKey("app echo.bytes"))
			Expect(s.Rates).NotTo(HaveKey("pool.Available"), "a gauge has no rate")
			Expect(s.Rates).NotTo(HaveKey("lcore0 tcp.curr_estab"))
		}
		code, out, errOut = c.ctl("show", "--rate", "--count", "1", "--interval", "200ms")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(MatchRegexp(`(?m)^-- per second over \S+s, up \S+\n`))
		Expect(out).To(MatchRegexp(`(?m)^app echo: bytes=[0-9.]+`))
	})

	It("shows read-latency percentiles", func() {
		c := newCtlRig()
		c.dial(2)
		code, out, errOut := c.ctl("show", "--latency")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(ContainSubstring("read latency: " + control.LatencyWhat))
		Expect(out).To(MatchRegexp(`(?m)^2 reads, min \S+, mean \S+, max \S+$`))
		Expect(out).To(MatchRegexp(`(?m)^  p50 +\S+$`))
		Expect(out).To(MatchRegexp(`(?m)^  p99\.9 +\S+$`))
		code, out, _ = c.ctl("show", "--latency", "--json")
		Expect(code).To(Equal(0))
		var l control.Latency
		Expect(json.Unmarshal([]byte(out), &l)).To(Succeed())
		Expect(l.Enabled).To(BeTrue())
		Expect(l.Count).To(BeEquivalentTo(2))
		Expect(l.Percentiles).To(HaveLen(5))
	})

	It("shows the port's xstats, zeros included", func() {
		c := newCtlRig()
		code, out, errOut := c.ctl("show", "--xstats")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(MatchRegexp(`(?m)^rx_good_packets +\d+$`))
		Expect(out).To(MatchRegexp(`(?m)^tx_errors +0$`))
		code, out, _ = c.ctl("show", "--xstats", "--json")
		Expect(code).To(Equal(0))
		var x control.XStats
		Expect(json.Unmarshal([]byte(out), &x)).To(Succeed())
		Expect(x.XStats).NotTo(BeEmpty())
	})

	It("sets serve's log level", func() {
		c := newCtlRig()
		code, out, errOut := c.ctl("set", "loglevel", "debug")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(Equal("log level DEBUG (was INFO)\n"))
		Expect(c.w.level.Level()).To(Equal(slog.LevelDebug))
		code, out, _ = c.ctl("--json", "set", "loglevel", "ERROR")
		Expect(code).To(Equal(0))
		Expect(out).To(Equal(`{"level":"ERROR","previous":"DEBUG"}` + "\n"))
		Expect(c.w.level.Level()).To(Equal(slog.LevelError))
	})

	It("says clearly when the serve process is not there", func() {
		dir, err := os.MkdirTemp("", "ctl")
		Expect(err).NotTo(HaveOccurred())
		defer os.RemoveAll(dir)
		code, _, errOut := simrun("ctl", "--socket", filepath.Join(dir, "gone.sock"), "show")
		Expect(code).To(Equal(1))
		Expect(errOut).To(ContainSubstring("simrun ctl: no simrun serve answers at " + filepath.Join(dir, "gone.sock") + ": no such socket"))
		GinkgoT().Setenv("XDG_RUNTIME_DIR", dir)
		code, _, errOut = simrun("ctl", "show")
		Expect(code).To(Equal(1))
		Expect(errOut).To(ContainSubstring("no serve-*.sock in " + filepath.Join(dir, "savanna")))
	})

	DescribeTable("refuses what it cannot do, saying why",
		func(want string, args ...string) {
			code, _, errOut := simrun(append([]string{"ctl", "--socket", "/nonexistent.sock"}, args...)...)
			Expect(code).To(Equal(2))
			Expect(errOut).To(ContainSubstring(want))
		},
		Entry("no command", "say what to do: show or set loglevel LEVEL"),
		Entry("an unknown command", `unknown command "reboot": want show or set`, "reboot"),
		Entry("two views at once", "--rate, --conn, --latency and --xstats are one each", "show", "--conn", "--latency"),
		Entry("a show argument", `show takes no argument (got ["conn"])`, "show", "conn"),
		Entry("set without loglevel", "set: want set loglevel debug|info|warn|error", "set", "level", "debug"),
		Entry("an unknown level", `set loglevel: "loud": want debug, info, warn or error`, "set", "loglevel", "loud"),
		Entry("a zero interval", "--interval 0s: must be positive", "show", "--rate", "--interval", "0"),
	)
})
