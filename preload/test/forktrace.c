/* forktrace: forked workers accepting on one listener, as nginx's master
 * and workers do, printing only what does not depend on timing or
 * order, so that a run on Linux's stack and one preloaded on Savanna's
 * compare line by line (docs/preload.md).
 *
 *   forktrace server MODE PORT N   MODE: shared (the parent listens, 4
 *                                  forked workers each epoll the
 *                                  inherited listener), exclusive (the
 *                                  same with EPOLLEXCLUSIVE), reuseport
 *                                  (each worker its own SO_REUSEPORT
 *                                  listener on PORT); serves N
 *                                  connections, then stops the workers
 *   forktrace client IP PORT N     N connections one after another, each
 *                                  16 bytes echoed
 *
 * Each worker accepts, echoes one message, closes and sleeps 2 ms, so
 * that the connections spread over the workers; it reports to the
 * parent through a pipe, and checks at the end that it holds as many
 * descriptors as before it served (no fd leaked). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 4
#define MSG 16

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

static int fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int full(int fd, char *b, int n, int wr)
{
	int got = 0;
	while (got < n) {
		ssize_t k = wr ? write(fd, b + got, (size_t)(n - got)) : read(fd, b + got, (size_t)(n - got));
		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			return -1;
		}
		got += (int)k;
	}
	return 0;
}

static int listener(int port, int reuseport)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
	if (l < 0)
		return -1;
	setsockopt(l, SOL_SOCKET, reuseport ? SO_REUSEPORT : SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 128) < 0) {
		perror("forktrace: bind/listen");
		close(l);
		return -1;
	}
	return l;
}

/* worker serves until SIGTERM; one byte (its index) per connection on
 * done. Exit status: 0, or 1 on an error, 2 on an fd leak. */
static int worker(int w, int l, const char *mode, int port, int ready, int done)
{
	if (!strcmp(mode, "reuseport") && (l = listener(port, 1)) < 0)
		return 1;
	int before = fds_open();
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN | (!strcmp(mode, "exclusive") ? EPOLLEXCLUSIVE : 0)};
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev) < 0) {
		perror("forktrace: epoll");
		return 1;
	}
	char c = (char)w;
	if (write(ready, &c, 1) != 1)
		return 1;
	while (!stop) {
		struct epoll_event got;
		/* A bounded wait: a SIGTERM that lands between the loop's test
		 * of stop and the wait's start (on Linux too, where the window is
		 * shorter) would leave an unbounded wait asleep for good. */
		int n = epoll_wait(ep, &got, 1, 100);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("forktrace: epoll_wait");
			return 1;
		}
		if (n == 0)
			continue;
		int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue; /* another worker took it */
			perror("forktrace: accept4");
			return 1;
		}
		char b[MSG];
		if (full(s, b, MSG, 0) < 0 || full(s, b, MSG, 1) < 0) {
			perror("forktrace: echo");
			return 1;
		}
		close(s);
		if (write(done, &c, 1) != 1)
			return 1;
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	close(ep);
	return fds_open() == before ? 0 : 2;
}

static int server(const char *mode, int port, int n)
{
	if (strcmp(mode, "shared") && strcmp(mode, "exclusive") && strcmp(mode, "reuseport")) {
		fprintf(stderr, "forktrace: mode %s\n", mode);
		return 2;
	}
	fputs("mode ", stdout);
	puts(mode);
	int l = -1;
	if (strcmp(mode, "reuseport")) {
		l = listener(port, 0);
		printf("listen %s\n", l >= 0 ? "ok" : "FAIL");
		if (l < 0)
			return 1;
	}
	fflush(stdout);
	int ready[2], done[2];
	if (pipe(ready) < 0 || pipe(done) < 0)
		return 1;
	struct sigaction sa = {.sa_handler = on_term}; /* no SA_RESTART: epoll_wait ends with EINTR */
	sigaction(SIGTERM, &sa, NULL);
	pid_t pids[WORKERS];
	for (int w = 0; w < WORKERS; w++) {
		pids[w] = fork();
		if (pids[w] < 0) {
			perror("forktrace: fork");
			return 1;
		}
		if (pids[w] == 0) {
			close(ready[0]);
			close(done[0]);
			_exit(worker(w, l, mode, port, ready[1], done[1]));
		}
	}
	close(ready[1]);
	close(done[1]);
	char b[WORKERS];
	int ok = full(ready[0], b, WORKERS, 0) == 0;
	printf("workers ready %d\n", ok ? WORKERS : 0);
	int per[WORKERS] = {0}, served = 0;
	for (; served < n; served++) {
		char c;
		if (full(done[0], &c, 1, 0) < 0 || c < 0 || c >= WORKERS)
			break;
		per[(int)c]++;
	}
	printf("served %d\n", served);
	int busy = 0;
	for (int w = 0; w < WORKERS; w++)
		busy += per[w] > 0;
	/* EPOLLEXCLUSIVE wakes one or more of the waiters (epoll_ctl(2)), so
	 * which workers get connections is the scheduler's: on a loaded
	 * machine one worker can miss them all, on Linux as here. What the
	 * flag must not do is hand every connection to one worker. */
	int every = !strcmp(mode, "exclusive") ? busy >= 2 : busy == WORKERS;
	printf("%s: %s\n", !strcmp(mode, "exclusive") ? "several workers served" : "every worker served",
	       every ? "yes" : "no");
	fprintf(stderr, "forktrace: per worker %d %d %d %d\n", per[0], per[1], per[2], per[3]);
	int leaks = 0, errs = 0;
	for (int w = 0; w < WORKERS; w++) {
		kill(pids[w], SIGTERM);
		int st;
		if (waitpid(pids[w], &st, 0) < 0 || !WIFEXITED(st))
			errs++;
		else if (WEXITSTATUS(st) == 2)
			leaks++;
		else if (WEXITSTATUS(st) != 0)
			errs++;
	}
	printf("workers exited: errors %d, fd leaks %d\n", errs, leaks);
	if (l >= 0)
		close(l);
	printf("server %s\n", served == n && every && !leaks && !errs ? "ok" : "FAIL");
	return 0;
}

static int client(const char *ip, int port, int n)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, ip, &a.sin_addr);
	int echoed = 0;
	for (int i = 0; i < n; i++) {
		int s = -1;
		/* The listeners may not be there yet: retry a refusal, bounded. */
		for (int t = 0; t < 2000; t++) {
			s = socket(AF_INET, SOCK_STREAM, 0);
			if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
				break;
			close(s);
			s = -1;
			if (errno != ECONNREFUSED)
				break;
			struct timespec ts = {0, 5000000};
			nanosleep(&ts, NULL);
		}
		if (s < 0) {
			perror("forktrace: connect");
			break;
		}
		char m[MSG + 8], r[MSG];
		snprintf(m, sizeof m, "msg %010d\n", i % 1000000);
		if (full(s, m, MSG, 1) == 0 && full(s, r, MSG, 0) == 0 && !memcmp(m, r, MSG))
			echoed++;
		close(s);
	}
	printf("echoed %d of %d\n", echoed, n);
	printf("client %s\n", echoed == n ? "ok" : "FAIL");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "server"))
		return server(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: forktrace server shared|exclusive|reuseport PORT N | client IP PORT N\n");
	return 2;
}
