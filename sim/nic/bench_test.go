package nic_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
)

// benchDriver sends 64-byte frames from port a and drains port b, one
// burst per event, at the pace of the wire: the work of a poll-mode
// sender and receiver without the cost of simulated cores.
type benchDriver struct {
	a, b      *nic.Port
	pool      *nic.Mempool
	frame     []byte
	burst     [32]*hw.Mbuf
	rx        [64]*hw.Mbuf
	remaining int
	received  int
	total     int
	period    time.Duration
}

func (d *benchDriver) Fire(e *sim.Engine, _ uint64) {
	for {
		n := d.b.RxBurst(0, d.rx[:])
		for _, m := range d.rx[:n] {
			m.Free()
		}
		d.received += n
		if n < len(d.rx) {
			break
		}
	}
	k := min(len(d.burst), d.remaining)
	for i := 0; i < k; i++ {
		m := d.pool.Get()
		buf, _ := m.Append(len(d.frame))
		copy(buf, d.frame)
		d.burst[i] = m
	}
	n := d.a.TxBurst(0, d.burst[:k])
	for _, m := range d.burst[n:k] {
		m.Free()
	}
	d.remaining -= n
	if d.remaining > 0 || d.received < d.total {
		e.After(d.period, d, 0)
	}
}

// BenchmarkLinkFrames measures simulated frames carried per wall-clock
// second through a 25G link in the engine: tx burst, serialization,
// arrival event, rx classification, mbuf copy, rx burst and both frees.
// One op is one frame.
func BenchmarkLinkFrames(b *testing.B) {
	for _, bc := range []struct {
		name string
		rss  bool
	}{{"plain", false}, {"rss+cksum", true}} {
		b.Run(bc.name, func(b *testing.B) {
			eng := sim.NewEngine(1)
			mem := newTestMem(1<<16, 1)
			ao, bo := defaultOpts(), defaultOpts()
			ao.mbufs, bo.mbufs = 4096, 4096
			if bc.rss {
				bo.rxq = 1
				bo.rss = hw.RSSIPv4 | hw.RSSIPv4UDP
				bo.rxOffloads = hw.RxOffloadIPv4Checksum | hw.RxOffloadUDPChecksum | hw.RxOffloadRSSHash
			}
			a, pool := newPort(eng, mem, 0, "a", ao)
			bp, _ := newPort(eng, mem, 1, "b", bo)
			if _, err := nic.NewLink(eng, "ab", a, bp, nic.LinkConfig{Latency: time.Microsecond}); err != nil {
				b.Fatal(err)
			}
			d := &benchDriver{a: a, b: bp, pool: pool, frame: udpFrame(64, 0), period: 32 * 27 * time.Nanosecond}
			// Warm up: grow the link's in-flight slots and the event
			// queue to their steady-state size.
			d.remaining, d.total = 100_000, 100_000
			eng.After(0, d, 0)
			eng.Run()
			d.remaining, d.total, d.received = b.N, b.N, 0
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			eng.After(0, d, 0)
			eng.Run()
			cpu := cpuTime() - cpu0
			b.StopTimer()
			if d.received != b.N {
				b.Fatalf("received %d of %d", d.received, b.N)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
			// The same per second of CPU the process used: on a shared
			// machine, wall time includes waiting for a CPU.
			b.ReportMetric(float64(b.N)/cpu.Seconds(), "frames/cpu-s")
		})
	}
}

// BenchmarkToeplitz measures the hash of an IPv4 4-tuple (12 bytes).
func BenchmarkToeplitz(b *testing.B) {
	key := nic.MicrosoftRSSKey()
	in := []byte{66, 9, 149, 187, 161, 142, 100, 80, 0x0a, 0xea, 0x06, 0xe6}
	b.ReportAllocs()
	var h uint32
	for i := 0; i < b.N; i++ {
		in[0] = byte(i)
		h ^= nic.ToeplitzHash(key, in)
	}
	_ = h
}

// cpuTime returns the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
