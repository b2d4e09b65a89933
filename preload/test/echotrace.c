/* echotrace: a blocking echo client and server that print what each
 * socket call returned, one line per call, with nothing that differs
 * between runs (no ephemeral port, no address), so that the trace of a
 * run on Linux's stack and of one preloaded on Savanna's can be
 * compared line by line (cmd/simrun/preload_test.go).
 *
 *   echotrace server PORT   serves one connection: length-prefixed
 *                           messages echoed back, until EOF
 *   echotrace client IP PORT
 * Exit 0 when every call returned what it should. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "trace.h"

static const size_t sizes[] = {1, 100, 1460, 10000, 65536, 200000};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static int server(int port)
{
	int one = 1, v = 0;
	socklen_t len = sizeof v;
	int l = socket(AF_INET, SOCK_STREAM, 0);
	expect("socket", l >= 0 ? 0 : -1, 0, 0);
	expect("setsockopt SO_REUSEADDR", setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0, 0);
	expect("setsockopt bogus", setsockopt(l, SOL_SOCKET, 9999, &one, sizeof one), -1, ENOPROTOOPT);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = {htonl(INADDR_ANY)}};
	expect("bind", bind(l, (struct sockaddr *)&sa, sizeof sa), 0, 0);
	expect("listen", listen(l, 16), 0, 0);
	expect("getsockopt SO_ACCEPTCONN", getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 ? v : -1, 1, 0);
	struct sockaddr_in got;
	len = sizeof got;
	expect("getsockname port", getsockname(l, (struct sockaddr *)&got, &len) == 0 ? ntohs(got.sin_port) : -1, port, 0);
	char x;
	expect("read listener", read(l, &x, 1), -1, ENOTCONN);
	fprintf(stderr, "echotrace: listening\n");
	struct sockaddr_in peer;
	len = sizeof peer;
	int c = accept(l, (struct sockaddr *)&peer, &len);
	expect("accept", c >= 0 ? 0 : -1, 0, 0);
	expect("accept family", peer.sin_family, AF_INET, 0);
	len = sizeof v;
	expect("getsockopt SO_TYPE", getsockopt(c, SOL_SOCKET, SO_TYPE, &v, &len) == 0 ? v : -1, SOCK_STREAM, 0);
	expect("setsockopt TCP_NODELAY", setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0, 0);
	char *buf = malloc(200000);
	for (;;) {
		uint32_t n;
		ssize_t r = recv(c, &n, 4, MSG_WAITALL);
		if (r == 0) {
			expect("recv header at EOF", r, 0, 0);
			break;
		}
		expect("recv header", r, 4, 0);
		if (r != 4)
			break;
		n = ntohl(n);
		char what[64];
		snprintf(what, sizeof what, "recv %u", n);
		expect(what, recv(c, buf, n, MSG_WAITALL), n, 0);
		snprintf(what, sizeof what, "write %u", n);
		expect(what, write(c, buf, n), n, 0);
	}
	expect("read after EOF", read(c, buf, 10), 0, 0);
	expect("close", close(c), 0, 0);
	expect("close listener", close(l), 0, 0);
	free(buf);
	return failed;
}

static int client(const char *ip, int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port + 1)};
	inet_pton(AF_INET, ip, &sa.sin_addr);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	expect("socket", s >= 0 ? 0 : -1, 0, 0);
	char x;
	expect("read unconnected", read(s, &x, 1), -1, ENOTCONN);
	expect("connect no listener", connect(s, (struct sockaddr *)&sa, sizeof sa), -1, ECONNREFUSED);
	expect("close", close(s), 0, 0);
	s = socket(AF_INET, SOCK_STREAM, 0);
	expect("socket", s >= 0 ? 0 : -1, 0, 0);
	sa.sin_port = htons(port);
	int r = -1;
	for (int i = 0; i < 50; i++) { /* the server may not listen yet: up to 5 s */
		r = connect(s, (struct sockaddr *)&sa, sizeof sa);
		if (r == 0 || errno != ECONNREFUSED)
			break;
		close(s);
		s = socket(AF_INET, SOCK_STREAM, 0);
		usleep(100000);
	}
	expect("connect", r, 0, 0);
	struct sockaddr_in peer;
	socklen_t len = sizeof peer;
	expect("getpeername port", getpeername(s, (struct sockaddr *)&peer, &len) == 0 ? ntohs(peer.sin_port) : -1, port, 0);
	int one = 1, zero = 0, avail = -1;
	expect("ioctl FIONBIO 1", ioctl(s, FIONBIO, &one), 0, 0);
	expect("recv nonblocking", recv(s, &x, 1, 0), -1, EAGAIN);
	expect("ioctl FIONBIO 0", ioctl(s, FIONBIO, &zero), 0, 0);
	expect("fcntl F_GETFL O_NONBLOCK", fcntl(s, F_GETFL) & O_NONBLOCK, 0, 0);
	char *out = malloc(200004), *in = malloc(200000);
	for (size_t k = 0; k < NSIZES; k++) {
		uint32_t n = (uint32_t)sizes[k], be = htonl(n);
		for (uint32_t i = 0; i < n; i++)
			out[4 + i] = (char)(i * 31 + k);
		memcpy(out, &be, 4);
		char what[64];
		snprintf(what, sizeof what, "write %u", n + 4);
		expect(what, write(s, out, n + 4), n + 4, 0);
		if (k == 0) {
			expect("recv MSG_PEEK", recv(s, in, 1, MSG_PEEK), 1, 0);
			expect("ioctl FIONREAD", ioctl(s, FIONREAD, &avail) == 0 ? avail : -1, 1, 0);
		}
		snprintf(what, sizeof what, "recv %u", n);
		expect(what, recv(s, in, n, MSG_WAITALL), n, 0);
		expect("echo equal", memcmp(in, out + 4, n) == 0, 1, 0);
	}
	expect("shutdown SHUT_WR", shutdown(s, SHUT_WR), 0, 0);
	expect("read EOF", read(s, in, 10), 0, 0);
	expect("close", close(s), 0, 0);
	free(out);
	free(in);
	return failed;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: echotrace server PORT | echotrace client IP PORT\n");
	return 2;
}
