// SPDX-License-Identifier: MIT
/* rec_spans (spans.h): a recording's last spans, and seen = kept + aged + lost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/spans.h"

static struct rec_kept_span span(uint64_t id)
{
	return (struct rec_kept_span){ .tid = 7, .id = id, .enter = id * 10, .exit = id * 10 + 5 };
}

static void under_the_cap_all_are_kept_in_order(void **state)
{
	struct rec_spans sp = { 0 };

	(void)state;
	for (uint64_t i = 1; i <= 3; i++) {
		struct rec_kept_span s = span(i);

		assert_int_equal(rec_spans__add(&sp, 5, &s), 0);
	}
	assert_int_equal(sp.n, 3);
	assert_int_equal(sp.seen, 3);
	assert_int_equal(sp.aged, 0);
	assert_int_equal(sp.lost, 0);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(rec_spans__at(&sp, i)->id, i + 1);
	rec_spans__free(&sp);
}

static void past_the_cap_the_oldest_go_counted(void **state)
{
	struct rec_spans sp = { 0 };

	(void)state;
	for (uint64_t i = 1; i <= 100; i++) {
		struct rec_kept_span s = span(i);

		assert_int_equal(rec_spans__add(&sp, 4, &s), 0);
	}
	assert_int_equal(sp.n, 4);
	assert_int_equal(sp.seen, 100);
	/* Pushed out by the cap: aged, not lost. */
	assert_int_equal(sp.aged, 96);
	assert_int_equal(sp.lost, 0);
	assert_int_equal(sp.seen, sp.n + sp.aged + sp.lost);
	/* The newest four, oldest first. */
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(rec_spans__at(&sp, i)->id, 97 + i);
		assert_int_equal(rec_spans__at(&sp, i)->exit, (97 + i) * 10 + 5);
	}
	rec_spans__free(&sp);
	assert_int_equal(sp.n, 0);
	assert_int_equal(sp.seen, 0);
}

static void no_cap_keeps_everything(void **state)
{
	struct rec_spans sp = { 0 };

	(void)state;
	for (uint64_t i = 1; i <= 1000; i++) {
		struct rec_kept_span s = span(i);

		assert_int_equal(rec_spans__add(&sp, 0, &s), 0);
	}
	assert_int_equal(sp.n, 1000);
	assert_int_equal(sp.aged, 0);
	assert_int_equal(rec_spans__at(&sp, 999)->id, 1000);
	rec_spans__free(&sp);
}

/*
 * The BPF count of spans a full ring refused only grows: each rise is seen and
 * lost once, apart from the spans the cap aged out.
 */
static void spans_a_full_ring_refused_are_seen_and_lost_once(void **state)
{
	struct rec_spans sp = { 0 };

	(void)state;
	for (uint64_t i = 1; i <= 3; i++) {
		struct rec_kept_span s = span(i);

		assert_int_equal(rec_spans__add(&sp, 2, &s), 0);
	}
	rec_spans__lost(&sp, 5);
	assert_int_equal(sp.seen, 8);
	assert_int_equal(sp.aged, 1);
	assert_int_equal(sp.lost, 5);
	/* Read again (a refresh, then the recording's record): not counted twice. */
	rec_spans__lost(&sp, 5);
	rec_spans__lost(&sp, 4);
	assert_int_equal(sp.seen, 8);
	rec_spans__lost(&sp, 7);
	assert_int_equal(sp.seen, 10);
	assert_int_equal(sp.aged, 1);
	assert_int_equal(sp.lost, 7);
	assert_int_equal(sp.ring_lost, 7);
	assert_int_equal(sp.seen, sp.n + sp.aged + sp.lost);
	rec_spans__free(&sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(under_the_cap_all_are_kept_in_order),
		cmocka_unit_test(past_the_cap_the_oldest_go_counted),
		cmocka_unit_test(no_cap_keeps_everything),
		cmocka_unit_test(spans_a_full_ring_refused_are_seen_and_lost_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
