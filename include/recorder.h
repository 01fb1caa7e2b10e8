/* SPDX-License-Identifier: MIT */
/*
 * recorder.h: header-only instrumentation for the recorder flight recorder.
 *
 * Include it from C11 or C++17. It depends on libc only. Every probe site is a
 * USDT probe (provider "recorder") guarded by its semaphore: while nothing is
 * attached, a site costs one load and one branch, and no argument is built.
 * The probe ABI is described in docs/probe-abi.md.
 *
 *	struct rec_recorder *r = rec_recorder_new();
 *	struct rec_recording *rec = rec_recording_new(r, 100);
 *	struct rec_span span;
 *	rec_recording_span(&span, rec, "actor[0]");
 *	rec_span_enter(&span);
 *	REC_INFO("handled request", REC_I64(id, 7), REC_BOOL(ok, true));
 *	rec_span_exit(&span);
 */
#ifndef RECORDER_H
#define RECORDER_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Version of the probe ABI in docs/probe-abi.md. */
#define REC_ABI_VERSION 1

/* Event and span levels. The bare tokens TRACE..ERROR name them in macros. */
#define REC__LEVEL_TRACE 0
#define REC__LEVEL_DEBUG 1
#define REC__LEVEL_INFO 2
#define REC__LEVEL_WARN 3
#define REC__LEVEL_ERROR 4
/* A callsite whose events carry their level (REC_EVENT_LEVEL), in types bits 32..35. */
#define REC__LEVEL_RUNTIME 7
#define REC__TYPES_LEVEL_SHIFT 32
/* A level as a value, for REC_EVENT_LEVEL: REC_LEVEL(WARN). */
#define REC_LEVEL(lvl) REC__LEVEL_##lvl

/* Field types, one 4-bit code per field in the event probe's types argument. */
#define REC__TYPE_STR 1
#define REC__TYPE_I64 2
#define REC__TYPE_U64 3
#define REC__TYPE_F64 4
#define REC__TYPE_BOOL 5
/*
 * A string literal: it lives in the image's read-only data, so the probe passes
 * only its address and the tracer reads the bytes once per address, later.
 * __builtin_constant_p() is true for a string literal (and a null pointer
 * constant) only, never for a buffer or a pointer variable; those are copied
 * when the event fires.
 */
#define REC__TYPE_STR_LIT 6
#define REC__IS_LITERAL(v) __builtin_constant_p(v)

#define REC_MAX_FIELDS 8
#define REC_SUBJECT_MAX 64
/* Longest formatted message of the printf-style event forms, NUL included. */
#define REC_MESSAGE_MAX 256
/* Set in struct rec_recording while it is live; cleared before it is freed. */
#define REC_RECORDING_MAGIC 0x31474e4944524352ULL /* "RCRDING1" */

/* The target of events and spans; define it before including to name a module. */
#ifndef REC_TARGET
#define REC_TARGET __FILE__
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct rec_recorder {
	uint64_t key;
};

/* Layout read by the BPF side (docs/probe-abi.md): keep it stable. */
struct rec_recording {
	uint64_t magic;
	uint64_t key;
	uint64_t recorder_key;
	uint64_t cap;
	char subject[REC_SUBJECT_MAX];
};

/* Layout read by the BPF side (docs/probe-abi.md): keep it stable. */
struct rec_span {
	const char *meta;	/* callsite metadata blob */
	uint64_t recording_key; /* inherited from the parent at creation, 0 = none */
	struct rec_recording *recording;
	struct rec_span *parent; /* contextual parent at creation */
	struct rec_span *prev;	 /* the thread's current span when this one was entered */
	uint64_t entered;
};

/*
 * The semaphores the kernel bumps while a probe is attached: one per linked image
 * (weak, hidden), since each image's notes name its own. The thread's current span
 * and the key counter are shared by the whole process (weak, default visibility).
 */
#define REC__SEMA(name) recorder_##name##_semaphore
#define REC__DECLARE_SEMA(name)                                                                    \
	__attribute__((weak, visibility("hidden"), section(".probes"))) volatile unsigned short    \
	REC__SEMA(name)
REC__DECLARE_SEMA(event);
REC__DECLARE_SEMA(span_enter);
REC__DECLARE_SEMA(span_exit);
REC__DECLARE_SEMA(recording_new);
REC__DECLARE_SEMA(recording_span);
REC__DECLARE_SEMA(recording_free);
REC__DECLARE_SEMA(recorder_new);
REC__DECLARE_SEMA(recorder_free);
REC__DECLARE_SEMA(batch);
REC__DECLARE_SEMA(trigger);

/*
 * The "attached" probe's semaphore, and beside it the word that recorder-attach
 * itself writes once it has attached every probe of this image (docs/probe-abi.md,
 * "The attach block"). A semaphore says only that some tool attached a probe
 * (bpftrace, perf, or recorder-attach); the word says that recorder-attach did,
 * and which event path it takes. marker tells recorder-attach that this image
 * has the block; tracer is 0 while no recorder-attach is attached.
 */
/*
 * "DR": this image also writes its recordings' lives into its batches, and
 * its batch buffers are 64 KiB (docs/probe-abi.md, "The marker's values").
 * REC__ABI_5243 builds the header before it ("CR", 16 KiB buffers): for the
 * tests of a recorder-attach with a program built against that one.
 */
#ifdef REC__ABI_5243
#define REC__ATTACH_MARKER 0x5243
#else
#define REC__ATTACH_MARKER 0x5244
#endif
#define REC__TRACER_ON 1u    /* a recorder-attach is attached to this image */
#define REC__TRACER_BATCH 2u /* and takes the batch path */
struct rec__attach_block {
	volatile unsigned short sema;
	unsigned short marker;
	volatile uint32_t tracer;
};
__attribute__((weak, visibility("hidden"), section(".probes"), aligned(8))) struct rec__attach_block
	REC__SEMA(attached) = { 0, REC__ATTACH_MARKER, 0 };
__attribute__((weak)) __thread struct rec_span *rec__current;
__attribute__((weak)) uint64_t rec__key_counter;

#ifdef __cplusplus
}
#endif

#define REC__STR(x) #x
#define REC__XSTR(x) REC__STR(x)
#define REC__ARMED(name) __builtin_expect(REC__SEMA(name) != 0, 0)
/* The tracer word of this image: what recorder-attach wrote, 0 if none is attached. */
#define REC__TRACER() (REC__SEMA(attached).tracer)
/*
 * The batch path is taken only while recorder-attach asks for it and its probe
 * is armed: a peer that arms "batch" (bpftrace on recorder:*) changes nothing.
 */
#define REC__BATCH_ON()                                                                            \
	(REC__ARMED(batch) && __builtin_expect((REC__TRACER() & REC__TRACER_BATCH) != 0, 1))

/* Laid out by hand: the note, the inline assembly of the probe sites, the callsite metadata. */
/* clang-format off */
/* The stapsdt note of the site at local label 990 (the format <sys/sdt.h> writes). */
#define REC__NOTE(name, args)                                                                     \
	".pushsection .note.stapsdt,\"?\",\"note\"\n\t"                                           \
	".balign 4\n\t"                                                                           \
	".4byte 992f-991f, 994f-993f, 3\n"                                                        \
	"991:\n\t.asciz \"stapsdt\"\n"                                                            \
	"992:\n\t.balign 4\n"                                                                     \
	"993:\n\t.8byte 990b\n\t"                                                                 \
	".8byte _.stapsdt.base\n\t"                                                               \
	".8byte " REC__XSTR(REC__SEMA(name)) "\n\t"                                               \
	".asciz \"recorder\"\n\t"                                                                 \
	".asciz \"" #name "\"\n\t"                                                                \
	".asciz \"" args "\"\n"                                                                   \
	"994:\n\t.balign 4\n\t"                                                                   \
	".popsection\n\t"                                                                         \
	".ifndef _.stapsdt.base\n\t"                                                              \
	".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n\t"                 \
	".weak _.stapsdt.base\n\t"                                                                \
	".hidden _.stapsdt.base\n"                                                                \
	"_.stapsdt.base:\n\t.space 1\n\t"                                                         \
	".size _.stapsdt.base, 1\n\t"                                                             \
	".popsection\n\t"                                                                         \
	".endif\n"

/*
 * A USDT site the kernel never optimizes: a 1-byte nop, as <sys/sdt.h> emits.
 * Kernel 6.18 turns a uprobe on a 5-byte nop into a call into a per-process
 * [uprobes-trampoline] page after its first hit, but a forked child inherits
 * the rewritten call and not the page, and dies with SIGSEGV the first time it
 * runs the site (docs/uprobe-fork.md). A 1-byte nop stays an int3 breakpoint:
 * nothing to lose across fork, and the trap runs on the kernel stack, so the
 * red zone below %rsp is never touched either. Operands are registers or
 * immediates only ("nr"), never memory.
 */
#define REC__SITE(name, args) "990:\n\tnop\n\t" REC__NOTE(name, args)

#define REC__U(x) ((uint64_t)(uintptr_t)(x))
#define REC__ARG(n) "8@%[a" #n "]"

#define REC__PROBE0(name) __asm__ __volatile__(REC__SITE(name, "")::)
#define REC__PROBE1(name, x0)                                                                     \
	__asm__ __volatile__(REC__SITE(name, REC__ARG(0))::[a0] "nr"(REC__U(x0)))
#define REC__PROBE2(name, x0, x1)                                                                 \
	__asm__ __volatile__(REC__SITE(name, REC__ARG(0) " " REC__ARG(1))::[a0] "nr"(REC__U(x0)),   \
			     [a1] "nr"(REC__U(x1)))
#define REC__PROBE3(name, x0, x1, x2)                                                             \
	__asm__ __volatile__(REC__SITE(name, REC__ARG(0) " " REC__ARG(1) " " REC__ARG(2))::[a0]    \
			     "nr"(REC__U(x0)),                                                    \
			     [a1] "nr"(REC__U(x1)), [a2] "nr"(REC__U(x2)))
#define REC__PROBE4(name, x0, x1, x2, x3)                                                         \
	__asm__ __volatile__(                                                                     \
		REC__SITE(name, REC__ARG(0) " " REC__ARG(1) " " REC__ARG(2) " " REC__ARG(3))::[a0] \
		"nr"(REC__U(x0)),                                                                 \
		[a1] "nr"(REC__U(x1)), [a2] "nr"(REC__U(x2)), [a3] "nr"(REC__U(x3)))
#define REC__PROBE5(name, x0, x1, x2, x3, x4)                                                     \
	__asm__ __volatile__(REC__SITE(name, REC__ARG(0) " " REC__ARG(1) " " REC__ARG(2) " "        \
					     REC__ARG(3) " " REC__ARG(4))::[a0] "nr"(REC__U(x0)), \
			     [a1] "nr"(REC__U(x1)), [a2] "nr"(REC__U(x2)), [a3] "nr"(REC__U(x3)), \
			     [a4] "nr"(REC__U(x4)))
#define REC__PROBE12(name, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11)                     \
	__asm__ __volatile__(                                                                     \
		REC__SITE(name, REC__ARG(0) " " REC__ARG(1) " " REC__ARG(2) " " REC__ARG(3) " "     \
					REC__ARG(4) " " REC__ARG(5) " " REC__ARG(6) " " REC__ARG(7) \
					" " REC__ARG(8) " " REC__ARG(9) " " REC__ARG(10) " "       \
					REC__ARG(11))::[a0] "nr"(REC__U(x0)),                      \
		[a1] "nr"(REC__U(x1)), [a2] "nr"(REC__U(x2)), [a3] "nr"(REC__U(x3)),              \
		[a4] "nr"(x4), [a5] "nr"(x5), [a6] "nr"(x6), [a7] "nr"(x7), [a8] "nr"(x8),        \
		[a9] "nr"(x9), [a10] "nr"(x10), [a11] "nr"(x11))

/*
 * Callsite metadata: one pointer-free string literal in .rodata, fields separated
 * by NUL bytes (docs/probe-abi.md, "Callsite metadata"). Probes pass its address.
 */
#define REC__META(kind, lvl, name, msg, nfields, names)                                           \
	("RCS1\0" kind "\0" REC__XSTR(REC__LEVEL_##lvl) "\0" name "\0" REC_TARGET "\0" __FILE__    \
	 "\0" REC__XSTR(__LINE__) "\0" msg "\0" #nfields "\0" names)
#define REC__SPAN_META(lvl, name) REC__META("S", lvl, name, "", 0, "")
#define REC__EVENT_NAME "event " __FILE__ ":" REC__XSTR(__LINE__)
/* clang-format on */

/* ---- the batch path (docs/probe-abi.md, "Batches") ---- */

/*
 * While recorder-attach has armed the "batch" probe (it does unless run with
 * --per-event), events and span enters and exits are appended to a buffer of
 * the thread's, and one probe hit hands over a full buffer. Without it (a
 * detached process, bpftrace or perf alone on recorder:event), every site
 * fires its own probe as before. The layouts are bpf/recorder_abi.h's
 * struct rec_tbuf_hdr and struct rec_brec*, checked by tests/header/abi.c.
 */
#ifdef REC__ABI_5243
#define REC__TBUF_SIZE 16384
#else
#define REC__TBUF_SIZE 65536
#endif
#define REC__TBUF_HDR 64
#define REC__TBUF_DATA (REC__TBUF_SIZE - REC__TBUF_HDR)
#define REC__TBUF_MAGIC 0x3146554254434552ULL /* "RECTBUF1" */
#define REC__BATCH_FLUSH 1
#define REC__BATCH_OPEN 2
#define REC__BCLOCK_MONO 1
#define REC__BCLOCK_TSC 2
#define REC__BK_EVENT 1
#define REC__BK_ENTER 2
#define REC__BK_EXIT 3
#define REC__BK_REC_NEW 4
#define REC__BK_REC_SPAN 5
#define REC__BK_REC_FREE 6
/* A recording's record: the head, then 8 words (4 the target's, 4 the BPF side's). */
#define REC__BREC_REC 80
#define REC__STR_MAX 256
#define REC__STR_AREA 768
/* The smallest page size: a readable byte's whole page of this size is readable. */
#define REC__PAGE_MIN 4096

struct rec__tbuf {
	uint64_t magic;
	uint32_t gen;
	uint32_t len;
	uint32_t clock;
	uint32_t tid;
	uint32_t tracer; /* the tracer word it was announced to */
	uint32_t pad0;
	uint64_t pad[4];
	unsigned char data[REC__TBUF_DATA];
};

struct rec__brec {
	uint16_t kind;
	uint16_t size;
	uint16_t strbytes;
	uint8_t nvals;
	uint8_t pad;
	uint64_t time;
};

#ifdef __cplusplus
extern "C" {
#endif
/* The thread's buffer (mapped once, wiped in a forked child) and the process's clock. */
__attribute__((weak)) __thread struct rec__tbuf *rec__tbuf;
__attribute__((weak)) int rec__bclock;
#ifdef __cplusplus
}
#endif

/* REC__BCLOCK_TSC where the kernel's clocksource is the TSC, else REC__BCLOCK_MONO. */
static inline int rec__batch_clock(void)
{
	int c = __atomic_load_n(&rec__bclock, __ATOMIC_RELAXED);

	if (!c) {
		char name[16] = { 0 };
		FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource",
				"r");

		c = REC__BCLOCK_MONO;
#if defined(__x86_64__)
		if (f && fgets(name, sizeof(name), f) && strcmp(name, "tsc\n") == 0)
			c = REC__BCLOCK_TSC;
#endif
		if (f)
			fclose(f);
		__atomic_store_n(&rec__bclock, c, __ATOMIC_RELAXED);
	}
	return c;
}

#if defined(__x86_64__)
/*
 * System calls made once per thread, without libc's declarations, which strict
 * C11 and C++ builds of the header do not see.
 */
static inline long rec__syscall6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			     : "rcx", "r11", "memory");
	return ret;
}
#define REC__SYS_MMAP 9
#define REC__SYS_MUNMAP 11
#define REC__SYS_MADVISE 28
#define REC__SYS_GETTID 186
#define REC__SYS_CLOCK_GETTIME 228
#endif

static inline uint64_t rec__batch_time(const struct rec__tbuf *b)
{
	struct timespec ts;

#if defined(__x86_64__)
	if (b->clock == REC__BCLOCK_TSC)
		return __builtin_ia32_rdtsc();
#endif
#if defined(CLOCK_MONOTONIC)
	clock_gettime(CLOCK_MONOTONIC, &ts);
#elif defined(__x86_64__)
	rec__syscall6(REC__SYS_CLOCK_GETTIME, 1 /* CLOCK_MONOTONIC */, (long)&ts, 0, 0, 0, 0);
#else
	ts.tv_sec = 0;
	ts.tv_nsec = 0;
#endif
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The thread's buffer, announced to the tracer: mapped on first use, again
 * announced in a forked child (MADV_WIPEONFORK zeroes the child's copy, so a
 * child never inherits a live batch), and again to each new recorder-attach
 * (its tracer word differs from the one the buffer was announced to), which
 * then takes the records still pending in it. NULL if it cannot be had: the
 * caller fires its own probe instead.
 */
static __attribute__((noinline, cold, unused)) struct rec__tbuf *
rec__tbuf_open(const struct rec_span *chain)
{
	struct rec__tbuf *b = rec__tbuf;

#if defined(__x86_64__)
	if (!b) {
		/* PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS; MADV_WIPEONFORK */
		long p = rec__syscall6(REC__SYS_MMAP, 0, sizeof(*b), 3, 0x22, -1, 0);

		if (p < 0 && p > -4096)
			return NULL;
		if (rec__syscall6(REC__SYS_MADVISE, p, sizeof(*b), 18, 0, 0, 0)) {
			rec__syscall6(REC__SYS_MUNMAP, p, sizeof(*b), 0, 0, 0, 0);
			return NULL;
		}
		b = (struct rec__tbuf *)p;
		rec__tbuf = b;
	}
	b->tid = (uint32_t)rec__syscall6(REC__SYS_GETTID, 0, 0, 0, 0, 0, 0);
#else
	return NULL;
#endif
	/*
	 * Announced before, to another recorder-attach: its records stay, and
	 * tracer still names that one while the probe runs, so that this one's
	 * BPF side leaves them to it (it took them, or it is gone).
	 */
	if (b->magic != REC__TBUF_MAGIC) {
		b->gen = 0;
		b->len = 0;
		b->tracer = 0;
		b->clock = (uint32_t)rec__batch_clock();
		__atomic_store_n(&b->magic, REC__TBUF_MAGIC, __ATOMIC_RELEASE);
	}
	/* chain: the thread's spans before the record that needs the buffer. */
	__asm__ __volatile__("" ::: "memory");
	REC__PROBE3(batch, REC__BATCH_OPEN, b, chain);
	__asm__ __volatile__("" ::: "memory");
	b->tracer = REC__TRACER();
	return b;
}

/*
 * The thread's buffer, or NULL; chain is the thread's current span before the
 * record about to be written (the BPF side learns the thread's stack from it).
 */
static inline struct rec__tbuf *rec__tbuf_get(const struct rec_span *chain)
{
	struct rec__tbuf *b = rec__tbuf;

	if (__builtin_expect(b && b->magic == REC__TBUF_MAGIC && b->tracer == REC__TRACER(), 1))
		return b;
	return rec__tbuf_open(chain);
}

/* Hands the records over; the tracer has taken them when the probe returns. */
static __attribute__((noinline, unused)) void rec__tbuf_flush(struct rec__tbuf *b)
{
	/* The probe reads the buffer: no store may move across it. */
	__asm__ __volatile__("" ::: "memory");
	REC__PROBE2(batch, REC__BATCH_FLUSH, b);
	__asm__ __volatile__("" ::: "memory");
	/* len first: a reader that sees the new gen never sees the old len. */
	__atomic_store_n(&b->len, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&b->gen, b->gen + 1, __ATOMIC_RELEASE);
}

/* Room for size bytes at the end of b's records, flushing them if need be. */
static inline struct rec__brec *rec__tbuf_reserve(struct rec__tbuf *b, uint32_t size)
{
	if (__builtin_expect(b->len + size > REC__TBUF_DATA, 0))
		rec__tbuf_flush(b);
	return (struct rec__brec *)(void *)(b->data + b->len);
}

static inline void rec__tbuf_commit(struct rec__tbuf *b, uint32_t size)
{
	__atomic_store_n(&b->len, b->len + size, __ATOMIC_RELEASE);
}

/* Flushes this thread's pending records, if any: before a probe they must precede. */
static inline void rec__batch_sync(void)
{
	struct rec__tbuf *b = rec__tbuf;

	if (REC__BATCH_ON() && b && b->magic == REC__TBUF_MAGIC && b->len)
		rec__tbuf_flush(b);
}

/* Appends a span enter or exit (kind) with its words; 0 if there is no buffer. */
/*
 * Room for a record of kind and size bytes (no values, no strings) at the end
 * of b's records, its head written and timed now: its words follow.
 */
static inline uint64_t *rec__batch_head(struct rec__tbuf *b, int kind, uint32_t size)
{
	struct rec__brec *r = rec__tbuf_reserve(b, size);

	r->kind = (uint16_t)kind;
	r->size = (uint16_t)size;
	r->strbytes = 0;
	r->nvals = 0;
	r->pad = 0;
	r->time = rec__batch_time(b);
	return (uint64_t *)(void *)(r + 1);
}

static inline int rec__batch_span(struct rec__tbuf *b, int kind, uint64_t w0, uint64_t w1,
				  uint64_t w2, uint64_t w3)
{
	uint32_t size = kind == REC__BK_ENTER ? 48 : 32;
	uint64_t *w;

	if (!b)
		return 0;
	w = rec__batch_head(b, kind, size);
	w[0] = w0;
	w[1] = w1;
	if (kind == REC__BK_ENTER) {
		w[2] = w2;
		w[3] = w3;
	}
	rec__tbuf_commit(b, size);
	return 1;
}

/*
 * Appends a recording's new, span or free (kind): the recording probe's
 * arguments, and for a span the subject's REC_SUBJECT_MAX bytes; the BPF side
 * fills in the rest. Returns 0, and writes nothing, if there is no buffer.
 */
static inline int rec__batch_rec(struct rec__tbuf *b, int kind, const struct rec_recording *rec)
{
	uint32_t size = REC__BREC_REC + (kind == REC__BK_REC_SPAN ? REC_SUBJECT_MAX : 0);
	uint64_t *w;

	if (!b)
		return 0;
	w = rec__batch_head(b, kind, size);
	w[0] = rec->key;
	w[1] = rec->recorder_key;
	w[2] = rec->cap;
	w[3] = REC__U(rec);
	w[4] = w[5] = w[6] = w[7] = 0;
	if (kind == REC__BK_REC_SPAN)
		__builtin_memcpy(w + 8, rec->subject, REC_SUBJECT_MAX);
	rec__tbuf_commit(b, size);
	return 1;
}

/*
 * The string of a REC_STRN field: s, of which len bytes may be read. True if
 * there is nothing to read: s is NULL, or len is negative (as signed: a
 * failed read()'s -1), which records a NULL string.
 */
static inline int rec__strn_null(const char *s, uint64_t len)
{
	return !s || (int64_t)len < 0;
}

/*
 * Copies the string of a REC_STRN field into dst: its bytes up to the first
 * NUL, at most len of them and at most max. Reads no byte of s past the
 * len-th, nor past the one after the last it copies. Returns the bytes
 * copied; writes no NUL.
 */
static inline size_t rec__strn_copy(char *dst, const char *s, uint64_t len, size_t max)
{
	size_t n = 0;

	while (n < max && n < len && s[n]) {
		dst[n] = s[n];
		n++;
	}
	return n;
}

/*
 * Appends an event: the event probe's arguments, with each copied string
 * (REC__TYPE_STR) moved into the record as the BPF side would have read it
 * (at most REC__STR_MAX - 1 bytes, truncation and NULL marked in its slot).
 * A field whose bit is set in strn is a REC_STRN: at most lens[i] bytes of
 * it are read, whatever page they are in. Returns 0, and writes nothing, if
 * there is no buffer or a string goes on past the page of its first byte
 * (then the pending records are handed over: the caller's probe comes after
 * them).
 */
static inline int rec__batch_event(struct rec__tbuf *b, const char *meta, uint64_t types,
				   uint64_t key, const struct rec_span *span, int nf,
				   const uint64_t *v, unsigned int strn, const uint64_t *lens)
{
	uint32_t nstr = 0, size, strbytes = 0;
	struct rec__brec *r;
	uint64_t *w;
	char *area;
	int i;

	if (!b)
		return 0;
	for (i = 0; i < nf; i++)
		if (((types >> (4 * i)) & 0xf) == REC__TYPE_STR)
			nstr++;
	size = (uint32_t)(sizeof(*r) + 40 + 8 * nf);
	/* Room for the longest strings: what is unused goes back at commit. */
	r = rec__tbuf_reserve(b, size + (nstr ? REC__STR_AREA : 0));
	w = (uint64_t *)(void *)(r + 1);
	area = (char *)(w + 5 + nf);
	for (i = 0; i < nf; i++) {
		const char *s;
		size_t n = 0, room;
		uint64_t st = 0;

		w[5 + i] = v[i];
		if (((types >> (4 * i)) & 0xf) != REC__TYPE_STR)
			continue;
		s = (const char *)(uintptr_t)v[i];
		if (!s) {
			w[5 + i] = (uint64_t)3 << 32; /* REC_STR_NULL */
			continue;
		}
		if (strbytes > REC__STR_AREA - REC__STR_MAX) {
			w[5 + i] = (uint64_t)4 << 32; /* REC_STR_NOSPACE */
			continue;
		}
		if ((strn >> i) & 1) {
			/* Its len bytes are the program's to vouch for: no page limit. */
			if (rec__strn_null(s, lens[i])) {
				w[5 + i] = (uint64_t)3 << 32; /* REC_STR_NULL */
				continue;
			}
			n = rec__strn_copy(area + strbytes, s, lens[i], REC__STR_MAX - 1);
			if (n == REC__STR_MAX - 1 && lens[i] > n && s[n])
				st = 1; /* REC_STR_TRUNCATED */
		} else {
			/*
			 * Read only in the page of its first byte, which the
			 * caller has touched: a string that goes on into the next
			 * page may run into an unmapped one, which only the kernel
			 * can read without a crash. Such an event fires its own
			 * probe, once this thread's pending records are handed over.
			 */
			room = REC__PAGE_MIN - (REC__U(s) & (REC__PAGE_MIN - 1));
			while (n < REC__STR_MAX - 1 && n < room && s[n])
				n++;
			if (n == room) {
				if (b->len)
					rec__tbuf_flush(b);
				return 0;
			}
			if (n == REC__STR_MAX - 1 && s[n])
				st = 1; /* REC_STR_TRUNCATED */
			__builtin_memcpy(area + strbytes, s, n);
		}
		area[strbytes + n] = '\0';
		w[5 + i] = (uint64_t)strbytes | ((uint64_t)n << 16) | (st << 32);
		strbytes += (uint32_t)n + 1;
	}
	size += (strbytes + 7) & ~7u;
	r->kind = REC__BK_EVENT;
	r->size = (uint16_t)size;
	r->strbytes = (uint16_t)strbytes;
	r->nvals = (uint8_t)nf;
	r->pad = 0;
	r->time = rec__batch_time(b);
	w[0] = REC__U(meta);
	w[1] = types;
	w[2] = key;
	w[3] = REC__U(span);
	w[4] = REC__U(span->recording);
	rec__tbuf_commit(b, size);
	return 1;
}

/* ---- keys ---- */

/* A process-unique key: a counter whose high 32 bits are a random per-image salt. */
static inline uint64_t rec__next_key(void)
{
	if (__atomic_load_n(&rec__key_counter, __ATOMIC_RELAXED) == 0) {
		uint64_t expected = 0, salt;

		salt = (uint64_t)__builtin_ia32_rdtsc() ^ ((uint64_t)time(NULL) << 20) ^
		       (REC__U(&expected) >> 4) ^ REC__U(&rec__key_counter);
		salt = (salt * 0x9e3779b97f4a7c15ULL) >> 32;
		salt = (salt | 0x80000000ULL) << 32;
		__atomic_compare_exchange_n(&rec__key_counter, &expected, salt | 1, 0,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	return __atomic_fetch_add(&rec__key_counter, 1, __ATOMIC_RELAXED);
}

/* ---- recorders ---- */

/* A new recorder with a unique key, or NULL with errno set (ENOMEM). */
static inline struct rec_recorder *rec_recorder_new(void)
{
	struct rec_recorder *r = (struct rec_recorder *)__builtin_calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->key = rec__next_key();
	if (REC__ARMED(recorder_new))
		REC__PROBE1(recorder_new, r->key);
	return r;
}

/* Frees a recorder. Its recordings must be freed first. NULL is ignored. */
static inline void rec_recorder_free(struct rec_recorder *r)
{
	if (!r)
		return;
	if (REC__ARMED(recorder_free))
		REC__PROBE1(recorder_free, r->key);
	__builtin_free(r);
}

static inline uint64_t rec_recorder_key(const struct rec_recorder *r)
{
	return r->key;
}

/* ---- recordings ---- */

/*
 * A new recording of recorder r that keeps the last cap events. Returns NULL with
 * errno EINVAL when cap < 2 or r is NULL, ENOMEM when out of memory.
 */
static inline struct rec_recording *rec_recording_new(struct rec_recorder *r, size_t cap)
{
	struct rec_recording *rec;

	if (!r || cap < 2) {
		errno = EINVAL;
		return NULL;
	}
	rec = (struct rec_recording *)__builtin_calloc(1, sizeof(*rec));
	if (!rec)
		return NULL;
	rec->key = rec__next_key();
	rec->recorder_key = r->key;
	rec->cap = cap;
	__atomic_store_n(&rec->magic, REC_RECORDING_MAGIC, __ATOMIC_RELEASE);
	if (REC__ARMED(recording_new) &&
	    !rec__batch_rec(REC__BATCH_ON() ? rec__tbuf_get(rec__current) : NULL, REC__BK_REC_NEW,
			    rec)) {
		rec__batch_sync();
		REC__PROBE4(recording_new, rec->key, rec->recorder_key, rec->cap, rec);
	}
	return rec;
}

/*
 * Retires and frees a recording. Spans that outlive it record nothing more, and
 * its key is never reused. NULL is ignored.
 */
static inline void rec_recording_free(struct rec_recording *rec)
{
	if (!rec)
		return;
	/* Cleared first: another thread's events of it, read later, are of a freed one. */
	__atomic_store_n(&rec->magic, 0, __ATOMIC_RELEASE);
	if (REC__ARMED(recording_free) &&
	    !rec__batch_rec(REC__BATCH_ON() ? rec__tbuf_get(rec__current) : NULL, REC__BK_REC_FREE,
			    rec)) {
		/* Its events this thread has pending go first, while it lives. */
		rec__batch_sync();
		REC__PROBE2(recording_free, rec->key, rec);
	}
	__builtin_free(rec);
}

/*
 * Tells recorder-attach that something went wrong in rec's story, for a
 * program that knows better than any rule (a failed health check): the
 * "code" trigger rules (recorder-attach --trigger code[:GLOB]) save a
 * snapshot of rec. reason is a short NUL-terminated string (its first 127
 * bytes are read), or NULL. rec may be NULL: a trigger of no recording.
 * Costs one load and one branch while nothing is attached.
 */
static inline void rec_trigger(const struct rec_recording *rec, const char *reason)
{
	if (!REC__ARMED(trigger))
		return;
	/* This thread's pending events go first: they are the story. */
	rec__batch_sync();
	REC__PROBE3(trigger, rec ? rec->key : 0, rec, reason);
}

static inline uint64_t rec_recording_key(const struct rec_recording *rec)
{
	return rec->key;
}

/* ---- spans ---- */

/*
 * Initializes a span. Its contextual parent is the span this thread is in, and it
 * inherits that span's recording. Use REC_SPAN_INIT for the callsite metadata.
 */
static inline void rec__span_init(struct rec_span *s, const char *meta)
{
	struct rec_span *cur = rec__current;

	s->meta = meta;
	s->parent = cur;
	s->prev = NULL;
	s->entered = 0;
	s->recording_key = cur ? cur->recording_key : 0;
	s->recording = cur ? cur->recording : NULL;
}

/* REC_SPAN_INIT(&span, INFO, "name"): a span created at this callsite. */
#define REC_SPAN_INIT(span, lvl, name) rec__span_init((span), REC__SPAN_META(lvl, name))

/*
 * Initializes the recording span of rec: a root span named "recording" with the
 * fields recording, recorder and subject. It records nothing until entered.
 * The subject (truncated to REC_SUBJECT_MAX - 1 bytes) labels the recording.
 */
static inline void rec_recording_span(struct rec_span *s, struct rec_recording *rec,
				      const char *subject)
{
	size_t n = 0;

	while (subject && n < REC_SUBJECT_MAX - 1 && subject[n]) {
		rec->subject[n] = subject[n];
		n++;
	}
	rec->subject[n] = '\0';
	/* clang-format off */
	s->meta = "RCS1\0S\0" REC__XSTR(REC__LEVEL_INFO) "\0recording\0recorder\0recorder.h\0"
		  "0\0\0" "3\0recording\0recorder\0subject\0";
	/* clang-format on */
	s->parent = NULL;
	s->prev = NULL;
	s->entered = 0;
	s->recording_key = rec->key;
	s->recording = rec;
	if (REC__ARMED(recording_span) &&
	    !rec__batch_rec(REC__BATCH_ON() ? rec__tbuf_get(rec__current) : NULL, REC__BK_REC_SPAN,
			    rec)) {
		rec__batch_sync();
		REC__PROBE4(recording_span, rec->key, rec, rec->subject, s);
	}
}

/*
 * s becomes the thread's current span. GCC 12+ warns (-Wdangling-pointer)
 * where s is a local of the caller: rec_span_exit() takes it off again, which
 * GCC does not follow through the exit's branches.
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif
static inline __attribute__((always_inline)) void rec__set_current(struct rec_span *s)
{
	rec__current = s;
}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic pop
#endif

/* Enters s while a probe is armed: through the batch buffer, or its own probe. */
static inline void rec__span_enter_armed(struct rec_span *s)
{
	struct rec__tbuf *b = NULL;

	if (REC__BATCH_ON())
		b = rec__tbuf_get(rec__current);
	s->prev = rec__current;
	s->entered++;
	rec__set_current(s);
	if (!rec__batch_span(b, REC__BK_ENTER, REC__U(s), REC__U(s->meta), s->recording_key,
			     REC__U(s->prev)))
		REC__PROBE5(span_enter, s, s->meta, s->recording_key, s->recording, s->prev);
}

/*
 * Enters s on this thread: it becomes the thread's current span. Always
 * inlined: detached, a site is its semaphore's test and three stores.
 */
static inline __attribute__((always_inline)) void rec_span_enter(struct rec_span *s)
{
	if (REC__ARMED(span_enter)) {
		rec__span_enter_armed(s);
		return;
	}
	s->prev = rec__current;
	s->entered++;
	rec__set_current(s);
}

/* Takes s off this thread's chain of spans (see rec_span_exit). */
static inline __attribute__((always_inline)) void rec__span_unlink(struct rec_span *s)
{
	struct rec_span *cur = rec__current, *inner = NULL;

	/* The usual case: s is the current span. */
	if (__builtin_expect(cur == s, 1)) {
		rec__current = s->prev;
		if (s->entered)
			s->entered--;
		return;
	}
	while (cur && cur != s) {
		inner = cur;
		cur = cur->prev;
	}
	if (cur == s) {
		if (inner)
			inner->prev = s->prev;
		else
			rec__current = s->prev;
	}
	if (s->entered)
		s->entered--;
}

/* Exits s while a probe is armed: through the batch buffer, or its own probe. */
static inline void rec__span_exit_armed(struct rec_span *s)
{
	struct rec__tbuf *b = NULL;

	if (REC__BATCH_ON())
		b = rec__tbuf_get(rec__current);
	rec__span_unlink(s);
	if (!rec__batch_span(b, REC__BK_EXIT, REC__U(s), REC__U(rec__current), 0, 0))
		REC__PROBE4(span_exit, s, s->recording_key, s->recording, rec__current);
}

/*
 * Exits s on this thread. If s is not the current span but is entered further
 * out on this thread, it is unlinked; if it is not entered on this thread, the
 * thread's current span is left alone (the BPF side counts the mismatch).
 */
static inline __attribute__((always_inline)) void rec_span_exit(struct rec_span *s)
{
	if (REC__ARMED(span_exit)) {
		rec__span_exit_armed(s);
		return;
	}
	rec__span_unlink(s);
}

/* Closes s: exits it if this thread is still inside it. s may then be reused. */
static inline void rec_span_close(struct rec_span *s)
{
	while (s->entered)
		rec_span_exit(s);
}

static inline void rec__span_scope_end(struct rec_span *s)
{
	rec_span_close(s);
}

/* The current span of this thread, or NULL. */
static inline struct rec_span *rec_current_span(void)
{
	return rec__current;
}

/*
 * True once recorder-attach has attached every probe of this image: it arms the
 * "attached" probe last, after all the others.
 */
static inline int rec_is_attached(void)
{
	if (__builtin_expect(REC__SEMA(attached).sema == 0, 1))
		return 0;
	/* Fired whoever armed it: with --binary, a first probe is how a process is adopted. */
	REC__PROBE0(attached);
	return REC__TRACER() != 0;
}

/*
 * The "attached" probe's note in every image, whether or not the program calls
 * rec_is_attached(): recorder-attach finds the image's attach block through
 * it, and writes the tracer word without which the image never takes the batch
 * path. Never called.
 */
static __attribute__((used, noinline, cold)) void rec__attach_block_note(void)
{
	REC__PROBE0(attached);
}

/* ---- events ---- */

/* Field constructors: REC_I64(name, value) and so on; the name is an identifier. */
#define REC_STR(name, v) (STR, name, v)
#define REC_I64(name, v) (I64, name, v)
#define REC_U64(name, v) (U64, name, v)
#define REC_F64(name, v) (F64, name, v)
#define REC_BOOL(name, v) (BOOL, name, v)
/* Errors and debug text are strings. */
#define REC_ERR(name, v) (STR, name, v)
/*
 * A string of at most len bytes at p, which need not be NUL-terminated (a
 * key inside a protocol buffer): its bytes up to the first NUL among them, as
 * printf's "%.*s" prints. No byte past the len-th is read, on either event
 * path. Like REC_STR it is copied when the event fires, once every field's
 * expression has been evaluated (so fields that point at one buffer those
 * expressions reuse all hold its last bytes), at most 255 bytes: longer is
 * cut there and marked truncated, as a REC_STR is; one cut at len is not. A
 * NULL p, or a negative len (a failed read()'s -1), records a NULL string and
 * reads nothing. The bytes are read in the program, as memcpy would: p must
 * have len readable bytes, or a NUL before the first that is not.
 */
#define REC_STRN(name, p, len) (STRN, name, (p, len))

static inline uint64_t rec__str(const char *s)
{
	/* Fault the page in: the BPF side cannot, and a literal may not be touched yet. */
	if (s)
		(void)*(const volatile char *)s;
	return REC__U(s);
}

static inline uint64_t rec__f64(double d)
{
	uint64_t u;

	__builtin_memcpy(&u, &d, sizeof(u));
	return u;
}

/*
 * The event probe of an event with REC_STRN fields (bits of strn), on the
 * per-event path: each is copied here, when the event fires, into a
 * NUL-terminated string on this stack (256 bytes at most: one more than the
 * BPF side reads, so that it marks a longer one truncated, as a REC_STR), and
 * the probe sees a copied string (REC__TYPE_STR) like any other.
 */
static __attribute__((noinline, unused)) void
rec__event_strn(const char *meta, uint64_t types, uint64_t key, const struct rec_span *span,
		const uint64_t *v, unsigned int strn, const uint64_t *lens)
{
	char copies[REC_MAX_FIELDS][REC__STR_MAX + 1];
	uint64_t w[REC_MAX_FIELDS];
	int i;

	for (i = 0; i < REC_MAX_FIELDS; i++) {
		const char *s = (const char *)(uintptr_t)v[i];

		w[i] = v[i];
		if (!((strn >> i) & 1))
			continue;
		w[i] = 0;
		if (rec__strn_null(s, lens[i]))
			continue;
		copies[i][rec__strn_copy(copies[i], s, lens[i], REC__STR_MAX)] = '\0';
		w[i] = REC__U(copies[i]);
	}
	/* The probe reads the copies: no store may move across it. */
	__asm__ __volatile__("" ::: "memory");
	REC__PROBE12(event, meta, types, key, span, w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
	__asm__ __volatile__("" ::: "memory");
}

#define REC__CONV_STR(v, i) (REC__IS_LITERAL(v) ? REC__U(v) : rec__str(v))
/* A REC_STRN's pointer is its value; its length goes to the event's lens. */
#define REC__CONV_STRN(v, i) (rec__n[i] = (uint64_t)(REC__STRN_LEN v), REC__U(REC__STRN_PTR v))
#define REC__STRN_PTR(p, len) (p)
#define REC__STRN_LEN(p, len) (len)
#define REC__CONV_I64(v, i) ((uint64_t)(int64_t)(v))
#define REC__CONV_U64(v, i) ((uint64_t)(v))
#define REC__CONV_F64(v, i) rec__f64(v)
#define REC__CONV_BOOL(v, i) ((uint64_t) !!(v))

#define REC__F_TYPE(t, n, v) REC__TYPEOF_##t(v)
#define REC__TYPEOF_STR(v) (REC__IS_LITERAL(v) ? REC__TYPE_STR_LIT : REC__TYPE_STR)
/* On the wire (the probe, a batch) a REC_STRN is a copied string. */
#define REC__TYPEOF_STRN(v) REC__TYPE_STR
#define REC__TYPEOF_I64(v) REC__TYPE_I64
#define REC__TYPEOF_U64(v) REC__TYPE_U64
#define REC__TYPEOF_F64(v) REC__TYPE_F64
#define REC__TYPEOF_BOOL(v) REC__TYPE_BOOL
/*
 * Which fields are REC_STRN: one bit each from REC__STRN_SHIFT in the types
 * the macros build, taken off before the types go out.
 */
#define REC__STRN_SHIFT 40
#define REC__F_ISSTRN(t, n, v) REC__ISSTRN_##t
#define REC__ISSTRN_STR 0
#define REC__ISSTRN_STRN 1
#define REC__ISSTRN_I64 0
#define REC__ISSTRN_U64 0
#define REC__ISSTRN_F64 0
#define REC__ISSTRN_BOOL 0
#define REC__F_NAME(t, n, v) #n "\0"
#define REC__F_VAL(i, t, n, v) REC__CONV_##t(v, i)
#define REC__TYPE(f) REC__F_TYPE f
#define REC__ISSTRN(f) REC__F_ISSTRN f
#define REC__NAME(f) REC__F_NAME f
/* Field f's value, the i-th of its event. */
#define REC__VAL(f, i) REC__VAL_(i, REC__UNPACK f)
#define REC__VAL_(i, ...) REC__F_VAL(i, __VA_ARGS__)
#define REC__UNPACK(t, n, v) t, n, v

#define REC__NARG(...) REC__NARG_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define REC__NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, n, ...) n
#define REC__CAT(a, b) REC__CAT_(a, b)
#define REC__CAT_(a, b) a##b

#define REC__EMIT(lvl, rl, msg, nf, names, types, v0, v1, v2, v3, v4, v5, v6, v7)                  \
	do {                                                                                       \
		if (REC__ARMED(event)) {                                                           \
			struct rec_span *rec__s = rec__current;                                    \
			if (rec__s && rec__s->recording_key) {                                     \
				const char *rec__m =                                               \
					REC__META("E", lvl, REC__EVENT_NAME, msg, nf, names);      \
				const uint64_t rec__t =                                            \
					((uint64_t)(types) & ((1ULL << REC__STRN_SHIFT) - 1)) |    \
					(rl);                                                      \
				const unsigned int rec__sn =                                       \
					(unsigned int)((uint64_t)(types) >> REC__STRN_SHIFT);      \
				uint64_t rec__n[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };                   \
				uint64_t rec__v[8] = { v0, v1, v2, v3, v4, v5, v6, v7 };           \
				if (REC__BATCH_ON() &&                                             \
				    rec__batch_event(rec__tbuf_get(rec__s), rec__m, rec__t,        \
						     rec__s->recording_key, rec__s, nf, rec__v,    \
						     rec__sn, rec__sn ? rec__n : NULL))            \
					break;                                                     \
				if (rec__sn)                                                       \
					rec__event_strn(rec__m, rec__t, rec__s->recording_key,     \
							rec__s, rec__v, rec__sn, rec__n);          \
				else                                                               \
					REC__PROBE12(event, rec__m, rec__t, rec__s->recording_key, \
						     rec__s, rec__v[0], rec__v[1], rec__v[2],      \
						     rec__v[3], rec__v[4], rec__v[5], rec__v[6],   \
						     rec__v[7]);                                   \
			}                                                                          \
		}                                                                                  \
	} while (0)

/* Laid out by hand: one field a column. */
/* clang-format off */
#define REC__T(f, i)                                                                               \
	(((uint64_t)REC__TYPE(f) << (4 * (i))) |                                                   \
	 ((uint64_t)REC__ISSTRN(f) << (REC__STRN_SHIFT + (i))))
#define REC__EV1(l, r, m) REC__EMIT(l, r, m, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0)
#define REC__EV2(l, r, m, a)                                                                       \
	REC__EMIT(l, r, m, 1, REC__NAME(a), REC__T(a, 0), REC__VAL(a, 0), 0, 0, 0, 0, 0, 0, 0)
#define REC__EV3(l, r, m, a, b)                                                                    \
	REC__EMIT(l, r, m, 2, REC__NAME(a) REC__NAME(b), REC__T(a, 0) | REC__T(b, 1),              \
		  REC__VAL(a, 0), REC__VAL(b, 1), 0, 0, 0, 0, 0, 0)
#define REC__EV4(l, r, m, a, b, c)                                                                 \
	REC__EMIT(l, r, m, 3, REC__NAME(a) REC__NAME(b) REC__NAME(c),                              \
		  REC__T(a, 0) | REC__T(b, 1) | REC__T(c, 2),                                      \
		  REC__VAL(a, 0), REC__VAL(b, 1), REC__VAL(c, 2), 0, 0, 0, 0, 0)
#define REC__EV5(l, r, m, a, b, c, d)                                                              \
	REC__EMIT(l, r, m, 4, REC__NAME(a) REC__NAME(b) REC__NAME(c) REC__NAME(d),                 \
		  REC__T(a, 0) | REC__T(b, 1) | REC__T(c, 2) | REC__T(d, 3),                       \
		  REC__VAL(a, 0), REC__VAL(b, 1), REC__VAL(c, 2), REC__VAL(d, 3), 0, 0, 0, 0)
#define REC__EV6(l, r, m, a, b, c, d, e)                                                           \
	REC__EMIT(l, r, m, 5, REC__NAME(a) REC__NAME(b) REC__NAME(c) REC__NAME(d) REC__NAME(e),    \
		  REC__T(a, 0) | REC__T(b, 1) | REC__T(c, 2) | REC__T(d, 3) | REC__T(e, 4),        \
		  REC__VAL(a, 0), REC__VAL(b, 1), REC__VAL(c, 2), REC__VAL(d, 3), REC__VAL(e, 4),  \
		  0, 0, 0)
#define REC__EV7(l, r, m, a, b, c, d, e, f)                                                        \
	REC__EMIT(l, r, m, 6,                                                                      \
		  REC__NAME(a) REC__NAME(b) REC__NAME(c) REC__NAME(d) REC__NAME(e) REC__NAME(f),   \
		  REC__T(a, 0) | REC__T(b, 1) | REC__T(c, 2) | REC__T(d, 3) | REC__T(e, 4) |       \
			  REC__T(f, 5),                                                            \
		  REC__VAL(a, 0), REC__VAL(b, 1), REC__VAL(c, 2), REC__VAL(d, 3), REC__VAL(e, 4),  \
		  REC__VAL(f, 5), 0, 0)
#define REC__EV8(l, r, m, a, b, c, d, e, f, g)                                                     \
	REC__EMIT(l, r, m, 7,                                                                      \
		  REC__NAME(a) REC__NAME(b) REC__NAME(c) REC__NAME(d) REC__NAME(e) REC__NAME(f)    \
			  REC__NAME(g),                                                            \
		  REC__T(a, 0) | REC__T(b, 1) | REC__T(c, 2) | REC__T(d, 3) | REC__T(e, 4) |       \
			  REC__T(f, 5) | REC__T(g, 6),                                             \
		  REC__VAL(a, 0), REC__VAL(b, 1), REC__VAL(c, 2), REC__VAL(d, 3), REC__VAL(e, 4),  \
		  REC__VAL(f, 5), REC__VAL(g, 6), 0)
#define REC__EV9(l, r, m, a, b, c, d, e, f, g, h)                                                  \
	REC__EMIT(l, r, m, 8,                                                                      \
		  REC__NAME(a) REC__NAME(b) REC__NAME(c) REC__NAME(d) REC__NAME(e) REC__NAME(f)    \
			  REC__NAME(g) REC__NAME(h),                                               \
		  REC__T(a, 0) | REC__T(b, 1) | REC__T(c, 2) | REC__T(d, 3) | REC__T(e, 4) |       \
			  REC__T(f, 5) | REC__T(g, 6) | REC__T(h, 7),                              \
		  REC__VAL(a, 0), REC__VAL(b, 1), REC__VAL(c, 2), REC__VAL(d, 3), REC__VAL(e, 4),  \
		  REC__VAL(f, 5), REC__VAL(g, 6), REC__VAL(h, 7))
/* clang-format on */

/*
 * REC_EVENT(INFO, "message", REC_I64(id, 7), ...): an event with a literal
 * message and up to 8 typed fields, recorded to the recording of the span this
 * thread is in. Nothing is evaluated unless a recorder is attached.
 */
#define REC_EVENT(lvl, ...) REC__CAT(REC__EV, REC__NARG(__VA_ARGS__))(lvl, 0, __VA_ARGS__)

/*
 * REC_EVENT_LEVEL(level, "message", fields...): the same, with a level known
 * only at run time: level is a value, REC_LEVEL(TRACE) .. REC_LEVEL(ERROR) (0
 * to 4; recorder-attach counts an event with another level as invalid). Still
 * one probe site, evaluated only while attached:
 *	REC_EVENT_LEVEL(status >= 500 ? REC_LEVEL(ERROR) : REC_LEVEL(INFO), "done",
 *			REC_I64(status, status));
 */
#define REC_EVENT_LEVEL(level, ...)                                                                \
	REC__CAT(REC__EV, REC__NARG(__VA_ARGS__))                                                  \
	(RUNTIME, ((uint64_t)((unsigned int)(level)&0xfu) << REC__TYPES_LEVEL_SHIFT), __VA_ARGS__)
#define REC_TRACE(...) REC_EVENT(TRACE, __VA_ARGS__)
#define REC_DEBUG(...) REC_EVENT(DEBUG, __VA_ARGS__)
#define REC_INFO(...) REC_EVENT(INFO, __VA_ARGS__)
#define REC_WARN(...) REC_EVENT(WARN, __VA_ARGS__)
#define REC_ERROR(...) REC_EVENT(ERROR, __VA_ARGS__)

/*
 * REC_EVENTF(INFO, "fmt", args...): an event whose message is formatted with
 * snprintf (at most REC_MESSAGE_MAX - 1 bytes), only while attached.
 */
#define REC_EVENTF(lvl, ...)                                                                       \
	do {                                                                                       \
		if (REC__ARMED(event)) {                                                           \
			struct rec_span *rec__s = rec__current;                                    \
			if (rec__s && rec__s->recording_key) {                                     \
				char rec__msg[REC_MESSAGE_MAX];                                    \
				const char *rec__m =                                               \
					REC__META("E", lvl, REC__EVENT_NAME, "", 1, "message\0");  \
				uint64_t rec__v[1];                                                \
				__builtin_snprintf(rec__msg, sizeof(rec__msg), __VA_ARGS__);       \
				rec__v[0] = REC__U(rec__msg);                                      \
				if (!(REC__BATCH_ON() &&                                           \
				      rec__batch_event(rec__tbuf_get(rec__s), rec__m,              \
						       (uint64_t)REC__TYPE_STR,                    \
						       rec__s->recording_key, rec__s, 1, rec__v,   \
						       0, NULL)))                                  \
					REC__PROBE12(event, rec__m, (uint64_t)REC__TYPE_STR,       \
						     rec__s->recording_key, rec__s,                \
						     REC__U(rec__msg), 0, 0, 0, 0, 0, 0, 0);       \
			}                                                                          \
		}                                                                                  \
	} while (0)
#define REC_TRACEF(...) REC_EVENTF(TRACE, __VA_ARGS__)
#define REC_DEBUGF(...) REC_EVENTF(DEBUG, __VA_ARGS__)
#define REC_INFOF(...) REC_EVENTF(INFO, __VA_ARGS__)
#define REC_WARNF(...) REC_EVENTF(WARN, __VA_ARGS__)
#define REC_ERRORF(...) REC_EVENTF(ERROR, __VA_ARGS__)

/*
 * REC_SPAN_SCOPED(var, INFO, "name"): declares span var, enters it, and exits
 * and closes it at the end of the enclosing block (cleanup attribute in C,
 * RAII in C++).
 */
#ifdef __cplusplus
namespace rec
{
class span_guard
{
      public:
	explicit span_guard(struct rec_span *s) : s_(s)
	{
		rec_span_enter(s_);
	}
	~span_guard()
	{
		rec_span_close(s_);
	}
	span_guard(const span_guard &) = delete;
	span_guard &operator=(const span_guard &) = delete;

      private:
	struct rec_span *s_;
};

class scoped_span
{
      public:
	explicit scoped_span(const char *meta)
	{
		rec__span_init(&s_, meta);
		rec_span_enter(&s_);
	}
	~scoped_span()
	{
		rec_span_close(&s_);
	}
	scoped_span(const scoped_span &) = delete;
	scoped_span &operator=(const scoped_span &) = delete;
	struct rec_span *get()
	{
		return &s_;
	}

      private:
	struct rec_span s_;
};
} // namespace rec
#define REC_SPAN_SCOPED(var, lvl, name) rec::scoped_span var(REC__SPAN_META(lvl, name))
#else
#define REC_SPAN_SCOPED(var, lvl, name)                                                            \
	__attribute__((cleanup(rec__span_scope_end))) struct rec_span var;                         \
	REC_SPAN_INIT(&var, lvl, name);                                                            \
	rec_span_enter(&var)
#endif

#endif /* RECORDER_H */
