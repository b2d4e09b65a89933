// Command qzip is a gzip-compatible compressor through zlibshim, in the
// spirit of QATzip's qzip: it compresses and decompresses files and pipes
// (-d, -k, -c, -L level, -O gzip|gzipext|deflate) and, with -v, tells
// what ran on the QAT device and what fell back to software. Its output
// is read by gzip -d.
//
// This main package is wiring: it runs the shim on a simulated QAT
// device (sim/qat: one c62x with the oot40052 driver) unless -sw or
// -policy software-only is given.
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/dpdk"
	"github.com/savanna-sim/savanna/sim/qat"
)

func main() {
	os.Exit(run(os.Args[1:], defaultEnv()))
}

// defaultEnv wires qzip to a simulated QAT device.
func defaultEnv() env {
	e := env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, pid: 1, openDPDK: openDPDK}
	svc, err := qat.NewService(qat.Config{Devices: []qat.DeviceConfig{{Model: "c62x"}}},
		qat.Options{RNG: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		fmt.Fprintf(os.Stderr, "qzip: no simulated QAT device (%v); running in software\n", err)
		return e
	}
	m := &hw.CountingMeter{}
	svc.BindProcess(e.pid, m)
	e.svc, e.meter = svc, m
	e.deviceSummary = func() string {
		ps := svc.ProcessStats(e.pid)
		return fmt.Sprintf("qzip: device view: %d requests, instances attached %d, syscalls open %d ioctl %d futex %d mmap %d, virtual time %v\n",
			ps.Requests, ps.Attaches, ps.Syscalls.Open, ps.Syscalls.Ioctl, ps.Syscalls.Futex, ps.Syscalls.Mmap, m.Now())
	}
	return e
}

// openDPDK starts the EAL and opens a compress device as the shim's
// accelerator. Without -tags dpdk it fails with an error naming the tag.
func openDPDK(ealArgs, device string) (hw.CompressService, error) {
	eal, err := dpdk.Init(dpdk.Config{Args: strings.Fields(ealArgs)})
	if err != nil {
		return nil, err
	}
	return eal.OpenCompressService(device, dpdk.CompressConfig{Socket: dpdk.AnySocket})
}
