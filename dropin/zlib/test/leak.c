/* leak [--end] [--streams N] [--bytes B]: the seed's hugepage leak as a
 * program. It opens N gzip deflate streams (default 40) and writes B bytes
 * (default 8192: above the shim's 1 KiB software threshold, so the
 * request goes to the device and the stream takes its pinned source and
 * destination buffers) to each with Z_SYNC_FLUSH, keeping every stream
 * open, as a worker does that loses its z_stream without deflateEnd.
 * With --end it calls deflateEnd on each stream once its data is written,
 * as a worker does at the end of each response. It prints one
 * line: streams opened, deflate calls that failed, bytes produced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int main(int argc, char **argv)
{
	int end = 0;
	long streams = 40, bytes = 8192;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--end") == 0) {
			end = 1;
		} else if (strcmp(argv[i], "--streams") == 0 && i + 1 < argc) {
			streams = strtol(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) {
			bytes = strtol(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "usage: leak [--end] [--streams N] [--bytes B]\n");
			return 2;
		}
	}
	if (streams <= 0 || streams > 100000 || bytes <= 0 || bytes > (64L << 20)) {
		fprintf(stderr, "leak: --streams 1..100000, --bytes 1..64 MiB\n");
		return 2;
	}
	unsigned char *in = malloc((size_t)bytes), *out = malloc((size_t)bytes * 2 + 1024);
	z_stream *zs = calloc((size_t)streams, sizeof *zs);
	if (!in || !out || !zs) {
		fprintf(stderr, "leak: out of memory\n");
		return 1;
	}
	for (long i = 0; i < bytes; i++)
		in[i] = (unsigned char)("savanna leak line "[i % 18] + (i / 18) % 7);
	long opened = 0, failed = 0, produced = 0;
	for (long s = 0; s < streams; s++) {
		if (deflateInit2(&zs[s], 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			failed++;
			continue;
		}
		opened++;
		zs[s].next_in = in;
		zs[s].avail_in = (uInt)bytes;
		zs[s].next_out = out;
		zs[s].avail_out = (uInt)(bytes * 2 + 1024);
		int rc = deflate(&zs[s], Z_SYNC_FLUSH);
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			failed++;
		produced += (long)(bytes * 2 + 1024) - (long)zs[s].avail_out;
		/* zlib answers Z_DATA_ERROR for a stream ended before Z_FINISH;
		 * only Z_STREAM_ERROR says it was not freed. */
		if (end && deflateEnd(&zs[s]) == Z_STREAM_ERROR)
			failed++;
	}
	printf("leak: %ld streams opened, %ld failed, %ld bytes out, deflateEnd %s\n", opened, failed, produced,
	       end ? "called" : "never called");
	free(zs);
	free(out);
	free(in);
	return 0;
}
