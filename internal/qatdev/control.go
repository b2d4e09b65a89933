package qatdev

import (
	"fmt"
	"net"
	"time"
)

// Fault is a control request's fault: a kind of sim/qat's FaultKinds and
// its parameters. Device "" means every device.
type Fault struct {
	Device    string
	Kind      string
	Rate      float64
	Instances int
	Delay     time.Duration
}

// control makes one control round trip on a connection of its own, which
// never says hello (so it takes no memfd and is not a process).
func control(socket string, r Request) (Response, error) {
	conn, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		return Response{}, fmt.Errorf("qatdev: dial %s: %w", socket, err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	b, err := frame(r)
	if err != nil {
		return Response{}, err
	}
	if _, err := conn.Write(b); err != nil {
		return Response{}, fmt.Errorf("qatdev: %s: %w", r.Op, err)
	}
	body, err := readFrame(conn)
	if err != nil {
		return Response{}, fmt.Errorf("qatdev: %s reply: %w", r.Op, err)
	}
	resp, err := decodeResponse(body)
	if err != nil {
		return Response{}, err
	}
	return resp, resp.err(string(r.Op))
}

// QueryStats asks the device process at socket for its telemetry.
func QueryStats(socket string) (Telemetry, error) {
	resp, err := control(socket, Request{Op: OpStats})
	if err != nil {
		return Telemetry{}, err
	}
	if resp.Telemetry == nil {
		return Telemetry{}, fmt.Errorf("qatdev: stats: reply without telemetry")
	}
	return *resp.Telemetry, nil
}

// InjectFault injects a fault in the device process at socket.
func InjectFault(socket string, f Fault) error {
	_, err := control(socket, Request{Op: OpFault, Device: f.Device, Kind: f.Kind, Rate: f.Rate,
		Instances: f.Instances, Delay: f.Delay})
	return err
}

// ClearFault clears a fault of kind ("" = every kind) on device ("" =
// every device).
func ClearFault(socket, device, kind string) error {
	_, err := control(socket, Request{Op: OpClear, Device: device, Kind: kind})
	return err
}
