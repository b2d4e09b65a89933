//go:build dpdk

package dpdk

/*
#include "sv_dpdk.h"
*/
import "C"

import (
	"fmt"
	"net"
	"unsafe"

	"github.com/savanna-sim/savanna/hw"
)

// maxBurst bounds one RxBurst or TxBurst; a longer slice is served in
// part, as a PMD's own burst limit does.
const maxBurst = 512

// EthDevStats are the driver's own counters beside the port's
// rte_eth_stats; XStats reports them with a "savanna_" prefix.
type EthDevStats struct {
	// RxForeign counts received mbufs that came from a pool not made by
	// this package (no twin to hand out): they are freed and dropped.
	RxForeign uint64 `json:"rx_foreign"`
	// TxForeign counts mbufs given to TxBurst that are not backed by an
	// rte_mbuf of this package's pools: they are taken, freed and dropped.
	TxForeign uint64 `json:"tx_foreign"`
	// RxBursts and TxBursts count calls that crossed into C.
	RxBursts uint64 `json:"rx_bursts"`
	TxBursts uint64 `json:"tx_bursts"`
}

// EthDev is an hw.EthDev over one rte_ethdev port.
//
// As in DPDK, each queue is used by one goroutine at a time; different
// queues may be used concurrently (each has its own scratch arrays). The
// control calls (Configure, Setup*, Start, Stop) are for one goroutine
// while the port is stopped.
type EthDev struct {
	eal    *EAL
	id     C.uint16_t
	name   string
	socket int
	info   hw.DevInfo

	rxq []*rxQueue
	txq []*txQueue
}

// Burst scratch arrays live in C memory: cgo's pointer check walks every
// Go array handed to C, which for a 1024-entry array of segment views
// cost more than the burst itself.
type rxQueue struct {
	pkts  []*C.struct_rte_mbuf
	segs  []C.struct_sv_seg
	stats queueCounters
	q     uint16
}

type txQueue struct {
	pkts  []C.uintptr_t
	segs  []C.struct_sv_seg
	stats queueCounters
}

// queueCounters are per-queue driver counters, written by the queue's
// goroutine only and read approximately by Stats.
type queueCounters struct {
	foreign uint64
	bursts  uint64
}

// OpenPort opens the ethdev port called name (rte_eth_dev_get_port_by_name),
// e.g. "net_ring0", "net_memif0" or a PCI address such as "0000:3b:00.0".
func (e *EAL) OpenPort(name string) (*EthDev, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var id C.uint16_t
	if rc := C.rte_eth_dev_get_port_by_name(cname, &id); rc != 0 {
		return nil, fmt.Errorf("dpdk: port %q: %w (ports probed: %q)", name, errnoErr(rc), e.Ports())
	}
	p := &EthDev{eal: e, id: id, name: name}
	p.socket = int(C.rte_eth_dev_socket_id(id))
	if p.socket < 0 {
		// A vdev has no socket of its own (SOCKET_ID_ANY): use ours.
		p.socket = e.SocketID()
	}
	if err := p.readInfo(); err != nil {
		return nil, err
	}
	return p, nil
}

// cArray allocates a zeroed array of n T in C memory.
func cArray[T any](n int) []T {
	var zero T
	return unsafe.Slice((*T)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(zero)))), n)
}

// cFree frees an array made by cArray.
func cFree[T any](a []T) {
	if len(a) > 0 {
		C.free(unsafe.Pointer(&a[0]))
	}
}

// Name returns the port's device name.
func (p *EthDev) Name() string { return p.name }

// PortID returns the DPDK port id.
func (p *EthDev) PortID() uint16 { return uint16(p.id) }

// Socket returns the NUMA socket of the port (rte_eth_dev_socket_id):
// make its rx pools there.
func (p *EthDev) Socket() int { return p.socket }

func (p *EthDev) readInfo() error {
	var di C.struct_rte_eth_dev_info
	if rc := C.rte_eth_dev_info_get(p.id, &di); rc != 0 {
		return fmt.Errorf("dpdk: port %q: rte_eth_dev_info_get: %w", p.name, errnoErr(rc))
	}
	p.info = hw.DevInfo{
		DriverName:    C.GoString(di.driver_name),
		NUMANode:      p.socket,
		MaxRxQueues:   int(di.max_rx_queues),
		MaxTxQueues:   int(di.max_tx_queues),
		MaxRxDesc:     int(di.rx_desc_lim.nb_max),
		MaxTxDesc:     int(di.tx_desc_lim.nb_max),
		MinRxDesc:     int(di.rx_desc_lim.nb_min),
		MinTxDesc:     int(di.tx_desc_lim.nb_min),
		MaxFrameLen:   int(di.max_rx_pktlen),
		SpeedMbps:     int(C.sv_speed_mbps(di.speed_capa)),
		RxOffloadCapa: hw.RxOffloads(C.sv_rx_capa(di.rx_offload_capa)),
		TxOffloadCapa: hw.TxOffloads(C.sv_tx_capa(di.tx_offload_capa)),
		RSSHashTypes:  hw.RSSHashType(C.sv_rss_types(di.flow_type_rss_offloads)),
		RETASize:      int(di.reta_size),
		HashKeySize:   int(di.hash_key_size),
		MaxMACAddrs:   int(di.max_mac_addrs),
		DefaultRxRing: int(di.default_rxportconf.ring_size),
		DefaultTxRing: int(di.default_txportconf.ring_size),
	}
	return nil
}

// Info implements hw.EthDev (rte_eth_dev_info_get).
func (p *EthDev) Info() hw.DevInfo { return p.info }

// Configure implements hw.EthDev (rte_eth_dev_configure). RSS is asked
// for only when conf selects hash types; hash types the device cannot
// hash are an error, as are offloads it does not offer, so that a stack
// never counts on an offload that silently is not there.
func (p *EthDev) Configure(conf hw.PortConf) error {
	if conf.RxQueues < 1 || conf.RxQueues > p.info.MaxRxQueues {
		return fmt.Errorf("dpdk: port %q: rx queues %d outside 1..%d", p.name, conf.RxQueues, p.info.MaxRxQueues)
	}
	if conf.TxQueues < 1 || conf.TxQueues > p.info.MaxTxQueues {
		return fmt.Errorf("dpdk: port %q: tx queues %d outside 1..%d", p.name, conf.TxQueues, p.info.MaxTxQueues)
	}
	if missing := conf.RSSHashTypes &^ p.info.RSSHashTypes; missing != 0 {
		return fmt.Errorf("dpdk: port %q (%s): RSS hash types %#x not supported (device offers %#x)",
			p.name, p.info.DriverName, uint32(missing), uint32(p.info.RSSHashTypes))
	}
	if missing := conf.RxOffloads &^ p.info.RxOffloadCapa; missing != 0 {
		return fmt.Errorf("dpdk: port %q (%s): rx offloads %#x not supported (device offers %#x)",
			p.name, p.info.DriverName, uint64(missing), uint64(p.info.RxOffloadCapa))
	}
	if missing := conf.TxOffloads &^ p.info.TxOffloadCapa; missing != 0 {
		return fmt.Errorf("dpdk: port %q (%s): tx offloads %#x not supported (device offers %#x)",
			p.name, p.info.DriverName, uint64(missing), uint64(p.info.TxOffloadCapa))
	}
	var key *C.uint8_t
	if len(conf.RSSKey) > 0 {
		if len(conf.RSSKey) > 255 {
			return fmt.Errorf("dpdk: port %q: RSS key of %d bytes is too long", p.name, len(conf.RSSKey))
		}
		key = (*C.uint8_t)(C.CBytes(conf.RSSKey))
		defer C.free(unsafe.Pointer(key))
	}
	rc := C.sv_eth_configure(p.id, C.uint16_t(conf.RxQueues), C.uint16_t(conf.TxQueues),
		C.uint32_t(conf.MTU), C.sv_rx_offloads(C.uint64_t(conf.RxOffloads)),
		C.sv_tx_offloads(C.uint64_t(conf.TxOffloads)), key, C.uint8_t(len(conf.RSSKey)),
		C.sv_rss_hf(C.uint64_t(conf.RSSHashTypes)))
	if rc != 0 {
		return fmt.Errorf("dpdk: port %q: rte_eth_dev_configure(%d rx, %d tx queues): %w",
			p.name, conf.RxQueues, conf.TxQueues, errnoErr(rc))
	}
	p.rxq = make([]*rxQueue, conf.RxQueues)
	p.txq = make([]*txQueue, conf.TxQueues)
	return nil
}

// SetupRxQueue implements hw.EthDev (rte_eth_rx_queue_setup on the port's
// socket). pool must be a *Mempool of this package.
func (p *EthDev) SetupRxQueue(q int, nbDesc int, pool hw.Mempool) error {
	if q < 0 || q >= len(p.rxq) {
		return fmt.Errorf("dpdk: port %q: rx queue %d not configured (%d queues)", p.name, q, len(p.rxq))
	}
	mp, ok := pool.(*Mempool)
	if !ok || mp.eal != p.eal {
		return fmt.Errorf("dpdk: port %q: rx queue %d: pool %T is not a hw/dpdk mempool of this EAL", p.name, q, pool)
	}
	if rc := C.sv_eth_rx_queue_setup(p.id, C.uint16_t(q), C.uint16_t(nbDesc), C.int(p.socket), mp.mp); rc != 0 {
		return fmt.Errorf("dpdk: port %q: rte_eth_rx_queue_setup(queue %d, %d descriptors, pool %q): %w",
			p.name, q, nbDesc, mp.name, errnoErr(rc))
	}
	if old := p.rxq[q]; old != nil {
		cFree(old.pkts)
		cFree(old.segs)
	}
	p.rxq[q] = &rxQueue{
		pkts: cArray[*C.struct_rte_mbuf](maxBurst),
		segs: cArray[C.struct_sv_seg](maxBurst * 2),
		q:    uint16(q),
	}
	return nil
}

// SetupTxQueue implements hw.EthDev (rte_eth_tx_queue_setup on the port's
// socket).
func (p *EthDev) SetupTxQueue(q int, nbDesc int) error {
	if q < 0 || q >= len(p.txq) {
		return fmt.Errorf("dpdk: port %q: tx queue %d not configured (%d queues)", p.name, q, len(p.txq))
	}
	if rc := C.sv_eth_tx_queue_setup(p.id, C.uint16_t(q), C.uint16_t(nbDesc), C.int(p.socket)); rc != 0 {
		return fmt.Errorf("dpdk: port %q: rte_eth_tx_queue_setup(queue %d, %d descriptors): %w",
			p.name, q, nbDesc, errnoErr(rc))
	}
	if old := p.txq[q]; old != nil {
		cFree(old.pkts)
		cFree(old.segs)
	}
	p.txq[q] = &txQueue{
		pkts: cArray[C.uintptr_t](maxBurst),
		segs: cArray[C.struct_sv_seg](maxBurst * 2),
	}
	return nil
}

// Start implements hw.EthDev (rte_eth_dev_start).
func (p *EthDev) Start() error {
	for q, r := range p.rxq {
		if r == nil {
			return fmt.Errorf("dpdk: port %q: start: rx queue %d not set up", p.name, q)
		}
	}
	for q, t := range p.txq {
		if t == nil {
			return fmt.Errorf("dpdk: port %q: start: tx queue %d not set up", p.name, q)
		}
	}
	if rc := C.rte_eth_dev_start(p.id); rc != 0 {
		return fmt.Errorf("dpdk: port %q: rte_eth_dev_start: %w", p.name, errnoErr(rc))
	}
	return nil
}

// Stop implements hw.EthDev (rte_eth_dev_stop).
func (p *EthDev) Stop() error {
	if rc := C.rte_eth_dev_stop(p.id); rc != 0 {
		return fmt.Errorf("dpdk: port %q: rte_eth_dev_stop: %w", p.name, errnoErr(rc))
	}
	return nil
}

// Close stops the port and releases it (rte_eth_dev_close).
func (p *EthDev) Close() error {
	_ = p.Stop()
	if rc := C.rte_eth_dev_close(p.id); rc != 0 {
		return fmt.Errorf("dpdk: port %q: rte_eth_dev_close: %w", p.name, errnoErr(rc))
	}
	return nil
}

// MACAddr implements hw.EthDev (rte_eth_macaddr_get).
func (p *EthDev) MACAddr() net.HardwareAddr {
	var a C.struct_rte_ether_addr
	if C.rte_eth_macaddr_get(p.id, &a) != 0 {
		return nil
	}
	return net.HardwareAddr(C.GoBytes(unsafe.Pointer(&a.addr_bytes[0]), C.RTE_ETHER_ADDR_LEN))
}

// Link implements hw.EthDev (rte_eth_link_get_nowait).
func (p *EthDev) Link() hw.LinkStatus {
	var l C.struct_sv_link
	if C.sv_link_get(p.id, &l) != 0 {
		return hw.LinkStatus{}
	}
	return hw.LinkStatus{Up: l.up != 0, SpeedMbps: int(l.speed), FullDuplex: l.full_duplex != 0}
}

// RETA implements hw.EthDev (rte_eth_dev_rss_reta_query); nil when the
// device has no redirection table.
func (p *EthDev) RETA() []uint16 {
	n := p.info.RETASize
	if n == 0 {
		return nil
	}
	out := make([]uint16, n)
	if C.sv_reta_query(p.id, (*C.uint16_t)(unsafe.Pointer(&out[0])), C.uint16_t(n)) != 0 {
		return nil
	}
	return out
}

// SetRETA implements hw.EthDev (rte_eth_dev_rss_reta_update).
func (p *EthDev) SetRETA(reta []uint16) error {
	if p.info.RETASize == 0 {
		return fmt.Errorf("dpdk: port %q (%s): no RSS redirection table", p.name, p.info.DriverName)
	}
	if len(reta) != p.info.RETASize {
		return fmt.Errorf("dpdk: port %q: RETA of %d entries, the device's has %d", p.name, len(reta), p.info.RETASize)
	}
	if rc := C.sv_reta_update(p.id, (*C.uint16_t)(unsafe.Pointer(&reta[0])), C.uint16_t(len(reta))); rc != 0 {
		return fmt.Errorf("dpdk: port %q: rte_eth_dev_rss_reta_update: %w", p.name, errnoErr(rc))
	}
	return nil
}

// RSSKey implements hw.EthDev (rte_eth_dev_rss_hash_conf_get); nil when
// the device does not report one.
func (p *EthDev) RSSKey() []byte {
	if p.info.HashKeySize == 0 {
		return nil
	}
	key := make([]byte, p.info.HashKeySize)
	n := C.uint8_t(len(key))
	if C.sv_rss_key(p.id, (*C.uint8_t)(unsafe.Pointer(&key[0])), &n) != 0 {
		return nil
	}
	return key[:min(int(n), len(key))]
}
