package nic

import (
	"fmt"
	"sort"

	"github.com/savanna-sim/savanna/hw"
)

// PortPreset is what a NIC model can do: the figures of a real adapter
// under its DPDK driver that matter to the simulation. docs/nic.md gives
// the source of every figure.
type PortPreset struct {
	// Name is the preset's key ("x710-10g").
	Name string
	// Driver is the DPDK PMD the adapter uses (DevInfo.DriverName).
	Driver string
	// Description names the adapter.
	Description string
	SpeedMbps   int
	MaxRxQueues int
	MaxTxQueues int
	// MinRing and MaxRing bound descriptor rings (rx_desc_lim and
	// tx_desc_lim); sizes must also be powers of two in the model.
	MinRing, MaxRing int
	// DefaultRxRing and DefaultTxRing are default_rxportconf.ring_size
	// and default_txportconf.ring_size (ethdev's fallback, 512, when the
	// driver gives none).
	DefaultRxRing, DefaultTxRing int
	RETASize                     int
	HashKeySize                  int
	// MaxFrameLen is dev_info.max_rx_pktlen: the largest frame the port
	// takes, Ethernet header and FCS included.
	MaxFrameLen   int
	RxOffloadCapa hw.RxOffloads
	TxOffloadCapa hw.TxOffloads
	RSSHashTypes  hw.RSSHashType
	MaxMACAddrs   int
}

const (
	allRSS = hw.RSSIPv4 | hw.RSSIPv4TCP | hw.RSSIPv4UDP | hw.RSSIPv6 | hw.RSSIPv6TCP | hw.RSSIPv6UDP
	allRx  = hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum | hw.RxOffloadUDPChecksum | hw.RxOffloadRSSHash
	allTx  = hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum | hw.TxOffloadUDPChecksum | hw.TxOffloadMultiSegs
)

// presets returns the preset table. It is a function, not a package
// variable, so that the package holds no mutable state.
func presets() []PortPreset {
	return []PortPreset{
		{
			// Huawei Hi1822 (SP580/SP582 25GE), the NIC of the Gazelle
			// article; DPDK net/hinic, 22.11. Rings: hinic_dev_infos_get
			// gives default_rxportconf.ring_size = HINIC_DEFAULT_RING_SIZE
			// (1024, drivers/net/hinic/hinic_pmd_ethdev.h) and
			// HINIC_MIN/MAX_QUEUE_DEPTH 128..4096 (base/hinic_pmd_nicio.h).
			// Linux's hinic driver uses HINIC_SQ_DEPTH = HINIC_RQ_DEPTH =
			// SZ_4K (drivers/net/ethernet/huawei/hinic/hinic_hw_qp.h); on
			// a kernel-stack host the ring is not the buffer anyway
			// (RxDrainer).
			Name: "hi1822-25g", Driver: "net_hinic", Description: "Huawei Hi1822 25GE (hinic PMD)",
			SpeedMbps: 25000, MaxRxQueues: 64, MaxTxQueues: 64,
			MinRing: 128, MaxRing: 4096, DefaultRxRing: 1024, DefaultTxRing: 1024,
			RETASize: 256, HashKeySize: 40, MaxFrameLen: 9600 + 14 + 4 + 8,
			RxOffloadCapa: allRx, TxOffloadCapa: allTx, RSSHashTypes: allRSS, MaxMACAddrs: 1,
		},
		{
			// Intel Ethernet Controller X710 10GbE; DPDK net/i40e, 22.11.
			Name: "x710-10g", Driver: "net_i40e", Description: "Intel X710 10GbE (i40e PMD)",
			SpeedMbps: 10000, MaxRxQueues: 64, MaxTxQueues: 64,
			MinRing: 64, MaxRing: 4096, DefaultRxRing: 512, DefaultTxRing: 256,
			RETASize: 512, HashKeySize: 52, MaxFrameLen: 9728,
			RxOffloadCapa: allRx, TxOffloadCapa: allTx, RSSHashTypes: allRSS, MaxMACAddrs: 64,
		},
		{
			// Intel Ethernet Controller E810 100GbE; DPDK net/ice, 22.11.
			Name: "e810-100g", Driver: "net_ice", Description: "Intel E810-C 100GbE (ice PMD)",
			SpeedMbps: 100000, MaxRxQueues: 256, MaxTxQueues: 256,
			MinRing: 64, MaxRing: 4096, DefaultRxRing: 1024, DefaultTxRing: 1024,
			RETASize: 2048, HashKeySize: 52, MaxFrameLen: 9728,
			RxOffloadCapa: allRx, TxOffloadCapa: allTx, RSSHashTypes: allRSS, MaxMACAddrs: 64,
		},
	}
}

// Preset returns the preset called name.
func Preset(name string) (PortPreset, error) {
	for _, p := range presets() {
		if p.Name == name {
			return p, nil
		}
	}
	return PortPreset{}, fmt.Errorf("nic preset %q: unknown; known presets: %v", name, PresetNames())
}

// PresetNames returns the presets' names, sorted.
func PresetNames() []string {
	var names []string
	for _, p := range presets() {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// checkRing validates a descriptor count against the preset: a power of
// two within [MinRing, MaxRing] (DPDK checks nb_min, nb_max and
// nb_align; the model also wants a power of two so rings can be masked).
func (p *PortPreset) checkRing(n int) error {
	if !isPowerOfTwo(n) {
		return fmt.Errorf("%d is not a power of two", n)
	}
	if n < p.MinRing || n > p.MaxRing {
		return fmt.Errorf("%d is outside %s's range %d..%d", n, p.Name, p.MinRing, p.MaxRing)
	}
	return nil
}
