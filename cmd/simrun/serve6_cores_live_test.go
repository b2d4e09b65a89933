//go:build !dpdk

package main

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
)

// On a multi-queue TAP the kernel chooses each frame's queue, hence the
// lcore: tun's automatic flow steering (tun_automq_select_queue,
// drivers/net/tun.c) takes the skb's flow hash, which the flow dissector
// computes over the IPv6 addresses and ports as over IPv4's, so IPv6
// flows spread over serve's lcores with no RSS of Savanna's own (hw/tap
// has none; internal/rss is the simulated NIC's and DPDK's Toeplitz).
var _ = Describe("simrun serve on a two-queue TAP over IPv6, live", Label("live", "slow"), func() {
	It("serves IPv6 connections from many kernel flows on both lcores", func() {
		live6Skip("redis-benchmark", "redis-cli")
		const conns = 2000 // -k 0: one connection, so one flow, per request
		s := liveServe6(nil, false, "--ip", live6Stack+"/64", "--app", "kv", "--port", "6379", "--cores", "2")
		Expect(s.Ready()).To(Equal("savanna: serving kv on [fd00::2]:6379 (tap sv0, 2 lcores)"))
		Eventually(func() error { return s.RedisSetGet(live6Stack, "greeting", "hello over IPv6") }).
			WithTimeout(20 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		out, err := s.Exec(3*time.Minute, "redis-benchmark", "-h", live6Stack, "-p", "6379",
			"-t", "ping", "-n", fmt.Sprint(conns/2), "-c", "16", "-k", "0", "-q")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(livetest.RedisBenchmarkRates(out)).To(HaveKey("PING_MBULK"), out)
		Expect(s.Stop()).To(Succeed())

		var opens [2]int64
		for lc := range opens {
			opens[lc] = s.Stat(fmt.Sprintf("lcore%d tcp", lc), "passive_opens")
			rx := s.Stat(fmt.Sprintf("lcore%d ipv6", lc), "ipv6.in_receives")
			AddReportEntry(fmt.Sprintf("lcore %d over IPv6 (TAP)", lc), fmt.Sprintf("%d passive opens, %d IPv6 packets in", opens[lc], rx))
			Expect(rx).To(BeNumerically(">", 0), "lcore %d received IPv6", lc)
		}
		total := opens[0] + opens[1]
		Expect(total).To(BeNumerically(">=", conns))
		// A fair split of ~2000 flows is 1000 +- 22 (one sigma); one
		// queue taking them all gives the other 0.
		for lc, n := range opens {
			Expect(n).To(BeNumerically(">", total/5), "lcore %d served its share (%d of %d)", lc, n, total)
		}
	})
})
