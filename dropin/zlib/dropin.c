/* The drop-in's process state: loading the system zlib (constructor), the
 * Go shim (lazily), fork handling and the statistics. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dropin.h"

#ifndef SV_SYSTEM_LIBZ
#define SV_SYSTEM_LIBZ "/lib/x86_64-linux-gnu/libz.so.1"
#endif

struct sv_state sv_state;

static pthread_mutex_t sv_load_mu = PTHREAD_MUTEX_INITIALIZER;

/* The drop-in's variables as the process had them when it started.
 * Servers clear their workers' environment (nginx keeps only TZ unless
 * told with `env`), so the values are kept from the constructor, and put
 * back before the Go library starts (Go reads its environment once, at
 * load). */
static const char *const sv_env_names[] = {"SAVANNA_QAT", "SAVANNA_ZLIB_SW", "SAVANNA_ZLIBGO",
					   "SAVANNA_ZLIB_STATS", "SAVANNA_ZLIB_SHIM", "SAVANNA_ZLIB_STRICT_WINDOW",
					   "SAVANNA_ZLIB_POLICY"};
#define SV_NENV (sizeof sv_env_names / sizeof sv_env_names[0])
static char *sv_env_values[SV_NENV];

static void sv_env_keep(void)
{
	for (size_t i = 0; i < SV_NENV; i++) {
		const char *v = getenv(sv_env_names[i]);
		sv_env_values[i] = v ? strdup(v) : NULL;
	}
}

/* sv_env is a kept value, or the environment's when it set one later. */
static const char *sv_env(const char *name)
{
	const char *v = getenv(name);
	if (v)
		return v;
	for (size_t i = 0; i < SV_NENV; i++)
		if (strcmp(sv_env_names[i], name) == 0)
			return sv_env_values[i];
	return NULL;
}

static void sv_die(const char *what, const char *detail)
{
	fprintf(stderr, "savanna zlib drop-in: %s: %s\n", what, detail ? detail : "");
	abort();
}

static void *sv_sym(void *lib, const char *lib_name, const char *name)
{
	void *p = dlsym(lib, name);
	if (!p)
		sv_die(lib_name, dlerror());
	return p;
}

/* A missing symbol would otherwise jump to address 0; this names it. */
static void sv_missing(void)
{
	sv_die("a zlib function was called that the system zlib does not have",
	       "rebuild the drop-in against this machine's zlib (dropin/build)");
}

/* The system zlib is opened by absolute path and RTLD_LOCAL, so that its
 * symbols do not join the global scope, and RTLD_DEEPBIND, so that its
 * own internal calls (deflateInit2_ -> deflateReset, deflate -> crc32)
 * bind inside it instead of looping back to the drop-in's exports.
 * AddressSanitizer refuses RTLD_DEEPBIND; without it those internal calls
 * come back through the drop-in, which forwards them again (a stream the
 * system zlib made is never the shim's), so the result is the same. */
static void sv_load_system(void)
{
	const char *path = getenv("SAVANNA_SYSTEM_LIBZ");
	if (!path || !*path)
		path = SV_SYSTEM_LIBZ;
	int flags = RTLD_NOW | RTLD_LOCAL;
#if !defined(__SANITIZE_ADDRESS__)
	flags |= RTLD_DEEPBIND;
#endif
	void *lib = dlopen(path, flags);
	if (!lib)
		sv_die("cannot load the system zlib (SAVANNA_SYSTEM_LIBZ)", dlerror());
	if (dlsym(lib, "savanna_zlib_stats"))
		sv_die("SAVANNA_SYSTEM_LIBZ names the drop-in itself", path);
	for (const struct sv_slot *s = sv_forward_slots; s->name; s++) {
		void *p = dlsym(lib, s->name);
		*s->ptr = p ? p : (void *)sv_missing;
	}
	struct sv_sys *y = &sv_state.sys;
#define SYS(f) *(void **)&y->f = sv_sym(lib, path, #f)
	SYS(deflateInit2_);
	SYS(deflate);
	SYS(deflateEnd);
	SYS(deflateReset);
	SYS(deflateResetKeep);
	SYS(deflateParams);
	SYS(deflateSetDictionary);
	SYS(deflateGetDictionary);
	SYS(deflateBound);
	SYS(deflateCopy);
	SYS(deflatePending);
	SYS(deflatePrime);
	SYS(deflateTune);
	SYS(deflateSetHeader);
	SYS(crc32);
	SYS(adler32);
	SYS(zError);
#undef SYS
}

/* The Go library sits beside the drop-in unless SAVANNA_ZLIBGO names it. */
static int sv_go_path(char *buf, size_t len)
{
	const char *env = sv_env("SAVANNA_ZLIBGO");
	if (env && *env)
		return snprintf(buf, len, "%s", env) < (int)len ? 0 : -1;
	Dl_info info;
	if (!dladdr((void *)sv_go_path, &info) || !info.dli_fname)
		return -1;
	const char *slash = strrchr(info.dli_fname, '/');
	int dir = slash ? (int)(slash - info.dli_fname) : 1;
	const char *base = slash ? info.dli_fname : ".";
	return snprintf(buf, len, "%.*s/libsavanna_zlibgo.so", dir, base) < (int)len ? 0 : -1;
}

static void sv_load_go_locked(void)
{
	char path[4096];
	if (sv_go_path(path, sizeof path) != 0) {
		fprintf(stderr, "savanna zlib drop-in: cannot locate libsavanna_zlibgo.so; using the system zlib\n");
		return;
	}
	for (size_t i = 0; i < SV_NENV; i++)
		if (sv_env_values[i] && !getenv(sv_env_names[i]))
			setenv(sv_env_names[i], sv_env_values[i], 0);
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "savanna zlib drop-in: %s; using the system zlib\n", dlerror());
		return;
	}
	/* Go's runtime started in dlopen: from here a fork's child must not
	 * use it, loaded symbols or not. */
	SV_COUNT(go_loads);
	struct sv_go *g = &sv_state.go;
	const char *names[] = {"savanna_zlibgo_deflate_init", "savanna_zlibgo_deflate",
			       "savanna_zlibgo_deflate_reset", "savanna_zlibgo_deflate_end",
			       "savanna_zlibgo_deflate_bound", "savanna_zlibgo_stats"};
	void **slots[] = {(void **)&g->init, (void **)&g->deflate, (void **)&g->reset,
			  (void **)&g->end, (void **)&g->bound, (void **)&g->stats};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		*slots[i] = dlsym(lib, names[i]);
		if (!*slots[i]) {
			fprintf(stderr, "savanna zlib drop-in: %s lacks %s; using the system zlib\n", path, names[i]);
			return;
		}
	}
	__atomic_store_n(&sv_state.go_ok, 1, __ATOMIC_RELEASE);
}

int sv_go_ready(enum sv_reason *reason)
{
	if (sv_state.disabled) {
		*reason = SV_DISABLED;
		return 0;
	}
	if (__atomic_load_n(&sv_state.go_unusable, __ATOMIC_ACQUIRE)) {
		*reason = SV_FORKED;
		return 0;
	}
	if (__atomic_load_n(&sv_state.go_ok, __ATOMIC_ACQUIRE))
		return 1;
	pthread_mutex_lock(&sv_load_mu);
	if (!sv_state.go_tried) {
		sv_state.go_tried = 1;
		sv_load_go_locked();
	}
	pthread_mutex_unlock(&sv_load_mu);
	if (sv_state.go_ok)
		return 1;
	*reason = SV_NO_GO;
	return 0;
}

/* A child forked after Go started has the parent's Go heap but none of its
 * threads: Go cannot run there (it hangs in runtime.stoplockedm). The
 * child keeps the system zlib; streams it inherited are refused or moved. */
static void sv_atfork_child(void)
{
	if (sv_state.c.go_loads)
		sv_state.go_unusable = 1;
	/* The mutex may have been held by a thread that is not in the child. */
	pthread_mutex_init(&sv_load_mu, NULL);
}

static const char *const sv_reason_names[SV_NREASONS] = {
	"disabled", "no_go_library", "forked_after_go", "window_bits",
	"init_failed", "dictionary", "gzip_header", "prime"};
static const char *const sv_refusal_names[SV_NREFUSALS] = {
	"dictionary_after_data", "gzip_header_after_data", "prime_after_data",
	"copy_after_data", "orphan_after_fork"};

static uint64_t sv_load(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

/* savanna_zlib_stats writes the counters as one line of JSON into buf
 * (NUL-terminated when len > 0) and returns the length the whole line
 * needs, as snprintf does. The Go shim's own statistics are included
 * under "shim" when it runs in this process. */
SV_EXPORT size_t savanna_zlib_stats(char *buf, size_t len)
{
	struct sv_counters *c = &sv_state.c;
	size_t n = 0;
	char tmp[1];
	if (!buf || len == 0) {
		buf = tmp;
		len = 1;
	}
#define OUT(...)                                                                      \
	do {                                                                          \
		int k = snprintf(n < len ? buf + n : tmp, n < len ? len - n : 1, __VA_ARGS__); \
		if (k > 0)                                                            \
			n += (size_t)k;                                               \
	} while (0)
	OUT("{\"pid\":%d,\"streams_shim\":%" PRIu64 ",\"streams_system\":{", (int)getpid(), sv_load(&c->streams_shim));
	for (int i = 0; i < SV_NREASONS; i++)
		OUT("%s\"%s\":%" PRIu64, i ? "," : "", sv_reason_names[i], sv_load(&c->streams_system[i]));
	OUT("},\"refused\":{");
	for (int i = 0; i < SV_NREFUSALS; i++)
		OUT("%s\"%s\":%" PRIu64, i ? "," : "", sv_refusal_names[i], sv_load(&c->refused[i]));
	OUT("},\"init_errors\":%" PRIu64 ",\"shim_calls\":%" PRIu64 ",\"shim_bytes_in\":%" PRIu64
	    ",\"shim_bytes_out\":%" PRIu64 ",\"flushes_mapped\":%" PRIu64 ",\"params_kept\":%" PRIu64
	    ",\"tune_ignored\":%" PRIu64 ",\"go_loaded\":%s,\"go_unusable\":%s",
	    sv_load(&c->init_errors), sv_load(&c->shim_calls), sv_load(&c->shim_bytes_in),
	    sv_load(&c->shim_bytes_out), sv_load(&c->flushes_mapped), sv_load(&c->params_kept),
	    sv_load(&c->tune_ignored), sv_state.c.go_loads ? "true" : "false",
	    sv_state.go_unusable ? "true" : "false");
	if (sv_state.go_ok && !sv_state.go_unusable) {
		char shim[8192];
		size_t k = sv_state.go.stats(shim, sizeof shim);
		if (k > 0 && k < sizeof shim)
			OUT(",\"shim\":%s", shim);
	}
	OUT("}\n");
#undef OUT
	return n;
}

/* At exit, with SAVANNA_ZLIB_STATS set, a process that opened a deflate
 * stream writes its counters: to stderr for "1" or "stderr", else
 * appended as one line to the file it names (one write, O_APPEND, so the
 * lines of several worker processes do not interleave). */
static void sv_exit_stats(void)
{
	const char *where = sv_env("SAVANNA_ZLIB_STATS");
	if (!where || !*where || strcmp(where, "0") == 0)
		return;
	struct sv_counters *c = &sv_state.c;
	uint64_t streams = sv_load(&c->streams_shim) + sv_load(&c->init_errors);
	for (int i = 0; i < SV_NREASONS; i++)
		streams += sv_load(&c->streams_system[i]);
	if (streams == 0)
		return;
	char line[16384];
	size_t n = savanna_zlib_stats(line, sizeof line);
	if (n >= sizeof line)
		n = sizeof line - 1;
	int fd = 2, own = 0;
	if (strcmp(where, "1") != 0 && strcmp(where, "stderr") != 0) {
		fd = open(where, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			fprintf(stderr, "savanna zlib drop-in: SAVANNA_ZLIB_STATS %s: %s\n", where, strerror(errno));
			return;
		}
		own = 1;
	}
	if (write(fd, line, n) < 0 && !own)
		return;
	if (own)
		close(fd);
}

/* Priority 101: before other libraries' constructors, which may call
 * zlib already. */
__attribute__((constructor(101))) static void sv_init(void)
{
	sv_load_system();
	sv_env_keep();
	const char *off = getenv("SAVANNA_ZLIB_SHIM");
	sv_state.disabled = off && strcmp(off, "0") == 0;
	const char *strict = getenv("SAVANNA_ZLIB_STRICT_WINDOW");
	sv_state.strict_window = strict && strcmp(strict, "1") == 0;
	pthread_atfork(NULL, NULL, sv_atfork_child);
	atexit(sv_exit_stats);
}
