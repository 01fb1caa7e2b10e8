/* SPDX-License-Identifier: MIT */
/* Unit tests of the u64 -> pointer map (user/base/u64map.c), checked against a plain array. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "base/u64map.h"

static void *val(uint64_t k)
{
	return (void *)(uintptr_t)(k * 2 + 1);
}

static void test_empty(void **state)
{
	struct rec_u64map m = { 0 };

	(void)state;
	assert_null(rec_u64map__get(&m, 1));
	assert_null(rec_u64map__del(&m, 1));
	rec_u64map__free(&m);
}

static void test_put_get_replace_del(void **state)
{
	struct rec_u64map m = { 0 };

	(void)state;
	assert_int_equal(rec_u64map__put(&m, 7, val(7)), 0);
	assert_ptr_equal(rec_u64map__get(&m, 7), val(7));
	assert_int_equal(m.live, 1);
	/* Replacing keeps one entry. */
	assert_int_equal(rec_u64map__put(&m, 7, val(8)), 0);
	assert_ptr_equal(rec_u64map__get(&m, 7), val(8));
	assert_int_equal(m.live, 1);
	assert_ptr_equal(rec_u64map__del(&m, 7), val(8));
	assert_null(rec_u64map__get(&m, 7));
	assert_null(rec_u64map__del(&m, 7));
	assert_int_equal(m.live, 0);
	rec_u64map__free(&m);
	assert_int_equal(m.cap, 0);
}

static void test_reserved_keys_refused(void **state)
{
	struct rec_u64map m = { 0 };

	(void)state;
	/* 0 marks an empty slot and UINT64_MAX a deleted one: never keys. */
	assert_int_equal(rec_u64map__put(&m, 0, val(0)), -EINVAL);
	assert_int_equal(rec_u64map__put(&m, UINT64_MAX, val(1)), -EINVAL);
	assert_int_equal(rec_u64map__put(&m, 5, val(5)), 0);
	assert_null(rec_u64map__get(&m, 0));
	assert_null(rec_u64map__get(&m, UINT64_MAX));
	assert_null(rec_u64map__del(&m, UINT64_MAX));
	assert_int_equal(m.live, 1);
	rec_u64map__free(&m);
}

static void test_grows_and_keeps_everything(void **state)
{
	struct rec_u64map m = { 0 };
	const uint64_t n = 100000;

	(void)state;
	/* Keys that collide in the low bits: multiples of a power of two. */
	for (uint64_t i = 1; i <= n; i++)
		assert_int_equal(rec_u64map__put(&m, i << 20, val(i)), 0);
	assert_int_equal(m.live, n);
	assert_true(m.cap >= n);
	assert_int_equal(m.cap & (m.cap - 1), 0);
	for (uint64_t i = 1; i <= n; i++)
		assert_ptr_equal(rec_u64map__get(&m, i << 20), val(i));
	assert_null(rec_u64map__get(&m, (n + 1) << 20));
	rec_u64map__free(&m);
}

/*
 * Churn: keys come and go many times over, as recordings do. Deleted slots are
 * reused or rehashed away, so the table does not grow with the churn, and a
 * lookup never runs into an endless probe.
 */
static void test_churn_does_not_grow(void **state)
{
	struct rec_u64map m = { 0 };
	uint64_t next = 1;
	size_t cap_after_warmup = 0;

	(void)state;
	for (int round = 0; round < 2000; round++) {
		for (int i = 0; i < 50; i++)
			assert_int_equal(rec_u64map__put(&m, next + (uint64_t)i, val(next + i)), 0);
		for (int i = 0; i < 50; i++)
			assert_ptr_equal(rec_u64map__del(&m, next + (uint64_t)i), val(next + i));
		next += 50;
		assert_int_equal(m.live, 0);
		if (round == 10)
			cap_after_warmup = m.cap;
	}
	assert_true(m.cap <= cap_after_warmup * 2);
	assert_null(rec_u64map__get(&m, next));
	rec_u64map__free(&m);
}

/* Random puts, gets and deletes checked against a direct-indexed array. */
static void test_matches_model(void **state)
{
	enum {
		KEYS = 4096
	};
	static void *model[KEYS];
	struct rec_u64map m = { 0 };
	uint64_t x = 88172645463325252ULL;
	size_t live = 0;

	(void)state;
	for (int op = 0; op < 200000; op++) {
		uint64_t k;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = 1 + x % (KEYS - 1);
		switch ((x >> 32) % 3) {
		case 0:
			live += !model[k];
			model[k] = val(k + (uint64_t)op);
			assert_int_equal(rec_u64map__put(&m, k, model[k]), 0);
			break;
		case 1:
			assert_ptr_equal(rec_u64map__get(&m, k), model[k]);
			break;
		default:
			assert_ptr_equal(rec_u64map__del(&m, k), model[k]);
			live -= !!model[k];
			model[k] = NULL;
			break;
		}
		assert_int_equal(m.live, live);
	}
	for (uint64_t k = 1; k < KEYS; k++)
		assert_ptr_equal(rec_u64map__get(&m, k), model[k]);
	rec_u64map__free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_put_get_replace_del),
		cmocka_unit_test(test_reserved_keys_refused),
		cmocka_unit_test(test_grows_and_keeps_everything),
		cmocka_unit_test(test_churn_does_not_grow),
		cmocka_unit_test(test_matches_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
