/* sixtrace: AF_INET6 sockets, printing what each call returned with
 * nothing that differs between runs (no address, no ephemeral port:
 * only families, whether an address is IPv4-mapped, and known ports),
 * so that a run on Linux's stack and one preloaded on Savanna's compare
 * line by line (preload/preloadtest/ipv6_test.go).
 *
 *   sixtrace server PORT            a dual-stack listener on [::]:PORT
 *                                   echoes 3 connections (IPv6, IPv4,
 *                                   and an AF_INET6 socket to a mapped
 *                                   address), then an IPV6_V6ONLY one on
 *                                   PORT+1 echoes 1
 *   sixtrace client IP4 IP6 PORT    connects to each as said, and tries
 *                                   IPv4 on PORT+1 (refused)
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
#include <time.h>
#include <unistd.h>

#include "trace.h"

/* name prints an address's family, length and whether it is IPv4-mapped
 * (the address itself differs between loopback and Savanna's). */
static void name(const char *what, const struct sockaddr_storage *ss, socklen_t len, int port)
{
	const struct sockaddr_in6 *s6 = (const void *)ss;
	const struct sockaddr_in *s4 = (const void *)ss;
	int fam = ss->ss_family;
	int mapped = fam == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr);
	int any = fam == AF_INET6 ? IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) : s4->sin_addr.s_addr == 0;
	int p = ntohs(fam == AF_INET6 ? s6->sin6_port : s4->sin_port);
	printf("  %s: family %s len %u mapped %d any %d port %s\n", what, fam == AF_INET6 ? "AF_INET6" : fam == AF_INET ? "AF_INET" : "?",
		len, mapped, any, port < 0 ? "ephemeral" : p == port ? "ours" : "other");
}

static void names(int fd, int lport, int rport)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	memset(&ss, 0, sizeof ss);
	expect("getsockname", getsockname(fd, (struct sockaddr *)&ss, &len), 0, 0);
	name("local", &ss, len, lport);
	len = sizeof ss;
	memset(&ss, 0, sizeof ss);
	expect("getpeername", getpeername(fd, (struct sockaddr *)&ss, &len), 0, 0);
	name("peer", &ss, len, rport);
}

static int echo_one(int l, int port)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof peer;
	memset(&peer, 0, sizeof peer);
	int c = accept(l, (struct sockaddr *)&peer, &len);
	expect("accept", c >= 0 ? 0 : -1, 0, 0);
	if (c < 0)
		return -1;
	name("accepted peer", &peer, len, -1);
	names(c, port, -1);
	char buf[256];
	ssize_t n;
	long total = 0;
	while ((n = read(c, buf, sizeof buf)) > 0) {
		total += n;
		if (write(c, buf, (size_t)n) != n)
			failed = 1;
	}
	expect("read eof", n, 0, 0);
	printf("  echoed %ld\n", total);
	expect("close", close(c), 0, 0);
	return 0;
}

static int listener6(int port, int v6only)
{
	int one = 1, v = -1;
	socklen_t len = sizeof v;
	int l = socket(AF_INET6, SOCK_STREAM, 0);
	expect("socket AF_INET6", l >= 0 ? 0 : -1, 0, 0);
	expect("getsockopt SO_DOMAIN", getsockopt(l, SOL_SOCKET, SO_DOMAIN, &v, &len) == 0 ? v : -1, AF_INET6, 0);
	len = sizeof v;
	expect("getsockopt IPV6_V6ONLY default", getsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len) == 0 ? v : -1, 0, 0);
	expect("setsockopt SO_REUSEADDR", setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0, 0);
	if (v6only) {
		expect("setsockopt IPV6_V6ONLY", setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one), 0, 0);
		len = sizeof v;
		expect("getsockopt IPV6_V6ONLY", getsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len) == 0 ? v : -1, 1, 0);
	}
	struct sockaddr_in sa4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	expect("bind sockaddr_in", bind(l, (struct sockaddr *)&sa4, sizeof sa4), -1, EINVAL);
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = in6addr_any};
	expect("bind [::]", bind(l, (struct sockaddr *)&sa, sizeof sa), 0, 0);
	expect("setsockopt IPV6_V6ONLY after bind", setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one), -1, EINVAL);
	expect("listen", listen(l, 16), 0, 0);
	struct sockaddr_storage got;
	len = sizeof got;
	memset(&got, 0, sizeof got);
	expect("getsockname listener", getsockname(l, (struct sockaddr *)&got, &len), 0, 0);
	name("listener", &got, len, port);
	fprintf(stderr, "sixtrace: listening on %d\n", port);
	return l;
}

static int server(int port)
{
	int s4 = socket(AF_INET, SOCK_STREAM, 0), v;
	socklen_t len = sizeof v;
	expect("getsockopt IPV6_V6ONLY on AF_INET", getsockopt(s4, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len), -1, EOPNOTSUPP);
	int one = 1;
	expect("setsockopt IPV6_V6ONLY on AF_INET", setsockopt(s4, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one), -1, ENOPROTOOPT);
	close(s4);

	int l = listener6(port, 0);
	for (int i = 0; i < 3; i++)
		echo_one(l, port);
	expect("close listener", close(l), 0, 0);

	l = listener6(port + 1, 1);
	echo_one(l, port + 1);
	expect("close listener", close(l), 0, 0);
	printf("server done\n");
	return failed;
}

/* dial connects a socket of family fam to sa, retrying while nothing
 * listens yet (the server may still be starting), at most 10 s. */
static int dial(int fam, const struct sockaddr *sa, socklen_t salen, int v6only, const char *what)
{
	for (int tries = 0;; tries++) {
		int s = socket(fam, SOCK_STREAM, 0);
		if (v6only) {
			int one = 1;
			setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
		}
		int r = connect(s, sa, salen);
		if (r == 0 || errno != ECONNREFUSED || tries >= 200) {
			expect(what, r, 0, 0);
			return r == 0 ? s : -1;
		}
		close(s);
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
}

static void talk(int s, const char *msg, int port)
{
	names(s, -1, port);
	size_t n = strlen(msg);
	expect("write", write(s, msg, n), (long)n, 0);
	expect("shutdown SHUT_WR", shutdown(s, SHUT_WR), 0, 0);
	char buf[64];
	size_t got = 0;
	ssize_t r;
	while ((r = read(s, buf + got, sizeof buf - got)) > 0)
		got += (size_t)r;
	expect("read echo", (long)got, (long)n, 0);
	printf("  echo %s\n", got == n && memcmp(buf, msg, n) == 0 ? "intact" : "WRONG");
	expect("close", close(s), 0, 0);
}

static int client(const char *ip4, const char *ip6, int port)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct sockaddr_in6 m6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	if (inet_pton(AF_INET6, ip6, &a6.sin6_addr) != 1 || inet_pton(AF_INET, ip4, &a4.sin_addr) != 1) {
		fprintf(stderr, "sixtrace: bad address\n");
		return 2;
	}
	m6.sin6_addr.s6_addr[10] = m6.sin6_addr.s6_addr[11] = 0xff;
	memcpy(&m6.sin6_addr.s6_addr[12], &a4.sin_addr, 4);

	int s = dial(AF_INET6, (struct sockaddr *)&a6, sizeof a6, 0, "connect IPv6");
	if (s >= 0)
		talk(s, "hello over IPv6", port);
	s = dial(AF_INET, (struct sockaddr *)&a4, sizeof a4, 0, "connect IPv4");
	if (s >= 0)
		talk(s, "hello over IPv4", port);
	s = socket(AF_INET6, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	expect("connect IPv4-mapped on IPV6_V6ONLY", connect(s, (struct sockaddr *)&m6, sizeof m6), -1, ENETUNREACH);
	close(s);
	s = dial(AF_INET6, (struct sockaddr *)&m6, sizeof m6, 0, "connect IPv4-mapped");
	if (s >= 0)
		talk(s, "hello over IPv4, mapped", port);

	a6.sin6_port = a4.sin_port = htons(port + 1);
	s = dial(AF_INET6, (struct sockaddr *)&a6, sizeof a6, 0, "connect IPv6 to V6ONLY");
	int s4 = socket(AF_INET, SOCK_STREAM, 0);
	expect("connect IPv4 to V6ONLY", connect(s4, (struct sockaddr *)&a4, sizeof a4), -1, ECONNREFUSED);
	close(s4);
	if (s >= 0)
		talk(s, "hello again over IPv6", port + 1);
	printf("client done\n");
	return failed;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "server") == 0)
		return server(atoi(argv[2]));
	if (argc == 5 && strcmp(argv[1], "client") == 0)
		return client(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: sixtrace server PORT | sixtrace client IP4 IP6 PORT\n");
	return 2;
}
