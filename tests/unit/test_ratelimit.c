// SPDX-License-Identifier: MIT
/* rec_ratelimit__allow(): a message that repeats, at most one a second, with a count of the rest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/ratelimit.h"

#define MS 1000000LL
#define S 1000000000LL

/* The first passes; the next ones within the second are held, and counted in the next that passes. */
static void one_a_second_with_a_count(void **state)
{
	struct rec_ratelimit rl;
	uint64_t held = 99;

	(void)state;
	rec_ratelimit__init(&rl, S);
	assert_true(rec_ratelimit__allow(&rl, 5 * S, &held));
	assert_int_equal(held, 0);
	for (int i = 1; i < 50; i++)
		assert_false(rec_ratelimit__allow(&rl, 5 * S + i * 20 * MS, &held));
	assert_true(rec_ratelimit__allow(&rl, 6 * S, &held));
	assert_int_equal(held, 49);
	assert_false(rec_ratelimit__allow(&rl, 6 * S + 1, &held));
	assert_true(rec_ratelimit__allow(&rl, 7 * S + 1, &held));
	assert_int_equal(held, 1);
}

/* After a quiet time, the next one passes at once and has nothing held. */
static void a_quiet_time_passes_at_once(void **state)
{
	struct rec_ratelimit rl;
	uint64_t held;

	(void)state;
	rec_ratelimit__init(&rl, S);
	assert_true(rec_ratelimit__allow(&rl, 0, &held));
	assert_true(rec_ratelimit__allow(&rl, 10 * S, &held));
	assert_int_equal(held, 0);
}

/* flush says how many were held since the last one that passed, once. */
static void flush_tells_what_was_held_once(void **state)
{
	struct rec_ratelimit rl;
	uint64_t held;

	(void)state;
	rec_ratelimit__init(&rl, S);
	assert_int_equal(rec_ratelimit__flush(&rl), 0);
	assert_true(rec_ratelimit__allow(&rl, S, &held));
	assert_false(rec_ratelimit__allow(&rl, S + MS, &held));
	assert_false(rec_ratelimit__allow(&rl, S + 2 * MS, &held));
	assert_int_equal(rec_ratelimit__flush(&rl), 2);
	assert_int_equal(rec_ratelimit__flush(&rl), 0);
	/* The held ones told, the next within the second is still held. */
	assert_false(rec_ratelimit__allow(&rl, S + 3 * MS, &held));
	assert_true(rec_ratelimit__allow(&rl, 2 * S, &held));
	assert_int_equal(held, 1);
}

/* An interval of 0 lets every message through. */
static void no_interval_lets_all_through(void **state)
{
	struct rec_ratelimit rl;
	uint64_t held;

	(void)state;
	rec_ratelimit__init(&rl, 0);
	for (int i = 0; i < 5; i++)
		assert_true(rec_ratelimit__allow(&rl, S, &held));
	assert_int_equal(held, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_a_second_with_a_count),
		cmocka_unit_test(a_quiet_time_passes_at_once),
		cmocka_unit_test(flush_tells_what_was_held_once),
		cmocka_unit_test(no_interval_lets_all_through),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
