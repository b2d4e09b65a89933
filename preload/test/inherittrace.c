/* inherittrace: connections a forked child inherits (inetd's and
 * pre-fork servers' "accept in the parent, serve in the child"),
 * printing what each call returned with nothing that differs between
 * runs, so that a run on Linux's stack and one preloaded on Savanna's
 * compare line by line (preload/preloadtest/inherit_test.go).
 *
 *   inherittrace server PORT N   accepts N connections one by one; for
 *                                each reads the 5-byte greeting, forks,
 *                                and closes its copy at once: the child
 *                                echoes the rest (bytes the parent left
 *                                unread first) until EOF, then exits
 *   inherittrace client IP PORT N
 * Exit 0 when every call returned what it should. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAYLOAD 100000

#include "trace.h"

/* child serves an inherited connection: echoes until EOF. Prints
 * nothing (its lines would interleave with the parent's); its exit
 * status says how it went. */
static void child(int l, int c)
{
	close(l);
	static char buf[16384];
	struct sockaddr_in peer;
	socklen_t len = sizeof peer;
	if (getpeername(c, (struct sockaddr *)&peer, &len) != 0 || peer.sin_family != AF_INET)
		_exit(3);
	long total = 0;
	ssize_t n;
	while ((n = read(c, buf, sizeof buf)) > 0) {
		total += n;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(c, buf + off, (size_t)(n - off));
			if (w <= 0)
				_exit(4);
			off += w;
		}
	}
	if (n < 0)
		_exit(5);
	if (close(c) != 0)
		_exit(6);
	_exit(total == PAYLOAD ? 0 : 7);
}

static int server(int port, int n)
{
	int one = 1;
	int l = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	expect("bind", bind(l, (struct sockaddr *)&sa, sizeof sa), 0, 0);
	expect("listen", listen(l, 16), 0, 0);
	fprintf(stderr, "inherittrace: listening\n");
	pid_t kids[64];
	for (int i = 0; i < n && i < 64; i++) {
		int c = accept(l, NULL, NULL);
		expect("accept", c >= 0 ? 0 : -1, 0, 0);
		char hello[5];
		expect("read greeting", recv(c, hello, sizeof hello, MSG_WAITALL), 5, 0);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			child(l, c);
		expect("fork", pid > 0 ? 0 : -1, 0, 0);
		kids[i] = pid;
		/* The parent's close: the connection lives on in the child. */
		expect("close in parent", close(c), 0, 0);
	}
	for (int i = 0; i < n && i < 64; i++) {
		int st = 0;
		waitpid(kids[i], &st, 0);
		printf("child %d: exit %d\n", i, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed = 1;
	}
	expect("close listener", close(l), 0, 0);
	printf("server done\n");
	return failed;
}

static int client(const char *ip, int port, int n)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		return 2;
	char *out = malloc(PAYLOAD), *in = malloc(PAYLOAD + 1);
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < PAYLOAD; j++)
			out[j] = (char)(j * 7 + i);
		int s = -1;
		for (int tries = 0; tries < 200; tries++) {
			s = socket(AF_INET, SOCK_STREAM, 0);
			if (connect(s, (struct sockaddr *)&sa, sizeof sa) == 0)
				break;
			int e = errno;
			close(s);
			s = -1;
			if (e != ECONNREFUSED)
				break;
			struct timespec ts = {0, 50000000};
			nanosleep(&ts, NULL);
		}
		expect("connect", s >= 0 ? 0 : -1, 0, 0);
		if (s < 0)
			break;
		/* The greeting and the payload in one go: some of the payload
		 * reaches the parent before it forks. */
		static char msg[5 + PAYLOAD];
		memcpy(msg, "HELLO", 5);
		memcpy(msg + 5, out, PAYLOAD);
		long sent = 0;
		while (sent < (long)sizeof msg) {
			ssize_t w = write(s, msg + sent, sizeof msg - (size_t)sent);
			if (w <= 0)
				break;
			sent += w;
		}
		expect("write", sent, (long)sizeof msg, 0);
		expect("shutdown SHUT_WR", shutdown(s, SHUT_WR), 0, 0);
		long got = 0;
		ssize_t r;
		while ((r = read(s, in + got, PAYLOAD + 1 - (size_t)got)) > 0)
			got += r;
		expect("read echo", got, PAYLOAD, 0);
		printf("  echo %s\n", got == PAYLOAD && memcmp(in, out, PAYLOAD) == 0 ? "intact" : "WRONG");
		expect("close", close(s), 0, 0);
	}
	free(out);
	free(in);
	printf("client done\n");
	return failed;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "server") == 0)
		return server(atoi(argv[2]), atoi(argv[3]));
	if (argc == 5 && strcmp(argv[1], "client") == 0)
		return client(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: inherittrace server PORT N | inherittrace client IP PORT N\n");
	return 2;
}
