/* ringcheck FD SLOT BYTES: the app's side of the shared-memory layout,
 * from C, through a memfd the stack side (a Go spec,
 * internal/stackproc) made: checks the header, then at once produces
 * BYTES bytes of a pattern into slot SLOT's send ring and consumes BYTES
 * bytes from its receive ring, checking the stack side's pattern
 * (byte i is (i * 7 + 3) mod 251 one way, (i * 13 + 5) mod 251 the
 * other). Exit 0 and "ringcheck: ok" when all agree; bounded: gives up
 * after 20 s. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "svshm.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: ringcheck FD SLOT BYTES\n");
		return 2;
	}
	int fd = atoi(argv[1]), slot = atoi(argv[2]);
	uint64_t bytes = strtoull(argv[3], NULL, 10);
	uint8_t *h = mmap(NULL, SV_HEADER, PROT_READ, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		perror("ringcheck: mmap header");
		return 1;
	}
	if (LOAD((uint32_t *)(h + SV_H_MAGIC)) != SV_MAGIC || *(uint32_t *)(h + SV_H_VERSION) != SV_VERSION) {
		fprintf(stderr, "ringcheck: bad magic or version\n");
		return 1;
	}
	uint64_t size = *(uint64_t *)(h + SV_H_SIZE);
	uint8_t *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("ringcheck: mmap");
		return 1;
	}
	uint32_t ring = *(uint32_t *)(m + SV_H_RING), nslots = *(uint32_t *)(m + SV_H_NSLOTS);
	uint64_t off = *(uint64_t *)(m + SV_H_SLOT_OFF), stride = *(uint64_t *)(m + SV_H_STRIDE);
	if ((uint32_t)slot >= nslots || (ring & (ring - 1)) || stride != SV_SLOT_HDR + 2ull * ring) {
		fprintf(stderr, "ringcheck: geometry: slots %u ring %u stride %llu\n", nslots, ring, (unsigned long long)stride);
		return 1;
	}
	printf("ringcheck: slots=%u ring=%u stride=%llu slot_off=%llu\n", nslots, ring, (unsigned long long)stride,
	       (unsigned long long)off);
	uint8_t *s = m + off + (uint64_t)slot * stride, *rxd = s + SV_SLOT_HDR, *txd = rxd + ring;
	uint64_t *rxh = (uint64_t *)(s + SV_S_RX_HEAD), *rxt = (uint64_t *)(s + SV_S_RX_TAIL);
	uint64_t *txh = (uint64_t *)(s + SV_S_TX_HEAD), *txt = (uint64_t *)(s + SV_S_TX_TAIL);
	uint64_t sent = 0, got = 0;
	time_t end = time(NULL) + 20;
	while (sent < bytes || got < bytes) {
		int moved = 0;
		uint64_t t = LOAD(txt), hd = LOAD(txh);
		while (sent < bytes && t - hd < ring) { /* produce */
			txd[t & (ring - 1)] = (uint8_t)((sent * 7 + 3) % 251);
			t++, sent++, moved = 1;
		}
		STORE(txt, t);
		uint64_t rh = LOAD(rxh), rt = LOAD(rxt);
		while (rh < rt) { /* consume */
			uint8_t want = (uint8_t)((got * 13 + 5) % 251);
			if (rxd[rh & (ring - 1)] != want) {
				fprintf(stderr, "ringcheck: byte %llu is %u, want %u\n", (unsigned long long)got, rxd[rh & (ring - 1)], want);
				return 1;
			}
			rh++, got++, moved = 1;
		}
		STORE(rxh, rh);
		if (!moved) {
			if (time(NULL) > end) {
				fprintf(stderr, "ringcheck: stuck at sent %llu got %llu\n", (unsigned long long)sent, (unsigned long long)got);
				return 1;
			}
			sched_yield();
		}
	}
	printf("ringcheck: ok sent=%llu got=%llu\n", (unsigned long long)sent, (unsigned long long)got);
	return 0;
}
