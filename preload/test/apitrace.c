/* apitrace: the rest of the socket API real servers import (accept4
 * flags, dup/dup2/fcntl(F_DUPFD_CLOEXEC) of a socket with the last close
 * closing it, recvmsg/sendmsg with iovecs and a refused control message,
 * ioctl(FIONREAD), sendfile with and without an offset, recvmmsg, sendmmsg,
 * splice to and from a pipe and its errors), printing what
 * each call returned, without ports or addresses, so that a run on
 * Linux's stack and one preloaded on Savanna's compare line by line.
 *
 *   apitrace server PORT
 *   apitrace client IP PORT
 *
 * On standard error only (it differs on purpose): socket(AF_INET6). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "stream.h"
#include "trace.h"

#define FILE_BYTES 5000

static char pattern(int i) { return (char)('a' + i % 26); }

/* waitfor polls until fd holds n bytes (FIONREAD), so that a call that
 * takes what is there returns the same on both stacks. */
static void waitfor(int fd, int n)
{
	int avail = 0;
	for (int t = 0; t < 500 && avail < n; t++) {
		struct pollfd p = {fd, POLLIN, 0};
		poll(&p, 1, 10);
		ioctl(fd, FIONREAD, &avail);
	}
}

/* mmsg_splice: recvmmsg, sendmmsg and splice on the connection (d and d2
 * are two descriptors of it), with the errors Linux gives. */
static void mmsg_splice(int d, int d2)
{
	char m1[5], m2[5];
	struct iovec i1 = {m1, sizeof m1}, i2 = {m2, sizeof m2};
	struct mmsghdr mv[2];
	memset(mv, 0, sizeof mv);
	mv[0].msg_hdr.msg_iov = &i1;
	mv[0].msg_hdr.msg_iovlen = 1;
	mv[1].msg_hdr.msg_iov = &i2;
	mv[1].msg_hdr.msg_iovlen = 1;
	show("recvmmsg 2 of 5 MSG_WAITALL", recvmmsg(d, mv, 2, MSG_WAITALL, NULL));
	printf("  lens %u %u '%.5s' '%.5s' flags %d\n", mv[0].msg_len, mv[1].msg_len, m1, m2, mv[0].msg_hdr.msg_flags);
	show("recvmmsg nothing there MSG_DONTWAIT", recvmmsg(d, mv, 2, MSG_DONTWAIT, NULL));
	struct timespec tmo = {0, 1000000};
	show("recvmmsg MSG_WAITFORONE nothing there nonblocking", (fcntl(d, F_SETFL, O_NONBLOCK), recvmmsg(d, mv, 2, MSG_WAITFORONE, &tmo)));
	fcntl(d, F_SETFL, 0);

	struct iovec o1 = {"SM1", 3}, o2 = {"SM22", 4};
	struct mmsghdr ov[2];
	memset(ov, 0, sizeof ov);
	ov[0].msg_hdr.msg_iov = &o1;
	ov[0].msg_hdr.msg_iovlen = 1;
	ov[1].msg_hdr.msg_iov = &o2;
	ov[1].msg_hdr.msg_iovlen = 1;
	show("sendmmsg 2", sendmmsg(d2, ov, 2, 0));
	printf("  lens %u %u\n", ov[0].msg_len, ov[1].msg_len);
	show("sendmmsg 0 messages", sendmmsg(d2, ov, 0, 0));

	int p[2];
	if (pipe(p) < 0)
		return;
	waitfor(d, 7);
	show("splice socket to pipe 7", splice(d, NULL, p[1], NULL, 7, 0));
	char pb[16] = {0};
	show("  read the pipe", read(p[0], pb, sizeof pb));
	printf("  '%s'\n", pb);
	show("splice length 0", splice(d, NULL, p[1], NULL, 0, 0));
	show("splice socket to socket", splice(d, NULL, d2, NULL, 4, 0));
	loff_t off = 0;
	show("splice socket with an offset to pipe", splice(d, &off, p[1], NULL, 4, 0));
	show("splice socket to pipe with an offset", splice(d, NULL, p[1], &off, 4, 0));
	show("splice pipe with an offset to socket", splice(p[0], &off, d2, NULL, 4, 0));
	FILE *tf = tmpfile();
	show("splice socket to a regular file", splice(d, NULL, tf ? fileno(tf) : -1, NULL, 4, 0));
	if (tf)
		fclose(tf);
	fcntl(d, F_SETFL, O_NONBLOCK);
	show("splice nonblocking socket, nothing there", splice(d, NULL, p[1], NULL, 4, 0));
	fcntl(d, F_SETFL, 0);
	show("splice empty pipe SPLICE_F_NONBLOCK to socket", splice(p[0], NULL, d2, NULL, 4, SPLICE_F_NONBLOCK));
	show("write the pipe", write(p[1], "fromPIPE", 8));
	show("splice pipe to socket 8", splice(p[0], NULL, d2, NULL, 8, 0));
	close(p[0]);
	close(p[1]);
}

static int server(int port)
{
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	show("bind", bind(l, (struct sockaddr *)&a, sizeof a));
	show("listen", listen(l, 8));
	int six = socket(AF_INET6, SOCK_STREAM, 0);
	fprintf(stderr, "apitrace: socket(AF_INET6) = %d %s\n", six, six < 0 ? strerrorname_np(errno) : "");
	if (six >= 0)
		close(six);
	show("accept4 bad flags", accept4(l, NULL, NULL, 0x40000000));
	struct sockaddr_in peer;
	socklen_t plen = sizeof peer;
	int c = accept4(l, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
	show("accept4 nonblock cloexec", c >= 0 ? 0 : -1);
	printf("  nonblock %d cloexec %d peer len %u\n", (fcntl(c, F_GETFL) & O_NONBLOCK) != 0,
	       (fcntl(c, F_GETFD) & FD_CLOEXEC) != 0, plen);
	fcntl(c, F_SETFL, 0);
	int d = dup(c);
	show("dup", d >= 0 ? 0 : -1);
	int d2 = fcntl(c, F_DUPFD_CLOEXEC, 100);
	show("fcntl F_DUPFD_CLOEXEC >= 100", d2 >= 100 ? 0 : -1);
	printf("  dup's cloexec %d, F_DUPFD_CLOEXEC's %d, nonblock shared %d\n", (fcntl(d, F_GETFD) & FD_CLOEXEC) != 0,
	       (fcntl(d2, F_GETFD) & FD_CLOEXEC) != 0, (fcntl(d2, F_GETFL) & O_NONBLOCK) != 0);
	show("close the accepted fd", close(c));

	char b1[4], b2[6];
	struct iovec iv[2] = {{b1, sizeof b1}, {b2, sizeof b2}};
	char ctl[64];
	struct msghdr m = {.msg_iov = iv, .msg_iovlen = 2, .msg_control = ctl, .msg_controllen = sizeof ctl};
	ssize_t n = recvmsg(d, &m, MSG_WAITALL);
	show("recvmsg 2 iovecs", n);
	printf("  '%.4s' '%.6s' controllen %zu flags %d\n", b1, b2, (size_t)m.msg_controllen, m.msg_flags);

	int avail = 0;
	for (int t = 0; t < 500 && avail < 100; t++) {
		struct pollfd p = {d, POLLIN, 0};
		poll(&p, 1, 10);
		ioctl(d, FIONREAD, &avail);
	}
	printf("FIONREAD = %d\n", avail);
	char skip[100];
	show("read the 100", readn(d, skip, 100));

	struct iovec ov[3] = {{"abc", 3}, {"defgh", 5}, {"ijkl", 4}};
	struct msghdr om = {.msg_iov = ov, .msg_iovlen = 3};
	show("sendmsg 3 iovecs", sendmsg(d2, &om, 0));
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm;
	memset(&cm, 0, sizeof cm);
	struct msghdr bad = {.msg_iov = ov, .msg_iovlen = 1, .msg_control = cm.b, .msg_controllen = sizeof cm.b};
	struct cmsghdr *h = CMSG_FIRSTHDR(&bad);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = 0x7ffe; /* no such SOL_SOCKET control message */
	h->cmsg_len = CMSG_LEN(sizeof(int));
	show("sendmsg unknown SOL_SOCKET cmsg", sendmsg(d2, &bad, 0));

	char path[] = "/tmp/apitrace-XXXXXX";
	int f = mkstemp(path);
	unlink(path);
	char fb[FILE_BYTES];
	for (int i = 0; i < FILE_BYTES; i++)
		fb[i] = pattern(i);
	if (write(f, fb, FILE_BYTES) != FILE_BYTES)
		return 1;
	off_t off = 1000;
	show("sendfile offset 1000 count 3000", sendfile(d, f, &off, 3000));
	printf("  offset now %ld, file position %ld\n", (long)off, (long)lseek(f, 0, SEEK_CUR));
	lseek(f, 0, SEEK_SET);
	show("sendfile at the position count 2000", sendfile(d2, f, NULL, 2000));
	printf("  file position %ld\n", (long)lseek(f, 0, SEEK_CUR));
	show("sendfile from a socket", sendfile(d2, d, NULL, 10));
	close(f);

	mmsg_splice(d, d2);

	show("dup2 onto the other dup", dup2(d2, d) == d ? 0 : -1);
	show("close one", close(d));
	show("write on the last", write(d2, "Z", 1));
	show("close the last", close(d2));
	close(l);
	printf("server done\n");
	return 0;
}

static int client(const char *ip, int port)
{
	int s = dial(ip, port);
	show("connect", s >= 0 ? 0 : -1);
	if (s < 0)
		return 1;
	show("write 10", write(s, "0123456789", 10));
	char hundred[100];
	memset(hundred, 'x', sizeof hundred);
	show("write 100", write(s, hundred, 100));
	char b[12];
	show("read 12", readn(s, b, 12));
	printf("  '%.12s'\n", b);
	char fb[5000];
	int got = readn(s, fb, 5000), ok = got == 5000;
	for (int i = 0; ok && i < 3000; i++)
		ok = fb[i] == pattern(1000 + i);
	for (int i = 0; ok && i < 2000; i++)
		ok = fb[3000 + i] == pattern(i);
	printf("file bytes %d, as sent %d\n", got, ok);
	show("write mmsg1mmsg2", write(s, "mmsg1mmsg2", 10));
	char sm[7];
	show("read 7 of sendmmsg", readn(s, sm, 7));
	printf("  '%.7s'\n", sm);
	show("write splice!", write(s, "splice!", 7));
	char fp[8];
	show("read 8 of splice", readn(s, fp, 8));
	printf("  '%.8s'\n", fp);
	char z;
	show("read Z", readn(s, &z, 1));
	show("read EOF", read(s, &z, 1));
	close(s);
	printf("client done\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: apitrace server PORT | client IP PORT\n");
	return 2;
}
