/* svapi.c: the interposed socket API. AF_INET and AF_INET6 SOCK_STREAM
 * sockets are the stack process's; every other descriptor goes to libc
 * untouched. */
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
#include <sys/sendfile.h>
#include <sys/stat.h>
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
	int tcp = base == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP);
	if ((domain != AF_INET && domain != AF_INET6) || !tcp)
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
	/* A stack without IPv6 answers AF_INET6 with EAFNOSUPPORT, as a
	 * kernel without it does, rather than the socket going to Linux's
	 * stack behind the program's back (redis's optional "-::*" then
	 * serves IPv4 only). */
	int64_t slot = sv_request(SV_OP_SOCKET, -1, domain, 0, NULL);
	if (slot < 0) {
		int e = errno;
		sv_real.close(fd);
		return refuse(SV_C_SOCKET, e);
	}
	if (sv_own(fd, (int)slot, type & SOCK_NONBLOCK) < 0) {
		int e = errno;
		sv_request(SV_OP_CLOSE, (int)slot, 0, 0, NULL);
		sv_real.close(fd);
		errno = e;
		return -1;
	}
	sv_owned(fd)->family = domain;
	return fd;
}

/* inaddr reads a bind's or connect's address for a socket of family
 * fam, with Linux's checks: inet_bind wants a sockaddr_in of AF_INET,
 * inet6_bind and tcp_v6_connect at least SIN6_LEN_RFC2133 (24) bytes of
 * AF_INET6 (a short one EINVAL, another family EAFNOSUPPORT). */
static int inaddr(int fam, const struct sockaddr *sa, socklen_t len, struct sv_addr *out)
{
	memset(out, 0, sizeof *out);
	out->fam = fam;
	if (fam == AF_INET6) {
		struct sockaddr_in6 in6 = {0};
		if (!sa || len < 24)
			return EINVAL;
		memcpy(&in6, sa, len < sizeof in6 ? len : sizeof in6);
		if (in6.sin6_family != AF_INET6)
			return EAFNOSUPPORT;
		out->port = in6.sin6_port;
		memcpy(out->ip, &in6.sin6_addr, 16);
		return 0;
	}
	struct sockaddr_in in;
	if (!sa || len < sizeof in)
		return EINVAL;
	memcpy(&in, sa, sizeof in);
	if (in.sin_family != AF_INET)
		return EAFNOSUPPORT;
	out->port = in.sin_port;
	memcpy(out->ip, &in.sin_addr, 4);
	return 0;
}

/* bindflags are request BIND's flags: SO_REUSEPORT, IPV6_V6ONLY. */
static int bindflags(const struct sv_fd *f)
{
	return (f->opts[SV_O_REUSEPORT] ? 1 : 0) | (f->family == AF_INET6 && f->opts[SV_O_V6ONLY] ? 2 : 0);
}

EXPORT int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	sv_resolve();
	OWN(fd, SV_C_BIND);
	if (!f)
		return sv_real.bind(fd, sa, len);
	struct sv_addr in;
	int e = inaddr(f->family, sa, len, &in);
	if (e)
		return refuse(SV_C_BIND, e);
	return sv_request(SV_OP_BIND, f->slot, bindflags(f), 0, &in) < 0 ? -1 : 0;
}

EXPORT int listen(int fd, int backlog)
{
	sv_resolve();
	OWN(fd, SV_C_LISTEN);
	if (!f)
		return sv_real.listen(fd, backlog);
	return sv_request(SV_OP_LISTEN, f->slot, backlog, bindflags(f), NULL) < 0 ? -1 : 0;
}

static int accq(int slot) { return SV_LOAD(sv_u32(sv_slot(slot), SV_S_ACCQ)) != 0 || state(slot) != SV_ST_LISTEN; }

/* fill writes an address as the socket's family has it: ip is 4 bytes
 * for AF_INET, 16 for AF_INET6; truncated to *len, which then says the
 * full length (as Linux's move_addr_to_user). */
static void fill(struct sockaddr *sa, socklen_t *len, int fam, const uint8_t *ip, uint16_t port)
{
	if (!sa || !len)
		return;
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	const void *src = &in;
	socklen_t full = sizeof in;
	if (fam == AF_INET6) {
		memcpy(&in6.sin6_addr, ip, 16);
		src = &in6;
		full = sizeof in6;
	} else {
		memcpy(&in.sin_addr, ip, 4);
	}
	socklen_t n = *len < full ? *len : full;
	memcpy(sa, src, n);
	*len = full;
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
		struct sv_addr peer = {.fam = f->family};
		int64_t slot = sv_request(SV_OP_ACCEPT, f->slot, 0, 0, &peer);
		if (slot >= 0) {
			int nfd = eventfd(0, (fl & SOCK_CLOEXEC) ? EFD_CLOEXEC : 0);
			if (nfd < 0 || sv_own(nfd, (int)slot, fl & SOCK_NONBLOCK) < 0) {
				int e = errno;
				if (nfd >= 0)
					sv_real.close(nfd);
				sv_request(SV_OP_CLOSE, (int)slot, 0, 0, NULL);
				errno = e;
				return -1;
			}
			sv_owned(nfd)->family = f->family;
			fill(sa, len, f->family, peer.ip, ntohs(peer.port));
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
	struct sv_addr in;
	int e = inaddr(f->family, sa, len, &in);
	if (e)
		return refuse(SV_C_CONNECT, e);
	if (sv_request(SV_OP_CONNECT, f->slot, bindflags(f), 0, &in) == 0)
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

ssize_t sv_do_recv(struct sv_fd *f, const struct iovec *iov, int iovcnt, int fl)
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
			errno = sv_gone() ? ENETDOWN : EAGAIN;
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
	return sv_do_recv(f, &v, 1, fl);
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
	return sv_do_recv(f, iov, cnt, 0);
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

ssize_t sv_do_send(struct sv_fd *f, const struct iovec *iov, int iovcnt, int fl)
{
	if (fl & ~(MSG_DONTWAIT | MSG_NOSIGNAL | MSG_MORE | MSG_EOR)) /* MSG_EOR: sendmmsg's, accepted by tcp_sendmsg */
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
			errno = sv_gone() ? ENETDOWN : EAGAIN;
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
	return sv_do_send(f, &v, 1, fl);
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
	return sv_do_send(f, iov, cnt, 0);
}

/* forget is close(fd) without the kernel's part: fd leaves the epoll
 * sets and the table, and the last descriptor of a socket closes it. */
static void forget(int fd)
{
	sv_closed(fd); /* an epoll set, or a socket in epoll sets */
	struct sv_fd *f = sv_owned(fd);
	if (!f)
		return;
	sv_count(SV_C_CLOSE, 0);
	int slot = f->slot;
	if (sv_disown(fd) == 0)
		sv_request(SV_OP_CLOSE, slot, 0, 0, NULL);
}

EXPORT int close(int fd)
{
	sv_resolve();
	forget(fd);
	return sv_real.close(fd);
}

/* dup and friends: the kernel dups the eventfd (its numbering,
 * close-on-exec and EMFILE are the kernel's), and the new number names
 * the same socket, whose last descriptor's close closes it. */
static int dup_done(int oldfd, int nfd)
{
	if (nfd < 0)
		return -1;
	if (sv_dup_to(oldfd, nfd) < 0) {
		int e = errno;
		sv_real.close(nfd);
		errno = e;
		return refuse(SV_C_DUP, e);
	}
	return nfd;
}

EXPORT int dup(int fd)
{
	sv_resolve();
	if (!sv_owned(fd))
		return sv_real.dup(fd);
	sv_count(SV_C_DUP, 0);
	return dup_done(fd, sv_real.dup(fd));
}

static int dup_onto(int oldfd, int newfd, int flags, int three)
{
	struct sv_fd *f = sv_owned(oldfd);
	if (!f && !sv_owned(newfd) )
		return three ? sv_real.dup3(oldfd, newfd, flags) : sv_real.dup2(oldfd, newfd);
	sv_count(SV_C_DUP, 0);
	if (oldfd == newfd) {
		if (three)
			return refuse(SV_C_DUP, EINVAL);
		return newfd; /* dup2 of a valid fd onto itself */
	}
	if (sv_real.fcntl(oldfd, F_GETFD) < 0)
		return refuse(SV_C_DUP, EBADF);
	forget(newfd); /* dup2 closes newfd silently first */
	int r = three ? sv_real.dup3(oldfd, newfd, flags) : sv_real.dup2(oldfd, newfd);
	if (r < 0 || !f)
		return r;
	return dup_done(oldfd, r);
}

EXPORT int dup2(int oldfd, int newfd)
{
	sv_resolve();
	return dup_onto(oldfd, newfd, 0, 0);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	sv_resolve();
	return dup_onto(oldfd, newfd, flags, 1);
}

EXPORT int shutdown(int fd, int how)
{
	sv_resolve();
	OWN(fd, SV_C_SHUTDOWN);
	if (!f)
		return sv_real.shutdown(fd, how);
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return refuse(SV_C_SHUTDOWN, EINVAL);
	if (sv_request(SV_OP_SHUTDOWN, f->slot, how, 0, NULL) < 0)
		return -1;
	if (how != SHUT_WR)
		f->shut_rd = 1;
	return 0;
}

/* Options. Those the stack has no knob for are kept and read back, as
 * Linux would, and counted as calls; unknown ones fail ENOPROTOOPT. */

/* The IPPROTO_IP options Linux keeps on a TCP socket of either family
 * (ipv6_setsockopt hands SOL_IP to ip_setsockopt), kept in
 * opts[SV_O_IP]: IP_TOS in bits 0-7, IP_FREEBIND in bit 8. mariadbd sets
 * IP_TOS on every connection and TCP_NODELAY only when that succeeded
 * (vio_fastsend, vio/viosocket.c), and IP_FREEBIND on its listener.
 * Read back, no effect on the stack's packets (docs/preload.md). */
#define SV_IP_FREEBIND 0x100
_Static_assert(SV_O_IP < sizeof(((struct sv_fd *)0)->opts) / sizeof(int32_t), "struct sv_fd's opts holds SV_O_IP");
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
	if (level == IPPROTO_IPV6 && name == IPV6_V6ONLY) {
		/* Linux's do_ipv6_setsockopt: only before bind (inet_num 0);
		 * an AF_INET socket has no IPv6 level (ip_setsockopt). */
		if (f->family != AF_INET6)
			return refuse(SV_C_SETSOCKOPT, ENOPROTOOPT);
		if (!val || len < sizeof(int) || state(f->slot) != SV_ST_SOCKET)
			return refuse(SV_C_SETSOCKOPT, EINVAL);
		int v;
		memcpy(&v, val, sizeof v);
		f->opts[SV_O_V6ONLY] = v != 0;
		return 0;
	}
	if (level == IPPROTO_IP && (name == IP_TOS || name == IP_FREEBIND)) {
		/* do_ip_setsockopt reads an int, or one byte when optlen < 4. */
		int v = 0;
		if (len > 0 && !val)
			return refuse(SV_C_SETSOCKOPT, EFAULT);
		if (len >= sizeof(int))
			memcpy(&v, val, sizeof v);
		else if (len > 0)
			v = *(const unsigned char *)val;
		int *o = &f->opts[SV_O_IP];
		if (name == IP_TOS) /* __ip_sock_set_tos: a stream keeps its ECN bits */
			*o = (*o & ~0xff) | (v & 0xfc) | (*o & 0x03);
		else
			*o = v ? (*o | SV_IP_FREEBIND) : (*o & ~SV_IP_FREEBIND);
		return 0;
	}
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
		case SO_DOMAIN: return putint(val, len, f->family);
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
	if (level == IPPROTO_IPV6 && name == IPV6_V6ONLY) {
		if (f->family != AF_INET6)
			return refuse(SV_C_GETSOCKOPT, EOPNOTSUPP); /* do_ip_getsockopt: level != SOL_IP */
		return putint(val, len, f->opts[SV_O_V6ONLY] != 0);
	}
	if (level == IPPROTO_IP && (name == IP_TOS || name == IP_FREEBIND)) {
		int v = name == IP_TOS ? (f->opts[SV_O_IP] & 0xff) : (f->opts[SV_O_IP] & SV_IP_FREEBIND) != 0;
		if (val && len && *len > 0 && *len < sizeof(int)) { /* do_ip_getsockopt: one byte for a short buffer */
			*(unsigned char *)val = (unsigned char)v;
			*len = 1;
			return 0;
		}
		return putint(val, len, v);
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
	uint8_t ip[16];
	for (int i = 0; i < 16; i += 4) {
		uint32_t w = SV_LOAD(sv_u32(s, (peer ? SV_S_RADDR : SV_S_LADDR) + (size_t)i));
		memcpy(ip + i, &w, 4);
	}
	uint32_t p = SV_LOAD(sv_u32(s, peer ? SV_S_RPORT : SV_S_LPORT));
	/* The stack keeps IPv4 IPv4-mapped: an AF_INET socket's is the last 4 bytes. */
	fill(sa, len, f->family, f->family == AF_INET6 ? ip : ip + 12, (uint16_t)p);
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
		case F_DUPFD:
		case F_DUPFD_CLOEXEC:
			sv_count(SV_C_DUP, 0);
			return dup_done(fd, sv_real.fcntl(fd, cmd, arg));
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

/* Messages. Linux's tcp_sendmsg hands control messages to
 * sock_cmsg_send, which skips those of other levels and SCM_RIGHTS or
 * SCM_CREDENTIALS (semantically AF_UNIX's), and refuses a malformed one
 * or any other SOL_SOCKET type it cannot honour with EINVAL
 * (net/core/sock.c, __sock_cmsg_send): here that is every SOL_SOCKET
 * type but those two (SO_MARK, SO_TIMESTAMPING, SCM_TXTIME need the
 * kernel's qdisc). The destination of a connected stream is ignored, as
 * Linux's TCP ignores it. */
static int cmsg_refused(const struct msghdr *m)
{
	if (!m->msg_controllen)
		return 0;
	if (!m->msg_control)
		return EFAULT;
	for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)m); c; c = CMSG_NXTHDR((struct msghdr *)m, c)) {
		if (c->cmsg_len < sizeof(struct cmsghdr) ||
		    c->cmsg_len > m->msg_controllen - (size_t)((char *)c - (char *)m->msg_control))
			return EINVAL;
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type != SCM_RIGHTS && c->cmsg_type != SCM_CREDENTIALS)
			return EINVAL;
	}
	return 0;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int fl)
{
	sv_resolve();
	OWN(fd, SV_C_SENDMSG);
	if (!f)
		return sv_real.sendmsg(fd, m, fl);
	if (!m)
		return refuse(SV_C_SENDMSG, EFAULT);
	if (m->msg_iovlen > IOV_MAX)
		return refuse(SV_C_SENDMSG, EMSGSIZE);
	int e = cmsg_refused(m);
	if (e)
		return refuse(SV_C_SENDMSG, e);
	return sv_do_send(f, m->msg_iov, (int)m->msg_iovlen, fl);
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int fl)
{
	sv_resolve();
	OWN(fd, SV_C_RECVMSG);
	if (!f)
		return sv_real.recvmsg(fd, m, fl);
	if (!m)
		return refuse(SV_C_RECVMSG, EFAULT);
	if (m->msg_iovlen > IOV_MAX)
		return refuse(SV_C_RECVMSG, EMSGSIZE);
	ssize_t n = sv_do_recv(f, m->msg_iov, (int)m->msg_iovlen, fl);
	if (n >= 0) {
		/* A stream has no source address, and no control message is
		 * enabled (tcp_recvmsg adds one only for SO_TIMESTAMP or
		 * TCP_INQ). */
		m->msg_namelen = 0;
		m->msg_controllen = 0;
		m->msg_flags = 0;
	}
	return n;
}

/* sendfile from a regular file into a socket of the stack: read at the
 * offset (or the file's position, which then moves) and sent through the
 * send ring, as sv_do_send would write it (blocking writes all, nonblocking
 * what fits). Linux's do_sendfile wants an input it can splice from: a
 * socket of the stack as the input is EINVAL. */
static ssize_t do_sendfile(int out, int in, off_t *off, size_t count)
{
	OWN(out, SV_C_SENDFILE);
	if (!f)
		return sv_real.sendfile(out, in, off, count);
	if (sv_owned(in))
		return refuse(SV_C_SENDFILE, EINVAL);
	struct stat st;
	if (fstat(in, &st) < 0)
		return refuse(SV_C_SENDFILE, EBADF);
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return refuse(SV_C_SENDFILE, EINVAL);
	off_t pos = off ? *off : lseek(in, 0, SEEK_CUR);
	if (pos < 0)
		return -1;
	char buf[16384];
	size_t total = 0;
	int err = 0;
	while (total < count) {
		size_t want = count - total < sizeof buf ? count - total : sizeof buf;
		ssize_t r = pread(in, buf, want, pos + (off_t)total);
		if (r < 0) {
			err = errno;
			break;
		}
		if (r == 0)
			break;
		struct iovec v = {buf, (size_t)r};
		ssize_t w = sv_do_send(f, &v, 1, 0);
		if (w < 0) {
			err = errno;
			break;
		}
		total += (size_t)w;
		if (w < r)
			break;
	}
	if (off)
		*off = pos + (off_t)total;
	else if (total)
		lseek(in, pos + (off_t)total, SEEK_SET);
	if (!total && err) {
		errno = err;
		return -1;
	}
	return (ssize_t)total;
}

EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	sv_resolve();
	return do_sendfile(out, in, off, count);
}

EXPORT ssize_t sendfile64(int out, int in, off_t *off, size_t count)
{
	sv_resolve();
	if (!sv_owned(out))
		return sv_real.sendfile64(out, in, off, count);
	return do_sendfile(out, in, off, count);
}
