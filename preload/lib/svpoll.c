/* svpoll.c: epoll, poll and select over sockets of the stack process
 * and ordinary descriptors together.
 *
 * An owned socket's readiness is computed from its slot (the rings'
 * counters, state, flags, accept queue) with Linux's tcp_poll rules; an
 * ordinary descriptor's comes from the kernel. A wait that involves
 * owned sockets blocks in the kernel (ppoll) on the ordinary descriptors
 * (for epoll: the real epoll fd, which holds them) plus the stack's
 * doorbell toward this process, in slices of at most 100 ms, and
 * recomputes ring readiness on every wake: the stack rings the doorbell
 * on every change of any slot while SV_H_APP_POLL (threads of this
 * process waiting here) is non-zero, checked Dekker-style against
 * SV_H_STACK_GEN, so nothing spins and no change is missed. The slice
 * bound checks the stack is still there (else owned sockets report
 * EPOLLERR|EPOLLHUP) and bounds a wake-up lost to another thread that
 * drained the shared doorbell first. docs/preload.md, "epoll, poll and
 * select". */
#define _GNU_SOURCE
#include "svcore.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define SLICE_MS 100

/* The stack process is gone: owned sockets are hung up. */
static int dead;

/* sv_gone reports that a wait found the stack process gone. A
 * nonblocking call that would block then fails ENETDOWN (svapi.c), not
 * EAGAIN: poll reports every owned socket hung up, and a program that
 * polls and retries on EAGAIN (mariadbd's vio_read) would spin for ever
 * on a connection whose stack is gone. */
int sv_gone(void) { return __atomic_load_n(&dead, __ATOMIC_RELAXED); }

/* A snapshot of what a socket's edges are measured from (EPOLLET). */
struct snap {
	uint64_t rx_tail;
	uint32_t state, flags, accq, nospace, err;
};

/* One owned socket in an epoll set. */
struct reg {
	int fd, slot;
	uint32_t events; /* as given, EPOLLET/EPOLLONESHOT included */
	epoll_data_t data;
	int off;     /* EPOLLONESHOT fired: nothing until EPOLL_CTL_MOD */
	int pending; /* just added or modified: report what is ready now, as ep_insert/ep_modify */
	struct snap last;
};

/* An epoll fd of the process and its owned sockets (the ordinary ones
 * are in the kernel's set). */
struct epset {
	int fd;
	pthread_mutex_t mu;
	struct reg *regs;
	int n, cap;
	unsigned rot; /* where the next scan starts, so a full maxevents does not starve the rest */
	struct epset *next;
};

static pthread_mutex_t sets_mu = PTHREAD_MUTEX_INITIALIZER;
static struct epset *sets;

/* excl counts r's EPOLLEXCLUSIVE registration in its slot (d: +1 or
 * -1), which the stack reads to wake one exclusive process per new
 * connection of a shared listener. */
static void excl(const struct reg *r, int d)
{
	if (!(r->events & EPOLLEXCLUSIVE) || !sv_mem || !sv_owned(r->fd) || sv_inherited(r->fd))
		return;
	__atomic_add_fetch(sv_u32(sv_slot(r->slot), SV_S_EXCL), (uint32_t)d, __ATOMIC_SEQ_CST);
}

static struct epset *find_set(int fd)
{
	struct epset *s;
	pthread_mutex_lock(&sets_mu);
	for (s = sets; s && s->fd != fd; s = s->next)
		;
	pthread_mutex_unlock(&sets_mu);
	return s;
}

/* sv_closed forgets fd: an epoll set goes, an owned socket leaves every
 * set (Linux removes a file from its epoll sets when it is closed). */
void sv_closed(int fd)
{
	if (!sets)
		return;
	pthread_mutex_lock(&sets_mu);
	for (struct epset **pp = &sets; *pp;) {
		struct epset *s = *pp;
		if (s->fd == fd) {
			*pp = s->next;
			for (int i = 0; i < s->n; i++)
				excl(&s->regs[i], -1);
			free(s->regs);
			pthread_mutex_destroy(&s->mu);
			free(s);
			continue;
		}
		pthread_mutex_lock(&s->mu);
		for (int i = 0; i < s->n;)
			if (s->regs[i].fd == fd) {
				excl(&s->regs[i], -1);
				s->regs[i] = s->regs[--s->n];
			} else {
				i++;
			}
		pthread_mutex_unlock(&s->mu);
		pp = &s->next;
	}
	pthread_mutex_unlock(&sets_mu);
}

static void take_snap(int slot, struct sv_fd *f, struct snap *n)
{
	uint8_t *s = sv_slot(slot);
	n->rx_tail = SV_LOAD(sv_u64(s, SV_S_RX_TAIL));
	n->state = __atomic_load_n(&dead, __ATOMIC_RELAXED) ? 0xffffffffu : SV_LOAD(sv_u32(s, SV_S_STATE));
	n->flags = SV_LOAD(sv_u32(s, SV_S_FLAGS)) | (f->shut_rd ? 0x100u : 0);
	n->accq = SV_LOAD(sv_u32(s, SV_S_ACCQ));
	n->nospace = __atomic_load_n(&f->nospace, __ATOMIC_RELAXED);
	n->err = SV_LOAD(sv_u32(s, SV_S_ERR));
}

/* mask is Linux's tcp_poll for the socket as n shows it. */
static uint32_t mask(int slot, const struct snap *n)
{
	if (n->state == 0xffffffffu)
		return EPOLLERR | EPOLLHUP;
	uint8_t *s = sv_slot(slot);
	uint32_t m = 0, err = n->err && n->err != EINPROGRESS ? EPOLLERR : 0;
	switch (n->state) {
	case SV_ST_LISTEN:
		return n->accq ? EPOLLIN | EPOLLRDNORM : 0;
	case SV_ST_CONNECTING:
		return 0;
	case SV_ST_SOCKET:
	case SV_ST_BOUND:
		/* TCP_CLOSE: hung up, and writable (sk_stream_is_writeable). */
		return EPOLLOUT | EPOLLWRNORM | EPOLLHUP;
	case SV_ST_FAILED:
		/* tcp_done: both directions shut. */
		return err | EPOLLHUP | EPOLLIN | EPOLLRDNORM | EPOLLRDHUP | EPOLLOUT | EPOLLWRNORM;
	}
	if (n->rx_tail != SV_LOAD(sv_u64(s, SV_S_RX_HEAD)))
		m |= EPOLLIN | EPOLLRDNORM;
	int rd = (n->flags & (SV_F_EOF | SV_F_ERR | 0x100u)) != 0, wr = (n->flags & SV_F_WDONE) != 0;
	if (rd)
		m |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP;
	if (wr) {
		m |= EPOLLOUT | EPOLLWRNORM;
	} else {
		/* sk_stream_is_writeable: free space at least half of what is queued. */
		uint64_t used = SV_LOAD(sv_u64(s, SV_S_TX_TAIL)) - SV_LOAD(sv_u64(s, SV_S_TX_HEAD));
		if ((sv_ring - used) * 2 >= used && used < sv_ring)
			m |= EPOLLOUT | EPOLLWRNORM;
	}
	if (rd && wr && (n->flags & (SV_F_EOF | SV_F_ERR)))
		m |= EPOLLHUP; /* SHUTDOWN_MASK */
	return m | err;
}

/* full_mask is mask, and like tcp_poll it marks a socket it finds not
 * writable SOCK_NOSPACE, so that room coming back is an EPOLLOUT edge. */
static uint32_t full_mask(int slot, struct sv_fd *f, const struct snap *n)
{
	uint32_t m = mask(slot, n);
	if ((n->state == SV_ST_CONNECTED || n->state == SV_ST_CLOSING) && !(m & EPOLLOUT))
		__atomic_fetch_add(&f->nospace, 1, __ATOMIC_RELAXED);
	return m;
}

/* owned_ready is the mask of an owned descriptor for poll and select (0
 * for a socket inherited from a parent: see docs/preload.md). */
static uint32_t owned_ready(int fd, struct sv_fd *f)
{
	if (sv_inherited(fd) || !sv_mem)
		return 0;
	struct snap n;
	take_snap(f->slot, f, &n);
	return full_mask(f->slot, f, &n);
}

/* The set's owned sockets that are ready, into ev (at most max); with
 * commit, edges and one-shots are consumed. */
static int scan(struct epset *s, struct epoll_event *ev, int max, int commit)
{
	int got = 0;
	pthread_mutex_lock(&s->mu);
	for (int k = 0; k < s->n && got < max; k++) {
		struct reg *r = &s->regs[(s->rot + (unsigned)k) % (unsigned)s->n];
		struct sv_fd *f = sv_owned(r->fd);
		if (r->off || !f || sv_inherited(r->fd))
			continue;
		struct snap n;
		take_snap(r->slot, f, &n);
		uint32_t want = (r->events & ~(EPOLLET | EPOLLONESHOT | EPOLLEXCLUSIVE | EPOLLWAKEUP)) | EPOLLERR | EPOLLHUP;
		uint32_t m = full_mask(r->slot, f, &n) & want;
		if (r->events & EPOLLET) {
			/* Linux wakes an edge-triggered item on a wake-up whose key
			 * meets its events: new data or a connection (EPOLLIN), room
			 * after a write found none (EPOLLOUT, SOCK_NOSPACE), a state
			 * change (no key: always). It then reports the full mask. */
			const struct snap *o = &r->last;
			int in = n.rx_tail != o->rx_tail || n.accq > o->accq;
			int out = n.nospace != o->nospace && (m & EPOLLOUT);
			int st = n.state != o->state || n.flags != o->flags || (n.err && n.err != o->err);
			int edge = r->pending || st || (in && (want & (EPOLLIN | EPOLLRDHUP))) || (out && (want & EPOLLOUT));
			if (commit) {
				uint32_t keep = o->nospace;
				r->last = n;
				if (n.nospace != keep && !(m & EPOLLOUT))
					r->last.nospace = keep; /* still full: the edge is yet to come */
				r->pending = 0;
			}
			if (!edge)
				m = 0;
		} else if (commit) {
			r->pending = 0;
		}
		if (!m)
			continue;
		ev[got].events = m;
		ev[got].data = r->data;
		got++;
		if (commit && (r->events & EPOLLONESHOT))
			r->off = 1;
	}
	if (commit && s->n)
		s->rot = (s->rot + 1) % (unsigned)s->n;
	pthread_mutex_unlock(&s->mu);
	return got;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void drain_bell(void)
{
	uint64_t v;
	if (sv_real.read(sv_bell(), &v, sizeof v) < 0) {
		/* EAGAIN: another waiter drained it */
	}
}

static uint32_t *app_poll(void) { return sv_u32(sv_mem, SV_H_APP_POLL); }

/* After a slice with nothing: is the stack still there? */
static void check_alive(void)
{
	if (!__atomic_load_n(&dead, __ATOMIC_RELAXED) && !sv_alive())
		__atomic_store_n(&dead, 1, __ATOMIC_RELAXED);
}

/* wait_kernel blocks in ppoll on fds (the last one is the doorbell) for
 * at most the slice, then drains the doorbell. Returns ppoll's result
 * without the doorbell, -1 with errno on an error (EINTR). */
static int wait_kernel(struct pollfd *fds, nfds_t n, int64_t end, const sigset_t *sigmask, int *slice_out)
{
	int ms = SLICE_MS;
	if (end >= 0) {
		int64_t left = end - now_ms();
		if (left < 0)
			left = 0;
		if (left < ms)
			ms = (int)left;
	}
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	fds[n - 1] = (struct pollfd){.fd = sv_bell(), .events = POLLIN};
	int r = sv_real.ppoll(fds, n, &ts, sigmask);
	__atomic_fetch_sub(app_poll(), 1, __ATOMIC_SEQ_CST);
	if (r < 0)
		return -1;
	if (fds[n - 1].revents) {
		drain_bell();
		r--;
	}
	*slice_out = r == 0 && !fds[n - 1].revents;
	return r;
}

static uint32_t *stack_gen(void) { return sv_u32(sv_mem, SV_H_STACK_GEN); }

/* wait_gen is wait_kernel for a poll of owned sockets only: it sleeps on
 * the stack's change counter (a futex the stack wakes on every change
 * while SV_H_APP_POLL is non-zero) from g0, read after app_poll was
 * raised and before readiness was computed, for at most the slice. The
 * shared doorbell can lose a wake-up to another thread that drains it
 * between this thread's look at the rings and its ppoll (mariadbd's
 * connection threads each poll one socket, and its listener thread the
 * listeners: a lost wake-up cost one 100 ms slice); a futex wait on an
 * unchanged value cannot. Returns 0, or -1 with EINTR (poll is never
 * restarted, signal(7)); app_poll is lowered. */
static int wait_gen(uint32_t g0, int64_t end, int *slice_out)
{
	int ms = SLICE_MS, saved = errno;
	if (end >= 0) {
		int64_t left = end - now_ms();
		if (left < 0)
			left = 0;
		if (left < ms)
			ms = (int)left;
	}
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	long r = syscall(SYS_futex, stack_gen(), FUTEX_WAIT, g0, &ts, NULL, 0);
	int e = errno;
	__atomic_fetch_sub(app_poll(), 1, __ATOMIC_SEQ_CST);
	if (r < 0 && e == EINTR) {
		errno = EINTR;
		return -1;
	}
	*slice_out = r < 0 && e == ETIMEDOUT;
	errno = saved;
	return 0;
}

/* epoll. */

static int new_set(int fd)
{
	if (fd < 0)
		return fd;
	struct epset *s = calloc(1, sizeof *s);
	if (!s) {
		sv_real.close(fd);
		errno = ENOMEM;
		return -1;
	}
	s->fd = fd;
	pthread_mutex_init(&s->mu, NULL);
	sv_closed(fd); /* a stale set of a number closed behind our back */
	pthread_mutex_lock(&sets_mu);
	s->next = sets;
	sets = s;
	pthread_mutex_unlock(&sets_mu);
	return fd;
}

EXPORT int epoll_create(int size)
{
	sv_resolve();
	return new_set(sv_real.epoll_create(size));
}

EXPORT int epoll_create1(int flags)
{
	sv_resolve();
	return new_set(sv_real.epoll_create1(flags));
}

/* EPOLLEXCLUSIVE may come only with these (fs/eventpoll.c, EPOLLEXCLUSIVE_OK_BITS). */
#define EXCL_OK (EPOLLINOUT_BITS | EPOLLERR | EPOLLHUP | EPOLLWAKEUP | EPOLLET | EPOLLEXCLUSIVE)
#define EPOLLINOUT_BITS (EPOLLIN | EPOLLOUT)

/* ctl_owned is epoll_ctl for an owned socket, with Linux's errors. */
static int ctl_owned(int epfd, int op, int fd, struct sv_fd *f, struct epoll_event *ev)
{
	struct epset *s = find_set(epfd);
	if (!s) {
		if (sv_real.fcntl(epfd, F_GETFD) < 0)
			return -1; /* EBADF */
		errno = EINVAL;
		return -1;
	}
	if (epfd == fd || (op != EPOLL_CTL_DEL && !ev)) {
		errno = epfd == fd ? EINVAL : EFAULT;
		return -1;
	}
	if (op != EPOLL_CTL_ADD && op != EPOLL_CTL_MOD && op != EPOLL_CTL_DEL) {
		errno = EINVAL;
		return -1;
	}
	if (op != EPOLL_CTL_DEL && (ev->events & EPOLLEXCLUSIVE) &&
	    (op == EPOLL_CTL_MOD || (ev->events & ~(uint32_t)EXCL_OK))) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&s->mu);
	int i;
	for (i = 0; i < s->n && s->regs[i].fd != fd; i++)
		;
	int found = i < s->n, rc = 0;
	switch (op) {
	case EPOLL_CTL_ADD:
		if (found) {
			errno = EEXIST;
			rc = -1;
			break;
		}
		if (s->n == s->cap) {
			int cap = s->cap ? 2 * s->cap : 8;
			struct reg *nr = realloc(s->regs, (size_t)cap * sizeof *nr);
			if (!nr) {
				errno = ENOMEM;
				rc = -1;
				break;
			}
			s->regs = nr;
			s->cap = cap;
		}
		s->regs[s->n++] = (struct reg){.fd = fd, .slot = f->slot, .events = ev->events, .data = ev->data, .pending = 1};
		excl(&s->regs[s->n - 1], 1);
		break;
	case EPOLL_CTL_MOD:
		if (!found) {
			errno = ENOENT;
			rc = -1;
			break;
		}
		if (s->regs[i].events & EPOLLEXCLUSIVE) {
			errno = EINVAL;
			rc = -1;
			break;
		}
		s->regs[i].events = ev->events;
		s->regs[i].data = ev->data;
		s->regs[i].off = 0;
		s->regs[i].pending = 1;
		break;
	case EPOLL_CTL_DEL:
		if (!found) {
			errno = ENOENT;
			rc = -1;
			break;
		}
		excl(&s->regs[i], -1);
		s->regs[i] = s->regs[--s->n];
		break;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	sv_resolve();
	struct sv_fd *f = sv_owned(fd);
	if (!f)
		return sv_real.epoll_ctl(epfd, op, fd, ev);
	sv_count(SV_C_POLL, 0);
	int rc = ctl_owned(epfd, op, fd, f, ev);
	if (rc < 0)
		sv_count(SV_C_POLL, 1); /* an error Linux would give, counted as every refusal is */
	return rc;
}

static int set_owned(struct epset *s)
{
	if (!s)
		return 0;
	pthread_mutex_lock(&s->mu);
	int n = s->n;
	pthread_mutex_unlock(&s->mu);
	return n;
}

static int ep_wait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *sigmask, int pwait)
{
	struct epset *s = find_set(epfd);
	if (!set_owned(s) || !sv_mem || max <= 0)
		return pwait ? sv_real.epoll_pwait(epfd, ev, max, timeout, sigmask) : sv_real.epoll_wait(epfd, ev, max, timeout);
	int64_t end = timeout < 0 ? -1 : now_ms() + timeout;
	for (;;) {
		int n = scan(s, ev, max, 1);
		if (n < max) {
			int k = sv_real.epoll_wait(epfd, ev + n, max - n, 0);
			if (k > 0)
				n += k;
		}
		if (n > 0 || timeout == 0 || (end >= 0 && now_ms() >= end))
			return n;
		__atomic_fetch_add(app_poll(), 1, __ATOMIC_SEQ_CST);
		struct epoll_event probe;
		if (scan(s, &probe, 1, 0)) {
			__atomic_fetch_sub(app_poll(), 1, __ATOMIC_SEQ_CST);
			continue;
		}
		struct pollfd pf[2] = {{.fd = epfd, .events = POLLIN}};
		int slice = 0;
		if (wait_kernel(pf, 2, end, sigmask, &slice) < 0)
			return -1; /* EINTR: epoll_wait is never restarted (signal(7)) */
		if (slice)
			check_alive();
	}
}

EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	sv_resolve();
	return ep_wait(epfd, ev, max, timeout, NULL, 0);
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *sigmask)
{
	sv_resolve();
	return ep_wait(epfd, ev, max, timeout, sigmask, 1);
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *ts, const sigset_t *sigmask)
{
	sv_resolve();
	if (!set_owned(find_set(epfd)) || !sv_mem || max <= 0) {
		if (!sv_real.epoll_pwait2) {
			errno = ENOSYS; /* a libc without it: the program would not have linked */
			return -1;
		}
		return sv_real.epoll_pwait2(epfd, ev, max, ts, sigmask);
	}
	if (ts && (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)) {
		errno = EINVAL;
		return -1;
	}
	int ms = -1;
	if (ts) {
		int64_t v = (int64_t)ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000;
		ms = v > INT32_MAX ? INT32_MAX : (int)v;
	}
	return ep_wait(epfd, ev, max, ms, sigmask, 1);
}

/* poll. */

static int has_owned(const struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (sv_owned(fds[i].fd))
			return 1;
	return 0;
}

static int owned_revents(struct pollfd *fds, nfds_t n)
{
	int got = 0;
	for (nfds_t i = 0; i < n; i++) {
		struct sv_fd *f = sv_owned(fds[i].fd);
		if (!f)
			continue;
		uint32_t m = owned_ready(fds[i].fd, f) & ((uint32_t)(uint16_t)fds[i].events | POLLERR | POLLHUP);
		fds[i].revents = (short)m;
		got += m != 0;
	}
	return got;
}

/* sv_poll is poll over owned and ordinary descriptors; timeout_ms < 0
 * waits for ever. */
static int sv_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms, const sigset_t *sigmask)
{
	sv_count(SV_C_POLL, 0);
	struct pollfd stackbuf[64], *tmp = stackbuf;
	nfds_t k = 0;
	if (nfds + 1 > sizeof stackbuf / sizeof stackbuf[0]) {
		tmp = malloc((nfds + 1) * sizeof *tmp);
		if (!tmp) {
			errno = ENOMEM;
			return -1;
		}
	}
	int64_t end = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int rc;
	for (;;) {
		k = 0;
		for (nfds_t i = 0; i < nfds; i++)
			if (!sv_owned(fds[i].fd))
				tmp[k++] = fds[i];
		int got = owned_revents(fds, nfds), r = 0;
		int expired = timeout_ms == 0 || (end >= 0 && now_ms() >= end);
		if (!got && !expired) {
			__atomic_fetch_add(app_poll(), 1, __ATOMIC_SEQ_CST);
			uint32_t g0 = SV_LOAD(stack_gen());
			got = owned_revents(fds, nfds);
			if (got) {
				__atomic_fetch_sub(app_poll(), 1, __ATOMIC_SEQ_CST);
			} else if (k == 0 && !sigmask) {
				int slice = 0;
				if (wait_gen(g0, end, &slice) < 0) {
					rc = -1;
					break;
				}
				if (slice)
					check_alive();
				continue;
			} else {
				int slice = 0;
				r = wait_kernel(tmp, k + 1, end, sigmask, &slice);
				if (r < 0) {
					rc = -1;
					break;
				}
				if (slice)
					check_alive();
				if (r == 0)
					continue;
				got = owned_revents(fds, nfds);
			}
		}
		if (r == 0 && k) {
			static const struct timespec zero;
			r = sv_real.ppoll(tmp, k, &zero, NULL);
			if (r < 0) {
				rc = -1;
				break;
			}
		}
		for (nfds_t i = 0, j = 0; i < nfds; i++)
			if (!sv_owned(fds[i].fd))
				fds[i].revents = tmp[j++].revents;
		rc = got + r;
		break;
	}
	if (tmp != stackbuf)
		free(tmp);
	return rc;
}

EXPORT int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	sv_resolve();
	if (!sv_mem || !has_owned(fds, nfds))
		return sv_real.poll(fds, nfds, timeout);
	return sv_poll(fds, nfds, timeout < 0 ? -1 : timeout, NULL);
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen)
{
	if (fdslen / sizeof *fds < nfds)
		__builtin_trap(); /* glibc's __chk_fail */
	return poll(fds, nfds, timeout);
}

static int ts_ms(const struct timespec *ts)
{
	if (!ts)
		return -1;
	int64_t ms = (int64_t)ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

EXPORT int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *ts, const sigset_t *sigmask)
{
	sv_resolve();
	if (!sv_mem || !has_owned(fds, nfds))
		return sv_real.ppoll(fds, nfds, ts, sigmask);
	if (ts && (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)) {
		errno = EINVAL;
		return -1;
	}
	return sv_poll(fds, nfds, ts_ms(ts), sigmask);
}

EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t nfds, const struct timespec *ts, const sigset_t *sigmask, size_t fdslen)
{
	if (fdslen / sizeof *fds < nfds)
		__builtin_trap();
	return ppoll(fds, nfds, ts, sigmask);
}

/* select, as poll: Linux's POLLIN_SET, POLLOUT_SET and POLLEX_SET
 * (fs/select.c) decide which bits a mask sets. */
static int sv_select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, int timeout_ms, const sigset_t *sigmask)
{
	if (nfds < 0 || nfds > FD_SETSIZE) {
		errno = EINVAL;
		return -1;
	}
	struct pollfd *p = malloc((size_t)(nfds ? nfds : 1) * sizeof *p);
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	nfds_t n = 0;
	for (int fd = 0; fd < nfds; fd++) {
		short e = (short)((rd && FD_ISSET(fd, rd) ? POLLIN : 0) | (wr && FD_ISSET(fd, wr) ? POLLOUT : 0) |
				  (ex && FD_ISSET(fd, ex) ? POLLPRI : 0));
		if (e)
			p[n++] = (struct pollfd){.fd = fd, .events = e};
	}
	int r = sv_poll(p, n, timeout_ms, sigmask);
	if (r < 0) {
		free(p);
		return -1;
	}
	for (nfds_t i = 0; i < n; i++)
		if (p[i].revents & POLLNVAL) {
			free(p);
			errno = EBADF;
			return -1;
		}
	int count = 0;
	for (nfds_t i = 0; i < n; i++) {
		int fd = p[i].fd;
		short v = p[i].revents;
		if (rd && FD_ISSET(fd, rd)) {
			if (v & (POLLIN | POLLRDNORM | POLLRDBAND | POLLHUP | POLLERR))
				count++;
			else
				FD_CLR(fd, rd);
		}
		if (wr && FD_ISSET(fd, wr)) {
			if (v & (POLLOUT | POLLWRNORM | POLLWRBAND | POLLERR))
				count++;
			else
				FD_CLR(fd, wr);
		}
		if (ex && FD_ISSET(fd, ex)) {
			if (v & POLLPRI)
				count++;
			else
				FD_CLR(fd, ex);
		}
	}
	free(p);
	return count;
}

static int sets_owned(int nfds, fd_set *rd, fd_set *wr, fd_set *ex)
{
	if (!sv_mem)
		return 0;
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++)
		if (((rd && FD_ISSET(fd, rd)) || (wr && FD_ISSET(fd, wr)) || (ex && FD_ISSET(fd, ex))) && sv_owned(fd))
			return 1;
	return 0;
}

EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv)
{
	sv_resolve();
	if (!sets_owned(nfds, rd, wr, ex))
		return sv_real.select(nfds, rd, wr, ex, tv);
	if (tv && (tv->tv_sec < 0 || tv->tv_usec < 0)) {
		errno = EINVAL;
		return -1;
	}
	int64_t start = now_ms(), ms = tv ? (int64_t)tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000 : -1;
	int r = sv_select(nfds, rd, wr, ex, ms > INT32_MAX ? INT32_MAX : (int)ms, NULL);
	if (tv) {
		/* Linux's select writes back the time left. */
		int64_t left = ms - (now_ms() - start);
		if (left < 0)
			left = 0;
		tv->tv_sec = left / 1000;
		tv->tv_usec = (left % 1000) * 1000;
	}
	return r;
}

EXPORT int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *ts, const sigset_t *sigmask)
{
	sv_resolve();
	if (!sets_owned(nfds, rd, wr, ex))
		return sv_real.pselect(nfds, rd, wr, ex, ts, sigmask);
	if (ts && (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)) {
		errno = EINVAL;
		return -1;
	}
	return sv_select(nfds, rd, wr, ex, ts_ms(ts), sigmask);
}
