// SPDX-License-Identifier: MIT
/* rec_retention__select(): which black boxes go. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "retention.h"

#define F(n, sz, t)                                                                                \
	{                                                                                          \
		.name = (n), .size = (sz), .mtime_ns = (t)                                         \
	}

/* The names marked for removal, in age order, joined by spaces. */
static const char *removed(struct rec_dump_file *v, size_t n)
{
	static char buf[256];

	buf[0] = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].remove) {
			strcat(buf, buf[0] ? " " : "");
			strcat(buf, v[i].name);
		}
	return buf;
}

static void keep_n_removes_the_oldest(void **state)
{
	struct rec_dump_file v[] = { F("c", 1, 30), F("a", 1, 10), F("d", 1, 40), F("b", 1, 20) };

	(void)state;
	assert_int_equal(rec_retention__select(v, 4, 2, 0), 2);
	assert_string_equal(removed(v, 4), "a b");
}

static void max_bytes_removes_the_oldest_until_under(void **state)
{
	struct rec_dump_file v[] = { F("a", 100, 1), F("b", 100, 2), F("c", 100, 3) };

	(void)state;
	assert_int_equal(rec_retention__select(v, 3, 0, 250), 1);
	assert_string_equal(removed(v, 3), "a");
	assert_int_equal(rec_retention__select(v, 3, 0, 100), 2);
	assert_string_equal(removed(v, 3), "a b");
}

static void both_limits_apply(void **state)
{
	struct rec_dump_file v[] = { F("a", 10, 1), F("b", 500, 2), F("c", 10, 3), F("d", 10, 4) };

	(void)state;
	/* 3 may stay, but not 520 bytes: b goes too. */
	assert_int_equal(rec_retention__select(v, 4, 3, 100), 2);
	assert_string_equal(removed(v, 4), "a b");
}

static void the_dump_just_written_stays_even_alone_over_the_limit(void **state)
{
	struct rec_dump_file v[] = { F("old", 10, 1), F("new", 5000, 2) };

	(void)state;
	v[1].keep = true;
	assert_int_equal(rec_retention__select(v, 2, 1, 1000), 1);
	assert_string_equal(removed(v, 2), "old");
}

static void no_limit_removes_nothing(void **state)
{
	struct rec_dump_file v[] = { F("a", 1ULL << 40, 1), F("b", 1, 2) };

	(void)state;
	assert_int_equal(rec_retention__select(v, 2, 0, 0), 0);
	assert_int_equal(rec_retention__select(v, 2, 5, 0), 0);
}

static void same_time_goes_by_name(void **state)
{
	struct rec_dump_file v[] = { F("recorder-2-x.json", 1, 7), F("recorder-1-x.json", 1, 7) };

	(void)state;
	rec_retention__select(v, 2, 1, 0);
	assert_string_equal(removed(v, 2), "recorder-1-x.json");
}

static void only_finished_dumps_count(void **state)
{
	(void)state;
	assert_true(rec_retention__is_dump("recorder-42-20261203T101010Z.json"));
	assert_false(rec_retention__is_dump("recorder-42-20261203T101010Z.json.tmp"));
	assert_false(rec_retention__is_dump("recorder-.json"));
	assert_false(rec_retention__is_dump("notes.json"));
	assert_false(rec_retention__is_dump("recorder-1.txt"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keep_n_removes_the_oldest),
		cmocka_unit_test(max_bytes_removes_the_oldest_until_under),
		cmocka_unit_test(both_limits_apply),
		cmocka_unit_test(the_dump_just_written_stays_even_alone_over_the_limit),
		cmocka_unit_test(no_limit_removes_nothing),
		cmocka_unit_test(same_time_goes_by_name),
		cmocka_unit_test(only_finished_dumps_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
