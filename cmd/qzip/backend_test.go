//go:build !dpdk

package main

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("qzip -backend dpdk without the dpdk build tag", func() {
	It("fails with an error that names the tag", func() {
		rc, _, errOut := qz([]byte("x"), "-c", "-backend", "dpdk")
		Expect(rc).To(Equal(1))
		Expect(errOut).To(ContainSubstring("rebuild with go build -tags dpdk"))
	})

	It("refuses an unknown backend", func() {
		rc, _, errOut := qz([]byte("x"), "-c", "-backend", "fpga")
		Expect(rc).To(Equal(1))
		Expect(errOut).To(ContainSubstring("-backend fpga: want sim or dpdk"))
	})
})
