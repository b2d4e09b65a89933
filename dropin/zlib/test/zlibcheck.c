/* zlibcheck: zlib's behaviour as real programs rely on it, checked against
 * whichever libz.so.1 the dynamic linker loads (the system zlib, or
 * Savanna's drop-in under LD_LIBRARY_PATH). The oracle is the system zlib
 * itself, opened by absolute path (SAVANNA_SYSTEM_LIBZ overrides): every
 * stream the tested library writes must inflate there to the same bytes,
 * and the tested library must inflate what the oracle writes.
 *
 * Output: "ok NAME" or "FAIL NAME: why" per check, then a summary line;
 * with the drop-in loaded, a line "stats: {JSON}" with its counters.
 * Exit status 0 when every check passed. Usage: zlibcheck [--quick]. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#ifndef SYSTEM_LIBZ
#define SYSTEM_LIBZ "/lib/x86_64-linux-gnu/libz.so.1"
#endif

/* One zlib: the linked one or the oracle. */
struct api {
	const char *name;
	int (*deflateInit2_)(z_streamp, int, int, int, int, int, const char *, int);
	int (*deflate)(z_streamp, int);
	int (*deflateEnd)(z_streamp);
	int (*inflateInit2_)(z_streamp, int, const char *, int);
	int (*inflate)(z_streamp, int);
	int (*inflateEnd)(z_streamp);
	int (*inflateSetDictionary)(z_streamp, const Bytef *, uInt);
	int (*inflateGetHeader)(z_streamp, gz_headerp);
};

static struct api linked = {"linked", deflateInit2_, deflate, deflateEnd, inflateInit2_,
			    inflate, inflateEnd, inflateSetDictionary, inflateGetHeader};
static struct api oracle = {"oracle", 0, 0, 0, 0, 0, 0, 0, 0};
static int quick, dropin_active;

static int failed_now, passes, failures;
static const char *test_name;

static void failf(int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL %s (line %d): ", test_name, line);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failed_now = 1;
}
#define CHECK(cond, ...)                                  \
	do {                                              \
		if (!(cond)) {                            \
			failf(__LINE__, __VA_ARGS__);     \
			return;                           \
		}                                         \
	} while (0)

static void run(const char *name, void (*fn)(void))
{
	test_name = name;
	failed_now = 0;
	fn();
	if (failed_now) {
		failures++;
	} else {
		passes++;
		printf("ok %s\n", name);
	}
	fflush(stdout);
}

/* ---- data ---- */

static uint64_t rng = 88172645463325252ull;
static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* kind 0: text-like (words), 1: random bytes, 2: both in runs. */
static uint8_t *make_data(size_t n, int kind)
{
	static const char *words[] = {"the ", "quick ", "brown ", "fox ", "jumps ", "over ", "lazy ",
				      "dog\n", "<div class=\"x\">", "</div>\n", "savanna ", "zlib "};
	uint8_t *d = malloc(n ? n : 1);
	size_t i = 0;
	while (i < n) {
		int random = kind == 1 || (kind == 2 && (i / 10000) % 2 == 1);
		if (random) {
			d[i++] = (uint8_t)next_rand();
		} else {
			const char *w = words[next_rand() % 12];
			for (; *w && i < n; w++)
				d[i++] = (uint8_t)*w;
		}
	}
	return d;
}

struct buf {
	uint8_t *p;
	size_t n, cap;
};
static void buf_grow(struct buf *b, size_t more)
{
	if (b->n + more <= b->cap)
		return;
	b->cap = (b->n + more) * 2 + 64;
	b->p = realloc(b->p, b->cap);
}
static void buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* ---- helpers ---- */

/* inflate_all inflates in (in pieces of inchunk, output in pieces of
 * outchunk) with api a and returns zlib's last code; out gets the bytes. */
static int inflate_all(const struct api *a, const uint8_t *in, size_t n, int wb, size_t inchunk,
		       size_t outchunk, struct buf *out)
{
	z_stream s;
	memset(&s, 0, sizeof s);
	int rc = a->inflateInit2_(&s, wb, ZLIB_VERSION, (int)sizeof s);
	if (rc != Z_OK)
		return rc;
	size_t off = 0;
	for (int guard = 0;; guard++) {
		if (guard > 50000000)
			return -100;
		size_t give = n - off < inchunk ? n - off : inchunk;
		s.next_in = (Bytef *)in + off;
		s.avail_in = (uInt)give;
		buf_grow(out, outchunk);
		s.next_out = out->p + out->n;
		s.avail_out = (uInt)outchunk;
		rc = a->inflate(&s, Z_NO_FLUSH);
		off += give - s.avail_in;
		out->n += outchunk - s.avail_out;
		if (rc == Z_STREAM_END || (rc != Z_OK && rc != Z_BUF_ERROR))
			break;
		if (rc == Z_BUF_ERROR && off == n && s.avail_out != 0)
			break; /* input ended before the stream did */
	}
	a->inflateEnd(&s);
	return rc;
}

/* deflate_all compresses data with api a, feeding inchunk bytes per call
 * with flush after each piece, output in outchunk pieces, then Z_FINISH.
 * With check_prefix, after each completed flush the oracle must inflate
 * everything written so far to exactly the input consumed so far. */
static int deflate_all(const struct api *a, const uint8_t *data, size_t n, int level, int wb,
		       int strategy, int flush, size_t inchunk, size_t outchunk, struct buf *out,
		       int check_prefix, char *why, size_t whylen)
{
	z_stream s, o;
	memset(&s, 0, sizeof s);
	memset(&o, 0, sizeof o);
	struct buf plain = {0};
	size_t fed_to_oracle = 0;
	int rc = a->deflateInit2_(&s, level, Z_DEFLATED, wb, 8, strategy, ZLIB_VERSION, (int)sizeof s);
	if (rc != Z_OK) {
		snprintf(why, whylen, "deflateInit2_ = %d", rc);
		return rc;
	}
	if (check_prefix)
		oracle.inflateInit2_(&o, wb, ZLIB_VERSION, (int)sizeof o);
	size_t off = 0;
	int result = 0;
	while (off < n || 1) {
		int f = off < n ? flush : Z_FINISH;
		size_t give = n - off < inchunk ? n - off : inchunk;
		s.next_in = (Bytef *)data + off;
		s.avail_in = (uInt)give;
		for (int guard = 0;; guard++) {
			if (guard > 50000000) {
				snprintf(why, whylen, "no end after %d calls", guard);
				result = -100;
				goto done;
			}
			buf_grow(out, outchunk);
			s.next_out = out->p + out->n;
			s.avail_out = (uInt)outchunk;
			uInt before_in = s.avail_in;
			rc = a->deflate(&s, f);
			out->n += outchunk - s.avail_out;
			if (rc == Z_STREAM_END)
				break;
			if (rc == Z_BUF_ERROR && before_in == 0 && s.avail_out == outchunk)
				break; /* the flush was complete already */
			if (rc != Z_OK) {
				snprintf(why, whylen, "deflate(flush %d) = %d at input %zu", f, rc, off);
				result = rc;
				goto done;
			}
			if (s.avail_in == 0 && s.avail_out != 0 && f != Z_FINISH)
				break;
		}
		off += give;
		if (rc == Z_STREAM_END)
			break;
		if (check_prefix && (f == Z_SYNC_FLUSH || f == Z_FULL_FLUSH || f == Z_PARTIAL_FLUSH)) {
			o.next_in = out->p + fed_to_oracle;
			o.avail_in = (uInt)(out->n - fed_to_oracle);
			fed_to_oracle = out->n;
			do {
				buf_grow(&plain, 65536);
				o.next_out = plain.p + plain.n;
				o.avail_out = 65536;
				int orc = oracle.inflate(&o, Z_SYNC_FLUSH);
				plain.n += 65536 - o.avail_out;
				if (orc != Z_OK && orc != Z_BUF_ERROR) {
					snprintf(why, whylen, "oracle inflate of the flushed prefix = %d", orc);
					result = -101;
					goto done;
				}
			} while (o.avail_out == 0);
			if (plain.n != off || memcmp(plain.p, data, off) != 0) {
				snprintf(why, whylen, "after flush %d at %zu the oracle reads %zu bytes", f, off, plain.n);
				result = -102;
				goto done;
			}
		}
	}
	if (s.total_in != n) {
		snprintf(why, whylen, "total_in %lu, want %zu", s.total_in, n);
		result = -103;
	} else if (s.total_out != out->n) {
		snprintf(why, whylen, "total_out %lu, want %zu", s.total_out, out->n);
		result = -104;
	} else if (wb > 0) {
		uLong want = wb > 15 ? crc32(0, data, (uInt)n) : adler32(1, data, (uInt)n);
		if (s.adler != want) {
			snprintf(why, whylen, "strm->adler %lx, want %lx", s.adler, want);
			result = -105;
		}
	}
	if (result == 0) {
		buf_grow(out, 16);
		s.next_in = Z_NULL;
		s.avail_in = 0;
		s.next_out = out->p + out->n;
		s.avail_out = 16;
		rc = a->deflate(&s, Z_FINISH);
		if (rc != Z_STREAM_END || s.avail_out != 16) {
			snprintf(why, whylen, "Z_FINISH again after the end = %d", rc);
			result = -106;
		}
	}
done:
	rc = a->deflateEnd(&s);
	if (result == 0 && rc != Z_OK) {
		snprintf(why, whylen, "deflateEnd = %d", rc);
		result = rc;
	}
	if (check_prefix)
		oracle.inflateEnd(&o);
	buf_free(&plain);
	return result;
}

/* roundtrip: a deflates, the oracle inflates, bytes compared. */
static int roundtrip(const struct api *a, const struct api *inf, const uint8_t *data, size_t n, int level,
		     int wb, int strategy, int flush, size_t inchunk, size_t outchunk, char *why, size_t whylen)
{
	struct buf z = {0}, back = {0};
	int rc = deflate_all(a, data, n, level, wb, strategy, flush, inchunk, outchunk, &z,
			     a == &linked && inf == &oracle, why, whylen);
	if (rc == 0) {
		rc = inflate_all(inf, z.p, z.n, wb, 1 << 20, 1 << 20, &back);
		if (rc != Z_STREAM_END) {
			snprintf(why, whylen, "%s inflate = %d", inf->name, rc);
		} else if (back.n != n || memcmp(back.p, data, n) != 0) {
			snprintf(why, whylen, "%s inflate gave %zu bytes, want %zu", inf->name, back.n, n);
			rc = -1;
		} else {
			rc = 0;
		}
	}
	buf_free(&z);
	buf_free(&back);
	return rc;
}

/* ---- checks ---- */

static void t_init_errors(void)
{
	z_stream s;
	memset(&s, 0, sizeof s);
	CHECK(zlibVersion()[0] == ZLIB_VERSION[0], "zlibVersion %s", zlibVersion());
	CHECK(deflateInit2_(&s, 1, Z_DEFLATED, 15, 8, 0, "2.0.0", (int)sizeof s) == Z_VERSION_ERROR, "version 2");
	CHECK(deflateInit2_(&s, 1, Z_DEFLATED, 15, 8, 0, ZLIB_VERSION, (int)sizeof s - 8) == Z_VERSION_ERROR,
	      "stream size");
	CHECK(deflateInit2_(&s, 1, Z_DEFLATED, 15, 8, 0, NULL, (int)sizeof s) == Z_VERSION_ERROR, "no version");
	CHECK(deflateInit2_(NULL, 1, Z_DEFLATED, 15, 8, 0, ZLIB_VERSION, (int)sizeof s) == Z_STREAM_ERROR, "null");
	CHECK(deflateInit2(&s, 10, Z_DEFLATED, 15, 8, 0) == Z_STREAM_ERROR, "level 10");
	CHECK(deflateInit2(&s, 1, 9, 15, 8, 0) == Z_STREAM_ERROR, "method 9");
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, 7, 8, 0) == Z_STREAM_ERROR, "windowBits 7");
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, -8, 8, 0) == Z_STREAM_ERROR, "windowBits -8");
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, 32, 8, 0) == Z_STREAM_ERROR, "windowBits 32");
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, 15, 0, 0) == Z_STREAM_ERROR, "memLevel 0");
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, 15, 10, 0) == Z_STREAM_ERROR, "memLevel 10");
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, 15, 8, 5) == Z_STREAM_ERROR, "strategy 5");
	CHECK(deflateInit(&s, 1) == Z_OK, "deflateInit");
	uint8_t out[64];
	s.next_out = out;
	s.avail_out = sizeof out;
	CHECK(deflate(&s, 6) == Z_STREAM_ERROR, "flush 6 (Z_TREES) is inflate's");
	CHECK(deflate(&s, -1) == Z_STREAM_ERROR, "flush -1");
	CHECK(deflateEnd(&s) == Z_OK, "deflateEnd of an unstarted stream");
	CHECK(deflateEnd(&s) == Z_STREAM_ERROR, "deflateEnd twice");
}

static void t_flush_modes(void)
{
	static const int flushes[] = {Z_NO_FLUSH, Z_PARTIAL_FLUSH, Z_SYNC_FLUSH, Z_FULL_FLUSH, Z_BLOCK, Z_FINISH};
	static const int wbs[] = {15, 31, -15, 9};
	struct {
		size_t n, in, out;
		int kind;
	} shapes[] = {{3001, 1, 1, 0}, {(1 << 20) + 13, 65536 + 7, 4096, 2}, {(1 << 20), 1 << 20, 1 << 21, 0},
		      {200000, 30000, 1, 1}};
	char why[256];
	for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
		if (quick && shapes[sh].out == 1 && shapes[sh].n > 10000)
			continue;
		uint8_t *d = make_data(shapes[sh].n, shapes[sh].kind);
		for (size_t w = 0; w < 4; w++)
			for (size_t f = 0; f < 6; f++) {
				/* zlib.h: with Z_SYNC_FLUSH or Z_FULL_FLUSH keep
				 * avail_out above six, else each call that ends
				 * with the output full adds another flush marker
				 * (Z_PARTIAL_FLUSH an empty block) and the loop
				 * never ends, in zlib itself. */
				size_t outc = shapes[sh].out;
				if (outc < 7 && (flushes[f] == Z_SYNC_FLUSH || flushes[f] == Z_FULL_FLUSH ||
						 flushes[f] == Z_PARTIAL_FLUSH))
					outc = 7;
				/* Z_FINISH per piece is one piece only. */
				size_t in = flushes[f] == Z_FINISH ? shapes[sh].n : shapes[sh].in;
				int rc = roundtrip(&linked, &oracle, d, shapes[sh].n, 1, wbs[w], 0, flushes[f], in,
						   outc, why, sizeof why);
				if (rc != 0) {
					free(d);
					CHECK(0, "%zu bytes in %zu/out %zu, windowBits %d, flush %d: %s", shapes[sh].n,
					      in, outc, wbs[w], flushes[f], why);
				}
			}
		free(d);
	}
}

static void t_levels_strategies(void)
{
	char why[256];
	uint8_t *d = make_data(300000, 2);
	for (int level = -1; level <= 9; level++)
		for (int st = 0; st <= Z_FIXED; st++) {
			int rc = roundtrip(&linked, &oracle, d, 300000, level, 31, st, Z_SYNC_FLUSH, 50000, 8192, why,
					   sizeof why);
			if (rc != 0) {
				free(d);
				CHECK(0, "level %d strategy %d: %s", level, st, why);
			}
		}
	free(d);
}

static void t_inflate_oracle_output(void)
{
	static const int wbs[] = {15, 31, -15, 9};
	static const int flushes[] = {Z_NO_FLUSH, Z_SYNC_FLUSH, Z_FULL_FLUSH, Z_PARTIAL_FLUSH, Z_BLOCK};
	char why[256];
	uint8_t *d = make_data(700000, 2);
	for (size_t w = 0; w < 4; w++)
		for (size_t f = 0; f < 5; f++) {
			struct buf z = {0}, back = {0};
			int rc = deflate_all(&oracle, d, 700000, 6, wbs[w], 0, flushes[f], 10000, 65536, &z, 0, why,
					     sizeof why);
			CHECK(rc == 0, "oracle deflate: %s", why);
			size_t chunks[][2] = {{1, 1}, {7, 4096}, {1 << 22, 1 << 22}};
			for (int c = 0; c < 3; c++) {
				if (quick && c == 0)
					continue;
				back.n = 0;
				rc = inflate_all(&linked, z.p, z.n, wbs[w], chunks[c][0], chunks[c][1], &back);
				CHECK(rc == Z_STREAM_END && back.n == 700000 && memcmp(back.p, d, 700000) == 0,
				      "windowBits %d flush %d pieces %zu/%zu: inflate %d, %zu bytes", wbs[w], flushes[f],
				      chunks[c][0], chunks[c][1], rc, back.n);
			}
			buf_free(&z);
			buf_free(&back);
		}
	free(d);
}

static void t_buf_error(void)
{
	z_stream s;
	memset(&s, 0, sizeof s);
	uint8_t in[100] = "hello hello hello", out[200];
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, 31, 8, 0) == Z_OK, "init");
	s.next_in = in;
	s.avail_in = sizeof in;
	s.next_out = out;
	s.avail_out = 0;
	CHECK(deflate(&s, Z_NO_FLUSH) == Z_BUF_ERROR, "no output space");
	s.avail_out = sizeof out;
	int rc = deflate(&s, Z_SYNC_FLUSH);
	CHECK(rc == Z_OK && s.avail_in == 0, "sync flush = %d", rc);
	rc = deflate(&s, Z_SYNC_FLUSH);
	CHECK(rc == Z_BUF_ERROR, "second sync flush, nothing new = %d", rc);
	rc = deflate(&s, Z_FINISH);
	CHECK(rc == Z_STREAM_END, "finish = %d", rc);
	s.next_in = in;
	s.avail_in = 1;
	rc = deflate(&s, Z_NO_FLUSH);
	CHECK(rc == Z_STREAM_ERROR, "input after the end = %d", rc);
	deflateEnd(&s);
	/* deflateEnd of a stream started but not finished is a data error. */
	memset(&s, 0, sizeof s);
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, 31, 8, 0) == Z_OK, "init");
	s.next_in = in;
	s.avail_in = sizeof in;
	s.next_out = out;
	s.avail_out = sizeof out;
	CHECK(deflate(&s, Z_SYNC_FLUSH) == Z_OK, "sync");
	CHECK(deflateEnd(&s) == Z_DATA_ERROR, "deflateEnd unfinished");
}

static void t_bound(void)
{
	static const size_t sizes[] = {0, 1, 100, 1023, 1025, 65535, 65536, 65537, 1 << 20, (3 << 20) + 5};
	static const int wbs[] = {15, 31, -15};
	static const int levels[] = {0, 1, 6, 9};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		for (int kind = 0; kind < 3; kind++) {
			uint8_t *d = make_data(sizes[i], kind);
			for (int w = 0; w < 3; w++)
				for (int l = 0; l < 4; l++) {
					z_stream s;
					memset(&s, 0, sizeof s);
					CHECK(deflateInit2(&s, levels[l], Z_DEFLATED, wbs[w], 8, 0) == Z_OK, "init");
					uLong b = deflateBound(&s, sizes[i]);
					uint8_t *out = malloc(b);
					s.next_in = d;
					s.avail_in = (uInt)sizes[i];
					s.next_out = out;
					s.avail_out = (uInt)b;
					int rc = deflate(&s, Z_FINISH);
					uLong got = s.total_out;
					deflateEnd(&s);
					struct buf back = {0};
					int irc = inflate_all(&oracle, out, got, wbs[w], 1 << 22, 1 << 22, &back);
					int same = back.n == sizes[i] && (sizes[i] == 0 || memcmp(back.p, d, sizes[i]) == 0);
					free(out);
					buf_free(&back);
					if (rc != Z_STREAM_END || !same || irc != Z_STREAM_END) {
						free(d);
						CHECK(0, "%zu bytes kind %d windowBits %d level %d: bound %lu, deflate %d, wrote %lu, inflate %d",
						      sizes[i], kind, wbs[w], levels[l], b, rc, got, irc);
					}
				}
			free(d);
		}
	CHECK(compressBound(1 << 20) >= (1 << 20), "compressBound");
}

static void t_dictionary(void)
{
	const char *dict = "the quick brown fox jumps over the lazy dog savanna zlib";
	uint8_t *d = make_data(100000, 0);
	static const int wbs[] = {15, -15};
	for (int w = 0; w < 2; w++) {
		z_stream s;
		memset(&s, 0, sizeof s);
		CHECK(deflateInit2(&s, 6, Z_DEFLATED, wbs[w], 8, 0) == Z_OK, "init");
		CHECK(deflateSetDictionary(&s, (const Bytef *)dict, (uInt)strlen(dict)) == Z_OK, "set dictionary");
		uLong b = deflateBound(&s, 100000);
		uint8_t *out = malloc(b), *back = malloc(100000);
		s.next_in = d;
		s.avail_in = 100000;
		s.next_out = out;
		s.avail_out = (uInt)b;
		CHECK(deflate(&s, Z_FINISH) == Z_STREAM_END, "deflate");
		uLong n = s.total_out;
		CHECK(deflateEnd(&s) == Z_OK, "end");
		z_stream i;
		memset(&i, 0, sizeof i);
		CHECK(oracle.inflateInit2_(&i, wbs[w], ZLIB_VERSION, (int)sizeof i) == Z_OK, "inflate init");
		if (wbs[w] < 0)
			CHECK(oracle.inflateSetDictionary(&i, (const Bytef *)dict, (uInt)strlen(dict)) == Z_OK, "raw dict");
		i.next_in = out;
		i.avail_in = (uInt)n;
		i.next_out = back;
		i.avail_out = 100000;
		int rc = oracle.inflate(&i, Z_NO_FLUSH);
		if (wbs[w] > 0) {
			CHECK(rc == Z_NEED_DICT, "inflate without the dictionary = %d", rc);
			CHECK(i.adler == adler32(1, (const Bytef *)dict, (uInt)strlen(dict)), "dictionary id");
			CHECK(oracle.inflateSetDictionary(&i, (const Bytef *)dict, (uInt)strlen(dict)) == Z_OK, "dict");
			rc = oracle.inflate(&i, Z_NO_FLUSH);
		}
		CHECK(rc == Z_STREAM_END && i.total_out == 100000 && memcmp(back, d, 100000) == 0, "inflate = %d", rc);
		oracle.inflateEnd(&i);
		free(out);
		free(back);
	}
	/* A zlib stream takes no dictionary once data went through. */
	z_stream s;
	memset(&s, 0, sizeof s);
	uint8_t out[1000];
	CHECK(deflateInit(&s, 1) == Z_OK, "init");
	s.next_in = d;
	s.avail_in = 100;
	s.next_out = out;
	s.avail_out = sizeof out;
	CHECK(deflate(&s, Z_SYNC_FLUSH) == Z_OK, "deflate");
	CHECK(deflateSetDictionary(&s, (const Bytef *)dict, 5) == Z_STREAM_ERROR, "dictionary after data");
	deflateEnd(&s);
	free(d);
}

static void t_reset_reuse(void)
{
	z_stream s;
	memset(&s, 0, sizeof s);
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, 31, 8, 0) == Z_OK, "init");
	for (int round = 0; round < 30; round++) {
		size_t n = (size_t)(round * 37001 % 300000) + (size_t)round;
		uint8_t *d = make_data(n, round % 3);
		uLong b = deflateBound(&s, n);
		uint8_t *out = malloc(b);
		s.next_in = d;
		s.avail_in = (uInt)n;
		s.next_out = out;
		s.avail_out = (uInt)b;
		int rc = deflate(&s, Z_FINISH);
		uLong got = s.total_out;
		CHECK(rc == Z_STREAM_END && s.total_in == n, "round %d: deflate %d", round, rc);
		struct buf back = {0};
		rc = inflate_all(&oracle, out, got, 31, 1 << 22, 1 << 22, &back);
		CHECK(rc == Z_STREAM_END && back.n == n && (n == 0 || memcmp(back.p, d, n) == 0), "round %d: inflate %d",
		      round, rc);
		CHECK(deflateReset(&s) == Z_OK && s.total_in == 0 && s.total_out == 0, "round %d: reset", round);
		buf_free(&back);
		free(out);
		free(d);
	}
	CHECK(deflateEnd(&s) == Z_OK, "end after a reset");
}

static void t_gzip_header(void)
{
	uint8_t *d = make_data(50000, 0);
	z_stream s;
	memset(&s, 0, sizeof s);
	gz_header h;
	memset(&h, 0, sizeof h);
	h.text = 1;
	h.time = 1234567;
	h.os = 3;
	h.name = (Bytef *)"page.html";
	h.comment = (Bytef *)"savanna";
	h.extra = (Bytef *)"AB\004\000abcd";
	h.extra_len = 8;
	h.hcrc = 1;
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, 31, 8, 0) == Z_OK, "init");
	CHECK(deflateSetHeader(&s, &h) == Z_OK, "set header");
	uint8_t out[70000];
	s.next_in = d;
	s.avail_in = 50000;
	s.next_out = out;
	s.avail_out = sizeof out;
	CHECK(deflate(&s, Z_FINISH) == Z_STREAM_END, "deflate");
	uLong n = s.total_out;
	deflateEnd(&s);
	static const struct api *readers[] = {&oracle, &linked};
	for (int r = 0; r < 2; r++) {
		z_stream i;
		memset(&i, 0, sizeof i);
		gz_header g;
		memset(&g, 0, sizeof g);
		char name[64] = {0}, comment[64] = {0};
		uint8_t extra[64] = {0};
		g.name = (Bytef *)name;
		g.name_max = sizeof name;
		g.comment = (Bytef *)comment;
		g.comm_max = sizeof comment;
		g.extra = extra;
		g.extra_max = sizeof extra;
		uint8_t *back = malloc(50000);
		CHECK(readers[r]->inflateInit2_(&i, 31, ZLIB_VERSION, (int)sizeof i) == Z_OK, "inflate init");
		CHECK(readers[r]->inflateGetHeader(&i, &g) == Z_OK, "get header");
		i.next_in = out;
		i.avail_in = (uInt)n;
		i.next_out = back;
		i.avail_out = 50000;
		int rc = readers[r]->inflate(&i, Z_FINISH);
		CHECK(rc == Z_STREAM_END && memcmp(back, d, 50000) == 0, "%s inflate = %d", readers[r]->name, rc);
		CHECK(g.done == 1 && g.time == 1234567 && g.os == 3 && g.text == 1 && strcmp(name, "page.html") == 0 &&
			  strcmp(comment, "savanna") == 0 && g.extra_len == 8 && memcmp(extra, "AB\004\000abcd", 8) == 0 &&
			  g.hcrc == 1,
		      "%s header: done %d time %lu os %d name %s comment %s", readers[r]->name, g.done, g.time, g.os,
		      name, comment);
		readers[r]->inflateEnd(&i);
		free(back);
	}
	/* The default gzip header: magic, deflate, inflated by the oracle. */
	struct buf z = {0};
	char why[200];
	CHECK(deflate_all(&linked, d, 50000, 1, 31, 0, Z_NO_FLUSH, 50000, 70000, &z, 0, why, sizeof why) == 0, "%s", why);
	CHECK(z.n > 18 && z.p[0] == 0x1f && z.p[1] == 0x8b && z.p[2] == 8, "gzip magic");
	buf_free(&z);
	free(d);
}

static void t_params(void)
{
	uint8_t *d = make_data(400000, 2);
	z_stream s;
	memset(&s, 0, sizeof s);
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, 15, 8, 0) == Z_OK, "init");
	CHECK(deflateParams(&s, 9, Z_FILTERED) == Z_OK, "params before data");
	CHECK(deflateParams(&s, 11, 0) == Z_STREAM_ERROR, "level 11");
	size_t cap = 600000;
	uint8_t *out = malloc(cap);
	s.next_in = d;
	s.avail_in = 200000;
	s.next_out = out;
	s.avail_out = (uInt)cap;
	CHECK(deflate(&s, Z_NO_FLUSH) == Z_OK, "first half");
	int rc = deflateParams(&s, 0, Z_DEFAULT_STRATEGY);
	CHECK(rc == Z_OK, "params mid-stream = %d", rc);
	s.avail_in = 200000;
	rc = deflate(&s, Z_FINISH);
	CHECK(rc == Z_STREAM_END, "finish = %d", rc);
	uLong n = s.total_out;
	deflateEnd(&s);
	struct buf back = {0};
	rc = inflate_all(&oracle, out, n, 15, 1 << 22, 1 << 22, &back);
	CHECK(rc == Z_STREAM_END && back.n == 400000 && memcmp(back.p, d, 400000) == 0, "inflate = %d", rc);
	buf_free(&back);
	free(out);
	/* deflateTune and deflatePending answer on any stream. */
	memset(&s, 0, sizeof s);
	CHECK(deflateInit(&s, 6) == Z_OK, "init");
	CHECK(deflateTune(&s, 8, 16, 128, 128) == Z_OK, "tune");
	unsigned pending = 99;
	int bits = 99;
	CHECK(deflatePending(&s, &pending, &bits) == Z_OK && pending == 0 && bits == 0, "pending");
	deflateEnd(&s);
	free(d);
}

static void t_copy(void)
{
	uint8_t *d = make_data(100000, 0);
	z_stream a, b;
	memset(&a, 0, sizeof a);
	CHECK(deflateInit2(&a, 1, Z_DEFLATED, 31, 8, 0) == Z_OK, "init");
	CHECK(deflateCopy(&b, &a) == Z_OK, "copy before data");
	z_stream *both[] = {&a, &b};
	for (int k = 0; k < 2; k++) {
		uint8_t *out = malloc(200000);
		both[k]->next_in = d;
		both[k]->avail_in = 100000;
		both[k]->next_out = out;
		both[k]->avail_out = 200000;
		CHECK(deflate(both[k], Z_FINISH) == Z_STREAM_END, "copy %d deflate", k);
		struct buf back = {0};
		int rc = inflate_all(&oracle, out, both[k]->total_out, 31, 1 << 22, 1 << 22, &back);
		CHECK(rc == Z_STREAM_END && back.n == 100000 && memcmp(back.p, d, 100000) == 0, "copy %d inflate", k);
		buf_free(&back);
		free(out);
		CHECK(deflateEnd(both[k]) == Z_OK, "copy %d end", k);
	}
	/* After data: zlib copies the state; the drop-in refuses (its shim
	 * cannot copy a stream) with Z_STREAM_ERROR, and the source lives on. */
	memset(&a, 0, sizeof a);
	CHECK(deflateInit2(&a, 1, Z_DEFLATED, 31, 8, 0) == Z_OK, "init");
	uint8_t out[300000];
	a.next_in = d;
	a.avail_in = 50000;
	a.next_out = out;
	a.avail_out = sizeof out;
	CHECK(deflate(&a, Z_NO_FLUSH) == Z_OK, "deflate");
	int rc = deflateCopy(&b, &a);
	CHECK(rc == Z_OK || (dropin_active && rc == Z_STREAM_ERROR), "copy after data = %d", rc);
	if (rc == Z_OK)
		deflateEnd(&b);
	a.avail_in = 50000;
	CHECK(deflate(&a, Z_FINISH) == Z_STREAM_END, "source finishes");
	struct buf back = {0};
	rc = inflate_all(&oracle, out, a.total_out, 31, 1 << 22, 1 << 22, &back);
	CHECK(rc == Z_STREAM_END && back.n == 100000, "source inflate");
	buf_free(&back);
	deflateEnd(&a);
	free(d);
}

static void t_corrupt(void)
{
	uint8_t *d = make_data(60000, 0);
	char why[200];
	static const int wbs[] = {31, 15, -15};
	for (int w = 0; w < 3; w++) {
		struct buf z = {0};
		CHECK(deflate_all(&linked, d, 60000, 1, wbs[w], 0, Z_SYNC_FLUSH, 20000, 1 << 20, &z, 0, why, sizeof why) == 0,
		      "%s", why);
		struct {
			long at; /* negative: from the end */
			uint8_t x;
			int wrapped; /* 1: with a wrapper, 2: gzip only */
		} cases[] = {{0, 0x01, 1}, {1, 0x80, 1}, {2, 0x01, 1}, {-1, 0x40, 1}, {-4, 0x01, 1}, {-5, 0x02, 2}};
		for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
			if (wbs[w] < 0)
				break;
			if (wbs[w] == 15 && (cases[c].at == 2 || cases[c].wrapped == 2))
				continue; /* data in a zlib stream; only gzip's CRC-32 is there */
			uint8_t *bad = malloc(z.n);
			memcpy(bad, z.p, z.n);
			size_t at = cases[c].at < 0 ? z.n + (size_t)cases[c].at : (size_t)cases[c].at;
			bad[at] ^= cases[c].x;
			struct buf back = {0};
			int rc = inflate_all(&linked, bad, z.n, wbs[w], 1 << 20, 1 << 20, &back);
			free(bad);
			buf_free(&back);
			CHECK(rc == Z_DATA_ERROR, "windowBits %d byte %zu ^ %#x: inflate = %d", wbs[w], at, cases[c].x, rc);
		}
		/* Flips anywhere: an error, an incomplete stream, or (a bit
		 * deflate ignores) the same bytes; never a crash. */
		for (int trial = 0; trial < (quick ? 50 : 400); trial++) {
			uint8_t *bad = malloc(z.n);
			memcpy(bad, z.p, z.n);
			bad[next_rand() % z.n] ^= (uint8_t)(1u << (next_rand() % 8));
			struct buf back = {0};
			int rc = inflate_all(&linked, bad, z.n, wbs[w], 1 + next_rand() % 5000, 1 + next_rand() % 70000, &back);
			int same = back.n == 60000 && memcmp(back.p, d, 60000) == 0;
			free(bad);
			buf_free(&back);
			CHECK(rc == Z_DATA_ERROR || rc == Z_BUF_ERROR || rc == Z_NEED_DICT || (rc == Z_STREAM_END && (same || wbs[w] < 0)),
			      "windowBits %d trial %d: inflate = %d", wbs[w], trial, rc);
		}
		buf_free(&z);
	}
	uLongf n = 100;
	uint8_t junk[50] = {0x78, 0x9c, 0xff, 0xff, 0xff}, out[100];
	CHECK(uncompress(out, &n, junk, sizeof junk) == Z_DATA_ERROR, "uncompress of junk");
	free(d);
}

static void t_checksums_compress(void)
{
	const Bytef *s = (const Bytef *)"123456789";
	CHECK(crc32(0, s, 9) == 0xCBF43926ul, "crc32 check value");
	CHECK(adler32(1, s, 9) == 0x091E01DEul, "adler32 check value");
	CHECK(crc32_combine(crc32(0, s, 4), crc32(0, s + 4, 5), 5) == 0xCBF43926ul, "crc32_combine");
	CHECK(get_crc_table() != NULL, "crc table");
	uint8_t *d = make_data(200000, 2);
	uLongf zn = compressBound(200000), bn = 200000;
	uint8_t *z = malloc(zn), *back = malloc(200000);
	CHECK(compress2(z, &zn, d, 200000, 6) == Z_OK, "compress2");
	CHECK(uncompress(back, &bn, z, zn) == Z_OK && bn == 200000 && memcmp(back, d, 200000) == 0, "uncompress");
	zn = compressBound(200000);
	CHECK(compress(z, &zn, d, 200000) == Z_OK, "compress");
	CHECK(zError(Z_DATA_ERROR) != NULL, "zError");
	free(z);
	free(back);
	free(d);
}

static void t_gzfile(void)
{
	char path[] = "/tmp/zlibcheck-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp");
	close(fd);
	uint8_t *d = make_data(300000, 2);
	gzFile f = gzopen(path, "wb6");
	CHECK(f != NULL, "gzopen w");
	CHECK(gzprintf(f, "line %d %s\n", 42, "savanna") > 0, "gzprintf");
	CHECK(gzwrite(f, d, 300000) == 300000, "gzwrite");
	CHECK(gzclose(f) == Z_OK, "gzclose w");
	f = gzopen(path, "rb");
	CHECK(f != NULL, "gzopen r");
	char line[64];
	CHECK(gzgets(f, line, sizeof line) && strcmp(line, "line 42 savanna\n") == 0, "gzgets");
	uint8_t *back = malloc(300001);
	CHECK(gzread(f, back, 300001) == 300000 && memcmp(back, d, 300000) == 0, "gzread");
	CHECK(gzeof(f), "gzeof");
	CHECK(gzclose(f) == Z_OK, "gzclose r");
	unlink(path);
	free(back);
	free(d);
}

/* A child forked after the drop-in started Go must still compress (through
 * the system zlib) and must not crash on a stream its parent started. */
static void t_fork(void)
{
	uint8_t *d = make_data(100000, 0);
	z_stream s;
	memset(&s, 0, sizeof s);
	uint8_t out[200000];
	CHECK(deflateInit2(&s, 1, Z_DEFLATED, 31, 8, 0) == Z_OK, "init");
	s.next_in = d;
	s.avail_in = 50000;
	s.next_out = out;
	s.avail_out = sizeof out;
	CHECK(deflate(&s, Z_SYNC_FLUSH) == Z_OK, "parent deflate");
	fflush(stdout);
	pid_t pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		char why[200];
		int rc = roundtrip(&linked, &oracle, d, 100000, 1, 31, 0, Z_SYNC_FLUSH, 30000, 4096, why, sizeof why);
		if (rc != 0) {
			printf("child: %s\n", why);
			exit(2);
		}
		s.avail_in = 50000;
		rc = deflate(&s, Z_FINISH);
		if (rc != Z_STREAM_END && !(dropin_active && rc == Z_STREAM_ERROR)) {
			printf("child: inherited stream deflate = %d\n", rc);
			exit(3);
		}
		deflateEnd(&s);
		exit(0);
	}
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	s.avail_in = 50000;
	CHECK(deflate(&s, Z_FINISH) == Z_STREAM_END, "parent finish");
	struct buf back = {0};
	int rc = inflate_all(&oracle, out, s.total_out, 31, 1 << 22, 1 << 22, &back);
	CHECK(rc == Z_STREAM_END && back.n == 100000 && memcmp(back.p, d, 100000) == 0, "parent inflate");
	buf_free(&back);
	deflateEnd(&s);
	free(d);
}

int main(int argc, char **argv)
{
	quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	const char *path = getenv("SAVANNA_SYSTEM_LIBZ");
	if (!path || !*path)
		path = SYSTEM_LIBZ;
	int flags = RTLD_NOW | RTLD_LOCAL;
#if !defined(__SANITIZE_ADDRESS__)
	flags |= RTLD_DEEPBIND;
#endif
	void *lib = dlopen(path, flags);
	if (!lib) {
		printf("FAIL setup: oracle %s: %s\n", path, dlerror());
		return 2;
	}
#define ORACLE(f) *(void **)&oracle.f = dlsym(lib, #f)
	ORACLE(deflateInit2_);
	ORACLE(deflate);
	ORACLE(deflateEnd);
	ORACLE(inflateInit2_);
	ORACLE(inflate);
	ORACLE(inflateEnd);
	ORACLE(inflateSetDictionary);
	ORACLE(inflateGetHeader);
	size_t (*stats)(char *, size_t) = (size_t (*)(char *, size_t))dlsym(RTLD_DEFAULT, "savanna_zlib_stats");
	dropin_active = stats != NULL;
	printf("zlibcheck: zlib %s, drop-in %s\n", zlibVersion(), dropin_active ? "loaded" : "absent");
	run("init_errors", t_init_errors);
	run("flush_modes", t_flush_modes);
	run("levels_strategies", t_levels_strategies);
	run("inflate_oracle_output", t_inflate_oracle_output);
	run("buf_error", t_buf_error);
	run("bound", t_bound);
	run("dictionary", t_dictionary);
	run("reset_reuse", t_reset_reuse);
	run("gzip_header", t_gzip_header);
	run("params", t_params);
	run("copy", t_copy);
	run("corrupt", t_corrupt);
	run("checksums_compress", t_checksums_compress);
	run("gzfile", t_gzfile);
	run("fork", t_fork);
	printf("zlibcheck: %d passed, %d failed\n", passes, failures);
	if (stats) {
		char line[16384];
		stats(line, sizeof line);
		printf("stats: %s", line);
	}
	return failures ? 1 : 0;
}
