/* svshm.h: the shared-memory layout and control records between a
 * preloaded process (libsavanna_preload.so) and Savanna's stack process
 * (internal/stackproc, whose layout.go mirrors every constant here; a Go
 * spec and preload/test/ringcheck.c check both sides agree).
 * docs/preload.md, "The shared memory", describes it in prose.
 *
 * One memfd per process, mapped MAP_SHARED by both sides:
 *   [0, 4096)            header (SV_H_*), then the app's call counters
 *   [req_off, ...)       request ring: app -> stack, SV_REC-byte records
 *   [resp_off, ...)      response ring: stack -> app, SV_REC-byte records
 *   [slot_off + i*stride) socket slot i: a header of SV_SLOT_HDR bytes,
 *                        then its receive ring (stack -> app) and its
 *                        send ring (app -> stack), ring_size bytes each.
 * Every head and tail is a 64-bit counter of bytes (or records) ever
 * consumed / produced, alone on its cache line; only its owner stores
 * it, with release (C11 __atomic / Go sync/atomic, both sequentially
 * consistent where a flag and a counter are checked Dekker-style). */
#ifndef SVSHM_H
#define SVSHM_H

#include <stdint.h>

#define SV_MAGIC   0x4c505653u /* "SVPL" */
#define SV_VERSION 3u /* 3: 16-byte addresses (AF_INET6) */
#define SV_LINE    64u
#define SV_REC     64u

/* Header offsets (bytes). */
#define SV_H_MAGIC     0   /* u32 */
#define SV_H_VERSION   4   /* u32 */
#define SV_H_SIZE      8   /* u64: the memfd's size */
#define SV_H_NSLOTS    16  /* u32 */
#define SV_H_RING      20  /* u32: bytes per data ring, a power of two */
#define SV_H_RECS      24  /* u32: records per control ring, a power of two */
#define SV_H_SLOT_OFF  32  /* u64 */
#define SV_H_STRIDE    40  /* u64 */
#define SV_H_REQ_OFF   48  /* u64 */
#define SV_H_RESP_OFF  56  /* u64 */
#define SV_H_APP_POLL  64  /* u32, app: threads blocked in epoll/poll (the stack rings its doorbell) */
#define SV_H_STACK_GEN 128 /* u32, stack: bumped on every change to any slot (poll's futex) */
#define SV_H_COUNTERS  1024 /* u64[SV_CALLS][2]: app's calls and refused calls per call id */
#define SV_HEADER      4096

/* A control ring at off: head on line 0 (consumer), tail on line 1
 * (producer), a futex word and a waiter count on line 2, records from
 * line 3 on. */
#define SV_R_HEAD    0
#define SV_R_TAIL    64
#define SV_R_EV      128
#define SV_R_WAITERS 132
#define SV_R_RECS    192

/* A socket slot's header. */
#define SV_S_STATE   0   /* u32, stack: SV_ST_* */
#define SV_S_ERR     4   /* i32, stack: the errno that ended the socket (SO_ERROR) */
#define SV_S_FLAGS   8   /* u32, stack: SV_F_* */
#define SV_S_EV      12  /* u32, stack: bumped on every change (the app's futex) */
#define SV_S_WAITERS 16  /* u32, app: threads blocked on EV */
#define SV_S_ACCQ    20  /* u32, stack: connections waiting for accept */
#define SV_S_RXWAIT  24  /* u32, stack: the receive ring was full (app rings after reading) */
#define SV_S_TXWAIT  28  /* u32, stack: the send ring was empty (app rings after writing) */
#define SV_S_LPORT   36  /* u16 host order */
#define SV_S_RPORT   44
#define SV_S_EXCL    48  /* u32, app: epoll sets holding this socket with EPOLLEXCLUSIVE (the stack wakes one such process) */
#define SV_S_RX_HEAD 64   /* app */
#define SV_S_RX_TAIL 128  /* stack */
#define SV_S_TX_HEAD 192  /* stack */
#define SV_S_TX_TAIL 256  /* app */
#define SV_S_LADDR   320  /* 16 bytes, stack: the local address, IPv6 or IPv4-mapped (::ffff:a.b.c.d), network order */
#define SV_S_RADDR   336  /* 16 bytes, stack: the peer's */
#define SV_SLOT_HDR  512  /* the receive ring's data follows, then the send ring's */

enum sv_state { SV_ST_FREE, SV_ST_SOCKET, SV_ST_BOUND, SV_ST_LISTEN, SV_ST_CONNECTING, SV_ST_CONNECTED, SV_ST_FAILED, SV_ST_CLOSING };

#define SV_F_EOF  1u  /* the peer's FIN is in the receive ring's tail */
#define SV_F_ERR  2u  /* the connection failed: SV_S_ERR is its errno */
#define SV_F_WDONE 4u /* the send side is shut (shutdown or an error): writes fail EPIPE */

/* Control requests. A record: u32 seq, u16 op, u16 0, i32 slot, i32 arg,
 * i64 arg2, then the address's family u16 at 24, port (network order)
 * u16 at 26, address (network order) at 28: 4 bytes for an AF_INET
 * socket, 16 for an AF_INET6 one. SV_OP_SOCKET's arg is the family. */
enum sv_op { SV_OP_SOCKET = 1, SV_OP_BIND, SV_OP_LISTEN, SV_OP_ACCEPT, SV_OP_CONNECT, SV_OP_SHUTDOWN, SV_OP_CLOSE, SV_OP_SETOPT,
	SV_OP_FORK /* about to fork: the result is a token (shifted right by one) the child presents in its hello */ };
/* SV_OP_BIND's arg and SV_OP_LISTEN's arg2: bit 0 is SO_REUSEPORT, bit 1
 * IPV6_V6ONLY (listen binds an unbound socket itself). */
#define SV_Q_SEQ   0
#define SV_Q_OP    4
#define SV_Q_SLOT  8
#define SV_Q_ARG   12
#define SV_Q_ARG2  16
#define SV_Q_FAM   24
#define SV_Q_PORT  26
#define SV_Q_ADDR  28
/* A response: u32 seq, i32 errno (0: done), i64 result (a slot), then
 * the peer's port and address at 18 and 20 (accept; 4 or 16 bytes as in
 * a request, an IPv4 peer of an AF_INET6 socket IPv4-mapped). */
#define SV_P_SEQ    0
#define SV_P_ERRNO  4
#define SV_P_RESULT 8
#define SV_P_PORT   18
#define SV_P_ADDR   20

/* Call ids of the app's counters (SV_H_COUNTERS). */
enum sv_call { SV_C_SOCKET, SV_C_BIND, SV_C_LISTEN, SV_C_ACCEPT, SV_C_CONNECT, SV_C_READ, SV_C_WRITE, SV_C_CLOSE,
	SV_C_SHUTDOWN, SV_C_SETSOCKOPT, SV_C_GETSOCKOPT, SV_C_NAME, SV_C_FCNTL, SV_C_IOCTL, SV_C_POLL, SV_C_OTHER,
	SV_C_DUP, SV_C_SENDMSG, SV_C_RECVMSG, SV_C_SENDFILE, SV_C_SENDMMSG, SV_C_RECVMMSG, SV_C_SPLICE, SV_CALLS };

/* The hello on the Unix socket: the app sends u32 magic, u32 version,
 * u32 pid, u64 fork token (0, or a forked child's: its parent's
 * listeners come at the same slots); the stack answers u32 magic, u32
 * version, i32 errno and, with errno 0, three descriptors by SCM_RIGHTS:
 * the memfd, the doorbell to the stack and the doorbell to the app
 * (eventfds). */
#define SV_HELLO 20
#define SV_ANSWER 12

#endif
