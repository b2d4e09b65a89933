/* svcore.h: the library's process-wide state and its talk with the stack
 * process (svcore.c); the interposed calls are in svapi.c. */
#ifndef SVCORE_H
#define SVCORE_H

#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include "svshm.h"

#define SV_HIDDEN __attribute__((visibility("hidden")))

/* The real calls, from the next object (libc) by dlsym(RTLD_NEXT). */
struct sv_real {
	int (*socket)(int, int, int);
	int (*bind)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	int (*close)(int);
	int (*shutdown)(int, int);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*getsockname)(int, struct sockaddr *, socklen_t *);
	int (*getpeername)(int, struct sockaddr *, socklen_t *);
	int (*fcntl)(int, int, ...);
	int (*ioctl)(int, unsigned long, ...);
	ssize_t (*read_chk)(int, void *, size_t, size_t);
	ssize_t (*recv_chk)(int, void *, size_t, size_t, int);
	int (*epoll_create)(int);
	int (*epoll_create1)(int);
	int (*epoll_ctl)(int, int, int, struct epoll_event *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int, const struct timespec *, const sigset_t *);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
	ssize_t (*recvfrom_chk)(int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*sendfile)(int, int, off_t *, size_t);
	ssize_t (*sendfile64)(int, int, off_t *, size_t);
	int (*recvmmsg)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
	int (*sendmmsg)(int, struct mmsghdr *, unsigned int, int);
	ssize_t (*splice)(int, off_t *, int, off_t *, size_t, unsigned int);
};
SV_HIDDEN extern struct sv_real sv_real;
SV_HIDDEN void sv_resolve(void);

/* A socket of the stack process, one per slot, shared by every
 * descriptor of it (dup): what Linux keeps in the open file description
 * (O_NONBLOCK) and the socket (options, shutdown). Each descriptor is a
 * kernel eventfd standing for it. */
struct sv_fd {
	int32_t slot;
	int32_t refs;  /* descriptors of this process naming it: the last close closes */
	uint32_t nonblock;
	uint32_t shut_rd;
	uint32_t nospace; /* bumped when a write found the send ring full (Linux's SOCK_NOSPACE: EPOLLET's EPOLLOUT edge) */
	int32_t family;   /* AF_INET or AF_INET6 */
	int32_t opts[10]; /* SO_REUSEADDR, SO_REUSEPORT, SO_KEEPALIVE, TCP_NODELAY, SO_RCVBUF, SO_SNDBUF, SO_LINGER on, linger s, IPV6_V6ONLY, IP_TOS and IP_FREEBIND (svapi.c) */
};
enum { SV_O_REUSEADDR, SV_O_REUSEPORT, SV_O_KEEPALIVE, SV_O_NODELAY, SV_O_RCVBUF, SV_O_SNDBUF, SV_O_LINGER, SV_O_LINGER_S, SV_O_V6ONLY, SV_O_IP };

SV_HIDDEN struct sv_fd *sv_owned(int fd);        /* NULL unless fd is owned */
SV_HIDDEN int sv_own(int fd, int slot, int nonblock); /* 0, or -1 with errno */
SV_HIDDEN int sv_disown(int fd); /* the descriptors of its socket left, -1 for an inherited one */
SV_HIDDEN int sv_dup_to(int oldfd, int newfd); /* newfd names oldfd's socket too; 0, or -1 with errno */
SV_HIDDEN int sv_inherited(int fd); /* an owned fd from before a fork: the parent's */

/* The receive and send paths of every read and write call (svapi.c):
 * flags as recv's and send's, the socket's O_NONBLOCK, Linux's errors. */
SV_HIDDEN ssize_t sv_do_recv(struct sv_fd *f, const struct iovec *iov, int iovcnt, int fl);
SV_HIDDEN ssize_t sv_do_send(struct sv_fd *f, const struct iovec *iov, int iovcnt, int fl);

/* The stack process. */
SV_HIDDEN int sv_ready(void);  /* connects on first use; 0 with errno when it cannot */
SV_HIDDEN extern uint8_t *sv_mem;
SV_HIDDEN extern uint32_t sv_ring;
SV_HIDDEN uint8_t *sv_slot(int slot);
SV_HIDDEN uint8_t *sv_rxdata(int slot);
SV_HIDDEN uint8_t *sv_txdata(int slot);
SV_HIDDEN void sv_doorbell(void);
SV_HIDDEN void sv_count(int call, int refused);

/* An address of a request or response: the socket's family (its 4 or
 * 16 bytes go on the wire) and the port in network order. */
struct sv_addr {
	int fam;
	uint16_t port;
	uint8_t ip[16];
};

/* One control request; returns the response's result or -1 with errno.
 * addr (may be NULL) goes in and, for accept, the peer comes back in it. */
SV_HIDDEN int64_t sv_request(int op, int slot, int arg, int64_t arg2, struct sv_addr *addr);

/* Blocks until pred(slot) holds, the stack process goes away (-1
 * ENETDOWN) or, when timeout_ms >= 0, the time passes (0 with pred
 * false). pred is called again after every change of the slot. */
SV_HIDDEN int sv_bell(void);  /* the doorbell toward the application (an eventfd, nonblocking) */
SV_HIDDEN int sv_alive(void); /* the stack process still holds the connection */
SV_HIDDEN void sv_closed(int fd); /* close(fd) is about to happen: svpoll.c forgets it */
SV_HIDDEN int sv_gone(void);      /* svpoll.c: a wait found the stack process gone */
SV_HIDDEN int sv_wait(int slot, int (*pred)(int slot), int timeout_ms);

static inline uint32_t *sv_u32(uint8_t *base, size_t off) { return (uint32_t *)(base + off); }
static inline uint64_t *sv_u64(uint8_t *base, size_t off) { return (uint64_t *)(base + off); }
#define SV_LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define SV_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

#endif
