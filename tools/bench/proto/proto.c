/* SPDX-License-Identifier: MIT */
/*
 * proto: the target of the fast-path prototypes (tools/bench/proto/run.sh). One
 * thread emits ITERS 3-field events, each a compact 72-byte record with a
 * timestamp, written where the design under test puts it, and prints the
 * median-free mean "ns_per_event X" of the timed loop (after a warm-up). Modes:
 *
 *	proto stamp rdtsc|clock ITERS   the record written into a thread-local buffer
 *	                                that never leaves the process: the in-process
 *	                                floor, with an rdtsc or a vDSO clock_gettime stamp
 *	proto batch BYTES ITERS         a thread-local buffer of BYTES (MADV_WIPEONFORK);
 *	                                when full, the USDT probe proto:batch(addr, len)
 *	                                hands it to BPF (proto.bpf.c), then it starts over
 *	proto memfd BYTES ITERS         a ring of BYTES in a memfd, one commit word per
 *	                                record; the loader takes the memfd with
 *	                                pidfd_getfd and reads it: no kernel entry at all
 *
 * Prints "pid N" (and "memfd FD BYTES"), waits for SIGUSR1, runs, prints the result.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

__attribute__((weak, visibility("hidden"),
	       section(".probes"))) volatile unsigned short proto_batch_semaphore;

/* A USDT site on a 1-byte nop (never optimized), as include/recorder.h makes them. */
/* Laid out by hand: the note. */
/* clang-format off */
#define BATCH_PROBE(addr, len)                                                                    \
	__asm__ __volatile__("990: nop\n\t"                                                       \
			     ".pushsection .note.stapsdt,\"?\",\"note\"\n\t"                      \
			     ".balign 4\n\t"                                                      \
			     ".4byte 992f-991f, 994f-993f, 3\n"                                   \
			     "991:\n\t.asciz \"stapsdt\"\n"                                       \
			     "992:\n\t.balign 4\n"                                                \
			     "993:\n\t.8byte 990b\n\t"                                            \
			     ".8byte 0\n\t"                                                       \
			     ".8byte proto_batch_semaphore\n\t"                                   \
			     ".asciz \"proto\"\n\t"                                               \
			     ".asciz \"batch\"\n\t"                                               \
			     ".asciz \"8@%0 8@%1\"\n"                                             \
			     "994:\n\t.balign 4\n\t"                                              \
			     ".popsection\n" ::"r"((uint64_t)(addr)),                             \
			     "r"((uint64_t)(len)))
/* clang-format on */

struct rec {
	uint16_t size;
	uint8_t kind;
	uint8_t nf;
	uint32_t pad;
	uint64_t tsc;
	uint64_t meta;
	uint64_t types;
	uint64_t key;
	uint64_t span;
	uint64_t v[3];
};

struct tbuf {
	uint32_t len, cap;
	unsigned char data[];
};

/* The memfd ring: head (producer) and tail (consumer) on their own lines, then data. */
struct mring {
	uint64_t head;
	uint64_t pad1[7];
	uint64_t tail;
	uint64_t pad2[7];
	uint64_t dropped;
	uint64_t pad3[7];
	unsigned char data[];
};

static __thread struct tbuf *tb;
static size_t bytes = 4096;
static int use_clock;
static struct mring *mr;
static size_t mr_size;
static volatile uint64_t sink;

static inline uint64_t stamp(void)
{
	struct timespec ts;

	if (!use_clock)
		return __rdtsc();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void fill(struct rec *r, uint64_t i)
{
	r->size = sizeof(*r);
	r->kind = 1;
	r->nf = 3;
	r->pad = 0;
	r->tsc = stamp();
	r->meta = 0x1000;
	r->types = 0x532;
	r->key = 7;
	r->span = 0x2000;
	r->v[0] = i;
	r->v[1] = 0x3000;
	r->v[2] = 1;
}

static struct tbuf *new_tbuf(void)
{
	struct tbuf *b =
		mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (b == MAP_FAILED) {
		perror("proto: mmap");
		exit(1);
	}
	madvise(b, bytes, MADV_WIPEONFORK);
	b->cap = (uint32_t)(bytes - sizeof(*b));
	return b;
}

__attribute__((noinline)) static void flush(struct tbuf *b)
{
	if (proto_batch_semaphore)
		BATCH_PROBE(b->data, b->len);
	b->len = 0;
}

/* The stamp floor: the same record into a buffer nobody reads, wrapping. */
static inline void emit_stamp(uint64_t i)
{
	struct tbuf *b = tb;

	if (__builtin_expect(!b, 0))
		tb = b = new_tbuf();
	if (b->len + sizeof(struct rec) > b->cap)
		b->len = 0;
	fill((struct rec *)(b->data + b->len), i);
	b->len += sizeof(struct rec);
}

static inline void emit_batch(uint64_t i)
{
	struct tbuf *b = tb;

	if (__builtin_expect(!b, 0))
		tb = b = new_tbuf();
	if (b->len + sizeof(struct rec) > b->cap)
		flush(b);
	fill((struct rec *)(b->data + b->len), i);
	b->len += sizeof(struct rec);
}

/* One record into the memfd ring; a full ring drops it (counted), never waits. */
static inline void emit_memfd(uint64_t i)
{
	uint64_t head = mr->head, tail = __atomic_load_n(&mr->tail, __ATOMIC_ACQUIRE);
	size_t cap = mr_size - sizeof(*mr);
	struct rec *r;

	if (head - tail + sizeof(*r) > cap) {
		mr->dropped++;
		return;
	}
	r = (struct rec *)(mr->data + (head % cap));
	fill(r, i);
	/* The record's size is its commit word: written last, released. */
	__atomic_store_n(&mr->head, head + sizeof(*r), __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	const char *mode;
	uint64_t iters;
	sigset_t go;
	int sig;

	if (argc != 4) {
		fprintf(stderr, "usage: proto stamp rdtsc|clock ITERS | batch BYTES ITERS | "
				"memfd BYTES ITERS\n");
		return 2;
	}
	mode = argv[1];
	iters = strtoull(argv[3], NULL, 10);
	if (!strcmp(mode, "stamp"))
		use_clock = !strcmp(argv[2], "clock");
	else
		bytes = strtoull(argv[2], NULL, 10);
	sigemptyset(&go);
	sigaddset(&go, SIGUSR1);
	sigprocmask(SIG_BLOCK, &go, NULL);
	printf("pid %d\n", (int)getpid());
	if (!strcmp(mode, "memfd")) {
		int fd = memfd_create("proto-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);

		mr_size = bytes;
		if (fd < 0 || ftruncate(fd, (off_t)mr_size) ||
		    (mr = mmap(NULL, mr_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
			    MAP_FAILED) {
			perror("proto: memfd");
			return 1;
		}
		printf("memfd %d %zu\n", fd, mr_size);
	}
	fflush(stdout);
	sigwait(&go, &sig);

	for (uint64_t i = 0; i < iters / 10; i++) {
		if (!strcmp(mode, "batch"))
			emit_batch(i);
		else if (!strcmp(mode, "memfd"))
			emit_memfd(i);
		else
			emit_stamp(i);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!strcmp(mode, "batch"))
		for (uint64_t i = 0; i < iters; i++)
			emit_batch(i);
	else if (!strcmp(mode, "memfd"))
		for (uint64_t i = 0; i < iters; i++)
			emit_memfd(i);
	else
		for (uint64_t i = 0; i < iters; i++)
			emit_stamp(i);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	sink = tb ? tb->len : 0;
	printf("ns_per_event %.2f iters %llu dropped %llu\n",
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)iters,
	       (unsigned long long)iters, (unsigned long long)(mr ? mr->dropped : 0));
	fflush(stdout);
	return 0;
}
