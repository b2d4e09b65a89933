package ringdev_test

import (
	"testing"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
)

// FuzzRSSClassify sends arbitrary frames to a port with RSS over four
// queues: classification reads untrusted headers and must never panic,
// and every frame must come out of exactly one queue.
func FuzzRSSClassify(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 14))
	ok := make([]byte, 54)
	ok[12], ok[13], ok[14], ok[23] = 0x08, 0x00, 0x45, 6
	f.Add(ok)
	bad := append([]byte(nil), ok...)
	bad[14] = 0x4f // IHL 60 bytes, longer than the frame
	f.Add(bad)
	a, b, _ := ringdev.NewPair(ringdev.Config{}, ringdev.Config{})
	pool, _ := ringdev.NewMempool("fuzz", 64, 2048)
	_ = a.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1})
	_ = a.SetupRxQueue(0, 32, pool)
	_ = a.SetupTxQueue(0, 32)
	_ = a.Start()
	_ = b.Configure(hw.PortConf{RxQueues: 4, TxQueues: 4, RSSHashTypes: hw.RSSIPv4 | hw.RSSIPv4TCP})
	for q := 0; q < 4; q++ {
		_ = b.SetupRxQueue(q, 32, pool)
		_ = b.SetupTxQueue(q, 32)
	}
	_ = b.Start()
	rx := make([]*hw.Mbuf, 4)
	f.Fuzz(func(t *testing.T, frame []byte) {
		if len(frame) > 1500 {
			frame = frame[:1500]
		}
		m := pool.Get()
		if err := m.SetData(frame); err != nil {
			t.Fatal(err)
		}
		before := b.Stats().IPackets
		a.TxBurst(0, []*hw.Mbuf{m})
		got := 0
		for q := 0; q < 4; q++ {
			n := b.RxBurst(q, rx)
			got += n
			for _, x := range rx[:n] {
				x.Free()
			}
		}
		if len(frame) >= 14 && got != 1 {
			t.Fatalf("frame of %d bytes came out %d times", len(frame), got)
		}
		if b.Stats().IPackets-before != uint64(got) {
			t.Fatal("ipackets disagrees with what was received")
		}
		if pool.Stats().InUse != 0 {
			t.Fatalf("%d mbufs leaked", pool.Stats().InUse)
		}
	})
}
