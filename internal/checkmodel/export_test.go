package checkmodel

// NginxLogCounts feeds lines to the reader of nginx's log the live run
// uses and returns what it counted, for the specs.
func NginxLogCounts(lines ...string) (workers, problems int, last string) {
	l := &nginxLog{}
	for _, s := range lines {
		l.watch(s)
	}
	return l.counts()
}
