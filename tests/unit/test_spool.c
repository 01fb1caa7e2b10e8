/* SPDX-License-Identifier: MIT */
/* Unit tests of the per-recording spool (user/spool.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "spool.h"

#define MAX_SEEN 64

/* What a tail walk saw. */
struct seen {
	size_t n;
	uint64_t seqs[MAX_SEEN];
	char data[MAX_SEEN][32];
	size_t stop_after;	/* return 99 after this many visits, 0 = never */
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

/* The largest event record, and the two smaller kinds (see user/model.h). */
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
	assert_sized_tail(sp, (const uint64_t[]){ 0, 1 }, (const size_t[]){ SMALL_REC, MID_REC }, 2);

	/* Slot 0 grows from the small record to the largest. */
	assert_int_equal(push_sized(sp, 2, BIG_REC), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 1, 2 }, (const size_t[]){ MID_REC, BIG_REC }, 2);

	/* Smaller again in both slots: the records read back at their own length. */
	assert_int_equal(push_sized(sp, 3, SMALL_REC), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 2, 3 }, (const size_t[]){ BIG_REC, SMALL_REC }, 2);
	assert_int_equal(push_sized(sp, 4, MID_REC), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 3, 4 }, (const size_t[]){ SMALL_REC, MID_REC }, 2);
	assert_int_equal(push_sized(sp, 5, 0), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 4, 5 }, (const size_t[]){ MID_REC, 0 }, 2);

	/* Slot 1 grows past what it ever held, after holding an empty record. */
	assert_int_equal(push_sized(sp, 6, SMALL_REC), 0);
	assert_int_equal(push_sized(sp, 7, BIG_REC), 0);
	assert_sized_tail(sp, (const uint64_t[]){ 6, 7 }, (const size_t[]){ SMALL_REC, BIG_REC }, 2);
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
	assert_sized_tail(sp, (const uint64_t[]){ 0, 1 }, (const size_t[]){ BIG_REC, SMALL_REC }, 2);
	rec_spool__free(sp);

	/* A slot_size of 0 holds empty records only. */
	sp = rec_spool__new(1, 0);
	assert_non_null(sp);
	assert_int_equal(push_sized(sp, 0, 0), 0);
	assert_int_equal(push_sized(sp, 1, 1), -E2BIG);
	assert_sized_tail(sp, (const uint64_t[]){ 0 }, (const size_t[]){ 0 }, 1);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
