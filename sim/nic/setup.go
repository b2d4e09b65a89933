package nic

import (
	"fmt"

	"github.com/savanna-sim/savanna/hw"
)

// PortConf turns the scenario entry into the hw.PortConf a stack would
// pass to Configure, applying the defaults: rxQueues and txQueues are used
// when the entry sets none (one queue pair per stack core), all RSS hash
// types are enabled when there are several rx queues and the entry names
// none, and the key is the Microsoft key unless rss_key is given.
func (c *PortConfig) PortConf(rxQueues, txQueues int) (hw.PortConf, error) {
	if err := c.Validate(); err != nil {
		return hw.PortConf{}, err
	}
	p, _ := Preset(c.Model)
	conf := hw.PortConf{RxQueues: c.RxQueues, TxQueues: c.TxQueues}
	if conf.RxQueues == 0 {
		conf.RxQueues = max(1, rxQueues)
	}
	if conf.TxQueues == 0 {
		conf.TxQueues = max(1, txQueues)
	}
	conf.RSSHashTypes, _ = ParseRSSHashTypes(c.RSSHash)
	if len(c.RSSHash) == 0 && conf.RxQueues > 1 {
		conf.RSSHashTypes = p.RSSHashTypes
	}
	if c.RSSKey != "" {
		conf.RSSKey, _ = parseRSSKey(c.RSSKey, p.HashKeySize)
	}
	conf.RxOffloads, _ = ParseRxOffloads(c.RxOffloads)
	conf.TxOffloads, _ = ParseTxOffloads(c.TxOffloads)
	return conf, nil
}

// SetupOnNodes configures and starts port from its scenario entry, as a
// DPDK application's init does: Configure with cfg.PortConf(rxQueues,
// txQueues), then Setup with cfg's rings and mbufs. Each rx queue's
// mempool is on the NUMA node poolNode(q) gives, as a stack whose queues
// are served by cores on several nodes places them (Gazelle takes each
// lcore's mbufs from its own node); a nil poolNode puts every pool on the
// port's node.
func SetupOnNodes(port *Port, cfg PortConfig, mem hw.HugeMemory, rxQueues, txQueues int, poolNode func(q int) int) ([]*Mempool, error) {
	conf, err := cfg.PortConf(rxQueues, txQueues)
	if err != nil {
		return nil, fmt.Errorf("nic %q: %w", cfg.Name, err)
	}
	return Setup(port, conf, Rings{RxRing: cfg.RxRing, TxRing: cfg.TxRing, Mbufs: cfg.Mbufs, MbufSize: cfg.MbufSize}, mem, poolNode)
}

// Rings are a port's descriptor rings and its rx queues' pools; zero
// fields take the defaults: the preset's rings, 2 × rx ring + 1024 mbufs
// per pool, DefaultMbufSize.
type Rings struct {
	RxRing, TxRing  int
	Mbufs, MbufSize int
}

// Setup configures port with conf, makes one mempool per rx queue
// (named "<port>-rx<q>", on the node poolNode(q) gives or the port's),
// sets up every queue with r's rings and starts the port. It returns the
// pools so that the caller can report and free them.
func Setup(port *Port, conf hw.PortConf, r Rings, mem hw.HugeMemory, poolNode func(q int) int) ([]*Mempool, error) {
	if err := port.Configure(conf); err != nil {
		return nil, err
	}
	rxRing := r.RxRing
	if rxRing == 0 {
		rxRing = port.preset.DefaultRxRing
	}
	n := r.Mbufs
	if n == 0 {
		n = 2*rxRing + 1024
	}
	size := r.MbufSize
	if size == 0 {
		size = DefaultMbufSize
	}
	var pools []*Mempool
	fail := func(err error) ([]*Mempool, error) {
		for _, p := range pools {
			_ = p.Free()
		}
		return nil, err
	}
	for q := 0; q < conf.RxQueues; q++ {
		node := port.node
		if poolNode != nil {
			node = poolNode(q)
		}
		pool, err := NewMempool(fmt.Sprintf("%s-rx%d", port.name, q), n, size, node, mem)
		if err != nil {
			return fail(fmt.Errorf("nic %q rx queue %d: %w", port.name, q, err))
		}
		pools = append(pools, pool)
		if err := port.SetupRxQueue(q, rxRing, pool); err != nil {
			return fail(err)
		}
	}
	for q := 0; q < conf.TxQueues; q++ {
		if err := port.SetupTxQueue(q, r.TxRing); err != nil {
			return fail(err)
		}
	}
	if err := port.Start(); err != nil {
		return fail(err)
	}
	return pools, nil
}
