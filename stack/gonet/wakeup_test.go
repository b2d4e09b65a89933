package gonet_test

import (
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/gonet"
)

// The wake-up channel of a Conn's Read and Write is made on first use
// (most connections never wait to write). These specs drive its protocol
// step by step in the orders that race: a waiter loads the channel
// before it looks at its condition (Now), and when the look finds
// nothing it waits (Wait); a signaller changes the condition, then
// signals (Signal); SetDeadline, on any goroutine, makes the channel
// (Get). The bound on Eventually only turns a waiter parked for good
// into a failure; nothing is timed.
var _ = Describe("a lazily made wake-up channel", func() {
	It("sends a waiter back to look again when another goroutine made the channel between its look and its wait, after the condition changed", func() {
		var s gonet.LazySig
		var cond atomic.Bool
		seen := s.Now()
		Expect(seen).To(BeNil())
		Expect(cond.Load()).To(BeFalse(), "the waiter's look finds nothing")
		cond.Store(true)
		s.Signal() // no channel yet: nothing to signal
		made := make(chan struct{})
		go func() { defer close(made); s.Get() }() // SetReadDeadline from another goroutine
		<-made
		waited := make(chan struct{})
		go func() { defer close(waited); s.Wait(seen) }()
		Eventually(waited).WithTimeout(10*time.Second).Should(BeClosed(),
			"a waiter parked on a channel the signaller never saw: a lost wake-up")
		Expect(cond.Load()).To(BeTrue(), "the second look sees the change")
	})

	It("wakes a waiter parked on a channel that existed before its look", func() {
		var s gonet.LazySig
		var cond atomic.Bool
		s.Get()
		seen := s.Now()
		Expect(seen).NotTo(BeNil())
		Expect(cond.Load()).To(BeFalse())
		go func() { cond.Store(true); s.Signal() }()
		waited := make(chan struct{})
		go func() { defer close(waited); s.Wait(seen) }()
		Eventually(waited).WithTimeout(10 * time.Second).Should(BeClosed())
		Expect(cond.Load()).To(BeTrue())
	})

	It("loses no wake-up when a waiter, a signaller and a deadline setter race on a fresh channel, round after round", func() {
		const rounds = 2000
		for i := 0; i < rounds; i++ {
			var s gonet.LazySig
			var cond atomic.Bool
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); cond.Store(true); s.Signal() }()
			go func() { defer wg.Done(); s.Get() }()
			waited := make(chan struct{})
			go func() {
				defer close(waited)
				for {
					seen := s.Now()
					if cond.Load() {
						return
					}
					s.Wait(seen)
				}
			}()
			Eventually(waited).WithTimeout(10*time.Second).Should(BeClosed(), "round %d", i)
			wg.Wait()
		}
	})
})
