/* trace.h: the trace programs' common printing. Each call's result is
 * printed as Linux's errno name, so a run on Linux's stack and a run
 * preloaded on Savanna's give comparable traces; expect also marks the
 * run failed when the result is not the one wanted. Needs <errno.h>,
 * <stdio.h> and <string.h> (strerrorname_np: _GNU_SOURCE) first. */
#ifndef SAVANNA_TRACE_H
#define SAVANNA_TRACE_H

static int failed;

static inline long show(const char *what, long r)
{
	if (r < 0)
		printf("%s = -1 %s\n", what, strerrorname_np(errno));
	else
		printf("%s = %ld\n", what, r);
	fflush(stdout);
	return r;
}

static inline void expect(const char *what, long r, long want, int want_errno)
{
	int e = errno;
	show(what, r);
	if (r != want || (r < 0 && e != want_errno)) {
		printf("FAIL %s: want %ld %s\n", what, want, want_errno ? strerrorname_np(want_errno) : "");
		failed = 1;
	}
}

#endif
