//go:build !dpdk

package main

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("simrun serve --backend", func() {
	serveArgs := func(extra ...string) []string {
		return append([]string{"serve", "--ip", "10.78.0.2/24", "--app", "kv", "--port", "6379"}, extra...)
	}

	It("answers --backend dpdk in a build without the tag with the error naming the tag", func() {
		code, _, errOut := simrun(serveArgs("--backend", "dpdk", "--eal", "--no-huge -m 256 --no-pci --no-shconf -l 0-1 --vdev=net_tap0,iface=svd0")...)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("savanna was built without -tags dpdk; rebuild with go build -tags dpdk (needs libdpdk-dev)"))
	})

	DescribeTable("refuses what it cannot run, naming the flag",
		func(want string, extra ...string) {
			code, _, errOut := simrun(serveArgs(extra...)...)
			Expect(code).To(Equal(2))
			Expect(errOut).To(ContainSubstring(want))
		},
		Entry("dpdk without EAL arguments", "--eal is required with --backend dpdk", "--backend", "dpdk"),
		Entry("tap without an interface", "--tap is required with --backend tap"),
		Entry("the simulation, which is not live", "--backend sim: serve runs in real time", "--backend", "sim"),
		Entry("an unknown backend", `--backend "fpga": want tap or dpdk`, "--backend", "fpga"),
		Entry("a negative park", "--max-park -1s: must not be negative", "--tap", "x", "--max-park", "-1s"),
	)
})
