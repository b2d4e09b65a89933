package echo_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/echo"
)

var _ = Describe("echo-client (Pulse) configuration", func() {
	DescribeTable("refuses what it cannot run, naming the key",
		func(cfg echo.PulseConfig, key string) {
			err := cfg.Validate()
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(HavePrefix(key + ":"))
		},
		Entry("more devices than the stack holds", echo.PulseConfig{Connections: 1<<20 + 1}, "devices"),
		Entry("negative devices", echo.PulseConfig{Connections: -1}, "devices"),
		Entry("more devices than one server port's source ports", echo.PulseConfig{Connections: 70000}, "devices"),
		Entry("too many ports", echo.PulseConfig{Ports: 5000}, "ports"),
		Entry("a negative open rate", echo.PulseConfig{OpenRate: -1}, "open_rate"),
		Entry("a negative interval", echo.PulseConfig{Interval: -time.Second}, "interval"),
		Entry("a request larger than 1 KiB", echo.PulseConfig{Size: 2048}, "size"),
		Entry("a first port past 65535", echo.PulseConfig{FirstPort: 70000}, "first_port"),
	)

	It("takes a million devices over 16 server ports, 62,500 source ports each", func() {
		Expect((&echo.PulseConfig{Connections: 1000000, Ports: 16}).Validate()).To(Succeed())
		Expect((&echo.PulseConfig{Connections: 1000000, Ports: 15}).Validate()).To(MatchError(ContainSubstring("raise ports")))
	})
})
