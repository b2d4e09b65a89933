package kv

import (
	"fmt"
	"time"
)

// Limits bound what clients may make the server do and hold. Each is a
// Redis directive (redis.conf) of the same meaning; the defaults are
// Redis's where Redis has a bounded one, and bounded where Redis's is
// "no limit", so that no peer can make the process run out of memory
// (issue 17). A zero field takes its default; for the limits Redis can
// turn off with 0, a negative value turns it off here (0 already means
// the default).
type Limits struct {
	// MaxArgs bounds the elements of one command (default 1Mi, Redis's
	// multibulk limit before 7.0: 1024*1024).
	MaxArgs int `yaml:"max_args"`
	// MaxBulk bounds one argument in bytes: proto-max-bulk-len
	// (default 512 MiB, as Redis's).
	MaxBulk int `yaml:"max_bulk"`
	// MaxInline bounds an inline command line (default 64 KiB, Redis's
	// PROTO_INLINE_MAX_SIZE).
	MaxInline int `yaml:"max_inline"`
	// QueryBufferLimit bounds what one client's unexecuted input holds
	// (its read buffer and the command being received, arguments
	// included): client-query-buffer-limit (default 1 GiB, as Redis's).
	// A client that needs more is closed (networking.c
	// readQueryFromClient).
	QueryBufferLimit int64 `yaml:"query_buffer_limit"`
	// MaxMemory bounds the bytes the server holds: the store's keys and
	// values and every client's query and output buffers, as Redis's
	// used_memory counts them all: maxmemory (default 1 GiB; Redis's 0
	// is no limit, which let issue 17's server die). Negative: no limit.
	MaxMemory int64 `yaml:"max_memory"`
	// OutputBufferHard, OutputBufferSoft and OutputBufferSoftTime are
	// client-output-buffer-limit normal <hard> <soft> <soft seconds>: a
	// client whose pending replies reach the hard limit, or stay at or
	// above the soft one for longer than the soft time, is closed
	// (networking.c checkClientOutputBufferLimits). Redis's normal
	// class has 0 0 0 (none); the defaults are 1 GiB, 64 MiB and 60 s:
	// a reply may be as large as a request may (client-query-buffer-
	// limit), and a client that leaves 64 MiB unread for a minute is not
	// reading (Redis's replica class has 256mb 64mb 60). Negative
	// sizes: no limit.
	OutputBufferHard     int64         `yaml:"output_buffer_hard"`
	OutputBufferSoft     int64         `yaml:"output_buffer_soft"`
	OutputBufferSoftTime time.Duration `yaml:"output_buffer_soft_time"`
	// MaxClients bounds the clients served at once: maxclients (default
	// 10000, as Redis's). One more is answered "-ERR max number of
	// clients reached" and closed (networking.c acceptCommonHandler).
	MaxClients int `yaml:"max_clients"`
	// Timeout closes a client idle for that long, neither sending nor
	// taking replies: timeout (default 300 s; Redis's 0 is never, which
	// let issue 17's 20,000 idle connections lock clients out for
	// ever). 300 s is Redis's tcp-keepalive period: a quiet client is
	// left alone for minutes, idle connections are reclaimed within
	// five. Negative: never.
	Timeout time.Duration `yaml:"timeout"`
}

// Defaults for Limits.
const (
	DefaultMaxArgs              = 1 << 20
	DefaultMaxBulk              = 512 << 20
	DefaultMaxInline            = 64 << 10
	DefaultQueryBufferLimit     = 1 << 30
	DefaultMaxMemory            = 1 << 30
	DefaultOutputBufferHard     = 1 << 30
	DefaultOutputBufferSoft     = 64 << 20
	DefaultOutputBufferSoftTime = 60 * time.Second
	DefaultMaxClients           = 10000
	DefaultTimeout              = 300 * time.Second
)

// WithDefaults fills zero fields with their defaults.
func (l Limits) WithDefaults() Limits {
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	if l.MaxArgs == 0 {
		l.MaxArgs = DefaultMaxArgs
	}
	if l.MaxBulk == 0 {
		l.MaxBulk = DefaultMaxBulk
	}
	if l.MaxInline == 0 {
		l.MaxInline = DefaultMaxInline
	}
	def(&l.QueryBufferLimit, DefaultQueryBufferLimit)
	def(&l.MaxMemory, DefaultMaxMemory)
	def(&l.OutputBufferHard, DefaultOutputBufferHard)
	def(&l.OutputBufferSoft, DefaultOutputBufferSoft)
	if l.OutputBufferSoftTime == 0 {
		l.OutputBufferSoftTime = DefaultOutputBufferSoftTime
	}
	if l.MaxClients == 0 {
		l.MaxClients = DefaultMaxClients
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// Validate names the first bad key.
func (l Limits) Validate() error {
	if l.MaxArgs < 0 || l.MaxArgs > 1<<24 {
		return fmt.Errorf("max_args: %d is outside 1..%d", l.MaxArgs, 1<<24)
	}
	if l.MaxBulk < 0 || l.MaxBulk > 1<<30 {
		return fmt.Errorf("max_bulk: %d is outside 1..%d", l.MaxBulk, 1<<30)
	}
	if l.MaxInline < 0 || l.MaxInline > 1<<24 {
		return fmt.Errorf("max_inline: %d is outside 1..%d", l.MaxInline, 1<<24)
	}
	// Redis's own minimum for client-query-buffer-limit (config.c).
	if l.QueryBufferLimit < 0 || (l.QueryBufferLimit > 0 && l.QueryBufferLimit < 1<<20) {
		return fmt.Errorf("query_buffer_limit: %d is below 1 MiB", l.QueryBufferLimit)
	}
	if l.MaxMemory > 0 && l.MaxMemory < 1<<20 {
		return fmt.Errorf("max_memory: %d is below 1 MiB (negative for no limit)", l.MaxMemory)
	}
	// Below the batch of replies a client is sent at once, every
	// pipelined batch would reach it.
	if l.OutputBufferHard > 0 && l.OutputBufferHard < flushAt {
		return fmt.Errorf("output_buffer_hard: %d is below %d (negative for no limit)", l.OutputBufferHard, flushAt)
	}
	if l.OutputBufferSoftTime < 0 {
		return fmt.Errorf("output_buffer_soft_time: %v is negative", l.OutputBufferSoftTime)
	}
	if l.MaxClients < 0 || l.MaxClients > 1<<20 {
		return fmt.Errorf("max_clients: %d is outside 1..%d", l.MaxClients, 1<<20)
	}
	return nil
}
