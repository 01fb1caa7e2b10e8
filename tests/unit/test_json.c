// SPDX-License-Identifier: MIT
/* Unit tests of the one JSON writer (user/base/json.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

static char *text;
static size_t text_len;
static FILE *f;
static struct rec_json w;

/* A writer onto a memory stream; done() gives what it wrote. */
static struct rec_json *start(void)
{
	free(text);
	text = NULL;
	f = open_memstream(&text, &text_len);
	assert_non_null(f);
	rec_json__init(&w, f);
	return &w;
}

static const char *done(void)
{
	fclose(f);
	f = NULL;
	return text;
}

static int teardown(void **state)
{
	(void)state;
	free(text);
	text = NULL;
	return 0;
}

static const char *string_of(const char *s, size_t len)
{
	rec_json__string(start(), s, len);
	return done();
}

static void test_escaping(void **state)
{
	(void)state;
	assert_string_equal(string_of("", 0), "\"\"");
	assert_string_equal(string_of("plain", 5), "\"plain\"");
	assert_string_equal(string_of("\"", 1), "\"\\\"\"");
	assert_string_equal(string_of("\\", 1), "\"\\\\\"");
	assert_string_equal(string_of("\"\\\"\\", 4), "\"\\\"\\\\\\\"\\\\\"");
	assert_string_equal(string_of("a\"b\\c", 5), "\"a\\\"b\\\\c\"");
	assert_string_equal(string_of("\n\t\r\b\f", 5), "\"\\n\\t\\r\\b\\f\"");
	assert_string_equal(string_of("\x01\x1f\x7f", 3), "\"\\u0001\\u001f\\u007f\"");
	assert_string_equal(string_of("\0", 1), "\"\\u0000\"");
	/* The C1 controls in UTF-8, also next to a quote; other UTF-8 as it is. */
	assert_string_equal(string_of("\xc2\x9b\"\xc2\x80", 5), "\"\\u009b\\\"\\u0080\"");
	assert_string_equal(string_of("\xc2\"", 2), "\"\xc2\\\"\"");
	assert_string_equal(string_of("\xc2", 1), "\"\xc2\"");
	assert_string_equal(string_of("\xc3\xa9\xe2\x82\xac\xc2\xa0", 7),
			    "\"\xc3\xa9\xe2\x82\xac\xc2\xa0\"");
	/* Only len bytes. */
	assert_string_equal(string_of("ab\"cd", 3), "\"ab\\\"\"");
	/* NULL is "", keys are escaped as strings are. */
	rec_json__cstr(start(), NULL);
	assert_string_equal(done(), "\"\"");
	rec_json__begin_object(start());
	rec_json__member_cstr(&w, "k\"\n", "v");
	rec_json__end_object(&w);
	assert_string_equal(done(), "{\"k\\\"\\n\":\"v\"}");
}

static const char *f64_of(double v)
{
	rec_json__f64(start(), v);
	return done();
}

static void test_numbers(void **state)
{
	(void)state;
	rec_json__begin_array(start());
	rec_json__u64(&w, 0);
	rec_json__u64(&w, UINT64_MAX);
	rec_json__i64(&w, INT64_MIN);
	rec_json__i64(&w, -1);
	rec_json__bool(&w, true);
	rec_json__bool(&w, false);
	rec_json__null(&w);
	rec_json__hex(&w, 0);
	rec_json__hex(&w, 0xABCDEF0123ULL);
	rec_json__end_array(&w);
	assert_string_equal(done(), "[0,18446744073709551615,-9223372036854775808,-1,true,false,"
				    "null,\"0x0\",\"0xabcdef0123\"]");

	/* Always read back as a double: a '.' or an exponent. */
	assert_string_equal(f64_of(1.0), "1.0");
	assert_string_equal(f64_of(-0.0), "-0.0");
	assert_string_equal(f64_of(0.0), "0.0");
	assert_string_equal(f64_of(1.5), "1.5");
	assert_string_equal(f64_of(0.1), "0.1");
	assert_string_equal(f64_of(1e300), "1e+300");
	assert_string_equal(f64_of(-2.5e-7), "-2.5e-07");
	assert_string_equal(f64_of(123456789012345678.0), "1.2345678901234568e+17");
	assert_string_equal(f64_of(1.0 / 3.0), "0.3333333333333333");
	assert_string_equal(f64_of(DBL_MAX), "1.7976931348623157e+308");
	assert_string_equal(f64_of(5e-324), "4.94065645841247e-324");
	/* Not finite: strings. */
	assert_string_equal(f64_of(NAN), "\"nan\"");
	assert_string_equal(f64_of(-NAN), "\"nan\"");
	assert_string_equal(f64_of(INFINITY), "\"inf\"");
	assert_string_equal(f64_of(-INFINITY), "\"-inf\"");
}

/* Any finite double comes back bit for bit, from the shortest of 15..17 digits. */
static void test_f64_round_trip(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		uint64_t bits, back_bits;
		const char *s;
		double v, back;
		char *end;

		/* xorshift64: every exponent and mantissa, subnormals included. */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bits = x;
		memcpy(&v, &bits, sizeof(v));
		if (!isfinite(v))
			continue;
		s = f64_of(v);
		back = strtod(s, &end);
		assert_int_equal(*end, '\0');
		memcpy(&back_bits, &back, sizeof(back));
		if (back_bits != bits)
			fail_msg("%.17g written as %s reads back as %.17g", v, s, back);
		assert_non_null(strpbrk(s, ".e"));
		/* The shortest: with one digit fewer (down to 15) it would not read back. */
		for (int prec = 15; prec <= 17; prec++) {
			char shorter[40];

			snprintf(shorter, sizeof(shorter), "%.*g", prec, v);
			if (strtod(shorter, NULL) != v)
				continue;
			if (strncmp(s, shorter, strlen(shorter)) != 0)
				fail_msg("%s is not the shortest, %s", s, shorter);
			break;
		}
	}
}

/* Commas between members and elements, at every depth, never after an opening. */
static void test_nesting_and_commas(void **state)
{
	(void)state;
	rec_json__begin_object(start());
	rec_json__end_object(&w);
	assert_string_equal(done(), "{}");

	rec_json__begin_array(start());
	rec_json__end_array(&w);
	assert_string_equal(done(), "[]");

	rec_json__begin_object(start());
	rec_json__member_u64(&w, "a", 1);
	rec_json__key(&w, "b");
	rec_json__begin_array(&w);
	rec_json__begin_object(&w);
	rec_json__end_object(&w);
	rec_json__begin_array(&w);
	rec_json__begin_array(&w);
	rec_json__end_array(&w);
	rec_json__u64(&w, 2);
	rec_json__end_array(&w);
	rec_json__begin_object(&w);
	rec_json__member_bool(&w, "c", true);
	rec_json__key(&w, "d");
	rec_json__begin_object(&w);
	rec_json__member_hex(&w, "e", 16);
	rec_json__member_i64(&w, "f", -3);
	rec_json__end_object(&w);
	rec_json__end_object(&w);
	rec_json__cstr(&w, "g");
	rec_json__end_array(&w);
	rec_json__key(&w, "h");
	rec_json__null(&w);
	rec_json__end_object(&w);
	assert_string_equal(done(), "{\"a\":1,\"b\":[{},[[],2],{\"c\":true,\"d\":{\"e\":\"0x10\","
				    "\"f\":-3}},\"g\"],\"h\":null}");
}

/*
 * Line breaks: at the top level at once, with no comma between documents;
 * inside, after the comma, before the next member or element; dropped where
 * the object or array ends instead.
 */
static void test_newlines(void **state)
{
	(void)state;
	start();
	for (int i = 0; i < 3; i++) {
		rec_json__begin_object(&w);
		rec_json__member_u64(&w, "n", (uint64_t)i);
		rec_json__end_object(&w);
		rec_json__newline(&w);
	}
	rec_json__u64(&w, 7);
	rec_json__newline(&w);
	assert_string_equal(done(), "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n7\n");

	rec_json__begin_object(start());
	rec_json__member_u64(&w, "a", 1);
	rec_json__member_u64(&w, "b", 2);
	rec_json__newline(&w);
	rec_json__key(&w, "c");
	rec_json__begin_array(&w);
	for (int i = 0; i < 2; i++) {
		rec_json__newline(&w);
		rec_json__begin_object(&w);
		rec_json__end_object(&w);
	}
	rec_json__end_array(&w);
	rec_json__newline(&w);
	rec_json__key(&w, "d");
	rec_json__begin_array(&w);
	rec_json__newline(&w);
	rec_json__end_array(&w);
	rec_json__newline(&w);
	rec_json__end_object(&w);
	rec_json__newline(&w);
	assert_string_equal(done(), "{\"a\":1,\"b\":2,\n\"c\":[\n{},\n{}],\n\"d\":[]}\n");
}

static void test_time(void **state)
{
	(void)state;
	rec_json__begin_array(start());
	rec_json__time(&w, 1796220192LL * 1000000000LL + 123456789LL);
	rec_json__time(&w, 0);
	rec_json__time(&w, -1);
	rec_json__end_array(&w);
	assert_string_equal(done(),
			    "[\"2026-12-02T14:03:12.123456Z\",\"1970-01-01T00:00:00.000000Z\","
			    "\"1969-12-31T23:59:59.999999Z\"]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_escaping, teardown),
		cmocka_unit_test_teardown(test_numbers, teardown),
		cmocka_unit_test_teardown(test_f64_round_trip, teardown),
		cmocka_unit_test_teardown(test_nesting_and_commas, teardown),
		cmocka_unit_test_teardown(test_newlines, teardown),
		cmocka_unit_test_teardown(test_time, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
