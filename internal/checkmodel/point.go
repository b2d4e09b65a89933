package checkmodel

import "strconv"

// The servers a point measures.
const (
	// SystemRedis is Debian's redis-server on the kernel's stack.
	SystemRedis = "redis"
	// SystemSavanna is simrun serve --app kv: Savanna's stack, live.
	SystemSavanna = "savanna"
	// SystemNginx is Debian's nginx serving a static file to Debian's
	// wrk: the held-out workload, to which no price was fitted.
	SystemNginx = "nginx"
)

// Point is one measured or simulated run: one server, one command, one
// number of clients.
type Point struct {
	System  string
	Command string
	Clients int
	// Requests are the replies the figures are over.
	Requests float64
	RPS      float64
	MeanMS   float64
	P99MS    float64
	// ServerCPUus and ClientCPUus are CPU microseconds per request, user
	// and system time together.
	ServerCPUus float64
	ClientCPUus float64
	// Notes say what a reader must know about the point (a benchmark that
	// did not finish, a CPU figure at the resolution of a clock tick).
	Notes []string
}

// Key names the point in tables and errors.
func (p Point) Key() string { return p.System + " " + p.Command + " c=" + strconv.Itoa(p.Clients) }
