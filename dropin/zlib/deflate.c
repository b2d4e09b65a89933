/* zlib's deflate API, served by Savanna's shim for the streams it can take
 * and forwarded to the system zlib for the others (docs/zlib-dropin.md).
 *
 * A shim stream is marked by its state pointer: strm->state points to a
 * struct sv_stream whose first field is strm (as zlib's own state's is)
 * and whose second is SV_MAGIC where zlib keeps its status (a small
 * integer), so any stream, ours or the system zlib's, can be told apart
 * by reading two fields, without touching zlib's reserved field. */
#include <stdlib.h>
#include <string.h>

#include "dropin.h"

#define SV_MAGIC 0x53564e41u /* "SVNA" */

struct sv_stream {
	z_streamp strm;
	uint32_t magic;
	int level, window_bits, mem_level, strategy;
	/* handle is the shim's stream, made by the first deflate() call: until
	 * then the stream can still move to the system zlib at no cost. */
	uint64_t handle;
	int finished;
	int last_full; /* the last deflate() filled the output: more may be pending */
};

static struct sv_stream *sv_of(z_streamp strm)
{
	if (!strm || !strm->state)
		return NULL;
	struct sv_stream *s = (struct sv_stream *)strm->state;
	return s->strm == strm && s->magic == SV_MAGIC ? s : NULL;
}

static int sv_err(z_streamp strm, int rc)
{
	if (rc < 0 && rc != Z_BUF_ERROR)
		strm->msg = (char *)sv_state.sys.zError(rc);
	return rc;
}

/* zlib's deflateInit2_ parameter rule (deflate.c, zlib 1.2.13). */
static int sv_params_ok(int level, int method, int window_bits, int mem_level, int strategy)
{
	int wrap = 1;
	if (level == Z_DEFAULT_COMPRESSION)
		level = 6;
	if (window_bits < 0) {
		wrap = 0;
		if (window_bits < -15)
			return 0;
		window_bits = -window_bits;
	} else if (window_bits > 15) {
		wrap = 2;
		window_bits -= 16;
	}
	return mem_level >= 1 && mem_level <= MAX_MEM_LEVEL && method == Z_DEFLATED &&
	       window_bits >= 8 && window_bits <= 15 && level >= 0 && level <= 9 &&
	       strategy >= 0 && strategy <= Z_FIXED && !(window_bits == 8 && wrap != 1);
}

static uLong sv_sum_init(const struct sv_stream *s)
{
	return s->window_bits > 15 ? sv_state.sys.crc32(0, Z_NULL, 0) : sv_state.sys.adler32(0, Z_NULL, 0);
}

static void sv_reset_fields(z_streamp strm, struct sv_stream *s)
{
	strm->total_in = strm->total_out = 0;
	strm->msg = Z_NULL;
	strm->data_type = Z_UNKNOWN;
	strm->adler = sv_sum_init(s);
	s->finished = 0;
	s->last_full = 0;
}

/* sv_to_system hands a shim stream with no data yet to the system zlib,
 * with the parameters it was made with. */
static int sv_to_system(z_streamp strm, struct sv_stream *s, enum sv_reason why)
{
	int level = s->level, wb = s->window_bits, ml = s->mem_level, st = s->strategy;
	if (s->handle && !sv_state.go_unusable)
		sv_state.go.end(s->handle);
	free(s);
	strm->state = Z_NULL;
	__atomic_fetch_sub(&sv_state.c.streams_shim, 1, __ATOMIC_RELAXED);
	SV_COUNT(streams_system[why]);
	return sv_state.sys.deflateInit2_(strm, level, Z_DEFLATED, wb, ml, st, ZLIB_VERSION, (int)sizeof(z_stream));
}

/* sv_usable says whether a shim stream may call into Go here; in a child
 * forked after Go started, a stream with no data yet moves to the system
 * zlib (*moved set) and one with data is refused. */
static int sv_usable(z_streamp strm, struct sv_stream *s, int *rc)
{
	if (!__atomic_load_n(&sv_state.go_unusable, __ATOMIC_ACQUIRE))
		return 1;
	if (!s->handle) {
		*rc = sv_to_system(strm, s, SV_FORKED);
		if (*rc == Z_OK)
			*rc = 1; /* moved: the caller forwards */
		return 0;
	}
	SV_COUNT(refused[SV_REF_ORPHAN]);
	*rc = sv_err(strm, Z_STREAM_ERROR);
	return 0;
}

SV_EXPORT int deflateInit2_(z_streamp strm, int level, int method, int window_bits,
			    int mem_level, int strategy, const char *version, int stream_size)
{
	if (!version || version[0] != ZLIB_VERSION[0] || stream_size != (int)sizeof(z_stream)) {
		SV_COUNT(init_errors);
		return Z_VERSION_ERROR;
	}
	if (!strm || !sv_params_ok(level, method, window_bits, mem_level, strategy)) {
		SV_COUNT(init_errors);
		return Z_STREAM_ERROR;
	}
	enum sv_reason why = SV_NREASONS;
	/* The shim's window is always 32 KiB, and its zlib header says so.
	 * A zlib or raw stream asked with a smaller window may be read by an
	 * inflater given that window, which refuses (zlib header) or
	 * misreads (raw) a 32 KiB one: those go to the system zlib. A gzip
	 * stream carries no window size and its readers (gunzip, browsers,
	 * inflateInit2 with 31 or 47) use 32 KiB, so the shim takes any
	 * gzip window: nginx shrinks windowBits for small responses. With
	 * SAVANNA_ZLIB_STRICT_WINDOW=1 small gzip windows go to the system
	 * zlib too. */
	int gzip = window_bits > 15;
	if (!(window_bits == 15 || window_bits == -15 || window_bits == 31 || (gzip && !sv_state.strict_window)))
		why = SV_WINDOW;
	if (why != SV_NREASONS || !sv_go_ready(&why)) {
		SV_COUNT(streams_system[why]);
		return sv_state.sys.deflateInit2_(strm, level, method, window_bits, mem_level, strategy, version, stream_size);
	}
	struct sv_stream *s = calloc(1, sizeof *s);
	if (!s)
		return Z_MEM_ERROR;
	s->strm = strm;
	s->magic = SV_MAGIC;
	s->level = level;
	s->window_bits = window_bits;
	s->mem_level = mem_level;
	s->strategy = strategy;
	strm->state = (struct internal_state *)s;
	sv_reset_fields(strm, s);
	SV_COUNT(streams_shim);
	return Z_OK;
}

SV_EXPORT int deflateInit_(z_streamp strm, int level, const char *version, int stream_size)
{
	return deflateInit2_(strm, level, Z_DEFLATED, MAX_WBITS, 8, Z_DEFAULT_STRATEGY, version, stream_size);
}

SV_EXPORT int deflate(z_streamp strm, int flush)
{
	struct sv_stream *s = sv_of(strm);
	if (!s)
		return sv_state.sys.deflate(strm, flush);
	if (!strm->next_out || (strm->avail_in && !strm->next_in) || flush < 0 || flush > Z_BLOCK ||
	    (s->finished && flush != Z_FINISH))
		return sv_err(strm, Z_STREAM_ERROR);
	int rc;
	if (!sv_usable(strm, s, &rc))
		return rc == 1 ? sv_state.sys.deflate(strm, flush) : rc;
	if (!s->handle) {
		rc = sv_state.go.init(s->level, s->window_bits, s->mem_level, s->strategy, &s->handle);
		if (rc != Z_OK) {
			s->handle = 0;
			rc = sv_to_system(strm, s, SV_INIT_FAILED);
			return rc == Z_OK ? sv_state.sys.deflate(strm, flush) : rc;
		}
	}
	if (flush == Z_PARTIAL_FLUSH || flush == Z_BLOCK)
		SV_COUNT(flushes_mapped);
	unsigned consumed = 0, produced = 0, avail_out = strm->avail_out;
	const Bytef *in = strm->next_in;
	rc = sv_state.go.deflate(s->handle, in, strm->avail_in, strm->next_out, avail_out, flush,
				 &consumed, &produced);
	SV_COUNT(shim_calls);
	SV_ADD(shim_bytes_in, consumed);
	SV_ADD(shim_bytes_out, produced);
	if (consumed && s->window_bits > 0) {
		/* zlib keeps the running check value in strm->adler; the shim
		 * keeps its own but does not export it. */
		strm->adler = s->window_bits > 15 ? sv_state.sys.crc32(strm->adler, in, consumed)
						  : sv_state.sys.adler32(strm->adler, in, consumed);
	}
	strm->next_in += consumed;
	strm->avail_in -= consumed;
	strm->total_in += consumed;
	strm->next_out += produced;
	strm->avail_out -= produced;
	strm->total_out += produced;
	s->last_full = produced == avail_out && avail_out > 0;
	if (rc == Z_STREAM_END)
		s->finished = 1;
	return sv_err(strm, rc);
}

SV_EXPORT int deflateEnd(z_streamp strm)
{
	struct sv_stream *s = sv_of(strm);
	if (!s)
		return sv_state.sys.deflateEnd(strm);
	int rc = Z_OK;
	if (s->handle && !sv_state.go_unusable)
		rc = sv_state.go.end(s->handle);
	free(s);
	strm->state = Z_NULL;
	return rc;
}

static int sv_reset(z_streamp strm, int (*sys)(z_streamp))
{
	struct sv_stream *s = sv_of(strm);
	if (!s)
		return sys(strm);
	int rc;
	if (sv_state.go_unusable && s->handle) {
		/* A reset starts afresh, so an inherited stream can move to the
		 * system zlib here instead of being refused. */
		s->handle = 0;
		rc = sv_to_system(strm, s, SV_FORKED);
		return rc;
	}
	if (!sv_usable(strm, s, &rc))
		return rc == 1 ? Z_OK : rc;
	if (s->handle && (rc = sv_state.go.reset(s->handle)) != Z_OK)
		return sv_err(strm, rc);
	sv_reset_fields(strm, s);
	return Z_OK;
}

SV_EXPORT int deflateReset(z_streamp strm) { return sv_reset(strm, sv_state.sys.deflateReset); }
SV_EXPORT int deflateResetKeep(z_streamp strm) { return sv_reset(strm, sv_state.sys.deflateResetKeep); }

/* Parameters change freely before data (the shim stream is made with
 * them). After data the shim keeps the stream's parameters: its output
 * stays a valid stream of the same bytes, only not at the new level. */
SV_EXPORT int deflateParams(z_streamp strm, int level, int strategy)
{
	struct sv_stream *s = sv_of(strm);
	if (!s)
		return sv_state.sys.deflateParams(strm, level, strategy);
	if (level == Z_DEFAULT_COMPRESSION)
		level = 6;
	if (level < 0 || level > 9 || strategy < 0 || strategy > Z_FIXED)
		return sv_err(strm, Z_STREAM_ERROR);
	if (!s->handle) {
		s->level = level;
		s->strategy = strategy;
		return Z_OK;
	}
	if (level != (s->level == Z_DEFAULT_COMPRESSION ? 6 : s->level) || strategy != s->strategy)
		SV_COUNT(params_kept);
	return Z_OK;
}

/* Calls the shim has no form for: before data the stream moves to the
 * system zlib, which then serves it whole; after data they are refused. */
#define SV_BEFORE_DATA(strm, s, why, refusal, call)                  \
	do {                                                           \
		if ((s)->handle) {                                     \
			SV_COUNT(refused[refusal]);                    \
			return sv_err(strm, Z_STREAM_ERROR);           \
		}                                                      \
		int rc_ = sv_to_system(strm, s, why);                  \
		return rc_ == Z_OK ? (call) : rc_;                     \
	} while (0)

SV_EXPORT int deflateSetDictionary(z_streamp strm, const Bytef *dictionary, uInt dict_length)
{
	struct sv_stream *s = sv_of(strm);
	if (!s)
		return sv_state.sys.deflateSetDictionary(strm, dictionary, dict_length);
	SV_BEFORE_DATA(strm, s, SV_DICTIONARY, SV_REF_DICTIONARY,
		       sv_state.sys.deflateSetDictionary(strm, dictionary, dict_length));
}

SV_EXPORT int deflateSetHeader(z_streamp strm, gz_headerp head)
{
	struct sv_stream *s = sv_of(strm);
	if (!s)
		return sv_state.sys.deflateSetHeader(strm, head);
	if (s->window_bits <= 15)
		return sv_err(strm, Z_STREAM_ERROR); /* zlib: only a gzip stream has one */
	SV_BEFORE_DATA(strm, s, SV_HEADER, SV_REF_HEADER, sv_state.sys.deflateSetHeader(strm, head));
}

SV_EXPORT int deflatePrime(z_streamp strm, int bits, int value)
{
	struct sv_stream *s = sv_of(strm);
	if (!s)
		return sv_state.sys.deflatePrime(strm, bits, value);
	SV_BEFORE_DATA(strm, s, SV_PRIME, SV_REF_PRIME, sv_state.sys.deflatePrime(strm, bits, value));
}

SV_EXPORT int deflateGetDictionary(z_streamp strm, Bytef *dictionary, uInt *dict_length)
{
	struct sv_stream *s = sv_of(strm);
	if (!s)
		return sv_state.sys.deflateGetDictionary(strm, dictionary, dict_length);
	if (s->handle) {
		SV_COUNT(refused[SV_REF_DICTIONARY]);
		return sv_err(strm, Z_STREAM_ERROR);
	}
	if (dict_length)
		*dict_length = 0; /* nothing seen yet: the window is empty */
	return Z_OK;
}

/* deflateTune's figures are the software matcher's knobs; the shim's
 * compressors have their own, and the output is valid either way. */
SV_EXPORT int deflateTune(z_streamp strm, int good_length, int max_lazy, int nice_length, int max_chain)
{
	struct sv_stream *s = sv_of(strm);
	if (!s)
		return sv_state.sys.deflateTune(strm, good_length, max_lazy, nice_length, max_chain);
	SV_COUNT(tune_ignored);
	return Z_OK;
}

/* The shim does not say how much output it holds; a call that filled the
 * output may have left some, so the answer is conservative: one byte
 * then, none otherwise. */
SV_EXPORT int deflatePending(z_streamp strm, unsigned *pending, int *bits)
{
	struct sv_stream *s = sv_of(strm);
	if (!s)
		return sv_state.sys.deflatePending(strm, pending, bits);
	if (pending)
		*pending = s->last_full && !s->finished ? 1 : 0;
	if (bits)
		*bits = 0;
	return Z_OK;
}

SV_EXPORT int deflateCopy(z_streamp dest, z_streamp source)
{
	struct sv_stream *s = sv_of(source);
	if (!s)
		return sv_state.sys.deflateCopy(dest, source);
	if (!dest)
		return Z_STREAM_ERROR;
	if (s->handle) {
		SV_COUNT(refused[SV_REF_COPY]);
		return sv_err(source, Z_STREAM_ERROR);
	}
	struct sv_stream *d = malloc(sizeof *d);
	if (!d)
		return Z_MEM_ERROR;
	memcpy(dest, source, sizeof *dest);
	memcpy(d, s, sizeof *d);
	d->strm = dest;
	dest->state = (struct internal_state *)d;
	SV_COUNT(streams_shim);
	return Z_OK;
}

/* The shim's worst case for one deflate(Z_FINISH) after init or reset:
 * from the Go side, which knows the request size; a formula with the
 * smallest request size (4 KiB) where Go cannot be called. */
SV_EXPORT uLong deflateBound(z_streamp strm, uLong source_len)
{
	struct sv_stream *s = sv_of(strm);
	if (!s)
		return sv_state.sys.deflateBound(strm, source_len);
	if (!sv_state.go_unusable)
		return sv_state.go.bound(source_len);
	return source_len + (source_len >> 3) + ((source_len >> 12) + 1) * 1040 + 32;
}
