package control_test

import (
	"bufio"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/control"
)

// shortDir is a temporary folder with a path short enough for a Unix
// socket (108 bytes), which Ginkgo's TempDir may exceed.
func shortDir() string {
	d, err := os.MkdirTemp("", "ctl")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, d)
	return d
}

// echoHandlers answer every command with what they were asked.
func testHandlers() map[string]control.Handler {
	return map[string]control.Handler{
		control.CmdShow: func(control.Request) (any, error) { return control.Totals{App: "kv", UptimeSeconds: 1.5}, nil },
		control.CmdSockets: func(control.Request) (any, error) {
			return control.Sockets{Sockets: []control.Socket{{Local: "10.0.0.1:80", State: "LISTEN"}}}, nil
		},
		control.CmdLatency: func(control.Request) (any, error) { return control.LatencyFrom(nil), nil },
		control.CmdXStats: func(control.Request) (any, error) {
			return control.XStats{XStats: []control.XStat{{Name: "rx_good_packets", Value: 7}}}, nil
		},
		control.CmdSetLogLevel: func(r control.Request) (any, error) {
			if r.Level != "debug" {
				return nil, errors.New("set loglevel: " + r.Level + ": want debug")
			}
			return control.LogLevel{Level: "DEBUG", Previous: "INFO"}, nil
		},
	}
}

func logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

var _ = Describe("the control protocol", func() {
	var path string
	var srv *control.Server
	BeforeEach(func() {
		path = filepath.Join(shortDir(), "sub", "serve-1.sock")
		var err error
		srv, err = control.Listen(path, testHandlers(), logger())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(srv.Close)
	})

	dial := func() *control.Client {
		c, err := control.Dial(path, 5*time.Second)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		return c
	}

	It("answers each command on one connection, in order", func() {
		c := dial()
		var t control.Totals
		Expect(c.Call(control.Request{Cmd: control.CmdShow}, &t)).To(Succeed())
		Expect(t.App).To(Equal("kv"))
		Expect(t.UptimeSeconds).To(Equal(1.5))
		var s control.Sockets
		Expect(c.Call(control.Request{Cmd: control.CmdSockets}, &s)).To(Succeed())
		Expect(s.Sockets).To(HaveLen(1))
		Expect(s.Sockets[0].State).To(Equal("LISTEN"))
		var l control.Latency
		Expect(c.Call(control.Request{Cmd: control.CmdLatency}, &l)).To(Succeed())
		Expect(l.Enabled).To(BeFalse())
		Expect(l.What).To(Equal(control.LatencyWhat))
		var x control.XStats
		Expect(c.Call(control.Request{Cmd: control.CmdXStats}, &x)).To(Succeed())
		Expect(x.XStats).To(Equal([]control.XStat{{Name: "rx_good_packets", Value: 7}}))
		var lv control.LogLevel
		Expect(c.Call(control.Request{Cmd: control.CmdSetLogLevel, Level: "debug"}, &lv)).To(Succeed())
		Expect(lv).To(Equal(control.LogLevel{Level: "DEBUG", Previous: "INFO"}))
	})

	It("returns a handler's error as the answer's error, and the connection goes on", func() {
		c := dial()
		err := c.Call(control.Request{Cmd: control.CmdSetLogLevel, Level: "loud"}, nil)
		Expect(err).To(MatchError("simrun serve: set loglevel: loud: want debug"))
		Expect(c.Call(control.Request{Cmd: control.CmdShow}, nil)).To(Succeed())
	})

	It("names the commands when asked for an unknown one", func() {
		err := dial().Call(control.Request{Cmd: "reboot"}, nil)
		Expect(err).To(MatchError(`simrun serve: unknown command "reboot" (want one of show, sockets, latency, xstats, set-loglevel)`))
	})

	DescribeTable("answers a bad request line with a clear error and keeps the connection",
		func(line, want string) {
			conn, err := net.Dial("unix", path)
			Expect(err).NotTo(HaveOccurred())
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			r := bufio.NewReader(conn)
			_, err = conn.Write([]byte(line + "\n"))
			Expect(err).NotTo(HaveOccurred())
			got, err := r.ReadString('\n')
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(ContainSubstring(`"ok":false`))
			Expect(got).To(ContainSubstring(want))
			_, err = conn.Write([]byte(`{"id":9,"cmd":"show"}` + "\n"))
			Expect(err).NotTo(HaveOccurred())
			got, err = r.ReadString('\n')
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(HavePrefix(`{"id":9,"ok":true`))
		},
		Entry("not JSON", "show", "bad request: invalid character 's'"),
		Entry("no command", `{"id":1}`, "bad request: no cmd (want one of show, sockets"),
		Entry("an unknown field", `{"id":1,"cmd":"show","force":true}`, `bad request: json: unknown field \"force\"`),
		Entry("two objects on a line", `{"cmd":"show"} {"cmd":"show"}`, "more than one JSON value on the line"),
		Entry("a wrong type", `{"id":"one","cmd":"show"}`, "bad request: json: cannot unmarshal string"),
	)

	It("answers a line too long with an error and closes the connection", func() {
		conn, err := net.Dial("unix", path)
		Expect(err).NotTo(HaveOccurred())
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Write([]byte(`{"cmd":"` + strings.Repeat("x", 8<<10) + "\"}\n"))
		Expect(err).NotTo(HaveOccurred())
		r := bufio.NewReader(conn)
		got, err := r.ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(ContainSubstring("bad request: line longer than 4096 bytes"))
		_, err = r.ReadString('\n')
		Expect(err).To(HaveOccurred(), "closed")
	})

	It("makes its socket and folder private, and refuses a second server on a live socket", func() {
		st, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Mode() & os.ModeSocket).NotTo(BeZero())
		Expect(st.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		dst, err := os.Stat(filepath.Dir(path))
		Expect(err).NotTo(HaveOccurred())
		Expect(dst.Mode().Perm()).To(Equal(os.FileMode(0o700)))
		_, err = control.Listen(path, testHandlers(), logger())
		Expect(err).To(MatchError(ContainSubstring("another process answers on it")))
	})

	It("replaces a socket file nobody listens on", func() {
		stale := filepath.Join(shortDir(), "stale.sock")
		l, err := net.Listen("unix", stale)
		Expect(err).NotTo(HaveOccurred())
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		Expect(l.Close()).To(Succeed())
		Expect(stale).To(BeAnExistingFile())
		s, err := control.Listen(stale, testHandlers(), logger())
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Close()).To(Succeed())
		Expect(stale).NotTo(BeAnExistingFile(), "Close removes the socket")
	})

	It("gives the client a clear error when the socket does not exist", func() {
		_, err := control.Dial(filepath.Join(shortDir(), "gone.sock"), time.Second)
		Expect(err).To(MatchError(control.ErrNoServer))
		Expect(err).To(MatchError(ContainSubstring("no such socket; is simrun serve running, and with --ctl")))
	})

	It("gives the client a clear error when the serve process went away during the session", func() {
		c := dial()
		Expect(c.Call(control.Request{Cmd: control.CmdShow}, nil)).To(Succeed())
		Expect(srv.Close()).To(Succeed())
		err := c.Call(control.Request{Cmd: control.CmdShow}, nil)
		Expect(err).To(MatchError(control.ErrNoServer))
		Expect(err).To(MatchError(ContainSubstring("the connection closed")))
		Expect(path).NotTo(BeAnExistingFile())
		_, err = control.Dial(path, time.Second)
		Expect(err).To(MatchError(ContainSubstring("no such socket")))
	})

	It("gives the client a clear error when a socket file is left by a killed process", func() {
		stale := filepath.Join(shortDir(), "killed.sock")
		l, err := net.Listen("unix", stale)
		Expect(err).NotTo(HaveOccurred())
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		Expect(l.Close()).To(Succeed())
		_, err = control.Dial(stale, time.Second)
		Expect(err).To(MatchError(control.ErrNoServer))
		Expect(err).To(MatchError(ContainSubstring("connection refused; the serve process that made it has gone")))
	})
})

var _ = Describe("the default socket", func() {
	It("is serve-PID.sock in $XDG_RUNTIME_DIR/savanna, and ctl finds the only one there", func() {
		d := shortDir()
		GinkgoT().Setenv("XDG_RUNTIME_DIR", d)
		Expect(control.DefaultPath(42)).To(Equal(filepath.Join(d, "savanna", "serve-42.sock")))
		_, err := control.FindSocket()
		Expect(err).To(MatchError(ContainSubstring("no serve-*.sock in " + filepath.Join(d, "savanna"))))
		s, err := control.Listen(control.DefaultPath(42), testHandlers(), logger())
		Expect(err).NotTo(HaveOccurred())
		defer s.Close()
		Expect(control.FindSocket()).To(Equal(control.DefaultPath(42)))
		s2, err := control.Listen(control.DefaultPath(43), testHandlers(), logger())
		Expect(err).NotTo(HaveOccurred())
		defer s2.Close()
		_, err = control.FindSocket()
		Expect(err).To(MatchError(ContainSubstring("choose one with --socket PATH")))
	})
})
