//go:build cgo

package main

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/qatdev"
	"github.com/savanna-sim/savanna/sim/qat"
)

// env is what the library reads from the process's environment once, at
// first use (docs/zlib-dropin.md lists the variables).
type env struct {
	// qatSocket (SAVANNA_QAT) is the QAT device process to attach to.
	qatSocket string
	// software (SAVANNA_ZLIB_SW=1): no accelerator, the shim's software
	// path only.
	software bool
	// policy (SAVANNA_ZLIB_POLICY: failover, hardware-only or
	// software-only; unset is failover) is the shim's Config.Policy, as
	// the qatzip_sw directive of Tengine's module chooses it.
	policy string
}

func readEnv() env {
	return env{qatSocket: os.Getenv("SAVANNA_QAT"), software: os.Getenv("SAVANNA_ZLIB_SW") == "1",
		policy: os.Getenv("SAVANNA_ZLIB_POLICY")}
}

// service is the compression service and meter a process's shim runs on,
// and where it came from (reported in the statistics).
type service struct {
	svc   hw.CompressService
	meter hw.Meter
	// pid is the process's identity at the service.
	pid  hw.ProcessID
	kind string
}

// chooseService picks the service: none under SAVANNA_ZLIB_SW=1, the
// device process under SAVANNA_QAT, else an in-process simulated QAT
// c62x as cmd/qzip uses.
func chooseService(e env, pid hw.ProcessID) (service, error) {
	switch {
	case e.software:
		return service{kind: "software", pid: pid}, nil
	case e.qatSocket != "":
		svc, m, devPID, err := dialDevice(e.qatSocket)
		if err != nil {
			return service{kind: "software", pid: pid}, fmt.Errorf("zlibgo: SAVANNA_QAT %s: %w", e.qatSocket, err)
		}
		return service{svc: svc, meter: m, pid: devPID, kind: "device-process"}, nil
	}
	svc, err := qat.NewService(qat.Config{Devices: []qat.DeviceConfig{{Model: "c62x"}}},
		qat.Options{RNG: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		return service{kind: "software", pid: pid}, fmt.Errorf("zlibgo: simulated QAT device: %w", err)
	}
	m := &hw.CountingMeter{}
	svc.BindProcess(pid, m)
	return service{svc: svc, meter: m, pid: pid, kind: "simulated-c62x"}, nil
}

// dialDevice attaches to the QAT device process (internal/qatdev). The
// server knows the process by its connection's peer PID, which the shim
// must use as its hw.ProcessID.
func dialDevice(socket string) (hw.CompressService, hw.Meter, hw.ProcessID, error) {
	c, err := qatdev.Dial(socket)
	if err != nil {
		return nil, nil, 0, err
	}
	return c, c.Meter(), c.PID(), nil
}
