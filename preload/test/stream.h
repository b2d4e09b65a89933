/* stream.h: the blocking stream helpers the trace programs share. Needs
 * <arpa/inet.h>, <sys/socket.h>, <time.h> and <unistd.h> first. */
#ifndef SAVANNA_STREAM_H
#define SAVANNA_STREAM_H

/* readn reads until n bytes, EOF or an error; it returns what it got. */
static inline int readn(int fd, char *b, int n)
{
	int got = 0;
	while (got < n) {
		ssize_t k = read(fd, b + got, (size_t)(n - got));
		if (k <= 0)
			return got;
		got += (int)k;
	}
	return got;
}

/* writen writes until n bytes or an error; it returns what it put. */
static inline int writen(int fd, const char *b, int n)
{
	int put = 0;
	while (put < n) {
		ssize_t k = write(fd, b + put, (size_t)(n - put));
		if (k <= 0)
			return put;
		put += (int)k;
	}
	return put;
}

/* dial connects to ip:port over TCP/IPv4, retrying every 5 ms for up to
 * 10 s while the server is not yet listening; it returns the socket or
 * -1. */
static inline int dial(const char *ip, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, ip, &a.sin_addr);
	for (int t = 0; t < 2000; t++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
			return s;
		close(s);
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
	return -1;
}

#endif
