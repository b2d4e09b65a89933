/* epolltrace: a server and a client that drive epoll, poll and select
 * through level- and edge-triggered epoll, a listener in the set, an
 * ordinary descriptor (a pipe) beside the sockets, partial reads,
 * EPOLLONESHOT, EOF and EPOLLRDHUP, and backpressure from a slow
 * reader, printing what each call returned: nothing that differs between
 * runs (no port, no byte count that depends on buffer sizes), so the
 * trace on Linux's stack and preloaded on Savanna's compare line by line
 * (preload/preloadtest).
 *
 *   epolltrace server PORT
 *   epolltrace client IP PORT
 * Exit 0 when every call returned what it should. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

static void check(const char *what, int ok)
{
	if (!ok) {
		printf("FAIL %s\n", what);
		failed = 1;
	}
}

static void maskstr(char *b, size_t n, uint32_t m)
{
	static const struct { uint32_t bit; const char *name; } names[] = {
		{EPOLLIN, "IN"}, {EPOLLPRI, "PRI"}, {EPOLLOUT, "OUT"}, {EPOLLRDNORM, "RDNORM"}, {EPOLLWRNORM, "WRNORM"},
		{EPOLLRDHUP, "RDHUP"}, {EPOLLHUP, "HUP"}, {EPOLLERR, "ERR"}};
	b[0] = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (m & names[i].bit) {
			strncat(b, b[0] ? "|" : "", n - strlen(b) - 1);
			strncat(b, names[i].name, n - strlen(b) - 1);
		}
	if (!b[0])
		snprintf(b, n, "0");
}

/* ep prints an epoll_wait's events sorted by tag (data.u32), so the
 * order the kernel's ready list had does not show. */
static int ep(const char *what, int epfd, int timeout, int want)
{
	struct epoll_event ev[16];
	int n = epoll_wait(epfd, ev, 16, timeout);
	if (n < 0) {
		show(what, n);
		check(what, 0);
		return n;
	}
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && ev[j].data.u32 < ev[j - 1].data.u32; j--) {
			struct epoll_event t = ev[j];
			ev[j] = ev[j - 1];
			ev[j - 1] = t;
		}
	printf("%s = %d", what, n);
	for (int i = 0; i < n; i++) {
		char b[80];
		maskstr(b, sizeof b, ev[i].events);
		printf(" %u:%s", ev[i].data.u32, b);
	}
	printf("\n");
	fflush(stdout);
	if (want >= 0 && n != want) {
		printf("FAIL %s: want %d events\n", what, want);
		failed = 1;
	}
	return n;
}

/* ep_until waits (bounded) until tag's events include all of bits, and
 * prints only that last answer: how many wake-ups it took is timing. */
static uint32_t ep_until(const char *what, int epfd, uint32_t tag, uint32_t bits)
{
	for (int i = 0; i < 200; i++) {
		struct epoll_event ev[16];
		int n = epoll_wait(epfd, ev, 16, 100);
		for (int k = 0; k < n; k++)
			if (ev[k].data.u32 == tag && (ev[k].events & bits) == bits) {
				char b[80];
				maskstr(b, sizeof b, ev[k].events);
				printf("%s = %u:%s\n", what, tag, b);
				fflush(stdout);
				return ev[k].events;
			}
	}
	printf("FAIL %s: no event\n", what);
	failed = 1;
	return 0;
}

static void ctl(const char *what, int epfd, int op, int fd, uint32_t events, uint32_t tag)
{
	struct epoll_event e = {.events = events, .data = {.u32 = tag}};
	expect(what, epoll_ctl(epfd, op, fd, &e), 0, 0);
}

static void showpoll(const char *what, int fd, short events)
{
	struct pollfd p = {.fd = fd, .events = events};
	int n = poll(&p, 1, 0);
	char b[80];
	maskstr(b, sizeof b, (uint16_t)p.revents);
	printf("%s = %d %s\n", what, n, b);
	fflush(stdout);
}

static void showselect(const char *what, int fd)
{
	fd_set rd, wr;
	FD_ZERO(&rd);
	FD_ZERO(&wr);
	FD_SET(fd, &rd);
	FD_SET(fd, &wr);
	struct timeval tv = {0, 0};
	int n = select(fd + 1, &rd, &wr, NULL, &tv);
	printf("%s = %d%s%s\n", what, n, FD_ISSET(fd, &rd) ? " r" : "", FD_ISSET(fd, &wr) ? " w" : "");
	fflush(stdout);
}

/* readn reads exactly n bytes from a nonblocking socket, waiting with
 * poll (bounded). */
static int readn(int fd, void *buf, size_t n)
{
	size_t got = 0;
	for (int i = 0; got < n && i < 1000; i++) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r == 0 || errno != EAGAIN)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		poll(&p, 1, 100);
	}
	return got == n ? 0 : -1;
}

/* waitbytes waits (bounded) until fd holds n readable bytes. */
static void waitbytes(int fd, int n)
{
	for (int i = 0, v = 0; i < 2000; i++) {
		if (ioctl(fd, FIONREAD, &v) == 0 && v >= n)
			return;
		usleep(1000);
	}
	printf("FAIL waiting for %d bytes\n", n);
	failed = 1;
}

static int pipefd[2];

static void *pipe_writer(void *arg)
{
	(void)arg;
	usleep(100000);
	if (write(pipefd[1], "p", 1) != 1)
		failed = 1;
	return NULL;
}

enum { T_LISTEN = 1, T_PIPE, T_CONN, T_FRESH };

static int server(int port)
{
	int one = 1;
	char buf[256];
	expect("pipe", pipe2(pipefd, O_NONBLOCK), 0, 0);
	int fresh = socket(AF_INET, SOCK_STREAM, 0);
	showpoll("poll fresh socket", fresh, POLLIN | POLLOUT);
	int e = epoll_create1(EPOLL_CLOEXEC);
	expect("epoll_create1", e >= 0 ? 0 : -1, 0, 0);
	ctl("epoll_ctl ADD pipe", e, EPOLL_CTL_ADD, pipefd[0], EPOLLIN, T_PIPE);
	ctl("epoll_ctl ADD fresh socket", e, EPOLL_CTL_ADD, fresh, EPOLLIN | EPOLLOUT, T_FRESH);
	struct epoll_event dummy = {0};
	expect("epoll_ctl ADD again", epoll_ctl(e, EPOLL_CTL_ADD, fresh, &dummy), -1, EEXIST);
	expect("epoll_ctl MOD exclusive", epoll_ctl(e, EPOLL_CTL_MOD, fresh, &(struct epoll_event){.events = EPOLLIN | EPOLLEXCLUSIVE}), -1, EINVAL);
	ep("epoll_wait nothing but the fresh socket", e, 0, 1);
	expect("epoll_ctl DEL fresh socket", epoll_ctl(e, EPOLL_CTL_DEL, fresh, NULL), 0, 0);
	expect("epoll_ctl DEL again", epoll_ctl(e, EPOLL_CTL_DEL, fresh, NULL), -1, ENOENT);
	close(fresh);
	ep("epoll_wait nothing", e, 0, 0);
	expect("write pipe", write(pipefd[1], "p", 1), 1, 0);
	ep("epoll_wait pipe", e, 0, 1);
	expect("read pipe", read(pipefd[0], buf, 1), 1, 0);

	/* Only now the listener: the client connects as soon as it can. */
	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	expect("socket", l >= 0 ? 0 : -1, 0, 0);
	expect("setsockopt SO_REUSEADDR", setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = {htonl(INADDR_ANY)}};
	expect("bind", bind(l, (struct sockaddr *)&sa, sizeof sa), 0, 0);
	ctl("epoll_ctl ADD listener", e, EPOLL_CTL_ADD, l, EPOLLIN, T_LISTEN);
	expect("listen", listen(l, 16), 0, 0);

	/* The listener: a blocking wait until the client connects. */
	ep_until("epoll_wait listener", e, T_LISTEN, EPOLLIN);
	ep("epoll_wait listener again (level)", e, 0, 1);
	showpoll("poll listener", l, POLLIN);
	showselect("select listener", l);
	int c = accept4(l, NULL, NULL, SOCK_NONBLOCK);
	expect("accept4", c >= 0 ? 0 : -1, 0, 0);
	ep("epoll_wait after accept", e, 0, 0);
	expect("accept4 again", accept4(l, NULL, NULL, SOCK_NONBLOCK), -1, EAGAIN);

	/* Edge-triggered; an ordinary descriptor wakes a wait on sockets. */
	ctl("epoll_ctl ADD conn ET", e, EPOLL_CTL_ADD, c, EPOLLIN | EPOLLRDHUP | EPOLLET, T_CONN);
	ep("epoll_wait conn idle", e, 0, 0);
	pthread_t th;
	pthread_create(&th, NULL, pipe_writer, NULL);
	ep("epoll_wait woken by the pipe", e, 5000, 1);
	pthread_join(th, NULL);
	expect("read pipe", read(pipefd[0], buf, 1), 1, 0);
	expect("write command 1", write(c, "1", 1), 1, 0);
	ep_until("epoll_wait data ET", e, T_CONN, EPOLLIN);
	waitbytes(c, 100);
	epoll_wait(e, &dummy, 1, 0); /* an edge of a second segment, if the message was split */
	expect("read partial", read(c, buf, 10), 10, 0);
	ep("epoll_wait after partial read (ET: no new edge)", e, 0, 0);
	ctl("epoll_ctl MOD conn LT", e, EPOLL_CTL_MOD, c, EPOLLIN | EPOLLRDHUP, T_CONN);
	ep("epoll_wait LT", e, 0, 1);
	ep("epoll_wait LT again", e, 0, 1);
	ctl("epoll_ctl MOD conn ET", e, EPOLL_CTL_MOD, c, EPOLLIN | EPOLLRDHUP | EPOLLET, T_CONN);
	ep("epoll_wait ET after MOD (reported once)", e, 0, 1);
	ep("epoll_wait ET again", e, 0, 0);
	expect("read rest", read(c, buf, sizeof buf), 90, 0);
	expect("read empty", read(c, buf, sizeof buf), -1, EAGAIN);

	/* EPOLLONESHOT. */
	ctl("epoll_ctl MOD conn ONESHOT", e, EPOLL_CTL_MOD, c, EPOLLIN | EPOLLONESHOT, T_CONN);
	ep("epoll_wait oneshot idle", e, 0, 0);
	expect("write command 2", write(c, "2", 1), 1, 0);
	ep_until("epoll_wait oneshot", e, T_CONN, EPOLLIN);
	waitbytes(c, 5);
	ep("epoll_wait oneshot spent", e, 0, 0);
	ctl("epoll_ctl MOD conn ONESHOT rearm", e, EPOLL_CTL_MOD, c, EPOLLIN | EPOLLONESHOT, T_CONN);
	ep("epoll_wait oneshot rearmed", e, 0, 1);
	expect("read 5", read(c, buf, sizeof buf), 5, 0);

	/* Backpressure: the client opens a second connection, then reads
	 * nothing until told on it; write until a wait for room times out
	 * (Savanna's stack moves the ring's bytes into TCP's buffers, as big
	 * as Linux's, so room comes back many times before it is full). */
	expect("write command 3", write(c, "3", 1), 1, 0);
	ep_until("epoll_wait second connection", e, T_LISTEN, EPOLLIN);
	int c2 = accept4(l, NULL, NULL, 0);
	expect("accept4 second", c2 >= 0 ? 0 : -1, 0, 0);
	static char bulk[65536];
	memset(bulk, 'x', sizeof bulk);
	uint64_t total = 0;
	int rounds = 0;
	for (; rounds < 100000; rounds++) {
		ssize_t r = write(c, bulk, sizeof bulk);
		if (r > 0) {
			total += (uint64_t)r;
			continue;
		}
		if (errno != EAGAIN)
			break;
		struct pollfd p = {.fd = c, .events = POLLOUT};
		if (poll(&p, 1, 300) == 0)
			break;
	}
	if (getenv("EPOLLTRACE_DEBUG"))
		fprintf(stderr, "rounds %d total %llu\n", rounds, (unsigned long long)total);
	check("backpressure reached", rounds < 100000 && total > 0);
	printf("write until full = EAGAIN\n");
	ctl("epoll_ctl MOD conn OUT", e, EPOLL_CTL_MOD, c, EPOLLOUT, T_CONN);
	ep("epoll_wait full send buffer", e, 0, 0);
	showpoll("poll full send buffer", c, POLLOUT);
	showselect("select full send buffer", c);
	expect("write command 4 (read now)", write(c2, "4", 1), 1, 0);
	expect("close second", close(c2), 0, 0);
	ep_until("epoll_wait writable again (the reader caught up)", e, T_CONN, EPOLLOUT);
	ctl("epoll_ctl MOD conn OUT ET", e, EPOLL_CTL_MOD, c, EPOLLOUT | EPOLLET, T_CONN);
	ep("epoll_wait OUT ET after MOD", e, 0, 1);
	ep("epoll_wait OUT ET again (no write found it full)", e, 0, 0);
	expect("shutdown SHUT_WR", shutdown(c, SHUT_WR), 0, 0);

	/* EOF: the client sends its count, then closes. */
	ctl("epoll_ctl MOD conn IN RDHUP", e, EPOLL_CTL_MOD, c, EPOLLIN | EPOLLRDHUP, T_CONN);
	uint64_t got = 0;
	check("read the client's count", readn(c, &got, sizeof got) == 0);
	printf("client read every byte = %s\n", got == total ? "yes" : "no");
	check("client read every byte", got == total);
	ep_until("epoll_wait EOF", e, T_CONN, EPOLLRDHUP);
	showpoll("poll EOF", c, POLLIN | POLLRDHUP);
	showselect("select EOF", c);
	expect("read EOF", read(c, buf, sizeof buf), 0, 0);
	expect("close conn", close(c), 0, 0);
	ep("epoll_wait after close (gone from the set)", e, 0, 0);
	expect("close listener", close(l), 0, 0);
	expect("close epoll", close(e), 0, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	printf("server %s\n", failed ? "FAILED" : "ok");
	return failed;
}

static int client(const char *ip, int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	inet_pton(AF_INET, ip, &sa.sin_addr);
	int c = -1, r = -1;
	for (int i = 0; i < 300; i++) {
		c = socket(AF_INET, SOCK_STREAM, 0);
		r = connect(c, (struct sockaddr *)&sa, sizeof sa);
		if (r == 0)
			break;
		close(c);
		usleep(50000);
	}
	expect("connect", r, 0, 0);
	int fl = fcntl(c, F_GETFL);
	expect("fcntl O_NONBLOCK", fcntl(c, F_SETFL, fl | O_NONBLOCK), 0, 0);
	int e = epoll_create(1);
	expect("epoll_create", e >= 0 ? 0 : -1, 0, 0);
	ctl("epoll_ctl ADD conn", e, EPOLL_CTL_ADD, c, EPOLLIN, T_CONN);
	char buf[100], cmd;
	ep_until("epoll_wait command 1", e, T_CONN, EPOLLIN);
	expect("read command", read(c, &cmd, 1), 1, 0);
	check("command 1", cmd == '1');
	memset(buf, 'a', sizeof buf);
	expect("write 100", write(c, buf, 100), 100, 0);
	ep_until("epoll_wait command 2", e, T_CONN, EPOLLIN);
	expect("read command", read(c, &cmd, 1), 1, 0);
	check("command 2", cmd == '2');
	expect("write 5", write(c, buf, 5), 5, 0);
	ep_until("epoll_wait command 3", e, T_CONN, EPOLLIN);
	expect("read command", read(c, &cmd, 1), 1, 0);
	check("command 3", cmd == '3');

	/* The slow reader: read nothing until the server, its buffers full,
	 * says so on a second connection; then read in small bites until EOF. */
	int c2 = socket(AF_INET, SOCK_STREAM, 0);
	expect("connect second", connect(c2, (struct sockaddr *)&sa, sizeof sa), 0, 0);
	expect("read command 4", read(c2, &cmd, 1), 1, 0);
	check("command 4", cmd == '4');
	expect("read second EOF", read(c2, &cmd, 1), 0, 0);
	expect("close second", close(c2), 0, 0);
	static char bulk[16384];
	uint64_t total = 0;
	for (int i = 0; i < 100000; i++) {
		ssize_t n = read(c, bulk, sizeof bulk);
		if (n > 0) {
			total += (uint64_t)n;
			usleep(200);
			continue;
		}
		if (n == 0)
			break;
		if (errno != EAGAIN) {
			show("read bulk", n);
			check("read bulk", 0);
			break;
		}
		struct pollfd p = {.fd = c, .events = POLLIN};
		poll(&p, 1, 100);
	}
	printf("read bulk until EOF = 0\n");
	ep("epoll_wait after EOF", e, 0, 1);
	showpoll("poll after EOF", c, POLLIN | POLLRDHUP | POLLOUT);
	expect("write count", write(c, &total, sizeof total), sizeof total, 0);
	expect("close", close(c), 0, 0);
	expect("close epoll", close(e), 0, 0);
	printf("client %s\n", failed ? "FAILED" : "ok");
	return failed;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "server") == 0)
		return server(atoi(argv[2]));
	if (argc == 4 && strcmp(argv[1], "client") == 0)
		return client(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: epolltrace server PORT | epolltrace client IP PORT\n");
	return 2;
}
