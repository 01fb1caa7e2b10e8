/* SPDX-License-Identifier: MIT */
/* Unit tests of the per-recording spool (user/base/spool.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/spool.h"

/*
 * Allocation failures on demand: this malloc and calloc replace the C
 * library's for the whole test program and fail one call when told to. Not
 * under AddressSanitizer, whose allocator must stay the only one; the tests
 * that need a failure are reported as skipped there, and wherever else this
 * malloc is not the one called (under valgrind).
 */
#ifdef __SANITIZE_ADDRESS__
#define NO_ALLOC_FAILURES 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_ALLOC_FAILURES 1
#endif
#endif

#ifndef NO_ALLOC_FAILURES
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);

/*
 * Allocations that still succeed before one fails; -1: none fails. Volatile:
 * the compiler takes malloc for its builtin, which reads no variable of ours,
 * and would drop a store made just before a call.
 */
static volatile int allocs_before_failure = -1;

static bool alloc_fails(void)
{
	if (allocs_before_failure < 0)
		return false;
	if (allocs_before_failure-- > 0)
		return false;
	return true;
}

void *malloc(size_t size)
{
	return alloc_fails() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __libc_calloc(n, size);
}

/* Lets n allocations through, fails the next one, then lets all through again. */
static void fail_alloc_after(int n)
{
	allocs_before_failure = n;
}

/* False when something else (valgrind, say) took the spool's malloc over from this file. */
static bool alloc_failures_work(void)
{
	struct rec_spool *sp;

	fail_alloc_after(0);
	sp = rec_spool__new(1, 1);
	allocs_before_failure = -1;
	rec_spool__free(sp);
	return sp == NULL;
}
#endif

#define MAX_SEEN 64

/* What a tail walk saw. */
struct seen {
	size_t n;
	uint64_t seqs[MAX_SEEN];
	char data[MAX_SEEN][32];
	size_t stop_after; /* return 99 after this many visits, 0 = never */
};

static int collect(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct seen *s = ctx;

	assert_true(s->n < MAX_SEEN);
	assert_true(len < sizeof(s->data[0]));
	s->seqs[s->n] = seq;
	memcpy(s->data[s->n], data, len);
	s->data[s->n][len] = '\0';
	s->n++;
	if (s->stop_after && s->n == s->stop_after)
		return 99;
	return 0;
}

/* Pushes "event <seq>" for seq. */
static int push_seq(struct rec_spool *sp, uint64_t seq)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "event %llu", (unsigned long long)seq);

	return rec_spool__push(sp, seq, buf, (size_t)n);
}

/* Asserts that the tail (last n) holds exactly the seqs in want, in order. */
static void assert_tail(struct rec_spool *sp, size_t n, const uint64_t *want, size_t nwant)
{
	struct seen s = { 0 };
	char buf[32];
	size_t i;

	assert_int_equal(rec_spool__tail(sp, n, collect, &s), 0);
	assert_int_equal(s.n, nwant);
	for (i = 0; i < nwant; i++) {
		assert_int_equal(s.seqs[i], want[i]);
		snprintf(buf, sizeof(buf), "event %llu", (unsigned long long)want[i]);
		assert_string_equal(s.data[i], buf);
	}
}

/* The largest event record, and the two smaller kinds (REC_EVENT_REC_MAX, user/model/rstate.h). */
#define BIG_REC 888
#define MID_REC 376
#define SMALL_REC 120

/* Byte i of the record pushed for seq: each record's bytes differ from its neighbours'. */
static unsigned char pattern(uint64_t seq, size_t i)
{
	return (unsigned char)(seq * 31 + i);
}

/* Pushes len pattern bytes for seq. */
static int push_sized(struct rec_spool *sp, uint64_t seq, size_t len)
{
	unsigned char buf[BIG_REC + 1];
	size_t i;

	assert_true(len <= sizeof(buf));
	for (i = 0; i < len; i++)
		buf[i] = pattern(seq, i);
	return rec_spool__push(sp, seq, buf, len);
}

/* What a tail walk over pattern records saw; every byte is checked on the way. */
struct sized_seen {
	size_t n;
	uint64_t seqs[MAX_SEEN];
	size_t lens[MAX_SEEN];
};

static int check_sized(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct sized_seen *s = ctx;
	const unsigned char *p = data;
	size_t i;

	/* Even an empty record comes with a pointer a visitor may memcpy from. */
	assert_non_null(data);
	for (i = 0; i < len; i++)
		assert_int_equal(p[i], pattern(seq, i));
	assert_true(s->n < MAX_SEEN);
	s->seqs[s->n] = seq;
	s->lens[s->n] = len;
	s->n++;
	return 0;
}

/* Asserts that the whole tail is the seqs in want, of the lengths in lens, bytes intact. */
static void assert_sized_tail(struct rec_spool *sp, const uint64_t *want, const size_t *lens,
			      size_t nwant)
{
	struct sized_seen s = { 0 };
	size_t i;

	assert_int_equal(rec_spool__tail(sp, 0, check_sized, &s), 0);
	assert_int_equal(s.n, nwant);
	for (i = 0; i < nwant; i++) {
		assert_int_equal(s.seqs[i], want[i]);
		assert_int_equal(s.lens[i], lens[i]);
	}
}

static void test_new_invalid(void **state)
{
	(void)state;
	errno = 0;
	assert_null(rec_spool__new(0, 16));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(rec_spool__new(SIZE_MAX / 2, 16));
	assert_int_equal(errno, ENOMEM);
	/* Slot lengths are kept in 32 bits. */
	errno = 0;
	assert_null(rec_spool__new(4, (size_t)UINT32_MAX + 1));
	assert_int_equal(errno, EINVAL);
	rec_spool__free(NULL);
}

static void test_empty(void **state)
{
	struct rec_spool *sp = rec_spool__new(4, 16);
	struct seen s = { 0 };

	(void)state;
	assert_non_null(sp);
	assert_int_equal(rec_spool__cap(sp), 4);
	assert_int_equal(rec_spool__next_seq(sp), 0);
	assert_int_equal(rec_spool__count(sp), 0);
	assert_int_equal(rec_spool__tail(sp, 0, collect, &s), 0);
	assert_int_equal(s.n, 0);
	rec_spool__free(sp);
}

static void test_capacity(void **state)
{
	struct rec_spool *sp = rec_spool__new(3, 16);
	const uint64_t want[] = { 0, 1, 2 };

	(void)state;
	assert_int_equal(push_seq(sp, 0), 0);
	assert_int_equal(push_seq(sp, 1), 0);
	assert_int_equal(rec_spool__count(sp), 2);
	assert_int_equal(push_seq(sp, 2), 0);
	assert_int_equal(rec_spool__count(sp), 3);
	assert_int_equal(rec_spool__next_seq(sp), 3);
	assert_tail(sp, 0, want, 3);
	rec_spool__free(sp);
}

/* The seed's rule: after 10 events into cap 5, the tail holds seq 5..9. */
static void test_seq_numbering(void **state)
{
	struct rec_spool *sp = rec_spool__new(5, 32);
	const uint64_t want[] = { 5, 6, 7, 8, 9 };
	uint64_t seq;

	(void)state;
	for (seq = 0; seq < 10; seq++)
		assert_int_equal(push_seq(sp, seq), 0);
	assert_int_equal(rec_spool__count(sp), 5);
	assert_int_equal(rec_spool__next_seq(sp), 10);
	assert_tail(sp, 0, want, 5);
	rec_spool__free(sp);
}

static void test_overwrite_order(void **state)
{
	struct rec_spool *sp = rec_spool__new(4, 32);
	const uint64_t want[] = { 97, 98, 99, 100 };
	uint64_t seq;

	(void)state;
	for (seq = 0; seq <= 100; seq++) {
		assert_int_equal(push_seq(sp, seq), 0);
		assert_true(rec_spool__count(sp) <= 4);
	}
	assert_int_equal(rec_spool__count(sp), 4);
	assert_tail(sp, 0, want, 4);
	rec_spool__free(sp);
}

static void test_gaps(void **state)
{
	struct rec_spool *sp = rec_spool__new(5, 32);
	const uint64_t want[] = { 2, 5 };
	const uint64_t want2[] = { 5, 8, 9 };

	(void)state;
	assert_int_equal(push_seq(sp, 0), 0);
	assert_int_equal(push_seq(sp, 2), 0);
	assert_int_equal(push_seq(sp, 5), 0);
	/* Window is [1, 6): seq 0 fell out when 5 arrived. */
	assert_int_equal(rec_spool__count(sp), 2);
	assert_int_equal(rec_spool__next_seq(sp), 6);
	assert_tail(sp, 0, want, 2);

	/* Window [5, 10): 2 drops out too, 6 and 7 were never seen. */
	assert_int_equal(push_seq(sp, 8), 0);
	assert_int_equal(push_seq(sp, 9), 0);
	assert_int_equal(rec_spool__count(sp), 3);
	assert_tail(sp, 0, want2, 3);
	rec_spool__free(sp);
}

static void test_gap_keeps_old_in_window(void **state)
{
	struct rec_spool *sp = rec_spool__new(5, 32);
	const uint64_t want[] = { 0, 2, 4 };

	(void)state;
	assert_int_equal(push_seq(sp, 0), 0);
	assert_int_equal(push_seq(sp, 2), 0);
	assert_int_equal(push_seq(sp, 4), 0);
	assert_int_equal(rec_spool__count(sp), 3);
	assert_tail(sp, 0, want, 3);
	rec_spool__free(sp);
}

static void test_jump_far_ahead(void **state)
{
	struct rec_spool *sp = rec_spool__new(4, 32);
	const uint64_t want[] = { 1000 };
	const uint64_t want2[] = { 1000, 1001 };

	(void)state;
	assert_int_equal(push_seq(sp, 0), 0);
	assert_int_equal(push_seq(sp, 1), 0);
	assert_int_equal(push_seq(sp, 2), 0);
	assert_int_equal(push_seq(sp, 1000), 0);
	assert_int_equal(rec_spool__count(sp), 1);
	assert_int_equal(rec_spool__next_seq(sp), 1001);
	assert_tail(sp, 0, want, 1);
	/* Slot 1001 % 4 == 1 still holds seq 1: it is overwritten, not "already held". */
	assert_int_equal(push_seq(sp, 1001), 0);
	assert_int_equal(rec_spool__count(sp), 2);
	assert_tail(sp, 0, want2, 2);
	assert_int_equal(push_seq(sp, 1), -ESTALE);
	rec_spool__free(sp);
}

static void test_out_of_order(void **state)
{
	struct rec_spool *sp = rec_spool__new(5, 32);
	const uint64_t want[] = { 3, 4, 5, 6, 7 };

	(void)state;
	assert_int_equal(push_seq(sp, 0), 0);
	assert_int_equal(push_seq(sp, 2), 0);
	assert_int_equal(push_seq(sp, 1), 0);
	assert_int_equal(push_seq(sp, 4), 0);
	assert_int_equal(push_seq(sp, 3), 0);
	assert_int_equal(rec_spool__next_seq(sp), 5);
	assert_int_equal(push_seq(sp, 7), 0);
	/* Window [3, 8): 6 and 5 arrive late but still in time. */
	assert_int_equal(push_seq(sp, 6), 0);
	assert_int_equal(push_seq(sp, 5), 0);
	assert_int_equal(rec_spool__count(sp), 5);
	assert_int_equal(rec_spool__next_seq(sp), 8);
	assert_tail(sp, 0, want, 5);
	rec_spool__free(sp);
}

static void test_stale(void **state)
{
	struct rec_spool *sp = rec_spool__new(5, 32);
	const uint64_t want[] = { 5, 6, 7, 8, 9 };
	uint64_t seq;

	(void)state;
	for (seq = 0; seq < 10; seq++)
		if (seq != 5 && seq != 4)
			assert_int_equal(push_seq(sp, seq), 0);
	/* Window [5, 10). */
	assert_int_equal(push_seq(sp, 4), -ESTALE);
	assert_int_equal(push_seq(sp, 0), -ESTALE);
	assert_int_equal(push_seq(sp, 5), 0);
	assert_int_equal(rec_spool__count(sp), 5);
	assert_tail(sp, 0, want, 5);
	assert_tail(sp, 2, want + 3, 2);
	rec_spool__free(sp);
}

static void test_e2big(void **state)
{
	struct rec_spool *sp = rec_spool__new(2, 4);
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(rec_spool__push(sp, 0, "12345", 5), -E2BIG);
	assert_int_equal(rec_spool__count(sp), 0);
	assert_int_equal(rec_spool__next_seq(sp), 0);
	assert_int_equal(rec_spool__push(sp, 0, "1234", 4), 0);
	assert_int_equal(rec_spool__push(sp, 1, NULL, 0), 0);
	assert_int_equal(rec_spool__tail(sp, 0, collect, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.data[0], "1234");
	assert_string_equal(s.data[1], "");
	rec_spool__free(sp);
}

static void test_eexist(void **state)
{
	struct rec_spool *sp = rec_spool__new(4, 32);

	(void)state;
	assert_int_equal(push_seq(sp, 3), 0);
	assert_int_equal(push_seq(sp, 3), -EEXIST);
	assert_int_equal(push_seq(sp, 1), 0);
	assert_int_equal(push_seq(sp, 1), -EEXIST);
	assert_int_equal(rec_spool__count(sp), 2);
	assert_int_equal(rec_spool__push(sp, UINT64_MAX, "x", 1), -EINVAL);
	rec_spool__free(sp);
}

static void test_tail_n(void **state)
{
	struct rec_spool *sp = rec_spool__new(8, 32);
	const uint64_t all[] = { 1, 3, 4, 6, 7 };

	(void)state;
	assert_int_equal(push_seq(sp, 1), 0);
	assert_int_equal(push_seq(sp, 3), 0);
	assert_int_equal(push_seq(sp, 4), 0);
	assert_int_equal(push_seq(sp, 6), 0);
	assert_int_equal(push_seq(sp, 7), 0);
	/* "Last n" counts held records, not seqs: gaps do not eat into n. */
	assert_tail(sp, 1, all + 4, 1);
	assert_tail(sp, 2, all + 3, 2);
	assert_tail(sp, 3, all + 2, 3);
	assert_tail(sp, 5, all, 5);
	assert_tail(sp, 6, all, 5);
	assert_tail(sp, 100, all, 5);
	assert_tail(sp, 0, all, 5);
	rec_spool__free(sp);
}

static void test_tail_stop(void **state)
{
	struct rec_spool *sp = rec_spool__new(8, 32);
	struct seen s = { .stop_after = 2 };
	uint64_t seq;

	(void)state;
	for (seq = 0; seq < 5; seq++)
		assert_int_equal(push_seq(sp, seq), 0);
	assert_int_equal(rec_spool__tail(sp, 0, collect, &s), 99);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.seqs[1], 1);
	rec_spool__free(sp);
}

static void test_cap_one(void **state)
{
	struct rec_spool *sp = rec_spool__new(1, 32);
	const uint64_t want[] = { 2 };

	(void)state;
	assert_int_equal(push_seq(sp, 0), 0);
	assert_int_equal(push_seq(sp, 1), 0);
	assert_int_equal(push_seq(sp, 0), -ESTALE);
	assert_int_equal(push_seq(sp, 2), 0);
	assert_int_equal(rec_spool__count(sp), 1);
	assert_tail(sp, 0, want, 1);
	rec_spool__free(sp);
}

/* A slot takes a bigger record than it held before, then smaller ones again. */
static void test_mixed_sizes(void **state)
{
	struct rec_spool *sp = rec_spool__new(2, BIG_REC);

	(void)state;
	assert_non_null(sp);
	assert_int_equal(push_sized(sp, 0, SMALL_REC), 0);
	assert_int_equal(push_sized(sp, 1, MID_REC), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 0, 1 }, (const size_t[]){ SMALL_REC, MID_REC },
			  2);

	/* Slot 0 grows from the small record to the largest. */
	assert_int_equal(push_sized(sp, 2, BIG_REC), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 1, 2 }, (const size_t[]){ MID_REC, BIG_REC }, 2);

	/* Smaller again in both slots: the records read back at their own length. */
	assert_int_equal(push_sized(sp, 3, SMALL_REC), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 2, 3 }, (const size_t[]){ BIG_REC, SMALL_REC },
			  2);
	assert_int_equal(push_sized(sp, 4, MID_REC), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 3, 4 }, (const size_t[]){ SMALL_REC, MID_REC },
			  2);
	assert_int_equal(push_sized(sp, 5, 0), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 4, 5 }, (const size_t[]){ MID_REC, 0 }, 2);

	/* Slot 1 grows past what it ever held, after holding an empty record. */
	assert_int_equal(push_sized(sp, 6, SMALL_REC), 0);
	assert_int_equal(push_sized(sp, 7, BIG_REC), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 6, 7 }, (const size_t[]){ SMALL_REC, BIG_REC },
			  2);
	assert_int_equal(rec_spool__count(sp), 2);
	assert_int_equal(rec_spool__next_seq(sp), 8);
	rec_spool__free(sp);
}

/* Lengths that creep up a byte at a time, then a jump that moves the whole window. */
static void test_growing_lengths(void **state)
{
	struct rec_spool *sp = rec_spool__new(3, BIG_REC);
	uint64_t seq;

	(void)state;
	for (seq = 0; seq <= BIG_REC; seq++)
		assert_int_equal(push_sized(sp, seq, (size_t)seq), 0);
	assert_sized_tail(sp, (const uint64_t[]){ BIG_REC - 2, BIG_REC - 1, BIG_REC },
			  (const size_t[]){ BIG_REC - 2, BIG_REC - 1, BIG_REC }, 3);

	assert_int_equal(push_sized(sp, 5000, 1), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 5000 }, (const size_t[]){ 1 }, 1);
	assert_int_equal(push_sized(sp, 5002, BIG_REC), 0);
	assert_int_equal(push_sized(sp, 5001, MID_REC), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 5000, 5001, 5002 },
			  (const size_t[]){ 1, MID_REC, BIG_REC }, 3);
	rec_spool__free(sp);
}

/* A record of exactly slot_size fits; one byte more is refused and changes nothing. */
static void test_slot_size_limit(void **state)
{
	struct rec_spool *sp = rec_spool__new(2, BIG_REC);

	(void)state;
	assert_int_equal(push_sized(sp, 0, BIG_REC), 0);
	assert_int_equal(push_sized(sp, 1, BIG_REC + 1), -E2BIG);
	assert_int_equal(push_sized(sp, 5, BIG_REC + 1), -E2BIG);
	assert_int_equal(rec_spool__count(sp), 1);
	assert_int_equal(rec_spool__next_seq(sp), 1);
	assert_sized_tail(sp, (const uint64_t[]){ 0 }, (const size_t[]){ BIG_REC }, 1);

	/* A refused duplicate, even a bigger one, leaves the held record as it was. */
	assert_int_equal(push_sized(sp, 1, SMALL_REC), 0);
	assert_int_equal(push_sized(sp, 1, BIG_REC), -EEXIST);
	assert_sized_tail(sp, (const uint64_t[]){ 0, 1 }, (const size_t[]){ BIG_REC, SMALL_REC },
			  2);
	rec_spool__free(sp);

	/* A slot_size of 0 holds empty records only. */
	sp = rec_spool__new(1, 0);
	assert_non_null(sp);
	assert_int_equal(push_sized(sp, 0, 0), 0);
	assert_int_equal(push_sized(sp, 1, 1), -E2BIG);
	assert_sized_tail(sp, (const uint64_t[]){ 0 }, (const size_t[]){ 0 }, 1);
	rec_spool__free(sp);
}

/* A big cap, as a recording may have: 2^20 records. */
#define BIG_CAP ((size_t)1 << 20)
/* "A few KB": what a spool holding a few records may cost. */
#define FEW_KB 4096

/* A spool of cap 2^20 holding 3 records costs a few KB, not 2^20 slots. */
static void test_footprint_follows_records(void **state)
{
	struct rec_spool *sp = rec_spool__new(BIG_CAP, BIG_REC);
	size_t empty;

	(void)state;
	assert_non_null(sp);
	empty = rec_spool__footprint(sp);
	assert_true(empty > 0 && empty < 256);
	assert_int_equal(push_sized(sp, 0, SMALL_REC), 0);
	assert_int_equal(push_sized(sp, 1, MID_REC), 0);
	assert_int_equal(push_sized(sp, 2, SMALL_REC), 0);
	/* The records are in it, and little else. */
	assert_true(rec_spool__footprint(sp) >= empty + 2 * SMALL_REC + MID_REC);
	assert_true(rec_spool__footprint(sp) <= FEW_KB);
	assert_sized_tail(sp, (const uint64_t[]){ 0, 1, 2 },
			  (const size_t[]){ SMALL_REC, MID_REC, SMALL_REC }, 3);
	assert_int_equal(rec_spool__cap(sp), BIG_CAP);

	/* A far jump moves the window without costing anything either. */
	assert_int_equal(push_sized(sp, 10 * (uint64_t)BIG_CAP, BIG_REC), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 10 * (uint64_t)BIG_CAP },
			  (const size_t[]){ BIG_REC }, 1);
	assert_true(rec_spool__footprint(sp) <= FEW_KB);
	rec_spool__free(sp);
}

#define MANY_SPOOLS 2000

/* 2,000 recordings of cap 2^20 with a few records each: created, filled, freed. */
static void test_many_big_spools(void **state)
{
	static struct rec_spool *spools[MANY_SPOOLS];
	size_t i, total = 0;

	(void)state;
	for (i = 0; i < MANY_SPOOLS; i++) {
		spools[i] = rec_spool__new(BIG_CAP, BIG_REC);
		assert_non_null(spools[i]);
		assert_int_equal(push_sized(spools[i], i, SMALL_REC), 0);
		assert_int_equal(push_sized(spools[i], i + 2, MID_REC), 0);
		assert_int_equal(push_sized(spools[i], i + 1, BIG_REC), 0);
		total += rec_spool__footprint(spools[i]);
	}
	assert_true(total <= MANY_SPOOLS * (size_t)FEW_KB);
	for (i = 0; i < MANY_SPOOLS; i += 111) {
		assert_int_equal(rec_spool__count(spools[i]), 3);
		assert_sized_tail(spools[i], (const uint64_t[]){ i, i + 1, i + 2 },
				  (const size_t[]){ SMALL_REC, BIG_REC, MID_REC }, 3);
	}
	for (i = 0; i < MANY_SPOOLS; i++)
		rec_spool__free(spools[i]);
}

/* What a tail walk over many pattern records saw: the seqs in order, bytes checked. */
struct long_seen {
	size_t n;
	uint64_t next; /* the seq expected next */
};

static int check_run(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct long_seen *s = ctx;
	const unsigned char *p = data;
	size_t i;

	assert_int_equal(seq, s->next);
	assert_int_equal(len, SMALL_REC + seq % 3);
	for (i = 0; i < len; i++)
		assert_int_equal(p[i], pattern(seq, i));
	s->next++;
	s->n++;
	return 0;
}

/* Asserts that the spool holds exactly the seqs [first, first + n), each of the length pushed. */
static void assert_run(struct rec_spool *sp, uint64_t first, size_t n)
{
	struct long_seen s = { .next = first };

	assert_int_equal(rec_spool__count(sp), n);
	assert_int_equal(rec_spool__tail(sp, 0, check_run, &s), 0);
	assert_int_equal(s.n, n);
}

/*
 * A spool that wrapped many times, its records arriving in reversed blocks of
 * 7, holds exactly the last cap records; once full it allocates nothing more.
 */
static void test_wrapped_keeps_last_cap(void **state)
{
	const size_t cap = 1000; /* not a power of two: the last growth stops at cap */
	const uint64_t total = 50 * 1000 + 3;
	struct rec_spool *sp = rec_spool__new(cap, BIG_REC);
	size_t full = 0;
	uint64_t block, seq;

	(void)state;
	assert_non_null(sp);
	for (block = 0; block < total; block += 7) {
		for (seq = block + 7; seq-- > block;)
			if (seq < total)
				assert_int_equal(push_sized(sp, seq, SMALL_REC + seq % 3), 0);
		if (block >= 3 * cap && !full)
			full = rec_spool__footprint(sp);
		if (full)
			assert_int_equal(rec_spool__footprint(sp), full);
	}
	assert_int_equal(rec_spool__next_seq(sp), total);
	assert_run(sp, total - cap, cap);
	/* cap slots and cap buffers of at most SMALL_REC + 2 bytes (a few grew twice). */
	assert_true(full <= 256 + cap * (24 + 2 * (SMALL_REC + 2)));
	assert_int_equal(push_sized(sp, total - cap - 1, SMALL_REC), -ESTALE);
	assert_int_equal(push_sized(sp, total - cap, SMALL_REC), -EEXIST);
	rec_spool__free(sp);
}

/* Asserts the seqs of a tail walk: held[i] is what the i-th record must be. */
struct seq_list {
	size_t n, nwant;
	const uint64_t *want;
};

static int check_list(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct seq_list *l = ctx;
	const unsigned char *p = data;
	size_t i;

	assert_true(l->n < l->nwant);
	assert_int_equal(seq, l->want[l->n]);
	assert_int_equal(len, SMALL_REC + seq % 3);
	for (i = 0; i < len; i++)
		assert_int_equal(p[i], pattern(seq, i));
	l->n++;
	return 0;
}

static void assert_list(struct rec_spool *sp, const uint64_t *want, size_t nwant)
{
	struct seq_list l = { .want = want, .nwant = nwant };

	assert_int_equal(rec_spool__count(sp), nwant);
	assert_int_equal(rec_spool__tail(sp, 0, check_list, &l), 0);
	assert_int_equal(l.n, nwant);
}

/* Pushes the pattern record of length SMALL_REC + seq % 3 for seq. */
static int push_run(struct rec_spool *sp, uint64_t seq)
{
	return push_sized(sp, seq, SMALL_REC + seq % 3);
}

#define GAP_STEP 4096
#define GAP_N (BIG_CAP / GAP_STEP)

/*
 * Growth with seqs far apart in a window of 2^20: seq cap - 1 and seq 0 first,
 * then every 4096th seq in between, alternately from either end (so that each
 * lands between records already held), then the window moves past them.
 */
static void test_growth_with_gaps(void **state)
{
	static uint64_t want[GAP_N + 2];
	const uint64_t cap = BIG_CAP;
	struct rec_spool *sp = rec_spool__new(BIG_CAP, BIG_REC);
	uint64_t i, seq;

	(void)state;
	assert_non_null(sp);
	assert_int_equal(push_run(sp, cap - 1), 0);
	assert_int_equal(push_run(sp, 0), 0);
	assert_int_equal(rec_spool__next_seq(sp), cap);
	assert_list(sp, (const uint64_t[]){ 0, cap - 1 }, 2);
	for (i = 1; i < GAP_N; i++) {
		/* 1, n - 1, 2, n - 2, ... times the step. */
		seq = (i % 2 ? (i + 1) / 2 : GAP_N - i / 2) * GAP_STEP;
		assert_int_equal(push_run(sp, seq), 0);
		assert_int_equal(push_run(sp, seq), -EEXIST);
	}
	assert_int_equal(rec_spool__next_seq(sp), cap);
	for (i = 0; i < GAP_N; i++)
		want[i] = i * GAP_STEP;
	want[GAP_N] = cap - 1;
	assert_list(sp, want, GAP_N + 1);
	/* Fewer than twice the slots held, each with one buffer of its record's size. */
	assert_true(rec_spool__footprint(sp) <= 256 + (GAP_N + 1) * (2 * 24 + SMALL_REC + 2));

	/* The window moves: seq 0 leaves at seq cap, 5 steps more at seq cap + 5 steps. */
	assert_int_equal(push_run(sp, cap), 0);
	want[GAP_N + 1] = cap;
	assert_list(sp, want + 1, GAP_N + 1);
	assert_int_equal(push_run(sp, 0), -ESTALE);
	assert_int_equal(push_run(sp, cap + 5 * GAP_STEP), 0);
	assert_int_equal(rec_spool__count(sp), GAP_N + 1 - 5 + 1);
	assert_int_equal(push_run(sp, 5 * GAP_STEP), -ESTALE);
	assert_int_equal(push_run(sp, 6 * GAP_STEP), -EEXIST);
	/* A late seq still inside the window, between the held ones. */
	assert_int_equal(push_run(sp, cap + 3), 0);
	assert_int_equal(push_run(sp, 2 * cap - 2), 0);
	/* Window [cap - 1, 2 * cap - 1). */
	assert_list(sp,
		    (const uint64_t[]){ cap - 1, cap, cap + 3, cap + 5 * GAP_STEP, 2 * cap - 2 },
		    5);
	rec_spool__free(sp);
}

/*
 * A push that fails with -ENOMEM leaves the records, the window and the count
 * as they were: when the slot array has to grow (for a new seq and for a late
 * one), when the buffer of the slot taken has to grow (also when that slot is
 * the oldest record's, which the push would have moved out of the window),
 * and when the array grew but the buffer then could not.
 */
static void test_enomem_unchanged(void **state)
{
#ifdef NO_ALLOC_FAILURES
	(void)state;
	skip();
#else
	struct rec_spool *sp;
	size_t footprint;
	uint64_t seq;

	(void)state;
	if (!alloc_failures_work())
		skip();
	sp = rec_spool__new(BIG_CAP, BIG_REC);
	assert_non_null(sp);
	/* Seqs 1..8 fill the first 8 slots. */
	for (seq = 1; seq <= 8; seq++)
		assert_int_equal(push_run(sp, seq), 0);
	footprint = rec_spool__footprint(sp);

	/* The array cannot grow: neither a new seq nor a late one goes in. */
	fail_alloc_after(0);
	assert_int_equal(push_run(sp, 9), -ENOMEM);
	fail_alloc_after(0);
	assert_int_equal(push_run(sp, 0), -ENOMEM);
	assert_int_equal(rec_spool__next_seq(sp), 9);
	assert_int_equal(rec_spool__footprint(sp), footprint);
	assert_list(sp, (const uint64_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 8);

	/* The array grows, the buffer of the slot taken cannot. */
	fail_alloc_after(1);
	assert_int_equal(push_run(sp, 0), -ENOMEM);
	assert_int_equal(rec_spool__next_seq(sp), 9);
	assert_list(sp, (const uint64_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 8);
	assert_int_equal(push_run(sp, 0), 0);
	assert_int_equal(push_run(sp, 9), 0);
	assert_list(sp, (const uint64_t[]){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, 10);
	rec_spool__free(sp);

	/* A full spool of cap 8: the next seq takes the oldest record's slot. */
	sp = rec_spool__new(8, BIG_REC);
	assert_non_null(sp);
	for (seq = 0; seq < 8; seq++)
		assert_int_equal(push_run(sp, seq), 0);
	fail_alloc_after(0);
	assert_int_equal(push_sized(sp, 8, BIG_REC), -ENOMEM);
	assert_int_equal(rec_spool__next_seq(sp), 8);
	assert_list(sp, (const uint64_t[]){ 0, 1, 2, 3, 4, 5, 6, 7 }, 8);
	assert_int_equal(push_run(sp, 8), 0);
	assert_list(sp, (const uint64_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 8);
	rec_spool__free(sp);
#endif
}

/* The window rules, one held flag per seq: what the spool must do, push by push. */
#define MODEL_SEQS 6000
#define MODEL_CAP 37

struct model {
	uint64_t next_seq;
	size_t count;
	bool held[MODEL_SEQS];
	size_t len[MODEL_SEQS];
};

static int model_push(struct model *m, uint64_t seq, size_t len)
{
	uint64_t lo = m->next_seq > MODEL_CAP ? m->next_seq - MODEL_CAP : 0, new_lo, s;

	if (seq < lo)
		return -ESTALE;
	if (m->held[seq])
		return -EEXIST;
	if (seq >= m->next_seq) {
		new_lo = seq + 1 > MODEL_CAP ? seq + 1 - MODEL_CAP : 0;
		for (s = lo; s < new_lo && s < m->next_seq; s++) {
			if (m->held[s])
				m->count--;
			m->held[s] = false;
		}
		m->next_seq = seq + 1;
	}
	m->held[seq] = true;
	m->len[seq] = len;
	m->count++;
	return 0;
}

/* Asserts that the spool's tail, last n or all, is the model's. */
static void assert_model(struct rec_spool *sp, const struct model *m, size_t n)
{
	uint64_t want[MODEL_CAP];
	size_t lens[MODEL_CAP], nwant = 0, skip;
	uint64_t s;

	for (s = 0; s < m->next_seq; s++) {
		if (!m->held[s])
			continue;
		assert_true(nwant < MODEL_CAP);
		want[nwant] = s;
		lens[nwant++] = m->len[s];
	}
	assert_int_equal(rec_spool__count(sp), m->count);
	assert_int_equal(nwant, m->count);
	assert_int_equal(rec_spool__next_seq(sp), m->next_seq);
	if (n == 0 || n >= nwant) {
		assert_sized_tail(sp, want, lens, nwant);
		return;
	}
	skip = nwant - n;
	{
		struct sized_seen seen = { 0 };
		size_t i;

		assert_int_equal(rec_spool__tail(sp, n, check_sized, &seen), 0);
		assert_int_equal(seen.n, n);
		for (i = 0; i < n; i++) {
			assert_int_equal(seen.seqs[i], want[skip + i]);
			assert_int_equal(seen.lens[i], lens[skip + i]);
		}
	}
}

/*
 * Pseudo-random pushes, mostly just behind or ahead of the newest seq, some
 * duplicates, stale seqs and jumps, checked push by push against the model.
 */
static void test_matches_model(void **state)
{
	static struct model m;
	struct rec_spool *sp = rec_spool__new(MODEL_CAP, BIG_REC);
	uint32_t x = 12345;
	int i, got, want;

	(void)state;
	assert_non_null(sp);
	memset(&m, 0, sizeof(m));
	for (i = 0; i < 20000; i++) {
		uint64_t seq;
		size_t len;
		int64_t d;

		x = x * 1103515245 + 12345;
		d = (int64_t)((x >> 8) % 60) - 45; /* -45 .. +14 around next_seq */
		if ((x >> 20) % 97 == 0)
			d = 2 * MODEL_CAP + (x >> 24) % 20;
		if ((int64_t)m.next_seq + d < 0)
			d = -(int64_t)m.next_seq;
		seq = m.next_seq + d;
		if (seq >= MODEL_SEQS)
			break;
		len = (x >> 13) % 4 == 0 ? 0 : (x >> 15) % (BIG_REC + 1);
		want = model_push(&m, seq, len);
		got = push_sized(sp, seq, len);
		assert_int_equal(got, want);
		assert_model(sp, &m, (x >> 3) % 4 ? 0 : (x >> 5) % (MODEL_CAP + 3));
	}
	assert_true(m.next_seq > MODEL_SEQS / 2);
	rec_spool__free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_invalid),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_seq_numbering),
		cmocka_unit_test(test_overwrite_order),
		cmocka_unit_test(test_gaps),
		cmocka_unit_test(test_gap_keeps_old_in_window),
		cmocka_unit_test(test_jump_far_ahead),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_e2big),
		cmocka_unit_test(test_eexist),
		cmocka_unit_test(test_tail_n),
		cmocka_unit_test(test_tail_stop),
		cmocka_unit_test(test_cap_one),
		cmocka_unit_test(test_mixed_sizes),
		cmocka_unit_test(test_growing_lengths),
		cmocka_unit_test(test_slot_size_limit),
		cmocka_unit_test(test_footprint_follows_records),
		cmocka_unit_test(test_many_big_spools),
		cmocka_unit_test(test_wrapped_keeps_last_cap),
		cmocka_unit_test(test_growth_with_gaps),
		cmocka_unit_test(test_enomem_unchanged),
		cmocka_unit_test(test_matches_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
