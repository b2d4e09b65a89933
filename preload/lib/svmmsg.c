/* svmmsg.c: recvmmsg, sendmmsg and splice on sockets of the stack, in
 * terms of svapi.c's receive and send paths, with the semantics of
 * Linux's net/socket.c (do_recvmmsg, __sys_sendmmsg) and fs/splice.c
 * (do_splice) for a TCP socket. */
#define _GNU_SOURCE
#include "svcore.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* UIO_MAXIOV: Linux caps vlen there (net/socket.c). */
#define SV_MMSG_MAX 1024

static int refuse(int call, int err)
{
	sv_count(call, 1);
	errno = err;
	return -1;
}

/* mine returns fd's socket, NULL for a descriptor of libc's; *bad is set
 * (errno ENOTCONN, counted) for a forked child's copy it does not hold. */
static struct sv_fd *mine(int fd, int call, int *bad)
{
	struct sv_fd *f = sv_owned(fd);
	*bad = 0;
	if (!f)
		return NULL;
	sv_count(call, 0);
	if (sv_inherited(fd)) {
		*bad = 1;
		refuse(call, ENOTCONN);
	}
	return f;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* recvmmsg on a stream socket is recvmsg vlen times (do_recvmmsg):
 * MSG_WAITFORONE makes every call after the first nonblocking, the
 * timeout is looked at only between messages (and what is left written
 * back), and an error after the first message ends the batch with the
 * messages so far (Linux then keeps the error in sk_err for the next
 * call; a connection's error here stays in its slot anyway). */
EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int vlen, int fl, struct timespec *tmo)
{
	sv_resolve();
	int bad;
	struct sv_fd *f = mine(fd, SV_C_RECVMMSG, &bad);
	if (bad)
		return -1;
	if (!f)
		return sv_real.recvmmsg(fd, v, vlen, fl, tmo);
	if (tmo && (tmo->tv_sec < 0 || tmo->tv_nsec < 0 || tmo->tv_nsec >= 1000000000L))
		return refuse(SV_C_RECVMMSG, EINVAL);
	if (!v && vlen)
		return refuse(SV_C_RECVMMSG, EFAULT);
	if (vlen > SV_MMSG_MAX)
		vlen = SV_MMSG_MAX;
	int64_t end = tmo ? now_ns() + (int64_t)tmo->tv_sec * 1000000000 + tmo->tv_nsec : 0;
	unsigned int n = 0;
	int err = 0;
	while (n < vlen) {
		struct msghdr *m = &v[n].msg_hdr;
		if (m->msg_iovlen > IOV_MAX) {
			err = EMSGSIZE;
			break;
		}
		ssize_t r = sv_do_recv(f, m->msg_iov, (int)m->msg_iovlen, fl & ~MSG_WAITFORONE);
		if (r < 0) {
			err = errno;
			break;
		}
		m->msg_namelen = 0; /* as recvmsg: a stream has no source address, no control message */
		m->msg_controllen = 0;
		m->msg_flags = 0;
		v[n].msg_len = (unsigned int)r;
		n++;
		if (fl & MSG_WAITFORONE)
			fl |= MSG_DONTWAIT;
		if (tmo) {
			int64_t left = end - now_ns();
			if (left < 0)
				left = 0;
			tmo->tv_sec = left / 1000000000;
			tmo->tv_nsec = left % 1000000000;
			if (!left)
				break;
		}
	}
	if (n)
		return (int)n;
	if (err == EMSGSIZE || err == EOPNOTSUPP)
		sv_count(SV_C_RECVMMSG, 1);
	errno = err;
	return err ? -1 : 0;
}

/* sendmmsg is sendmsg vlen times (__sys_sendmmsg): a partial send ends
 * the batch, and an error is returned only when no message went. */
EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int vlen, int fl)
{
	sv_resolve();
	int bad;
	struct sv_fd *f = mine(fd, SV_C_SENDMMSG, &bad);
	if (bad)
		return -1;
	if (!f)
		return sv_real.sendmmsg(fd, v, vlen, fl);
	if (!v && vlen)
		return refuse(SV_C_SENDMMSG, EFAULT);
	if (vlen > SV_MMSG_MAX)
		vlen = SV_MMSG_MAX;
	unsigned int n = 0;
	int err = 0;
	while (n < vlen) {
		const struct msghdr *m = &v[n].msg_hdr;
		if (m->msg_iovlen > IOV_MAX) {
			err = EMSGSIZE;
			break;
		}
		/* Control messages as sendmsg's would be; sendmmsg's callers
		 * (DNS servers, QUIC) pass none on TCP. */
		if (m->msg_controllen) {
			err = EINVAL;
			break;
		}
		size_t want = 0;
		for (size_t i = 0; i < m->msg_iovlen; i++)
			want += m->msg_iov[i].iov_len;
		ssize_t r = sv_do_send(f, m->msg_iov, (int)m->msg_iovlen, fl);
		if (r < 0) {
			err = errno;
			break;
		}
		v[n].msg_len = (unsigned int)r;
		n++;
		if ((size_t)r < want)
			break;
	}
	if (n)
		return (int)n;
	if (err == EMSGSIZE || err == EINVAL || err == EOPNOTSUPP)
		sv_count(SV_C_SENDMMSG, 1);
	errno = err;
	return err ? -1 : 0;
}

static int is_pipe(int fd, int *err)
{
	struct stat st;
	*err = 0;
	if (fstat(fd, &st) < 0) {
		*err = errno;
		return 0;
	}
	return S_ISFIFO(st.st_mode);
}

/* pipe_room is how many bytes a write to pipe fd takes without waiting:
 * its size less what it holds (a page-granular pipe may take less; the
 * write is then partial, never blocked, with the pipe nonblocking). */
static size_t pipe_room(int fd)
{
	int size = sv_real.fcntl(fd, F_GETPIPE_SZ), used = 0;
	if (size <= 0 || sv_real.ioctl(fd, FIONREAD, &used) < 0 || used >= size)
		return 0;
	return (size_t)(size - used);
}

/* to_pipe is splice(socket, pipe): tcp_splice_read waits for bytes as a
 * read of the socket does (its O_NONBLOCK, not SPLICE_F_NONBLOCK, decides;
 * EOF is 0), and a full pipe waits unless SPLICE_F_NONBLOCK or the pipe's
 * O_NONBLOCK (splice_file_to_pipe's wait_for_space: EAGAIN). The bytes
 * are peeked, written into the pipe, and as many consumed as it took. */
static ssize_t to_pipe(struct sv_fd *f, int pfd, size_t len, unsigned int flags)
{
	int pnb = (sv_real.fcntl(pfd, F_GETFL) & O_NONBLOCK) != 0 || (flags & SPLICE_F_NONBLOCK);
	size_t room = pnb ? pipe_room(pfd) : 0;
	if (pnb && !room) {
		errno = EAGAIN;
		return -1;
	}
	char buf[16384];
	size_t n = len < sizeof buf ? len : sizeof buf;
	if (pnb && n > room)
		n = room;
	struct iovec iv = {buf, n};
	ssize_t got = sv_do_recv(f, &iv, 1, MSG_PEEK);
	if (got <= 0)
		return got;
	ssize_t put;
	if (pnb && !(sv_real.fcntl(pfd, F_GETFL) & O_NONBLOCK)) {
		/* SPLICE_F_NONBLOCK on a blocking pipe: no more than the room
		 * seen, so the write does not wait. */
		put = sv_real.write(pfd, buf, (size_t)got);
	} else {
		do
			put = sv_real.write(pfd, buf, (size_t)got);
		while (put < 0 && errno == EINTR);
	}
	if (put <= 0)
		return put;
	struct iovec take = {buf, (size_t)put};
	return sv_do_recv(f, &take, 1, MSG_DONTWAIT); /* the bytes peeked: there, and ours alone */
}

/* from_pipe is splice(pipe, socket): splice_to_socket waits for the pipe
 * to hold bytes (SPLICE_F_NONBLOCK or the pipe's O_NONBLOCK: EAGAIN; no
 * writer left: 0), then sends them as a write does (the socket's
 * O_NONBLOCK: what fits, EAGAIN when nothing does; a shut or failed
 * socket EPIPE with SIGPIPE, as tcp_sendmsg). Only what the send ring
 * takes is read out of the pipe, so nothing read is lost. */
static ssize_t from_pipe(int pfd, struct sv_fd *f, size_t len, unsigned int flags)
{
	int pnb = (sv_real.fcntl(pfd, F_GETFL) & O_NONBLOCK) != 0 || (flags & SPLICE_F_NONBLOCK);
	int avail = 0;
	for (;;) {
		if (sv_real.ioctl(pfd, FIONREAD, &avail) < 0)
			return -1;
		if (avail > 0)
			break;
		struct pollfd p = {pfd, POLLIN, 0};
		int r = sv_real.poll(&p, 1, pnb ? 0 : -1);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r > 0 && (p.revents & POLLHUP) && !(p.revents & POLLIN))
			return 0; /* no writer and nothing in it */
		if (r == 0 && pnb) {
			errno = EAGAIN;
			return -1;
		}
	}
	char buf[16384];
	size_t n = len < sizeof buf ? len : sizeof buf;
	if (n > (size_t)avail)
		n = (size_t)avail;
	if (f->nonblock) {
		uint8_t *s = sv_slot(f->slot);
		size_t used = (size_t)(SV_LOAD(sv_u64(s, SV_S_TX_TAIL)) - SV_LOAD(sv_u64(s, SV_S_TX_HEAD)));
		size_t room = sv_ring - used;
		if (n > room)
			n = room;
	}
	uint32_t fl = SV_LOAD(sv_u32(sv_slot(f->slot), SV_S_FLAGS));
	if (fl & (SV_F_ERR | SV_F_WDONE)) {
		/* A shut or failed socket: the send path's answer (EPIPE with
		 * SIGPIPE, or the connection's errno) before the pipe is read. */
		struct iovec z = {buf, 1};
		return sv_do_send(f, &z, 1, 0);
	}
	if (!n) {
		errno = EAGAIN; /* nonblocking, and the send ring is full */
		return -1;
	}
	ssize_t got = sv_real.read(pfd, buf, n);
	if (got <= 0)
		return got;
	struct iovec iv = {buf, (size_t)got};
	return sv_do_send(f, &iv, 1, (flags & SPLICE_F_MORE) ? MSG_MORE : 0);
}

/* splice with a socket of the stack on one side (do_splice): the other
 * must be a pipe (else EINVAL), an offset on the pipe's side is ESPIPE
 * and on the socket's EINVAL (a socket has no FMODE_PREAD/PWRITE), a
 * length of 0 is 0 before anything is looked at. A socket as both ends
 * is EINVAL, as two sockets are on Linux. */
EXPORT ssize_t splice(int in, off_t *off_in, int out, off_t *off_out, size_t len, unsigned int flags)
{
	sv_resolve();
	struct sv_fd *fi = sv_owned(in), *fo = sv_owned(out);
	if (!fi && !fo)
		return sv_real.splice(in, off_in, out, off_out, len, flags);
	sv_count(SV_C_SPLICE, 0);
	if (!len)
		return 0;
	if (flags & ~(SPLICE_F_MOVE | SPLICE_F_NONBLOCK | SPLICE_F_MORE | SPLICE_F_GIFT))
		return refuse(SV_C_SPLICE, EINVAL);
	if ((fi && sv_inherited(in)) || (fo && sv_inherited(out)))
		return refuse(SV_C_SPLICE, ENOTCONN);
	int e = 0;
	if (fi && fo)
		return refuse(SV_C_SPLICE, EINVAL);
	int other = fi ? out : in;
	if (!is_pipe(other, &e))
		return refuse(SV_C_SPLICE, e ? e : EINVAL);
	if (fi) {
		if (off_out)
			return refuse(SV_C_SPLICE, ESPIPE);
		if (off_in)
			return refuse(SV_C_SPLICE, EINVAL);
		return to_pipe(fi, out, len, flags);
	}
	if (off_in)
		return refuse(SV_C_SPLICE, ESPIPE);
	if (off_out)
		return refuse(SV_C_SPLICE, EINVAL);
	return from_pipe(in, fo, len, flags);
}
