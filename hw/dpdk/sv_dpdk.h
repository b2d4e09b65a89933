/*
 * sv_dpdk.h: the C side of hw/dpdk. DPDK's fast-path calls
 * (rte_eth_rx_burst, rte_eth_tx_burst, rte_pktmbuf_*, rte_lcore_id) are
 * static inline and rte_errno is thread-local, so cgo cannot call or read
 * them directly: these small wrappers do, one call per burst.
 *
 * Included only by Go files built with -tags dpdk. Everything here is
 * static, so including it from several Go files of the package is fine.
 */
#ifndef SV_DPDK_H
#define SV_DPDK_H

#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_malloc.h>
#include <rte_comp.h>
#include <rte_compressdev.h>

/* hw.OffloadFlags bits (hw/mbuf.go); kept in step by a spec. */
#define SV_RX_IP_GOOD  (1ULL << 0)
#define SV_RX_IP_BAD   (1ULL << 1)
#define SV_RX_L4_GOOD  (1ULL << 2)
#define SV_RX_L4_BAD   (1ULL << 3)
#define SV_RX_RSS      (1ULL << 4)
#define SV_TX_IP_CKSUM  (1ULL << 32)
#define SV_TX_TCP_CKSUM (1ULL << 33)
#define SV_TX_UDP_CKSUM (1ULL << 34)
#define SV_TX_IPV4      (1ULL << 35)

/*
 * Every mbuf of a pool made by sv_pool_create carries this in its private
 * area (rte_mbuf_to_priv): the index of its hw.Mbuf twin on the Go side
 * and the pool's number in the EAL's pool table, so that a received
 * rte_mbuf finds its twin without a map lookup.
 */
struct sv_priv {
	uint32_t idx;
	uint32_t pool;
};

/* One mbuf segment as Go sees it. */
struct sv_seg {
	uintptr_t m;             /* struct rte_mbuf *, as hw.Mbuf.Handle keeps it */
	struct rte_mempool *mp;
	uint64_t ol_flags; /* hw.OffloadFlags */
	uint32_t idx;
	uint32_t pool;
	uint32_t pkt_len;
	uint32_t rss;
	uint16_t data_off;
	uint16_t data_len;
	uint16_t nb_segs;
	uint16_t port;
	uint16_t refcnt; /* rx: the mbuf's refcnt; tx: 1 to add a reference */
	uint16_t l2_len;
	uint16_t l3_len;
	uint16_t l4_len;
	int32_t  next; /* tx: index of the next segment in the array, or -1 */
};

static inline int sv_errno(void) { return rte_errno; }
static inline unsigned sv_lcore_id(void) { return rte_lcore_id(); }
static inline int sv_socket_id(void) { return (int)rte_socket_id(); }

static inline int sv_eal_init(int argc, char **argv)
{
	int rc = rte_eal_init(argc, argv);
	if (rc < 0)
		return -rte_errno;
	return rc;
}

static inline int sv_thread_register(void)
{
	if (rte_thread_register() < 0)
		return -rte_errno;
	return (int)rte_lcore_id();
}

/* ---- mempools ---- */

struct sv_obj_walk {
	uint32_t pool;
	uint32_t n;
	uint32_t max;
	struct rte_mbuf **mbufs;
};

static void sv_obj_cb(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
	struct sv_obj_walk *w = arg;
	struct rte_mbuf *m = obj;
	struct sv_priv *p = rte_mbuf_to_priv(m);
	(void)mp;
	(void)idx;
	if (w->n >= w->max)
		return;
	p->idx = w->n;
	p->pool = w->pool;
	w->mbufs[w->n++] = m;
}

/*
 * sv_pool_create makes a pktmbuf pool whose mbufs carry a struct sv_priv,
 * numbers them and returns their addresses in mbufs (n entries).
 */
static inline struct rte_mempool *sv_pool_create(const char *name, unsigned n,
	unsigned cache, uint16_t data_room, int socket, uint32_t pool_no,
	struct rte_mbuf **mbufs, int *err)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create(name, n, cache,
		RTE_ALIGN(sizeof(struct sv_priv), RTE_MBUF_PRIV_ALIGN),
		data_room, socket);
	struct sv_obj_walk w = { pool_no, 0, n, mbufs };
	if (mp == NULL) {
		*err = rte_errno;
		return NULL;
	}
	rte_mempool_obj_iter(mp, sv_obj_cb, &w);
	if (w.n != n) {
		rte_mempool_free(mp);
		*err = EINVAL;
		return NULL;
	}
	*err = 0;
	return mp;
}

static inline void *sv_buf_addr(struct rte_mbuf *m) { return m->buf_addr; }
static inline uint16_t sv_buf_len(struct rte_mbuf *m) { return m->buf_len; }

static inline struct rte_mbuf *sv_pktmbuf_alloc(struct rte_mempool *mp)
{
	return rte_pktmbuf_alloc(mp);
}

/* sv_pktmbuf_alloc_bulk takes n mbufs (at most 64) or none, and returns
 * their twin indices. */
static inline int sv_pktmbuf_alloc_bulk(struct rte_mempool *mp, uint32_t *idx, unsigned n)
{
	struct rte_mbuf *ms[64];
	int rc;
	if (n > 64)
		return -EINVAL;
	rc = rte_pktmbuf_alloc_bulk(mp, ms, n);
	if (rc != 0)
		return rc;
	for (unsigned i = 0; i < n; i++)
		idx[i] = ((struct sv_priv *)rte_mbuf_to_priv(ms[i]))->idx;
	return 0;
}

/*
 * sv_free_seg drops one reference on one segment; at zero it goes back to
 * its pool (rte_pktmbuf_free_seg, which also cuts the chain link then).
 * The link is left alone while a device still holds the segment, since
 * the device walks the chain when it frees it.
 */
static inline void sv_free_seg(uintptr_t m)
{
	rte_pktmbuf_free_seg((struct rte_mbuf *)m);
}

static inline unsigned sv_pool_avail(struct rte_mempool *mp) { return rte_mempool_avail_count(mp); }
static inline unsigned sv_pool_in_use(struct rte_mempool *mp) { return rte_mempool_in_use_count(mp); }

/* sv_pool_cached counts the mbufs parked in the pool's per-lcore caches
 * (rte_mempool_cache.len of every lcore, as rte_mempool_avail_count sums
 * them); only threads with an lcore id use a cache. */
static inline unsigned sv_pool_cached(struct rte_mempool *mp)
{
	unsigned n = 0;
	if (mp->cache_size == 0)
		return 0;
	for (unsigned i = 0; i < RTE_MAX_LCORE; i++)
		n += mp->local_cache[i].len;
	return n;
}

/* ---- ethdev capability and configuration bits <-> hw bits ---- */

/* hw.RSSHashType: IPv4, IPv4TCP, IPv4UDP, IPv6, IPv6TCP, IPv6UDP. */
static const uint64_t sv_rss_map[6] = {
	RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_OTHER,
	RTE_ETH_RSS_NONFRAG_IPV4_TCP,
	RTE_ETH_RSS_NONFRAG_IPV4_UDP,
	RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_FRAG_IPV6 | RTE_ETH_RSS_NONFRAG_IPV6_OTHER,
	RTE_ETH_RSS_NONFRAG_IPV6_TCP,
	RTE_ETH_RSS_NONFRAG_IPV6_UDP,
};
/* hw.RxOffloads: IPv4Checksum, TCPChecksum, UDPChecksum, RSSHash. */
static const uint64_t sv_rxoff_map[4] = {
	RTE_ETH_RX_OFFLOAD_IPV4_CKSUM, RTE_ETH_RX_OFFLOAD_TCP_CKSUM,
	RTE_ETH_RX_OFFLOAD_UDP_CKSUM, RTE_ETH_RX_OFFLOAD_RSS_HASH,
};
/* hw.TxOffloads: IPv4Checksum, TCPChecksum, UDPChecksum, MultiSegs. */
static const uint64_t sv_txoff_map[4] = {
	RTE_ETH_TX_OFFLOAD_IPV4_CKSUM, RTE_ETH_TX_OFFLOAD_TCP_CKSUM,
	RTE_ETH_TX_OFFLOAD_UDP_CKSUM, RTE_ETH_TX_OFFLOAD_MULTI_SEGS,
};

/* sv_to_dpdk maps hw bits to DPDK bits through map (n entries). */
static inline uint64_t sv_to_dpdk(const uint64_t *map, int n, uint64_t bits)
{
	uint64_t o = 0;
	for (int i = 0; i < n; i++)
		if (bits & (1ULL << i))
			o |= map[i];
	return o;
}

/* sv_from_dpdk maps DPDK bits to hw bits: a hw bit is set when any of
 * its DPDK bits is. */
static inline uint64_t sv_from_dpdk(const uint64_t *map, int n, uint64_t bits)
{
	uint64_t o = 0;
	for (int i = 0; i < n; i++)
		if (bits & map[i])
			o |= 1ULL << i;
	return o;
}

static inline uint64_t sv_rss_hf(uint64_t t) { return sv_to_dpdk(sv_rss_map, 6, t); }
static inline uint64_t sv_rss_types(uint64_t hf) { return sv_from_dpdk(sv_rss_map, 6, hf); }
static inline uint64_t sv_rx_offloads(uint64_t t) { return sv_to_dpdk(sv_rxoff_map, 4, t); }
static inline uint64_t sv_rx_capa(uint64_t c) { return sv_from_dpdk(sv_rxoff_map, 4, c); }
static inline uint64_t sv_tx_offloads(uint64_t t) { return sv_to_dpdk(sv_txoff_map, 4, t); }
static inline uint64_t sv_tx_capa(uint64_t c) { return sv_from_dpdk(sv_txoff_map, 4, c); }

/* sv_speed_mbps returns the fastest speed in a speed_capa bitmap. */
static inline int sv_speed_mbps(uint32_t capa)
{
	static const struct { uint32_t bit; int mbps; } t[] = {
		{ RTE_ETH_LINK_SPEED_200G, 200000 },
		{ RTE_ETH_LINK_SPEED_100G, 100000 }, { RTE_ETH_LINK_SPEED_56G, 56000 },
		{ RTE_ETH_LINK_SPEED_50G, 50000 }, { RTE_ETH_LINK_SPEED_40G, 40000 },
		{ RTE_ETH_LINK_SPEED_25G, 25000 }, { RTE_ETH_LINK_SPEED_20G, 20000 },
		{ RTE_ETH_LINK_SPEED_10G, 10000 }, { RTE_ETH_LINK_SPEED_5G, 5000 },
		{ RTE_ETH_LINK_SPEED_2_5G, 2500 }, { RTE_ETH_LINK_SPEED_1G, 1000 },
		{ RTE_ETH_LINK_SPEED_100M, 100 }, { RTE_ETH_LINK_SPEED_10M, 10 },
	};
	for (unsigned i = 0; i < RTE_DIM(t); i++)
		if (capa & t[i].bit)
			return t[i].mbps;
	return 0;
}

struct sv_link {
	uint32_t speed;
	uint8_t up;
	uint8_t full_duplex;
};

static inline int sv_link_get(uint16_t port, struct sv_link *l)
{
	struct rte_eth_link link;
	int rc;
	memset(&link, 0, sizeof(link));
	rc = rte_eth_link_get_nowait(port, &link);
	l->speed = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed;
	l->up = link.link_status == RTE_ETH_LINK_UP;
	l->full_duplex = link.link_duplex == RTE_ETH_LINK_FULL_DUPLEX;
	return rc;
}

/* ---- ethdev burst I/O ---- */

static inline uint64_t sv_rx_flags(uint64_t f)
{
	uint64_t o = 0;
	if ((f & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD) o |= SV_RX_IP_GOOD;
	if ((f & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_BAD) o |= SV_RX_IP_BAD;
	if ((f & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_GOOD) o |= SV_RX_L4_GOOD;
	if ((f & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_BAD) o |= SV_RX_L4_BAD;
	if (f & RTE_MBUF_F_RX_RSS_HASH) o |= SV_RX_RSS;
	return o;
}

static inline uint64_t sv_tx_flags(uint64_t f)
{
	uint64_t o = 0;
	if (f & SV_TX_IP_CKSUM) o |= RTE_MBUF_F_TX_IP_CKSUM;
	if (f & SV_TX_TCP_CKSUM) o |= RTE_MBUF_F_TX_TCP_CKSUM;
	else if (f & SV_TX_UDP_CKSUM) o |= RTE_MBUF_F_TX_UDP_CKSUM;
	if (f & SV_TX_IPV4) o |= RTE_MBUF_F_TX_IPV4;
	return o;
}

static inline void sv_view(struct rte_mbuf *m, struct sv_seg *s)
{
	struct sv_priv *p = rte_mbuf_to_priv(m);
	s->m = (uintptr_t)m;
	s->mp = m->pool;
	s->idx = p->idx;
	s->pool = p->pool;
	s->data_off = m->data_off;
	s->data_len = m->data_len;
	s->pkt_len = m->pkt_len;
	s->nb_segs = m->nb_segs;
	s->port = m->port;
	s->rss = m->hash.rss;
	s->ol_flags = sv_rx_flags(m->ol_flags);
	s->refcnt = rte_mbuf_refcnt_read(m);
	s->next = -1;
}

/*
 * sv_rx_burst receives up to n packets and describes every segment of
 * them in segs (room for max_segs). A packet whose chain does not fit is
 * left in pkts for sv_chain_view; the return value is the packet count,
 * and *nsegs the number of segments described.
 */
static inline uint16_t sv_rx_burst(uint16_t port, uint16_t q, struct rte_mbuf **pkts,
	uint16_t n, struct sv_seg *segs, uint32_t max_segs, uint32_t *nsegs)
{
	uint16_t got = rte_eth_rx_burst(port, q, pkts, n);
	uint32_t k = 0;
	for (uint16_t i = 0; i < got; i++) {
		for (struct rte_mbuf *m = pkts[i]; m != NULL; m = m->next) {
			if (k < max_segs)
				sv_view(m, &segs[k]);
			k++;
		}
	}
	*nsegs = k;
	return got;
}

/* sv_chain_view describes the segments of one chain, up to max. */
static inline uint32_t sv_chain_view(struct rte_mbuf *m, struct sv_seg *segs, uint32_t max)
{
	uint32_t k = 0;
	for (; m != NULL && k < max; m = m->next)
		sv_view(m, &segs[k++]);
	return k;
}

/* sv_refcnt_add adds delta to the refcnt of n mbufs. */
static inline void sv_refcnt_add(uintptr_t *ms, uint32_t n, int16_t delta)
{
	for (uint32_t k = 0; k < n; k++)
		rte_mbuf_refcnt_update((struct rte_mbuf *)ms[k], delta);
}

static inline uint16_t sv_nb_segs(struct rte_mbuf *m) { return m->nb_segs; }

/* sv_writeback writes the Go side's view of n segments into their mbufs. */
static inline void sv_writeback(struct sv_seg *segs, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		struct sv_seg *s = &segs[k];
		struct rte_mbuf *m = (struct rte_mbuf *)s->m;
		m->data_off = s->data_off;
		m->data_len = s->data_len;
		m->pkt_len = s->pkt_len;
		m->nb_segs = s->nb_segs;
		m->ol_flags = sv_tx_flags(s->ol_flags);
		m->l2_len = s->l2_len;
		m->l3_len = s->l3_len;
		m->l4_len = s->l4_len;
		m->port = s->port;
		if (s->refcnt)
			rte_mbuf_refcnt_update(m, 1);
		m->next = s->next >= 0 ? (struct rte_mbuf *)segs[s->next].m : NULL;
	}
}

/*
 * sv_tx_burst writes back the n segments described in segs, then hands
 * the npkts heads in pkts to the port.
 */
static inline uint16_t sv_tx_burst(uint16_t port, uint16_t q, uintptr_t *pkts,
	uint16_t npkts, struct sv_seg *segs, uint32_t n)
{
	sv_writeback(segs, n);
	return rte_eth_tx_burst(port, q, (struct rte_mbuf **)pkts, npkts);
}

/* sv_eth_configure fills an rte_eth_conf and configures the port. */
static inline int sv_eth_configure(uint16_t port, uint16_t nrx, uint16_t ntx,
	uint32_t mtu, uint64_t rx_off, uint64_t tx_off, uint8_t *key, uint8_t key_len,
	uint64_t rss_hf)
{
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	conf.rxmode.mtu = mtu;
	conf.rxmode.offloads = rx_off;
	conf.txmode.offloads = tx_off;
	if (rss_hf != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = key;
		conf.rx_adv_conf.rss_conf.rss_key_len = key_len;
		conf.rx_adv_conf.rss_conf.rss_hf = rss_hf;
	}
	return rte_eth_dev_configure(port, nrx, ntx, &conf);
}

static inline int sv_eth_rx_queue_setup(uint16_t port, uint16_t q, uint16_t nb,
	int socket, struct rte_mempool *mp)
{
	return rte_eth_rx_queue_setup(port, q, nb, (unsigned)socket, NULL, mp);
}

static inline int sv_eth_tx_queue_setup(uint16_t port, uint16_t q, uint16_t nb, int socket)
{
	return rte_eth_tx_queue_setup(port, q, nb, (unsigned)socket, NULL);
}

/* sv_reta_query reads a RETA of size entries into out. */
static inline int sv_reta_query(uint16_t port, uint16_t *out, uint16_t size)
{
	struct rte_eth_rss_reta_entry64 conf[RTE_ETH_RSS_RETA_SIZE_512 / RTE_ETH_RETA_GROUP_SIZE];
	uint16_t groups = (size + RTE_ETH_RETA_GROUP_SIZE - 1) / RTE_ETH_RETA_GROUP_SIZE;
	int rc;
	if (groups > RTE_DIM(conf))
		return -EINVAL;
	memset(conf, 0, sizeof(conf));
	for (uint16_t g = 0; g < groups; g++)
		conf[g].mask = ~0ULL;
	rc = rte_eth_dev_rss_reta_query(port, conf, size);
	if (rc < 0)
		return rc;
	for (uint16_t i = 0; i < size; i++)
		out[i] = conf[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE];
	return 0;
}

static inline int sv_reta_update(uint16_t port, uint16_t *in, uint16_t size)
{
	struct rte_eth_rss_reta_entry64 conf[RTE_ETH_RSS_RETA_SIZE_512 / RTE_ETH_RETA_GROUP_SIZE];
	uint16_t groups = (size + RTE_ETH_RETA_GROUP_SIZE - 1) / RTE_ETH_RETA_GROUP_SIZE;
	if (groups > RTE_DIM(conf))
		return -EINVAL;
	memset(conf, 0, sizeof(conf));
	for (uint16_t i = 0; i < size; i++) {
		conf[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ULL << (i % RTE_ETH_RETA_GROUP_SIZE);
		conf[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] = in[i];
	}
	return rte_eth_dev_rss_reta_update(port, conf, size);
}

static inline int sv_rss_key(uint16_t port, uint8_t *key, uint8_t *len)
{
	struct rte_eth_rss_conf c;
	int rc;
	memset(&c, 0, sizeof(c));
	c.rss_key = key;
	c.rss_key_len = *len;
	rc = rte_eth_dev_rss_hash_conf_get(port, &c);
	*len = c.rss_key_len;
	return rc;
}

/* ---- compressdev ---- */

/* sv_comp_caps reads the deflate capability of a device. */
static inline int sv_comp_caps(uint8_t dev, uint64_t *flags, uint8_t *wmin, uint8_t *wmax)
{
	const struct rte_compressdev_capabilities *c =
		rte_compressdev_capability_get(dev, RTE_COMP_ALGO_DEFLATE);
	if (c == NULL)
		return -ENOTSUP;
	*flags = c->comp_feature_flags;
	*wmin = c->window_size.min;
	*wmax = c->window_size.max;
	return 0;
}

static inline int sv_comp_configure(uint8_t dev, int socket, uint16_t nqp, uint16_t nxf)
{
	struct rte_compressdev_config c;
	memset(&c, 0, sizeof(c));
	c.socket_id = socket;
	c.nb_queue_pairs = nqp;
	c.max_nb_priv_xforms = nxf;
	c.max_nb_streams = 0;
	return rte_compressdev_configure(dev, &c);
}

static inline int sv_comp_xform(uint8_t dev, int decompress, int level, int huffman,
	int chksum, int window, void **out)
{
	struct rte_comp_xform x;
	memset(&x, 0, sizeof(x));
	if (decompress) {
		x.type = RTE_COMP_DECOMPRESS;
		x.decompress.algo = RTE_COMP_ALGO_DEFLATE;
		x.decompress.chksum = (enum rte_comp_checksum_type)chksum;
		x.decompress.window_size = (uint8_t)window;
		x.decompress.hash_algo = RTE_COMP_HASH_ALGO_NONE;
	} else {
		x.type = RTE_COMP_COMPRESS;
		x.compress.algo = RTE_COMP_ALGO_DEFLATE;
		x.compress.deflate.huffman = (enum rte_comp_huffman)huffman;
		x.compress.level = level;
		x.compress.window_size = (uint8_t)window;
		x.compress.chksum = (enum rte_comp_checksum_type)chksum;
		x.compress.hash_algo = RTE_COMP_HASH_ALGO_NONE;
	}
	return rte_compressdev_private_xform_create(dev, &x, out);
}

/* sv_free_chain frees a whole chain (rte_pktmbuf_free). */
static inline void sv_free_chain(struct rte_mbuf *m) { rte_pktmbuf_free(m); }

/*
 * sv_chain_alloc takes mbufs from mp for a chain of cap bytes (at least
 * one segment), each segment using its whole buffer (data_off 0). When
 * src is not NULL the chain is filled with cap bytes of it. Returns NULL
 * when the pool runs out.
 */
static inline struct rte_mbuf *sv_chain_alloc(struct rte_mempool *mp, const uint8_t *src,
	uint32_t cap)
{
	struct rte_mbuf *head = NULL, *tail = NULL;
	uint32_t done = 0;
	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t n;
		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		m->data_off = 0;
		n = cap - done;
		if (n > m->buf_len)
			n = m->buf_len;
		if (src != NULL) {
			memcpy(rte_pktmbuf_mtod(m, uint8_t *), src + done, n);
			m->data_len = (uint16_t)n;
		} else {
			/* Destination: the device fills data_len; offer the whole buffer. */
			m->data_len = (uint16_t)n;
		}
		done += n;
		if (head == NULL) {
			head = m;
		} else {
			tail->next = m;
			head->nb_segs++;
		}
		head->pkt_len += n;
		tail = m;
	} while (done < cap);
	return head;
}

/*
 * sv_comp_op_build makes one stateless operation: src (len bytes) copied
 * into a chain, a destination chain of dst_cap bytes.
 */
static inline struct rte_comp_op *sv_comp_op_build(struct rte_mempool *op_pool,
	struct rte_mempool *mp, void *xform, const uint8_t *src, uint32_t len,
	uint32_t dst_cap, int flush, uint64_t in_chksum, uint64_t slot, int *err)
{
	struct rte_comp_op *op = rte_comp_op_alloc(op_pool);
	if (op == NULL) {
		*err = ENOBUFS;
		return NULL;
	}
	op->m_src = sv_chain_alloc(mp, src, len);
	op->m_dst = op->m_src ? sv_chain_alloc(mp, NULL, dst_cap) : NULL;
	if (op->m_src == NULL || op->m_dst == NULL) {
		rte_pktmbuf_free(op->m_src);
		rte_comp_op_free(op);
		*err = ENOMEM;
		return NULL;
	}
	op->op_type = RTE_COMP_OP_STATELESS;
	op->private_xform = xform;
	op->src.offset = 0;
	op->src.length = len;
	op->dst.offset = 0;
	op->flush_flag = (enum rte_comp_flush_flag)flush;
	op->input_chksum = in_chksum;
	*(uint64_t *)(op + 1) = slot;
	*err = 0;
	return op;
}

struct sv_comp_result {
	uint64_t slot;
	uint64_t chksum;
	uint64_t debug;
	uint32_t consumed;
	uint32_t produced;
	uint32_t copied;
	uint8_t status;
};

static inline uint64_t sv_comp_op_slot(struct rte_comp_op *op) { return *(uint64_t *)(op + 1); }

/*
 * sv_comp_op_finish copies up to cap produced bytes into dst, records the
 * result and frees the op and its chains.
 */
static inline void sv_comp_op_finish(struct rte_comp_op *op, uint8_t *dst, uint32_t cap,
	struct sv_comp_result *r)
{
	uint32_t want, done = 0;
	r->slot = *(uint64_t *)(op + 1);
	r->chksum = op->output_chksum;
	r->debug = op->debug_status;
	r->consumed = op->consumed;
	r->produced = op->produced;
	r->status = op->status;
	want = op->produced < cap ? op->produced : cap;
	for (struct rte_mbuf *m = op->m_dst; m != NULL && done < want; m = m->next) {
		uint32_t n = want - done;
		if (n > m->data_len)
			n = m->data_len;
		memcpy(dst + done, rte_pktmbuf_mtod(m, uint8_t *), n);
		done += n;
	}
	r->copied = done;
	rte_pktmbuf_free(op->m_src);
	rte_pktmbuf_free(op->m_dst);
	rte_comp_op_free(op);
}

#endif /* SV_DPDK_H */
