package hw

import "net"

// RSS hash types, mirroring RTE_ETH_RSS_*: which packet fields feed the
// Toeplitz hash.
type RSSHashType uint32

// RSS hash types. A NIC hashes a packet by the most specific type enabled
// that matches it.
const (
	RSSIPv4 RSSHashType = 1 << iota
	RSSIPv4TCP
	RSSIPv4UDP
	RSSIPv6
	RSSIPv6TCP
	RSSIPv6UDP
)

// RxOffloads and TxOffloads mirror RTE_ETH_RX_OFFLOAD_* and
// RTE_ETH_TX_OFFLOAD_*.
type (
	RxOffloads uint64
	TxOffloads uint64
)

// Receive offloads.
const (
	RxOffloadIPv4Checksum RxOffloads = 1 << iota
	RxOffloadTCPChecksum
	RxOffloadUDPChecksum
	RxOffloadRSSHash
)

// Transmit offloads.
const (
	TxOffloadIPv4Checksum TxOffloads = 1 << iota
	TxOffloadTCPChecksum
	TxOffloadUDPChecksum
	TxOffloadMultiSegs
)

// DevInfo mirrors struct rte_eth_dev_info: what a port can do.
type DevInfo struct {
	DriverName    string
	NUMANode      int
	MaxRxQueues   int
	MaxTxQueues   int
	MaxRxDesc     int // largest ring size (rx_desc_lim.nb_max)
	MaxTxDesc     int
	MinRxDesc     int
	MinTxDesc     int
	MaxFrameLen   int // largest frame received, Ethernet header and FCS included (max_rx_pktlen)
	SpeedMbps     int // nominal link speed
	RxOffloadCapa RxOffloads
	TxOffloadCapa TxOffloads
	RSSHashTypes  RSSHashType // flow_type_rss_offloads
	RETASize      int         // reta_size
	HashKeySize   int         // hash_key_size
	MaxMACAddrs   int
	DefaultRxRing int // default_rxportconf.ring_size
	DefaultTxRing int
}

// PortConf mirrors struct rte_eth_conf plus the queue counts of
// rte_eth_dev_configure.
type PortConf struct {
	RxQueues   int
	TxQueues   int
	MTU        int
	RxOffloads RxOffloads
	TxOffloads TxOffloads
	// RSSKey is the Toeplitz key; nil keeps the device's default.
	RSSKey []byte
	// RSSHashTypes selects the fields hashed; zero disables RSS.
	RSSHashTypes RSSHashType
}

// LinkStatus mirrors struct rte_eth_link.
type LinkStatus struct {
	Up         bool
	SpeedMbps  int
	FullDuplex bool
}

// EthStats mirrors struct rte_eth_stats, with the per-queue arrays as
// slices indexed by queue.
type EthStats struct {
	IPackets uint64 // packets received and handed to rx rings
	OPackets uint64 // packets transmitted
	IBytes   uint64
	OBytes   uint64
	IMissed  uint64 // packets dropped because an rx ring was full
	IErrors  uint64 // erroneous packets received (bad FCS, too long ...)
	OErrors  uint64 // packets that failed to transmit
	RxNoMbuf uint64 // packets dropped because no mbuf could be had

	QIPackets []uint64
	QOPackets []uint64
	QIBytes   []uint64
	QOBytes   []uint64
	QErrors   []uint64 // per rx queue drops (imissed per queue)
}

// XStat mirrors one rte_eth_xstat with its name
// (rte_eth_xstats_get_names).
type XStat struct {
	Name  string
	Value uint64
}

// EthDev mirrors one ethdev port (rte_ethdev): configured, given queues,
// started, then driven by RxBurst and TxBurst from the lcores that own its
// queues. As in DPDK, one queue is used by one lcore at a time; different
// queues may be used concurrently.
type EthDev interface {
	// Info returns the port's capabilities (rte_eth_dev_info_get).
	Info() DevInfo
	// Configure sets queue counts and offloads (rte_eth_dev_configure).
	// It must be called while the port is stopped.
	Configure(conf PortConf) error
	// SetupRxQueue gives rx queue q a ring of nbDesc descriptors filled
	// from pool (rte_eth_rx_queue_setup).
	SetupRxQueue(q int, nbDesc int, pool Mempool) error
	// SetupTxQueue gives tx queue q a ring of nbDesc descriptors
	// (rte_eth_tx_queue_setup).
	SetupTxQueue(q int, nbDesc int) error
	// Start starts the port (rte_eth_dev_start).
	Start() error
	// Stop stops the port (rte_eth_dev_stop).
	Stop() error
	// RxBurst moves up to len(pkts) received packets into pkts and
	// returns how many (rte_eth_rx_burst). The caller owns them.
	RxBurst(q int, pkts []*Mbuf) int
	// TxBurst queues up to len(pkts) packets for transmission and returns
	// how many it took (rte_eth_tx_burst). The port owns (and frees)
	// those it took; the caller keeps the rest.
	TxBurst(q int, pkts []*Mbuf) int
	// Stats returns the basic statistics (rte_eth_stats_get).
	Stats() EthStats
	// XStats returns the extended statistics by name
	// (rte_eth_xstats_get_names and rte_eth_xstats_get).
	XStats() []XStat
	// ResetStats zeroes the statistics (rte_eth_stats_reset).
	ResetStats()
	// MACAddr returns the port's MAC (rte_eth_macaddr_get).
	MACAddr() net.HardwareAddr
	// Link returns the link state (rte_eth_link_get_nowait).
	Link() LinkStatus
	// RETA returns the RSS redirection table
	// (rte_eth_dev_rss_reta_query).
	RETA() []uint16
	// SetRETA replaces the RSS redirection table
	// (rte_eth_dev_rss_reta_update). Its length must be the RETA size.
	SetRETA(reta []uint16) error
	// RSSKey returns the Toeplitz key in use
	// (rte_eth_dev_rss_hash_conf_get).
	RSSKey() []byte
}
