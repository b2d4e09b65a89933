package checkmodel

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The held-out workload: Debian's nginx serving one static file to
// Debian's wrk. No price was fitted to it (docs/validation.md).
const (
	// NginxPort is where nginx listens in the server's namespace.
	NginxPort = 80
	// NginxPageBytes is the served file's size: 1 KiB, of the order of
	// nginx's own index.html (615 bytes in Debian's nginx-common), one
	// segment with its headers.
	NginxPageBytes = 1024
	// nginxPath is the file's URL path.
	nginxPath = "/index.html"
)

// NginxPage is the served file: HTML of exactly n bytes, the same on
// every run.
func NginxPage(n int) []byte {
	head := "<!DOCTYPE html>\n<html><head><title>savanna check-model</title></head><body>\n<p>"
	tail := "</p></body></html>\n"
	b := []byte(head)
	for i := 0; len(b) < n-len(tail); i++ {
		b = append(b, "savanna "[i%8])
	}
	b = append(b, tail...)
	if len(b) > n {
		// Too small for the markup: plain text of n bytes.
		return bytes.Repeat([]byte("s"), n)
	}
	return b
}

// nginxConf is the configuration check-model writes for one live run
// (nginx -p PREFIX -c FILE -g 'daemon off;'). Every directive that
// differs from nginx's built-in default says why; nothing is read from
// /etc/nginx. Directives (nginx.org/en/docs): worker_processes,
// worker_rlimit_nofile, worker_connections, listen's backlog,
// keepalive_requests (1000 by default since 1.19.10), access_log,
// sendfile, open_file_cache.
const nginxConf = `# Written by simrun check-model (internal/checkmodel/nginx.go) for one
# live run; removed with its folder when the run ends.
# One worker, as the twin's one server core; the master only forks it.
worker_processes 1;
# Room for {{clients}} connections, the listener, the file and the logs.
worker_rlimit_nofile {{rlimit}};
pid {{prefix}}/nginx.pid;
# Notices on standard error: "start worker process PID" is how check-model
# learns the worker's PID and that it is ready.
error_log stderr notice;

events {
    worker_connections {{conns}};
}

http {
    default_type text/html;
    # Off: the twin keeps no log. With a log nginx writes one line per
    # request with write(2) (no buffer= given), a system call the twin
    # would then have to charge too.
    access_log off;
    # nginx reads the small file into its buffer and sends headers and
    # body in one writev(2), the twin's one write of headers and page;
    # with sendfile the body is a second system call.
    sendfile off;
    # The file's descriptor and metadata are kept open, as the twin's
    # page is in memory: no open/fstat/close per request.
    open_file_cache max=16;
    # Keep-alive for the whole run, as the twin's wrk: nginx closes a
    # connection after 1000 requests by default.
    keepalive_requests 1000000000;
    # Debian builds in temporary paths under /var/lib/nginx; these keep
    # the run inside its own folder (a GET of a static file uses none).
    client_body_temp_path {{prefix}}/tmp/body;
    proxy_temp_path {{prefix}}/tmp/proxy;
    fastcgi_temp_path {{prefix}}/tmp/fastcgi;
    uwsgi_temp_path {{prefix}}/tmp/uwsgi;
    scgi_temp_path {{prefix}}/tmp/scgi;

    server {
        # The twin's listener backlog (apps/http: Listen(port, 4096)):
        # all of wrk's connections may arrive at once.
        listen {{addr}} backlog=4096;
        root {{prefix}}/html;
    }
}
`

// NginxConfig renders nginx.conf for a run in prefix with up to clients
// connections at once. worker_connections is twice those: nginx starts
// closing idle keep-alive connections once fewer than a sixteenth of
// its connections are free (ngx_event_accept.c and ngx_connection.c:
// free_connection_n < connection_n / 16 calls ngx_drain_connections,
// logging "worker_connections are not enough, reusing connections"),
// which wrk counts as read errors.
func NginxConfig(prefix string, clients int) string {
	conns := max(1024, 2*clients+64)
	r := strings.NewReplacer("{{prefix}}", prefix, "{{clients}}", strconv.Itoa(clients),
		"{{conns}}", strconv.Itoa(conns), "{{rlimit}}", strconv.Itoa(2*conns),
		"{{addr}}", ServerIP+":"+strconv.Itoa(NginxPort))
	return r.Replace(nginxConf)
}

// nginxFiles writes the configuration, the served file and wrk's script
// into dir, readable by nginx's worker (which runs as nobody when the
// master is root and the file names no user).
func nginxFiles(dir string, clients int) (conf, script string, err error) {
	for _, d := range []string{dir, filepath.Join(dir, "html"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", err
		}
		if err := os.Chmod(d, 0o755); err != nil {
			return "", "", err
		}
	}
	conf = filepath.Join(dir, "nginx.conf")
	script = filepath.Join(dir, "wrk.lua")
	for _, f := range []struct {
		path string
		data []byte
	}{{conf, []byte(NginxConfig(dir, clients))}, {filepath.Join(dir, "html", "index.html"), NginxPage(NginxPageBytes)},
		{script, []byte(wrkScript)}} {
		if err := os.WriteFile(f.path, f.data, 0o644); err != nil {
			return "", "", fmt.Errorf("nginx files: %w", err)
		}
	}
	return conf, script, nil
}

// nginxArgv runs nginx in the foreground on the written configuration
// only: -p the run's folder, -c its file, -e standard error for what it
// logs before it has read the file (Debian's build logs to
// /var/log/nginx otherwise).
func nginxArgv(prefix, conf string) []string {
	return []string{"nginx", "-p", prefix, "-c", conf, "-e", "stderr", "-g", "daemon off;"}
}

// nginxReady is the notice the master logs once it forked the worker;
// the listening socket was opened before, so connections queue from then.
const nginxReady = "start worker process "

var workerRE = regexp.MustCompile(`start worker process (\d+)`)

// nginxLog reads nginx's error log (its standard error, at notice) as it
// is written: the worker's PID from the master's notice, and the
// warnings and errors a point's note must report ("worker_connections
// are not enough", a failed accept, ...).
type nginxLog struct {
	mu       sync.Mutex
	workers  []string
	problems int
	last     string
}

// nginxProblem are the levels of nginx's log that a run must report
// (ngx_log.c's err_levels above notice and info).
var nginxProblem = regexp.MustCompile(`\[(warn|error|crit|alert|emerg)\]`)

// watch takes one line of nginx's output.
func (l *nginxLog) watch(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := workerRE.FindStringSubmatch(line); m != nil {
		l.workers = append(l.workers, m[1])
	}
	if nginxProblem.MatchString(line) {
		l.problems++
		l.last = line
	}
}

// counts returns the workers started, the warnings and errors so far
// and the last of those.
func (l *nginxLog) counts() (workers, problems int, last string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.workers), l.problems, l.last
}

// worker returns the one worker's PID, checked against /proc: its
// parent must be the master.
func (l *nginxLog) worker(master int) (int, error) {
	l.mu.Lock()
	ws := append([]string(nil), l.workers...)
	l.mu.Unlock()
	if len(ws) != 1 {
		return 0, fmt.Errorf("nginx: %d \"start worker process\" notices, want 1", len(ws))
	}
	pid, err := strconv.Atoi(ws[0])
	if err != nil {
		return 0, fmt.Errorf("nginx worker pid %q: %w", ws[0], err)
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("nginx worker %d: %w", pid, err)
	}
	ppid, err := parseStatPPID(data)
	if err != nil {
		return 0, fmt.Errorf("nginx worker %d: %w", pid, err)
	}
	if ppid != master {
		return 0, fmt.Errorf("nginx worker %d: its parent is %d, not the master %d", pid, ppid, master)
	}
	return pid, nil
}

// parseStatPPID returns field 4 of a /proc/PID/stat line, counted after
// the command name as ParseStat does.
func parseStatPPID(data []byte) (int, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc stat: no ')' closing the command name")
	}
	f := bytes.Fields(data[end+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc stat: no parent field")
	}
	return strconv.Atoi(string(f[1]))
}

// nginxVersion is nginx -v's line (it prints it on standard error).
func nginxVersion(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "nginx", "-v").CombinedOutput()
	if err != nil {
		return "nginx: " + err.Error()
	}
	return strings.TrimSpace(string(out))
}

// wrkVersion is the first line wrk prints about itself: wrk has no
// version flag, and prints its version in its usage text.
func wrkVersion(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, "wrk", "-v").CombinedOutput()
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if !strings.HasPrefix(line, "wrk ") {
		return "wrk (version not printed)"
	}
	// "wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer"
	if i := strings.Index(line, " Copyright"); i > 0 {
		line = line[:i]
	}
	return line
}
