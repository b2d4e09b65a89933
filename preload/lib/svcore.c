/* svcore.c: the library's state, its connection to the stack process,
 * control requests and waits. No thread is created, and the only
 * thread-local storage is errno's. */
#define _GNU_SOURCE
#include "svcore.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct sv_real sv_real;
uint8_t *sv_mem;
uint32_t sv_ring;

static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;
static void resolve(void)
{
#define R(f) sv_real.f = dlsym(RTLD_NEXT, #f)
	R(socket); R(bind); R(listen); R(accept); R(accept4); R(connect); R(read); R(write); R(recv); R(send);
	R(recvfrom); R(sendto); R(readv); R(writev); R(close); R(shutdown); R(setsockopt); R(getsockopt);
	R(getsockname); R(getpeername); R(fcntl); R(ioctl);
	R(epoll_create); R(epoll_create1); R(epoll_ctl); R(epoll_wait); R(epoll_pwait); R(poll); R(ppoll); R(select);
	R(pselect);
	sv_real.epoll_pwait2 = dlsym(RTLD_NEXT, "epoll_pwait2"); /* glibc 2.35 on */
	sv_real.read_chk = dlsym(RTLD_NEXT, "__read_chk");
	sv_real.recv_chk = dlsym(RTLD_NEXT, "__recv_chk");
	sv_real.recvfrom_chk = dlsym(RTLD_NEXT, "__recvfrom_chk");
	R(dup); R(dup2); R(dup3); R(sendmsg); R(recvmsg); R(sendfile); R(sendfile64);
	R(recvmmsg); R(sendmmsg); R(splice);
#undef R
}
void sv_resolve(void) { pthread_once(&resolve_once, resolve); }

/* The descriptor table: one entry per possible fd (RLIMIT_NOFILE's hard
 * limit, at most 1 << 20), allocated once, naming a socket by slot; gen
 * ties an entry to the connection that made it, so a forked child's
 * inherited sockets are told apart from its own. The sockets themselves
 * (struct sv_fd, shared by dup'ed descriptors) are an array by slot,
 * sized from the stack's header at the first connection. */
struct entry { int32_t slot; uint32_t gen; };
static struct entry *table;
static size_t table_len;
static int table_hi; /* one past the highest fd ever owned: what a fork's child walks */
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static uint32_t gen = 1;
static struct sv_fd *socks;
static uint32_t nsocks;

static void table_init(void)
{
	struct rlimit rl;
	size_t n = 1 << 16;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max > n)
		n = rl.rlim_max;
	if (n > (1u << 20))
		n = 1u << 20;
	void *p = mmap(NULL, n * sizeof(struct entry), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	table = p;
	table_len = n;
}

struct sv_fd *sv_owned(int fd)
{
	if (!table || fd < 0 || (size_t)fd >= table_len)
		return NULL;
	struct entry *e = &table[fd];
	if (e->gen == 0 || !socks || e->slot < 0 || (uint32_t)e->slot >= nsocks)
		return NULL;
	return &socks[e->slot];
}

/* inherited reports whether an owned fd came from the parent of a fork. */
static int inherited(int fd) { return table[fd].gen != gen; }

static void set_entry(int fd, int slot)
{
	table[fd].slot = slot;
	__atomic_store_n(&table[fd].gen, gen, __ATOMIC_RELEASE);
	if (fd >= __atomic_load_n(&table_hi, __ATOMIC_RELAXED))
		__atomic_store_n(&table_hi, fd + 1, __ATOMIC_RELAXED);
}

int sv_own(int fd, int slot, int nonblock)
{
	pthread_once(&table_once, table_init);
	if (!table || fd < 0 || (size_t)fd >= table_len || !socks || slot < 0 || (uint32_t)slot >= nsocks) {
		errno = EMFILE;
		return -1;
	}
	struct sv_fd *f = &socks[slot];
	memset(f, 0, sizeof *f);
	f->slot = slot;
	f->refs = 1;
	f->nonblock = nonblock != 0;
	set_entry(fd, slot);
	return 0;
}

int sv_disown(int fd)
{
	if (!table || fd < 0 || (size_t)fd >= table_len || table[fd].gen == 0)
		return -1;
	int left = -1;
	if (!inherited(fd) && socks)
		left = __atomic_sub_fetch(&socks[table[fd].slot].refs, 1, __ATOMIC_SEQ_CST);
	memset(&table[fd], 0, sizeof table[fd]);
	return left;
}

int sv_dup_to(int oldfd, int newfd)
{
	if (!table || newfd < 0 || (size_t)newfd >= table_len) {
		errno = EMFILE;
		return -1;
	}
	struct entry e = table[oldfd];
	if (e.gen == gen)
		__atomic_add_fetch(&socks[e.slot].refs, 1, __ATOMIC_SEQ_CST);
	table[newfd] = e;
	if (newfd >= table_hi)
		table_hi = newfd + 1;
	return 0;
}

/* The connection. */
static pthread_mutex_t conn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t req_mu = PTHREAD_MUTEX_INITIALIZER;
static int conn_state; /* 0 not tried, 1 up, 2 failed, 3 not configured */
static int conn_errno;
static int ctl_fd = -1, to_stack = -1, to_app = -1;
static size_t mem_size;
static uint64_t slot_off, stride, req_off, resp_off;
static uint32_t recs, seq;

static int dial(uint64_t token)
{
	const char *path = getenv("SAVANNA_STACK");
	if (!path || !*path)
		return 3;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path) {
		conn_errno = ENAMETOOLONG;
		return 2;
	}
	strcpy(sa.sun_path, path);
	int fd = sv_real.socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		conn_errno = errno;
		return 2;
	}
	if (sv_real.connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		conn_errno = errno;
		sv_real.close(fd);
		return 2;
	}
	uint32_t hello[5] = {SV_MAGIC, SV_VERSION, (uint32_t)getpid(), (uint32_t)token, (uint32_t)(token >> 32)};
	if (sv_real.write(fd, hello, sizeof hello) != (ssize_t)sizeof hello) {
		conn_errno = EPROTO;
		sv_real.close(fd);
		return 2;
	}
	uint32_t ans[3];
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = {ans, sizeof ans};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	ssize_t n;
	do
		n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof ans || ans[0] != SV_MAGIC || ans[2] != 0) {
		conn_errno = n == (ssize_t)sizeof ans && ans[2] ? (int)ans[2] : EPROTO;
		sv_real.close(fd);
		return 2;
	}
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(3 * sizeof(int))) {
		conn_errno = EPROTO;
		sv_real.close(fd);
		return 2;
	}
	int fds[3];
	memcpy(fds, CMSG_DATA(c), sizeof fds);
	uint8_t *h = mmap(NULL, SV_HEADER, PROT_READ, MAP_SHARED, fds[0], 0);
	if (h == MAP_FAILED) {
		conn_errno = errno;
		goto fail;
	}
	mem_size = *sv_u64(h, SV_H_SIZE);
	munmap(h, SV_HEADER);
	sv_mem = mmap(NULL, mem_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (sv_mem == MAP_FAILED) {
		sv_mem = NULL;
		conn_errno = errno;
		goto fail;
	}
	sv_real.close(fds[0]);
	if (SV_LOAD(sv_u32(sv_mem, SV_H_MAGIC)) != SV_MAGIC || *sv_u32(sv_mem, SV_H_VERSION) != SV_VERSION) {
		conn_errno = EPROTO;
		return 2;
	}
	uint32_t ns = *sv_u32(sv_mem, SV_H_NSLOTS);
	if (!socks || nsocks != ns) {
		void *p = mmap(NULL, (size_t)ns * sizeof *socks, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			conn_errno = ENOMEM;
			return 2;
		}
		socks = p;
		nsocks = ns;
	}
	sv_ring = *sv_u32(sv_mem, SV_H_RING);
	recs = *sv_u32(sv_mem, SV_H_RECS);
	slot_off = *sv_u64(sv_mem, SV_H_SLOT_OFF);
	stride = *sv_u64(sv_mem, SV_H_STRIDE);
	req_off = *sv_u64(sv_mem, SV_H_REQ_OFF);
	resp_off = *sv_u64(sv_mem, SV_H_RESP_OFF);
	ctl_fd = fd;
	to_stack = fds[1];
	to_app = fds[2];
	return 1;
fail:
	for (int i = 0; i < 3; i++)
		sv_real.close(fds[i]);
	sv_real.close(fd);
	return 2;
}

/* fork. A process that holds sockets of the stack registers the fork
 * first (the stack then holds its listeners for the child, so a parent
 * that exits at once, as a daemon's first process does, closes nothing
 * the child inherits); the child connects from its fork handler, before
 * fork returns in it, presenting the token, and the stack gives it its
 * parent's listeners at the same slots in its own memfd: those
 * descriptors are its own from then on (nginx's workers accepting on the
 * master's listener). Its other inherited sockets stay the parent's. */
static uint64_t fork_token;
static int owned_any(void)
{
	for (int fd = 0; fd < table_hi; fd++)
		if (table[fd].gen == gen)
			return 1;
	return 0;
}

static void before_fork(void)
{
	fork_token = 0;
	if (__atomic_load_n(&conn_state, __ATOMIC_ACQUIRE) != 1 || !table || !owned_any())
		return;
	int e = errno;
	int64_t t = sv_request(SV_OP_FORK, -1, 0, 0, NULL);
	if (t > 0)
		fork_token = ((uint64_t)t << 1) | 1;
	errno = e;
}

static void parent_after_fork(void) { fork_token = 0; }

static void child_after_fork(void)
{
	pthread_mutex_init(&conn_mu, NULL);
	pthread_mutex_init(&req_mu, NULL);
	uint32_t parent_gen = gen;
	int was = conn_state;
	if (was == 1) {
		conn_state = 0;
		sv_real.close(ctl_fd);
		sv_real.close(to_stack);
		sv_real.close(to_app);
		ctl_fd = to_stack = to_app = -1;
		munmap(sv_mem, mem_size);
		sv_mem = NULL;
	}
	gen++;
	if (was != 1 || !fork_token)
		return;
	int e = errno;
	int st = dial(fork_token);
	fork_token = 0;
	conn_state = st;
	if (st == 1) {
		/* Adopt what the stack put at the parent's slots. */
		for (int fd = 0; fd < table_hi; fd++) {
			struct entry *en = &table[fd];
			if (en->gen == parent_gen && (uint32_t)en->slot < nsocks &&
			    SV_LOAD(sv_u32(sv_slot(en->slot), SV_S_STATE)) != SV_ST_FREE)
				en->gen = gen;
		}
	}
	errno = e;
}

__attribute__((constructor)) static void sv_init(void)
{
	sv_resolve();
	pthread_atfork(before_fork, parent_after_fork, child_after_fork);
}

int sv_ready(void)
{
	int st = __atomic_load_n(&conn_state, __ATOMIC_ACQUIRE);
	if (st == 0) {
		pthread_mutex_lock(&conn_mu);
		if (conn_state == 0) {
			pthread_once(&table_once, table_init);
			int s = dial(0);
			if (s == 2) {
				char msg[160];
				int k = snprintf(msg, sizeof msg, "savanna preload: cannot reach the stack process at %s: %s\n",
					getenv("SAVANNA_STACK"), strerror(conn_errno));
				if (k > 0)
					sv_real.write(2, msg, (size_t)k < sizeof msg ? (size_t)k : sizeof msg - 1);
			}
			__atomic_store_n(&conn_state, s, __ATOMIC_RELEASE);
		}
		st = conn_state;
		pthread_mutex_unlock(&conn_mu);
	}
	switch (st) {
	case 1: return 1;
	case 3: return -1;
	}
	errno = conn_errno ? conn_errno : ENETDOWN;
	return 0;
}

uint8_t *sv_slot(int slot) { return sv_mem + slot_off + (uint64_t)slot * stride; }
uint8_t *sv_rxdata(int slot) { return sv_slot(slot) + SV_SLOT_HDR; }
uint8_t *sv_txdata(int slot) { return sv_slot(slot) + SV_SLOT_HDR + sv_ring; }

void sv_doorbell(void)
{
	uint64_t one = 1;
	if (sv_real.write(to_stack, &one, sizeof one) < 0) {
		/* EAGAIN: the counter is full, the stack has a wake-up pending. */
	}
}

void sv_count(int call, int refused)
{
	if (sv_mem)
		__atomic_fetch_add(sv_u64(sv_mem, SV_H_COUNTERS + (size_t)call * 16 + (refused ? 8 : 0)), 1, __ATOMIC_RELAXED);
}

int sv_bell(void) { return to_app; }

/* alive reports whether the stack process still holds our connection. */
static int alive(void)
{
	char b;
	ssize_t n = sv_real.recv(ctl_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

static void futex_wait(uint32_t *w, uint32_t val, int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	syscall(SYS_futex, w, FUTEX_WAIT, val, &ts, NULL, 0);
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* wait_word blocks until ok(arg) holds, ev (bumped by the stack on every
 * change) and waiters (ours) guarding the sleep. */
static int wait_word(uint32_t *ev, uint32_t *waiters, int (*ok)(int), int arg, int timeout_ms)
{
	int64_t end = timeout_ms >= 0 ? now_ms() + timeout_ms : 0;
	int saved = errno;
	for (;;) {
		uint32_t e = SV_LOAD(ev);
		if (ok(arg))
			return 1;
		__atomic_fetch_add(waiters, 1, __ATOMIC_SEQ_CST);
		if (ok(arg)) {
			__atomic_fetch_sub(waiters, 1, __ATOMIC_SEQ_CST);
			return 1;
		}
		int ms = 100; /* wake now and then to see the stack is alive: never hang */
		if (timeout_ms >= 0) {
			int64_t left = end - now_ms();
			if (left <= 0) {
				__atomic_fetch_sub(waiters, 1, __ATOMIC_SEQ_CST);
				errno = saved;
				return 0;
			}
			if (left < ms)
				ms = (int)left;
		}
		futex_wait(ev, e, ms);
		__atomic_fetch_sub(waiters, 1, __ATOMIC_SEQ_CST);
		if (SV_LOAD(ev) == e && !alive()) {
			errno = ENETDOWN;
			return -1;
		}
		errno = saved;
	}
}

int sv_wait(int slot, int (*pred)(int slot), int timeout_ms)
{
	uint8_t *s = sv_slot(slot);
	return wait_word(sv_u32(s, SV_S_EV), sv_u32(s, SV_S_WAITERS), pred, slot, timeout_ms);
}

static int resp_ready(int unused)
{
	(void)unused;
	uint8_t *r = sv_mem + resp_off;
	return SV_LOAD(sv_u64(r, SV_R_TAIL)) != SV_LOAD(sv_u64(r, SV_R_HEAD));
}

int64_t sv_request(int op, int slot, int arg, int64_t arg2, struct sv_addr *addr)
{
	pthread_mutex_lock(&req_mu);
	uint8_t *q = sv_mem + req_off, *r = sv_mem + resp_off;
	uint64_t t = SV_LOAD(sv_u64(q, SV_R_TAIL));
	if (t - SV_LOAD(sv_u64(q, SV_R_HEAD)) >= recs) {
		/* A full ring whose stack is gone (the requests that timed
		 * out ENETDOWN are still in it) is ENETDOWN too, not ENOBUFS. */
		int e = alive() ? ENOBUFS : ENETDOWN;
		pthread_mutex_unlock(&req_mu);
		errno = e;
		return -1;
	}
	uint8_t *rec = q + SV_R_RECS + (t & (recs - 1)) * SV_REC;
	memset(rec, 0, SV_REC);
	uint32_t my = ++seq;
	memcpy(rec + SV_Q_SEQ, &my, 4);
	uint16_t op16 = (uint16_t)op;
	memcpy(rec + SV_Q_OP, &op16, 2);
	int32_t s32 = slot;
	memcpy(rec + SV_Q_SLOT, &s32, 4);
	int32_t a32 = arg;
	memcpy(rec + SV_Q_ARG, &a32, 4);
	memcpy(rec + SV_Q_ARG2, &arg2, 8);
	size_t alen = addr && addr->fam == AF_INET6 ? 16 : 4;
	if (addr) {
		uint16_t fam = (uint16_t)addr->fam;
		memcpy(rec + SV_Q_FAM, &fam, 2);
		memcpy(rec + SV_Q_PORT, &addr->port, 2);
		memcpy(rec + SV_Q_ADDR, addr->ip, alen);
	}
	SV_STORE(sv_u64(q, SV_R_TAIL), t + 1);
	sv_doorbell();
	for (;;) {
		int w = wait_word(sv_u32(r, SV_R_EV), sv_u32(r, SV_R_WAITERS), resp_ready, 0, -1);
		if (w < 0) {
			pthread_mutex_unlock(&req_mu);
			return -1;
		}
		uint64_t h = SV_LOAD(sv_u64(r, SV_R_HEAD));
		uint8_t *p = r + SV_R_RECS + (h & (recs - 1)) * SV_REC;
		uint32_t got;
		int32_t err;
		int64_t res;
		memcpy(&got, p + SV_P_SEQ, 4);
		memcpy(&err, p + SV_P_ERRNO, 4);
		memcpy(&res, p + SV_P_RESULT, 8);
		if (addr && got == my) {
			memcpy(&addr->port, p + SV_P_PORT, 2);
			memcpy(addr->ip, p + SV_P_ADDR, alen);
		}
		SV_STORE(sv_u64(r, SV_R_HEAD), h + 1);
		if (got != my)
			continue; /* a stale answer (none is expected: one request at a time) */
		pthread_mutex_unlock(&req_mu);
		if (err) {
			errno = err;
			return -1;
		}
		return res;
	}
}

SV_HIDDEN int sv_inherited(int fd) { return inherited(fd); }

int sv_alive(void) { return alive(); }
