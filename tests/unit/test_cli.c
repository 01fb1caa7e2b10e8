/* SPDX-License-Identifier: MIT */
/* Unit tests of the command-line number parsers (user/cli/cli.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "cli/cli.h"

static uint64_t dec(const char *s, uint64_t min, uint64_t max, int *err)
{
	uint64_t v = 12345;

	*err = rec_cli__parse_dec(s, min, max, &v);
	return v;
}

static uint64_t num(const char *s, uint64_t min, uint64_t max, int *err)
{
	uint64_t v = 12345;

	*err = rec_cli__parse_u64(s, min, max, &v);
	return v;
}

/* Pids and counts are decimal: a leading zero is not octal, and hex is refused. */
static void test_decimal_only(void **state)
{
	int err;

	(void)state;
	assert_int_equal(dec("42", 1, INT32_MAX, &err), 42);
	assert_int_equal(err, 0);
	assert_int_equal(dec("010", 1, INT32_MAX, &err), 10);
	assert_int_equal(err, 0);
	assert_int_equal(dec("0009", 1, INT32_MAX, &err), 9);
	assert_int_equal(err, 0);
	assert_int_equal(dec("2147483647", 1, INT32_MAX, &err), INT32_MAX);
	assert_int_equal(err, 0);
	for (const char *const *bad = (const char *const[]){ "0x10", "0X10", "", " 1", "1 ", "+1",
							     "-1", "1e3", "abc", "0", "2147483648",
							     "99999999999999999999999", NULL };
	     *bad; bad++) {
		assert_int_equal(dec(*bad, 1, INT32_MAX, &err), 12345);
		assert_int_equal(err, -EINVAL);
	}
	assert_int_equal(rec_cli__parse_dec(NULL, 0, 1, &(uint64_t){ 0 }), -EINVAL);
}

/* Byte sizes: decimal, with an optional k, M or G; nothing else, no overflow. */
static void test_size(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(rec_cli__parse_size("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(rec_cli__parse_size("1000", &v), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(rec_cli__parse_size("4k", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(rec_cli__parse_size("3M", &v), 0);
	assert_int_equal(v, 3ULL << 20);
	assert_int_equal(rec_cli__parse_size("1G", &v), 0);
	assert_int_equal(v, 1ULL << 30);
	assert_int_equal(rec_cli__parse_size("17179869183G", &v), 0);
	assert_int_equal(v, 17179869183ULL << 30);
	for (const char *const *bad =
		     (const char *const[]){ "", "k", "G", "1K", "1m", "1 G", "1GB", "-1", "0x10",
					    "1.5G", "17179869184G", NULL };
	     *bad; bad++)
		assert_int_equal(rec_cli__parse_size(*bad, &v), -EINVAL);
	assert_int_equal(rec_cli__parse_size(NULL, &v), -EINVAL);
}

/* Durations: digits and a unit; "5ms" is milliseconds, not 5m + "s". */
static void test_duration(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(rec_cli__parse_duration("500ms", &v), 0);
	assert_int_equal(v, 500000000ULL);
	assert_int_equal(rec_cli__parse_duration("30s", &v), 0);
	assert_int_equal(v, 30000000000ULL);
	assert_int_equal(rec_cli__parse_duration("5m", &v), 0);
	assert_int_equal(v, 300000000000ULL);
	assert_int_equal(rec_cli__parse_duration("2h", &v), 0);
	assert_int_equal(v, 7200000000000ULL);
	assert_int_equal(rec_cli__parse_duration("1d", &v), 0);
	assert_int_equal(v, 86400000000000ULL);
	for (const char *const *bad =
		     (const char *const[]){ "", "5", "s", "ms", "5x", "5 s", "-5s", "1.5h", "5S",
					    "99999999999999999999d", "213504d", NULL };
	     *bad; bad++)
		assert_int_equal(rec_cli__parse_duration(*bad, &v), -EINVAL);
}

/* Keys and sizes: decimal, or hex with 0x; never octal. */
static void test_decimal_or_hex(void **state)
{
	int err;

	(void)state;
	assert_int_equal(num("0x8000000000000001", 1, UINT64_MAX, &err), 0x8000000000000001ULL);
	assert_int_equal(err, 0);
	assert_int_equal(num("0XfF", 1, UINT64_MAX, &err), 255);
	assert_int_equal(err, 0);
	assert_int_equal(num("010", 1, UINT64_MAX, &err), 10);
	assert_int_equal(err, 0);
	assert_int_equal(num("18446744073709551615", 1, UINT64_MAX, &err), UINT64_MAX);
	assert_int_equal(err, 0);
	assert_int_equal(num("4096", 4096, 1u << 30, &err), 4096);
	assert_int_equal(err, 0);
	for (const char *const *bad =
		     (const char *const[]){ "0x", "0x-1", "0x 1", "x10", "-0x1",
					    "18446744073709551616", "0x1g", "4095", "", NULL };
	     *bad; bad++) {
		assert_int_equal(num(*bad, 4096, UINT64_MAX, &err), 12345);
		assert_int_equal(err, -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decimal_only),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_decimal_or_hex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
