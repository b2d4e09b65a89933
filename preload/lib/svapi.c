/* svapi.c: the interposed socket API. AF_INET SOCK_STREAM sockets are
 * the stack process's; every other descriptor goes to libc untouched. */
#define _GNU_SOURCE
#include "svcore.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* own returns fd's entry if it is a socket of the stack this process
 * may use: NULL for a descriptor of libc's; an inherited one (a forked
 * child's copy of its parent's socket) fails with ENOTCONN. */
static struct sv_fd *own(int fd, int call, int *bad)
{
	struct sv_fd *f = sv_owned(fd);
	*bad = 0;
	if (!f)
		return NULL;
	sv_count(call, 0);
	if (sv_inherited(fd)) {
		sv_count(call, 1);
		errno = ENOTCONN;
		*bad = 1;
	}
	return f;
}

#define OWN(fd, call) \
	int bad_; \
	struct sv_fd *f = own((fd), (call), &bad_); \
	if (bad_) \
		return -1;

static int refuse(int call, int err)
{
	sv_count(call, 1);
	errno = err;
	return -1;
}

static uint32_t state(int slot) { return SV_LOAD(sv_u32(sv_slot(slot), SV_S_STATE)); }
static uint32_t flags(int slot) { return SV_LOAD(sv_u32(sv_slot(slot), SV_S_FLAGS)); }
static int sockerr(int slot) { return (int)SV_LOAD(sv_u32(sv_slot(slot), SV_S_ERR)); }

EXPORT int socket(int domain, int type, int protocol)
{
	sv_resolve();
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (domain != AF_INET || base != SOCK_STREAM || (protocol != 0 && protocol != IPPROTO_TCP))
		return sv_real.socket(domain, type, protocol);
	int r = sv_ready();
	if (r < 0)
		return sv_real.socket(domain, type, protocol);
	if (r == 0)
		return -1;
	sv_count(SV_C_SOCKET, 0);
	int fd = eventfd(0, (type & SOCK_CLOEXEC) ? EFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	int64_t slot = sv_request(SV_OP_SOCKET, -1, 0, NULL);
	if (slot < 0) {
		int e = errno;
		sv_real.close(fd);
		errno = e;
		return -1;
	}
	if (sv_own(fd, (int)slot, type & SOCK_NONBLOCK) < 0) {
		int e = errno;
		sv_request(SV_OP_CLOSE, (int)slot, 0, NULL);
		sv_real.close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int inaddr(const struct sockaddr *sa, socklen_t len, struct sockaddr_in *out)
{
	if (!sa || len < sizeof(struct sockaddr_in))
		return EINVAL;
	memcpy(out, sa, sizeof *out);
	if (out->sin_family != AF_INET)
		return EAFNOSUPPORT;
	return 0;
}

EXPORT int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	sv_resolve();
	OWN(fd, SV_C_BIND);
	if (!f)
		return sv_real.bind(fd, sa, len);
	struct sockaddr_in in;
	int e = inaddr(sa, len, &in);
	if (e)
		return refuse(SV_C_BIND, e);
	return sv_request(SV_OP_BIND, f->slot, 0, &in) < 0 ? -1 : 0;
}

EXPORT int listen(int fd, int backlog)
{
	sv_resolve();
	OWN(fd, SV_C_LISTEN);
	if (!f)
		return sv_real.listen(fd, backlog);
	return sv_request(SV_OP_LISTEN, f->slot, backlog, NULL) < 0 ? -1 : 0;
}

static int accq(int slot) { return SV_LOAD(sv_u32(sv_slot(slot), SV_S_ACCQ)) != 0 || state(slot) != SV_ST_LISTEN; }

static void fill(struct sockaddr *sa, socklen_t *len, uint32_t addr, uint16_t port)
{
	if (!sa || !len)
		return;
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = {.s_addr = addr}};
	socklen_t n = *len < sizeof in ? *len : sizeof in;
	memcpy(sa, &in, n);
	*len = sizeof in;
}

EXPORT int accept4(int fd, struct sockaddr *sa, socklen_t *len, int fl)
{
	sv_resolve();
	OWN(fd, SV_C_ACCEPT);
	if (!f)
		return sv_real.accept4(fd, sa, len, fl);
	if (fl & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
		return refuse(SV_C_ACCEPT, EINVAL);
	for (;;) {
		struct sockaddr_in peer = {0};
		int64_t slot = sv_request(SV_OP_ACCEPT, f->slot, 0, &peer);
		if (slot >= 0) {
			int nfd = eventfd(0, (fl & SOCK_CLOEXEC) ? EFD_CLOEXEC : 0);
			if (nfd < 0 || sv_own(nfd, (int)slot, fl & SOCK_NONBLOCK) < 0) {
				int e = errno;
				if (nfd >= 0)
					sv_real.close(nfd);
				sv_request(SV_OP_CLOSE, (int)slot, 0, NULL);
				errno = e;
				return -1;
			}
			fill(sa, len, peer.sin_addr.s_addr, ntohs(peer.sin_port));
			return nfd;
		}
		if (errno != EAGAIN || f->nonblock)
			return -1;
		if (sv_wait(f->slot, accq, -1) < 0)
			return -1;
	}
}

EXPORT int accept(int fd, struct sockaddr *sa, socklen_t *len) { return accept4(fd, sa, len, 0); }

static int connected(int slot)
{
	uint32_t s = state(slot);
	return s != SV_ST_CONNECTING;
}

EXPORT int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	sv_resolve();
	OWN(fd, SV_C_CONNECT);
	if (!f)
		return sv_real.connect(fd, sa, len);
	struct sockaddr_in in;
	int e = inaddr(sa, len, &in);
	if (e)
		return refuse(SV_C_CONNECT, e);
	if (sv_request(SV_OP_CONNECT, f->slot, 0, &in) == 0)
		return 0;
	if (errno != EINPROGRESS || f->nonblock)
		return -1;
	if (sv_wait(f->slot, connected, -1) < 0)
		return -1;
	if (state(f->slot) == SV_ST_CONNECTED)
		return 0;
	errno = sockerr(f->slot);
	SV_STORE(sv_u32(sv_slot(f->slot), SV_S_ERR), 0);
	return -1;
}

/* The receive side. */

static int readable(int slot)
{
	uint8_t *s = sv_slot(slot);
	return SV_LOAD(sv_u64(s, SV_S_RX_TAIL)) != SV_LOAD(sv_u64(s, SV_S_RX_HEAD)) || (flags(slot) & (SV_F_EOF | SV_F_ERR)) ||
	       state(slot) != SV_ST_CONNECTED;
}

/* rx copies up to n bytes out of the receive ring (peek leaves them). */
static size_t rx(int slot, uint8_t *dst, size_t n, int peek)
{
	uint8_t *s = sv_slot(slot), *data = sv_rxdata(slot);
	uint64_t h = SV_LOAD(sv_u64(s, SV_S_RX_HEAD)), t = SV_LOAD(sv_u64(s, SV_S_RX_TAIL));
	size_t avail = (size_t)(t - h), got = 0;
	if (n > avail)
		n = avail;
	while (got < n) {
		size_t off = (size_t)((h + got) & (sv_ring - 1)), k = sv_ring - off;
		if (k > n - got)
			k = n - got;
		memcpy(dst + got, data + off, k);
		got += k;
	}
	if (!peek && got) {
		SV_STORE(sv_u64(s, SV_S_RX_HEAD), h + got);
		if (SV_LOAD(sv_u32(s, SV_S_RXWAIT)))
			sv_doorbell();
	}
	return got;
}

static ssize_t do_recv(struct sv_fd *f, const struct iovec *iov, int iovcnt, int fl)
{
	if (fl & ~(MSG_PEEK | MSG_DONTWAIT | MSG_WAITALL | MSG_NOSIGNAL | MSG_CMSG_CLOEXEC))
		return refuse(SV_C_READ, EOPNOTSUPP);
	int slot = f->slot;
	uint32_t st = state(slot);
	if (st != SV_ST_CONNECTED && st != SV_ST_CLOSING)
		return refuse(SV_C_READ, ENOTCONN);
	size_t want = 0, total = 0;
	for (int i = 0; i < iovcnt; i++)
		want += iov[i].iov_len;
	if (want == 0)
		return 0;
	int nonblock = f->nonblock || (fl & MSG_DONTWAIT), i = 0;
	size_t off = 0;
	for (;;) {
		if (fl & MSG_PEEK) {
			total = rx(slot, iov[0].iov_base, iov[0].iov_len, 1); /* recv's one buffer */
		} else {
			while (total < want) {
				while (i < iovcnt && off == iov[i].iov_len) {
					i++;
					off = 0;
				}
				size_t got = rx(slot, (uint8_t *)iov[i].iov_base + off, iov[i].iov_len - off, 0);
				if (!got)
					break;
				off += got;
				total += got;
			}
		}
		if (total == want || (total > 0 && !(fl & MSG_WAITALL)) || f->shut_rd)
			return (ssize_t)total;
		uint8_t *s = sv_slot(slot);
		if (SV_LOAD(sv_u64(s, SV_S_RX_TAIL)) != SV_LOAD(sv_u64(s, SV_S_RX_HEAD)))
			continue; /* bytes came in meanwhile */
		uint32_t fls = flags(slot);
		if (fls & SV_F_EOF) /* the FIN follows every byte before it */
			return (ssize_t)total;
		if (fls & SV_F_ERR) {
			if (total)
				return (ssize_t)total;
			errno = sockerr(slot);
			return -1;
		}
		if (nonblock) {
			if (total)
				return (ssize_t)total;
			errno = EAGAIN;
			return -1;
		}
		if (sv_wait(slot, readable, -1) < 0)
			return total ? (ssize_t)total : -1;
	}
}

static ssize_t recv1(struct sv_fd *f, void *buf, size_t n, int fl)
{
	struct iovec v = {buf, n};
	sv_count(SV_C_READ, 0);
	return do_recv(f, &v, 1, fl);
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	sv_resolve();
	OWN(fd, SV_C_READ);
	if (!f)
		return sv_real.read(fd, buf, n);
	return recv1(f, buf, n, 0);
}

EXPORT ssize_t recv(int fd, void *buf, size_t n, int fl)
{
	sv_resolve();
	OWN(fd, SV_C_READ);
	if (!f)
		return sv_real.recv(fd, buf, n, fl);
	return recv1(f, buf, n, fl);
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int fl, struct sockaddr *sa, socklen_t *len)
{
	sv_resolve();
	OWN(fd, SV_C_READ);
	if (!f)
		return sv_real.recvfrom(fd, buf, n, fl, sa, len);
	if (len)
		*len = 0; /* a connected stream: no address, as Linux's tcp_recvmsg */
	return recv1(f, buf, n, fl);
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	sv_resolve();
	OWN(fd, SV_C_READ);
	if (!f)
		return sv_real.readv(fd, iov, cnt);
	if (cnt < 0 || cnt > IOV_MAX)
		return refuse(SV_C_READ, EINVAL);
	sv_count(SV_C_READ, 0);
	return do_recv(f, iov, cnt, 0);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		__builtin_trap(); /* glibc's __chk_fail: a buffer overflow */
	return read(fd, buf, n);
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int fl)
{
	if (n > buflen)
		__builtin_trap();
	return recv(fd, buf, n, fl);
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int fl, struct sockaddr *sa, socklen_t *len)
{
	if (n > buflen)
		__builtin_trap();
	return recvfrom(fd, buf, n, fl, sa, len);
}

/* The send side. */

static int writable(int slot)
{
	uint8_t *s = sv_slot(slot);
	return SV_LOAD(sv_u64(s, SV_S_TX_TAIL)) - SV_LOAD(sv_u64(s, SV_S_TX_HEAD)) < sv_ring ||
	       (flags(slot) & (SV_F_ERR | SV_F_WDONE)) || state(slot) != SV_ST_CONNECTED;
}

static size_t tx(int slot, const uint8_t *src, size_t n)
{
	uint8_t *s = sv_slot(slot), *data = sv_txdata(slot);
	uint64_t t = SV_LOAD(sv_u64(s, SV_S_TX_TAIL)), h = SV_LOAD(sv_u64(s, SV_S_TX_HEAD));
	size_t room = sv_ring - (size_t)(t - h), put = 0;
	if (n > room)
		n = room;
	while (put < n) {
		size_t off = (size_t)((t + put) & (sv_ring - 1)), k = sv_ring - off;
		if (k > n - put)
			k = n - put;
		memcpy(data + off, src + put, k);
		put += k;
	}
	if (put) {
		SV_STORE(sv_u64(s, SV_S_TX_TAIL), t + put);
		if (SV_LOAD(sv_u32(s, SV_S_TXWAIT)))
			sv_doorbell();
	}
	return put;
}

static ssize_t epipe(int fl)
{
	/* Linux raises SIGPIPE on a write to a shut stream unless
	 * MSG_NOSIGNAL (tcp_sendmsg -> sk_stream_error). */
	if (!(fl & MSG_NOSIGNAL))
		raise(SIGPIPE);
	errno = EPIPE;
	return -1;
}

static ssize_t do_send(struct sv_fd *f, const struct iovec *iov, int iovcnt, int fl)
{
	if (fl & ~(MSG_DONTWAIT | MSG_NOSIGNAL | MSG_MORE))
		return refuse(SV_C_WRITE, EOPNOTSUPP);
	int slot = f->slot;
	uint32_t st = state(slot);
	if (st == SV_ST_CONNECTING || st == SV_ST_SOCKET || st == SV_ST_BOUND || st == SV_ST_LISTEN)
		return refuse(SV_C_WRITE, st == SV_ST_CONNECTING ? EAGAIN : ENOTCONN);
	size_t want = 0, total = 0;
	for (int i = 0; i < iovcnt; i++)
		want += iov[i].iov_len;
	int nonblock = f->nonblock || (fl & MSG_DONTWAIT);
	int i = 0;
	size_t off = 0;
	while (total < want) {
		uint32_t fls = flags(slot);
		if (fls & SV_F_ERR) {
			if (total)
				return (ssize_t)total;
			int e = sockerr(slot);
			if (e == EPIPE)
				return epipe(fl);
			errno = e;
			return -1;
		}
		if (fls & SV_F_WDONE)
			return total ? (ssize_t)total : epipe(fl);
		while (i < iovcnt && off == iov[i].iov_len) {
			i++;
			off = 0;
		}
		size_t put = tx(slot, (const uint8_t *)iov[i].iov_base + off, iov[i].iov_len - off);
		off += put;
		total += put;
		if (put)
			continue;
		__atomic_fetch_add(&f->nospace, 1, __ATOMIC_RELAXED);
		if (nonblock) {
			if (total)
				return (ssize_t)total;
			errno = EAGAIN;
			return -1;
		}
		if (sv_wait(slot, writable, -1) < 0)
			return total ? (ssize_t)total : -1;
	}
	return (ssize_t)total;
}

static ssize_t send1(struct sv_fd *f, const void *buf, size_t n, int fl)
{
	struct iovec v = {(void *)buf, n};
	sv_count(SV_C_WRITE, 0);
	return do_send(f, &v, 1, fl);
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	sv_resolve();
	OWN(fd, SV_C_WRITE);
	if (!f)
		return sv_real.write(fd, buf, n);
	return send1(f, buf, n, 0);
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int fl)
{
	sv_resolve();
	OWN(fd, SV_C_WRITE);
	if (!f)
		return sv_real.send(fd, buf, n, fl);
	return send1(f, buf, n, fl);
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int fl, const struct sockaddr *sa, socklen_t len)
{
	sv_resolve();
	OWN(fd, SV_C_WRITE);
	if (!f)
		return sv_real.sendto(fd, buf, n, fl, sa, len);
	if (sa && state(f->slot) == SV_ST_CONNECTED)
		return refuse(SV_C_WRITE, EISCONN);
	return send1(f, buf, n, fl);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	sv_resolve();
	OWN(fd, SV_C_WRITE);
	if (!f)
		return sv_real.writev(fd, iov, cnt);
	if (cnt < 0 || cnt > IOV_MAX)
		return refuse(SV_C_WRITE, EINVAL);
	sv_count(SV_C_WRITE, 0);
	return do_send(f, iov, cnt, 0);
}

EXPORT int close(int fd)
{
	sv_resolve();
	sv_closed(fd); /* an epoll set, or a socket in epoll sets */
	struct sv_fd *f = sv_owned(fd);
	if (!f)
		return sv_real.close(fd);
	sv_count(SV_C_CLOSE, 0);
	if (!sv_inherited(fd))
		sv_request(SV_OP_CLOSE, f->slot, 0, NULL);
	sv_disown(fd);
	return sv_real.close(fd);
}

EXPORT int shutdown(int fd, int how)
{
	sv_resolve();
	OWN(fd, SV_C_SHUTDOWN);
	if (!f)
		return sv_real.shutdown(fd, how);
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return refuse(SV_C_SHUTDOWN, EINVAL);
	if (sv_request(SV_OP_SHUTDOWN, f->slot, how, NULL) < 0)
		return -1;
	if (how != SHUT_WR)
		f->shut_rd = 1;
	return 0;
}

/* Options. Those the stack has no knob for are kept and read back, as
 * Linux would, and counted as calls; unknown ones fail ENOPROTOOPT. */
static int optslot(int level, int name)
{
	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_REUSEADDR: return SV_O_REUSEADDR;
		case SO_REUSEPORT: return SV_O_REUSEPORT;
		case SO_KEEPALIVE: return SV_O_KEEPALIVE;
		case SO_RCVBUF: return SV_O_RCVBUF;
		case SO_SNDBUF: return SV_O_SNDBUF;
		}
	}
	if (level == IPPROTO_TCP && name == TCP_NODELAY)
		return SV_O_NODELAY;
	return -1;
}

EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	sv_resolve();
	OWN(fd, SV_C_SETSOCKOPT);
	if (!f)
		return sv_real.setsockopt(fd, level, name, val, len);
	if (level == SOL_SOCKET && name == SO_LINGER) {
		if (!val || len < sizeof(struct linger))
			return refuse(SV_C_SETSOCKOPT, EINVAL);
		const struct linger *l = val;
		f->opts[SV_O_LINGER] = l->l_onoff;
		f->opts[SV_O_LINGER_S] = l->l_linger;
		return 0;
	}
	if (level == IPPROTO_TCP && (name == TCP_KEEPIDLE || name == TCP_KEEPINTVL || name == TCP_KEEPCNT))
		return 0; /* keepalive is not sent by the stack: accepted, see docs/preload.md */
	int k = optslot(level, name);
	if (k < 0)
		return refuse(SV_C_SETSOCKOPT, ENOPROTOOPT);
	if (!val || len < sizeof(int))
		return refuse(SV_C_SETSOCKOPT, EINVAL);
	memcpy(&f->opts[k], val, sizeof(int));
	return 0;
}

static int putint(void *val, socklen_t *len, int v)
{
	if (!val || !len || *len < sizeof(int)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(val, &v, sizeof v);
	*len = sizeof v;
	return 0;
}

EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	sv_resolve();
	OWN(fd, SV_C_GETSOCKOPT);
	if (!f)
		return sv_real.getsockopt(fd, level, name, val, len);
	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_ERROR: {
			uint32_t *e = sv_u32(sv_slot(f->slot), SV_S_ERR);
			int v = (int)__atomic_exchange_n(e, 0, __ATOMIC_SEQ_CST);
			if (v == EINPROGRESS)
				v = 0;
			return putint(val, len, v);
		}
		case SO_TYPE: return putint(val, len, SOCK_STREAM);
		case SO_DOMAIN: return putint(val, len, AF_INET);
		case SO_PROTOCOL: return putint(val, len, IPPROTO_TCP);
		case SO_ACCEPTCONN: return putint(val, len, state(f->slot) == SV_ST_LISTEN);
		case SO_LINGER: {
			struct linger l = {f->opts[SV_O_LINGER], f->opts[SV_O_LINGER_S]};
			if (!val || !len || *len < sizeof l)
				return refuse(SV_C_GETSOCKOPT, EINVAL);
			memcpy(val, &l, sizeof l);
			*len = sizeof l;
			return 0;
		}
		case SO_RCVBUF:
		case SO_SNDBUF:
			return putint(val, len, f->opts[optslot(level, name)] ? f->opts[optslot(level, name)] * 2 : (int)sv_ring);
		}
	}
	int k = optslot(level, name);
	if (k < 0)
		return refuse(SV_C_GETSOCKOPT, ENOPROTOOPT);
	return putint(val, len, f->opts[k] != 0);
}

static int name(int fd, struct sockaddr *sa, socklen_t *len, int peer)
{
	OWN(fd, SV_C_NAME);
	if (!f)
		return peer ? sv_real.getpeername(fd, sa, len) : sv_real.getsockname(fd, sa, len);
	if (!sa || !len)
		return refuse(SV_C_NAME, EFAULT);
	uint8_t *s = sv_slot(f->slot);
	if (peer && state(f->slot) != SV_ST_CONNECTED && state(f->slot) != SV_ST_CLOSING)
		return refuse(SV_C_NAME, ENOTCONN);
	uint32_t a = SV_LOAD(sv_u32(s, peer ? SV_S_RADDR : SV_S_LADDR));
	uint32_t p = SV_LOAD(sv_u32(s, peer ? SV_S_RPORT : SV_S_LPORT));
	fill(sa, len, a, (uint16_t)p);
	return 0;
}

EXPORT int getsockname(int fd, struct sockaddr *sa, socklen_t *len) { sv_resolve(); return name(fd, sa, len, 0); }
EXPORT int getpeername(int fd, struct sockaddr *sa, socklen_t *len) { sv_resolve(); return name(fd, sa, len, 1); }

static int do_fcntl(int fd, int cmd, void *arg)
{
	struct sv_fd *f = sv_owned(fd);
	if (f) {
		sv_count(SV_C_FCNTL, 0);
		switch (cmd) {
		case F_GETFL:
			return O_RDWR | (f->nonblock ? O_NONBLOCK : 0);
		case F_SETFL:
			f->nonblock = ((long)arg & O_NONBLOCK) != 0;
			return 0;
		case F_GETFD:
		case F_SETFD:
			break; /* the eventfd's own close-on-exec */
		default:
			return refuse(SV_C_FCNTL, EINVAL); /* F_DUPFD and the rest: see docs/preload.md */
		}
	}
	return sv_real.fcntl(fd, cmd, arg);
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	sv_resolve();
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return do_fcntl(fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	sv_resolve();
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return do_fcntl(fd, cmd, arg);
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	sv_resolve();
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	OWN(fd, SV_C_IOCTL);
	if (!f)
		return sv_real.ioctl(fd, req, arg);
	switch (req) {
	case FIONBIO:
		if (!arg)
			return refuse(SV_C_IOCTL, EFAULT);
		f->nonblock = *(int *)arg != 0;
		return 0;
	case FIONREAD: {
		if (!arg)
			return refuse(SV_C_IOCTL, EFAULT);
		uint8_t *s = sv_slot(f->slot);
		*(int *)arg = (int)(SV_LOAD(sv_u64(s, SV_S_RX_TAIL)) - SV_LOAD(sv_u64(s, SV_S_RX_HEAD)));
		return 0;
	}
	}
	return refuse(SV_C_IOCTL, ENOTTY);
}
