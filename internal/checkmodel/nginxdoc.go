package checkmodel

import "fmt"

// nginxRealText is the report's account of the live nginx points.
func nginxRealText(r *Result) string {
	return fmt.Sprintf("Real, nginx (the held-out workload: no price was fitted to it, nor to any nginx or wrk run on this "+
		"machine): the same two namespaces' shape%s; one nginx (master and one worker) serves every point from the "+
		"configuration check-model writes into a temporary folder (`internal/checkmodel/nginx.go`: `nginx -p DIR -c "+
		"DIR/nginx.conf -e stderr -g 'daemon off;'`, nothing read from /etc/nginx; `access_log off`, as the twin keeps no log; "+
		"`sendfile off` and `open_file_cache`, so that a response is one writev(2) of headers and file as the twin's one write; "+
		"`keepalive_requests` unbounded, as the twin's wrk never reconnects; `listen ... backlog=4096` and "+
		"`worker_connections` raised for 1,000 connections), one static file of %d bytes; each point is `wrk -t1 -c N -d %ds "+
		"--latency -s wrk.lua http://10.99.0.1:80/index.html` (keep-alive, one request in flight per connection, its "+
		"descriptor limit raised with prlimit), killed after `--timeout`. Figures: wrk's responses over its duration; the mean "+
		"latency by Little's law, N connections over the responses per second (wrk 4 corrects its latency histogram for "+
		"coordinated omission before printing it, wrk.c's stats_correct, so its own mean is not a mean response time; the "+
		"twin's mean is taken the same way); the p99 as the script's done() prints it, corrected so (the twin's is not: on a "+
		"busy machine the real p99 holds synthetic samples for every stall); CPU per request, user and system time together, "+
		"over wrk's responses: nginx's master and worker from `/proc/PID/stat` before and after each run (in 10 ms ticks), "+
		"wrk's from its own resource usage at exit.\n\n",
		pinnedNginx(r.Pinned), NginxPageBytes, int(r.Config.Duration.Seconds()))
}

func pinnedNginx(p bool) string {
	if p {
		return ", nginx's master and worker pinned to CPU 1 and wrk to CPU 0 (taskset)"
	}
	return ", both on the one CPU the process may use"
}

// nginxSimText is the report's account of the nginx twin.
func nginxSimText(prices string) string {
	return fmt.Sprintf("Simulated, nginx: the scenario `internal/checkmodel/template_http.yaml` fills for each point (the same two "+
		"hosts; the model's HTTP server, `apps/http`, one worker on the kernel's stack on core 1, serving one %d-byte page "+
		"without gzip; the model's wrk on core 0, closed loop, N keep-alive connections; figures over a %v window after a %v "+
		"warm-up), at %s. What the server charges per request is the model's own: `http_request` (parse and headers), "+
		"`parse_byte`, the kernel's socket calls, epoll and TCP path. `request_cpu`, the Tengine scenario's declared input "+
		"for everything else a server does per request (solved there for that article's figures), is 0: no source "+
		"independent of these runs prices nginx's static-file path, so the rows show what the model misses without it.\n\n",
		NginxPageBytes, httpSimWindow, httpSimWarmup, prices)
}

// nginxNote is what the live nginx points have that their twin lacks.
const nginxNote = "- nginx's responses carry eight headers (Server, Date, Content-Type, Content-Length, Last-Modified, " +
	"Connection, ETag, Accept-Ranges: about 240 bytes before the file), the twin's four (about 90 bytes); both are one " +
	"segment each way. wrk counts from its first connection (the handshakes are in its duration), the twin over a " +
	"steady-state window after a warm-up.\n"

// nginxPerRequest is what the nginx twin's server charges per request
// and what it leaves out, the ground of most of its misses: printed once
// above them.
const nginxPerRequest = "The model's price of nginx's request is `http_request` alone (3 us for parse and headers, with " +
	"`request_cpu` 0). Its source is NGINX's published small-file rate per core on another machine, a whole-request " +
	"figure that also holds the kernel's work the model charges again as `kernel_tcp_rx` and `kernel_tcp_tx`: a " +
	"simulated CPU above the real one points there. nginx's static-file path beyond parse and headers has no price of " +
	"its own: a simulated CPU below the real one points there. That path is ngx_http_static_module's open_file_cache " +
	"lookup and the pread(2) of the file (a system call the twin does not make), the Date, Last-Modified and ETag " +
	"headers (ngx_http_header_filter_module), the request's pool allocated and freed (ngx_http_create_request, " +
	"ngx_http_free_request), and the read and keep-alive timers in the event loop's red-black tree " +
	"(ngx_event_add_timer, ngx_http_set_keepalive): the mechanism missing from the model is a price for a static " +
	"file's request on nginx's side, with a source of its own, in place of `request_cpu` 0.\n"

// NginxMechanism names what the model lacks, or may count twice, that a
// miss of figure f on the nginx workload points at, beside the
// per-request price the report states once above the list. It is keyed
// by the figure as Mechanism is, and fitted to nothing: it says where to
// look, the table by how much and in which direction.
func NginxMechanism(f Figure) string {
	switch f {
	case FigRPS:
		return "on a busy machine first the CPU the scheduler leaves to nginx and wrk (the twin's two hosts have a " +
			"machine each); then the per-request price above; from 200 connections on, nginx's and wrk's per-connection " +
			"state in the core's cache (ngx_connection_t, the request's 1 KiB client_header_buffer and pool; wrk's " +
			"connection struct and http_parser), beside the kernel's socket state the model prices"
	case FigMean:
		return "at one connection the round trip is the sum of both hosts' paths, and on a busy machine the wait for a " +
			"CPU after each wake-up; on the server the per-request price above; on the client, wrk's http_parser " +
			"callbacks per response header (eight from nginx, four from the twin)"
	case FigServerCPU:
		return "the per-request price above; and where Linux charges a veth's receive softirq (to the sending process's " +
			"CPU time, not the receiver's)"
	case FigClientCPU:
		return "wrk's http_parser callbacks per header (nginx sends eight, the twin's server four), beside " +
			"`wrk_response`'s estimate from wrk.c's code path, and its per-connection state missing the cache at many " +
			"connections; the kernel's path priced per segment as on the server; and the veth softirq of nginx's replies " +
			"charged to nginx's send, not wrk"
	case FigTail:
		return Mechanism(FigTail)
	case FigP99:
		return "as p99/mean"
	}
	return ""
}
