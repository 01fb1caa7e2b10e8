// SPDX-License-Identifier: MIT
/* TSC to CLOCK_MONOTONIC (user/wire/clock.c): the line through the first and latest points. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "wire/clock.h"

/* A point of a 2.5 GHz TSC that read 1e9 at 5 s of CLOCK_MONOTONIC. */
static struct rec_clock_point at(uint64_t ns)
{
	struct rec_clock_point p = { .tsc = 1000000000ULL + (ns - 5000000000ULL) * 5 / 2,
				     .ns = ns };
	return p;
}

static void test_one_point_is_not_enough(void **state)
{
	struct rec_clock c = { 0 };

	(void)state;
	rec_clock__add(&c, at(5000000000ULL));
	assert_false(c.ready);
	assert_int_equal(rec_clock__ns(&c, 1000000000ULL), 0);
}

static void test_points_too_close_are_not_enough(void **state)
{
	struct rec_clock c = { 0 };

	(void)state;
	rec_clock__add(&c, at(5000000000ULL));
	/* 100 us apart: 250,000 ticks, below the least span of the line. */
	rec_clock__add(&c, at(5000100000ULL));
	assert_false(c.ready);
}

static void test_the_line_converts_both_ways_of_the_latest_point(void **state)
{
	struct rec_clock c = { 0 };

	(void)state;
	rec_clock__add(&c, at(5000000000ULL));
	rec_clock__add(&c, at(6000000000ULL));
	assert_true(c.ready);
	assert_int_equal(rec_clock__ns(&c, at(5500000000ULL).tsc), 5500000000ULL);
	assert_int_equal(rec_clock__ns(&c, at(7000000000ULL).tsc), 7000000000ULL);
	assert_int_equal(rec_clock__ns(&c, at(5000000124ULL).tsc), 5000000124ULL);
}

static void test_a_point_going_backwards_is_ignored(void **state)
{
	struct rec_clock c = { 0 };
	struct rec_clock_point back = { .tsc = 10, .ns = 10 };

	(void)state;
	rec_clock__add(&c, at(5000000000ULL));
	rec_clock__add(&c, at(6000000000ULL));
	rec_clock__add(&c, back);
	assert_int_equal(c.last.ns, 6000000000ULL);
	assert_int_equal(rec_clock__ns(&c, at(6500000000ULL).tsc), 6500000000ULL);
}

static void test_a_stamp_before_the_clock_starts_is_zero(void **state)
{
	struct rec_clock c = { 0 };
	struct rec_clock_point a = { .tsc = 1000000000000ULL, .ns = 1000 };
	struct rec_clock_point b = { .tsc = 1000002500000ULL, .ns = 1001000 };

	(void)state;
	rec_clock__add(&c, a);
	rec_clock__add(&c, b);
	assert_int_equal(rec_clock__ns(&c, 1), 0);
}

static void test_read_gives_a_point_of_this_machine(void **state)
{
	struct rec_clock_point p = rec_clock__read();

	(void)state;
	assert_true(p.ns > 0);
#if defined(__x86_64__)
	assert_true(p.tsc > 0);
#endif
}

/* Event times from a hostile dump saturate instead of overflowing. */
static void test_realtime_saturates(void **state)
{
	(void)state;
	assert_int_equal(rec_clock__realtime(5, -3), 2);
	assert_int_equal(rec_clock__realtime(1000, 1700000000000000000LL), 1700000000000001000LL);
	assert_int_equal(rec_clock__realtime(INT64_MAX, 1), INT64_MAX);
	assert_int_equal(rec_clock__realtime(INT64_MAX - 1, INT64_MAX), INT64_MAX);
	assert_int_equal(rec_clock__realtime(UINT64_MAX, 0), INT64_MAX);
	assert_int_equal(rec_clock__realtime(UINT64_MAX, -1), INT64_MAX);
	assert_int_equal(rec_clock__realtime(UINT64_MAX, INT64_MIN), INT64_MAX);
	assert_int_equal(rec_clock__realtime((uint64_t)INT64_MAX + 10, -20), INT64_MAX - 10);
	assert_int_equal(rec_clock__realtime(0, INT64_MIN), INT64_MIN);
	assert_int_equal(rec_clock__realtime(1, INT64_MIN), INT64_MIN + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_point_is_not_enough),
		cmocka_unit_test(test_points_too_close_are_not_enough),
		cmocka_unit_test(test_the_line_converts_both_ways_of_the_latest_point),
		cmocka_unit_test(test_a_point_going_backwards_is_ignored),
		cmocka_unit_test(test_a_stamp_before_the_clock_starts_is_zero),
		cmocka_unit_test(test_read_gives_a_point_of_this_machine),
		cmocka_unit_test(test_realtime_saturates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
