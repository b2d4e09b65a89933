/* Savanna's libz.so.1 drop-in: shared declarations.
 *
 * The drop-in serves deflate streams through Savanna's zlib shim (a Go
 * c-shared library, dropin/zlibgo, loaded lazily) and forwards every other
 * symbol, and every stream it cannot or may not serve, to the system zlib
 * (docs/zlib-dropin.md). */
#ifndef SAVANNA_DROPIN_H
#define SAVANNA_DROPIN_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#define SV_EXPORT __attribute__((visibility("default")))

/* One forwarded symbol: its name in the system zlib and the slot its jump
 * stub reads. */
struct sv_slot {
	const char *name;
	void **ptr;
};
extern const struct sv_slot sv_forward_slots[];

/* SV_FORWARD(sym) defines the exported function sym as one indirect jump
 * through sv_fwd_sym, filled by the constructor from the system zlib. A
 * jump keeps every argument register and the stack as the caller left
 * them, so one stub serves any prototype, variadic gzprintf included, and
 * no prototype needs copying from zlib.h. x86-64 only. */
#define SV_FORWARD(sym)                                                       \
	__attribute__((visibility("hidden"))) void *sv_fwd_##sym;             \
	__asm__(".text\n\t.globl " #sym "\n\t.type " #sym ", @function\n" #sym \
		":\n\tjmp *sv_fwd_" #sym "(%rip)\n\t.size " #sym ", .-" #sym "\n");

/* The system zlib's entry points the served functions fall back to. */
struct sv_sys {
	int (*deflateInit2_)(z_streamp, int, int, int, int, int, const char *, int);
	int (*deflate)(z_streamp, int);
	int (*deflateEnd)(z_streamp);
	int (*deflateReset)(z_streamp);
	int (*deflateResetKeep)(z_streamp);
	int (*deflateParams)(z_streamp, int, int);
	int (*deflateSetDictionary)(z_streamp, const Bytef *, uInt);
	int (*deflateGetDictionary)(z_streamp, Bytef *, uInt *);
	uLong (*deflateBound)(z_streamp, uLong);
	int (*deflateCopy)(z_streamp, z_streamp);
	int (*deflatePending)(z_streamp, unsigned *, int *);
	int (*deflatePrime)(z_streamp, int, int);
	int (*deflateTune)(z_streamp, int, int, int, int);
	int (*deflateSetHeader)(z_streamp, gz_headerp);
	uLong (*crc32)(uLong, const Bytef *, uInt);
	uLong (*adler32)(uLong, const Bytef *, uInt);
	const char *(*zError)(int);
};

/* The Go shim's C ABI (dropin/zlibgo/main.go; the names there). Return
 * values are zlib's. */
struct sv_go {
	int (*init)(int level, int window_bits, int mem_level, int strategy, uint64_t *handle);
	int (*deflate)(uint64_t handle, const unsigned char *in, unsigned avail_in,
		       unsigned char *out, unsigned avail_out, int flush,
		       unsigned *consumed, unsigned *produced);
	int (*reset)(uint64_t handle);
	int (*end)(uint64_t handle);
	unsigned long (*bound)(unsigned long source_len);
	size_t (*stats)(char *buf, size_t len);
};

/* Why a deflate stream went to the system zlib (streams_system.*). */
enum sv_reason {
	SV_DISABLED,      /* SAVANNA_ZLIB_SHIM=0 */
	SV_NO_GO,         /* the Go library could not be loaded */
	SV_FORKED,        /* a child forked after its parent started Go */
	SV_WINDOW,        /* a zlib or raw window below 32 KiB (deflate.c) */
	SV_INIT_FAILED,   /* the shim refused the stream */
	SV_DICTIONARY,    /* deflateSetDictionary before any data: moved */
	SV_HEADER,        /* deflateSetHeader before any data: moved */
	SV_PRIME,         /* deflatePrime before any data: moved */
	SV_NREASONS
};

/* Calls on a shim stream that the shim cannot honour once data went
 * through it (refused.*): answered Z_STREAM_ERROR, as zlib answers calls
 * it cannot take in a stream's state. */
enum sv_refusal {
	SV_REF_DICTIONARY, /* deflateSetDictionary / GetDictionary after data */
	SV_REF_HEADER,     /* deflateSetHeader after data */
	SV_REF_PRIME,      /* deflatePrime after data */
	SV_REF_COPY,       /* deflateCopy after data */
	SV_REF_ORPHAN,     /* a stream started in a Go-initialised parent, used in the child */
	SV_NREFUSALS
};

struct sv_counters {
	uint64_t streams_shim;
	uint64_t streams_system[SV_NREASONS];
	uint64_t refused[SV_NREFUSALS];
	uint64_t init_errors;     /* deflateInit* rejected (version, parameters) */
	uint64_t shim_calls;      /* deflate() calls into the shim */
	uint64_t shim_bytes_in;
	uint64_t shim_bytes_out;
	uint64_t flushes_mapped;  /* Z_PARTIAL_FLUSH / Z_BLOCK served as Z_SYNC_FLUSH */
	uint64_t params_kept;     /* deflateParams after data: parameters kept */
	uint64_t tune_ignored;    /* deflateTune on a shim stream */
	uint64_t go_loads;        /* 1 once the Go library is loaded in this process */
};

/* Process-wide state of the drop-in. One instance (sv_state in dropin.c):
 * a C library has nowhere else to keep it. */
struct sv_state {
	struct sv_sys sys;
	struct sv_go go;
	int go_tried, go_ok;  /* guarded by the load mutex */
	int go_unusable;      /* set in a child forked after Go started */
	int disabled;         /* SAVANNA_ZLIB_SHIM=0 */
	int strict_window;    /* SAVANNA_ZLIB_STRICT_WINDOW=1 */
	struct sv_counters c;
};
extern struct sv_state sv_state;

#define SV_COUNT(field) __atomic_fetch_add(&sv_state.c.field, 1, __ATOMIC_RELAXED)
#define SV_ADD(field, n) __atomic_fetch_add(&sv_state.c.field, (n), __ATOMIC_RELAXED)

/* sv_go_ready loads the Go library if it is not loaded yet and reports
 * whether the shim can be used in this process; reason is set when not. */
int sv_go_ready(enum sv_reason *reason);

#endif
