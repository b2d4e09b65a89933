/* sharetrace: two processes using one inherited connection at once, as
 * Linux allows: a parent accepts, forks, and keeps its copy open while
 * the child writes on it too; printing what each call returned, without
 * ports or addresses, so that a run on Linux's stack and one preloaded on
 * Savanna's compare line by line.
 *
 *   sharetrace server PORT
 *   sharetrace client IP PORT
 *
 * 1. The child writes a line and exits; the parent, its copy open all
 *    along, waits for it, then writes its own line, reads the client's
 *    "ping" and answers "pong".
 * 2. A second child and the parent each write 100000 bytes ('C' and
 *    'P', 100-byte writes) at the same time; the client counts each
 *    kind (the order they interleave in is the stacks' and not printed).
 * 3. A third child shuts the connection's send side (SHUT_WR) while the
 *    parent still holds it: the client reads EOF, as on Linux, since
 *    shutdown acts on the socket, not the descriptor.
 *
 * Reading in two processes at once is not traced: see docs/preload.md. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stream.h"
#include "trace.h"

#define BULK 100000
#define REC 100

static void bulk(int fd, char c)
{
	char rec[REC];
	memset(rec, c, sizeof rec);
	for (int i = 0; i < BULK / REC; i++)
		if (writen(fd, rec, REC) != REC)
			return;
}

static int reap(pid_t pid)
{
	int st = 0;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int server(int port)
{
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	show("bind", bind(l, (struct sockaddr *)&a, sizeof a));
	show("listen", listen(l, 8));
	int c = accept(l, NULL, NULL);
	show("accept", c >= 0 ? 0 : -1);
	close(l);

	pid_t k = fork();
	if (k == 0) {
		_exit(writen(c, "child line\n", 11) == 11 ? 0 : 1);
	}
	expect("child 1 exit", reap(k), 0, 0);
	expect("parent writes after the child", writen(c, "parent line\n", 12), 12, 0);
	char b[5];
	expect("parent reads ping", readn(c, b, 5), 5, 0);
	printf("  '%.4s'\n", b);
	expect("parent writes pong", writen(c, "pong\n", 5), 5, 0);

	char go;
	expect("parent reads go", readn(c, &go, 1), 1, 0);
	k = fork();
	if (k == 0) {
		bulk(c, 'C');
		_exit(0);
	}
	bulk(c, 'P');
	expect("child 2 exit", reap(k), 0, 0);

	expect("parent reads go", readn(c, &go, 1), 1, 0);
	k = fork();
	if (k == 0)
		_exit(shutdown(c, SHUT_WR) == 0 ? 0 : 1);
	expect("child 3 (shutdown) exit", reap(k), 0, 0);
	expect("parent reads EOF", read(c, &go, 1), 0, 0);
	expect("parent writes after the child's shutdown", send(c, "x", 1, MSG_NOSIGNAL), -1, EPIPE);
	show("close", close(c));
	printf(failed ? "server FAILED\n" : "server done\n");
	return failed;
}

static int client(const char *ip, int port)
{
	int s = dial(ip, port);
	show("connect", s >= 0 ? 0 : -1);
	if (s < 0)
		return 1;
	char b[24] = {0};
	expect("read both lines", readn(s, b, 23), 23, 0);
	printf("  '%.10s' '%.11s'\n", b, b + 11);
	expect("write ping", writen(s, "ping\n", 5), 5, 0);
	expect("read pong", readn(s, b, 5), 5, 0);

	expect("write go", writen(s, "g", 1), 1, 0);
	static char big[2 * BULK];
	expect("read both bulks", readn(s, big, 2 * BULK), 2 * BULK, 0);
	int cs = 0, ps = 0;
	for (int i = 0; i < 2 * BULK; i++) {
		cs += big[i] == 'C';
		ps += big[i] == 'P';
	}
	printf("  C bytes %d P bytes %d\n", cs, ps);

	expect("write go", writen(s, "g", 1), 1, 0);
	expect("read EOF (the child's SHUT_WR)", read(s, b, 1), 0, 0);
	show("close", close(s));
	printf(failed ? "client FAILED\n" : "client done\n");
	return failed;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: sharetrace server PORT | client IP PORT\n");
	return 2;
}
