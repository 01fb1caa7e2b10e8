/* SPDX-License-Identifier: MIT */
/* Unit tests of callsite metadata parsing (user/wire/callsite.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define REC_TARGET "server"
#include <recorder.h>

#include "wire/callsite.h"
#include "model/names.h"

/*
 * A blob built exactly as REC__META builds it, with every part given as a
 * string literal; sizeof includes the literal's own terminating NUL.
 */
#define BLOB(kind, lvl, name, target, file, line, msg, nfields, names)                             \
	("RCS1\0" kind "\0" lvl "\0" name "\0" target "\0" file "\0" line "\0" msg "\0" nfields    \
	 "\0" names)

static struct rec_callsite cs;

/* Parses the literal lit, terminating NUL included. */
#define PARSE(lit) rec_callsite__parse(&cs, (lit), sizeof(lit))

static void test_real_event_blob(void **state)
{
	static const char blob[] =
		REC__META("E", INFO, REC__EVENT_NAME, "handled request", 2, "id\0ok\0");
	const unsigned int line = __LINE__ - 1;
	size_t len = sizeof(blob);
	char want_name[128];

	(void)state;
	snprintf(want_name, sizeof(want_name), "event %s:%u", __FILE__, line);
	assert_int_equal(rec_callsite__parse(&cs, blob, len), 0);
	assert_int_equal(cs.kind, 'E');
	assert_int_equal(cs.level, REC_LEVEL_INFO);
	assert_string_equal(cs.name, want_name);
	assert_string_equal(cs.target, "server");
	assert_string_equal(cs.file, __FILE__);
	assert_int_equal(cs.line, line);
	assert_string_equal(cs.message, "handled request");
	assert_int_equal(cs.nfields, 2);
	assert_string_equal(cs.field_names[0], "id");
	assert_string_equal(cs.field_names[1], "ok");
	assert_null(cs.field_names[2]);
	/* The literal's own NUL follows the last name's NUL and is not part of the blob. */
	assert_int_equal(cs.blob_len, len - 1);
	/* Strings point into cs.blob. */
	assert_true(cs.name > cs.blob && cs.name < cs.blob + sizeof(cs.blob));
}

static void test_real_span_blob(void **state)
{
	static const char blob[] = REC__SPAN_META(WARN, "handle");
	size_t len = sizeof(blob);

	(void)state;
	assert_int_equal(rec_callsite__parse(&cs, blob, len), 0);
	assert_int_equal(cs.kind, 'S');
	assert_int_equal(cs.level, REC_LEVEL_WARN);
	assert_string_equal(cs.name, "handle");
	assert_string_equal(cs.message, "");
	assert_int_equal(cs.nfields, 0);
	assert_int_equal(cs.blob_len, len - 1);
}

static void test_recording_span_blob(void **state)
{
	static const char blob[] =
		REC__META("S", INFO, "recording", "", 3, "recording\0recorder\0subject\0");

	(void)state;
	assert_int_equal(rec_callsite__parse(&cs, blob, sizeof(blob)), 0);
	assert_int_equal(cs.nfields, 3);
	assert_string_equal(cs.name, "recording");
	assert_string_equal(cs.field_names[0], "recording");
	assert_string_equal(cs.field_names[1], "recorder");
	assert_string_equal(cs.field_names[2], "subject");
}

static void test_printf_event_blob(void **state)
{
	static const char blob[] = REC__META("E", ERROR, REC__EVENT_NAME, "", 1, "message\0");
	char buf[REC_CALLSITE_MAX] = { 0 };

	(void)state;
	/* As read from a target: the blob, then whatever follows it. */
	memcpy(buf, blob, sizeof(blob));
	assert_int_equal(rec_callsite__parse(&cs, buf, sizeof(buf)), 0);
	assert_int_equal(cs.blob_len, sizeof(blob) - 1);
	assert_int_equal(cs.level, REC_LEVEL_ERROR);
	assert_int_equal(cs.nfields, 1);
	assert_string_equal(cs.field_names[0], "message");
}

static void test_all_levels_and_eight_fields(void **state)
{
	(void)state;
	assert_int_equal(PARSE(BLOB("E", "0", "n", "t", "f.c", "1", "", "0", "")), 0);
	assert_int_equal(cs.level, REC_LEVEL_TRACE);
	assert_int_equal(PARSE(BLOB("E", "1", "n", "t", "f.c", "1", "", "0", "")), 0);
	assert_int_equal(cs.level, REC_LEVEL_DEBUG);
	assert_int_equal(PARSE(BLOB("E", "4", "n", "t", "f.c", "4294967295", "", "0", "")), 0);
	assert_int_equal(cs.level, REC_LEVEL_ERROR);
	assert_int_equal(cs.line, 4294967295u);
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "a/b/f.c", "12", "m", "8",
				    "a\0b\0c\0d\0e\0f\0g\0h\0")),
			 0);
	assert_int_equal(cs.nfields, 8);
	assert_string_equal(cs.field_names[7], "h");
	assert_string_equal(cs.file, "a/b/f.c");
}

/* Trailing bytes after the blob, as when REC_CALLSITE_MAX bytes are read from a target. */
static void test_trailing_bytes(void **state)
{
	static const char blob[] = BLOB("E", "2", "n", "t", "f.c", "7", "msg", "1", "x\0");
	char buf[REC_CALLSITE_MAX + 100];

	(void)state;
	memset(buf, 'Z', sizeof(buf));
	memcpy(buf, blob, sizeof(blob) - 1);
	assert_int_equal(rec_callsite__parse(&cs, buf, sizeof(buf)), 0);
	assert_int_equal(cs.blob_len, sizeof(blob) - 1);
	assert_string_equal(cs.field_names[0], "x");
	assert_string_equal(cs.message, "msg");
	/* Exactly the blob, without the literal's extra NUL. */
	assert_int_equal(rec_callsite__parse(&cs, buf, sizeof(blob) - 1), 0);
}

/* Every proper prefix of a valid blob is truncated. */
static void test_truncated(void **state)
{
	static const char blob[] =
		BLOB("E", "2", "name", "tgt", "f.c", "88", "msg", "2", "id\0ok\0");
	size_t len;

	(void)state;
	assert_int_equal(PARSE(blob), 0);
	for (len = 0; len < cs.blob_len; len++)
		assert_int_equal(rec_callsite__parse(&cs, blob, len), -EINVAL);
}

static void test_bad_magic(void **state)
{
	(void)state;
	assert_int_equal(PARSE(("RCS2\0E\0"
				"2\0n\0t\0f\0"
				"1\0m\0"
				"0\0")),
			 -EINVAL);
	assert_int_equal(PARSE(("RCS\0E\0"
				"2\0n\0t\0f\0"
				"1\0m\0"
				"0\0")),
			 -EINVAL);
	assert_int_equal(PARSE(("RCS11\0E\0"
				"2\0n\0t\0f\0"
				"1\0m\0"
				"0\0")),
			 -EINVAL);
	assert_int_equal(PARSE(("rcs1\0E\0"
				"2\0n\0t\0f\0"
				"1\0m\0"
				"0\0")),
			 -EINVAL);
	assert_int_equal(PARSE(("")), -EINVAL);
	assert_int_equal(rec_callsite__parse(&cs, NULL, 10), -EINVAL);
	assert_int_equal(rec_callsite__parse(&cs, "RCS1", 4), -EINVAL);
}

static void test_bad_kind(void **state)
{
	(void)state;
	assert_int_equal(PARSE(BLOB("X", "2", "n", "t", "f.c", "1", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("", "2", "n", "t", "f.c", "1", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("EE", "2", "n", "t", "f.c", "1", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("e", "2", "n", "t", "f.c", "1", "", "0", "")), -EINVAL);
}

static void test_bad_level(void **state)
{
	(void)state;
	assert_int_equal(PARSE(BLOB("E", "5", "n", "t", "f.c", "1", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "", "n", "t", "f.c", "1", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "-1", "n", "t", "f.c", "1", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "INFO", "n", "t", "f.c", "1", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", " 2", "n", "t", "f.c", "1", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "22", "n", "t", "f.c", "1", "", "0", "")), -EINVAL);
}

static void test_bad_line(void **state)
{
	(void)state;
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "8x", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "-3", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "0x10", "", "0", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "4294967296", "", "0", "")),
			 -EINVAL);
	assert_int_equal(
		PARSE(BLOB("E", "2", "n", "t", "f.c", "99999999999999999999999", "", "0", "")),
		-EINVAL);
}

static void test_bad_nfields(void **state)
{
	(void)state;
	assert_int_equal(
		PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "", "9", "a\0b\0c\0d\0e\0f\0g\0h\0i\0")),
		-EINVAL);
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "", "", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "", "x", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "", "-1", "")), -EINVAL);
	/* "8+M" only: 8 fields kept, M > 0 left out. */
	assert_int_equal(
		PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "", "7+1", "a\0b\0c\0d\0e\0f\0g\0")),
		-EINVAL);
	assert_int_equal(
		PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "", "8+0", "a\0b\0c\0d\0e\0f\0g\0h\0")),
		-EINVAL);
	assert_int_equal(
		PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "", "8+", "a\0b\0c\0d\0e\0f\0g\0h\0")),
		-EINVAL);
	assert_int_equal(
		PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "", "8+x", "a\0b\0c\0d\0e\0f\0g\0h\0")),
		-EINVAL);
}

/* A callsite with more than 8 fields (the Rust layer's): "8+M", M left out of each event. */
static void test_fields_left_out(void **state)
{
	(void)state;
	assert_int_equal(
		PARSE(BLOB("E", "2", "n", "t", "f.rs", "3", "", "8+3", "a\0b\0c\0d\0e\0f\0g\0h\0")),
		0);
	assert_int_equal(cs.nfields, 8);
	assert_int_equal(cs.left_out, 3);
	assert_string_equal(cs.field_names[7], "h");
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "", "2", "a\0b\0")), 0);
	assert_int_equal(cs.left_out, 0);
}

static void test_missing_names(void **state)
{
	static const char one_of_two[] = BLOB("E", "2", "n", "t", "f.c", "1", "", "2", "id\0");

	(void)state;
	/* The second name would be the literal's NUL: empty, so invalid. */
	assert_int_equal(PARSE(one_of_two), -EINVAL);
	/* Without that NUL, the second name runs past the end. */
	assert_int_equal(rec_callsite__parse(&cs, one_of_two, sizeof(one_of_two) - 1), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "", "1", "")), -EINVAL);
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "", "3", "a\0\0c\0")), -EINVAL);
	/* Missing the nfields part altogether. */
	assert_int_equal(PARSE(("RCS1\0E\0"
				"2\0n\0t\0f.c\0"
				"1\0msg")),
			 -EINVAL);
}

/* Only the first REC_CALLSITE_MAX bytes are looked at. */
static void test_too_long(void **state)
{
	static const char head[] = "RCS1\0E\0"
				   "2\0n\0t\0f.c\0"
				   "1\0";
	char *buf = malloc(REC_CALLSITE_MAX * 2);
	size_t off = sizeof(head) - 1;

	(void)state;
	assert_non_null(buf);
	memcpy(buf, head, off);
	/* A message that ends past REC_CALLSITE_MAX. */
	memset(buf + off, 'm', REC_CALLSITE_MAX);
	memcpy(buf + off + REC_CALLSITE_MAX,
	       "\0"
	       "0\0",
	       3);
	assert_int_equal(rec_callsite__parse(&cs, buf, off + REC_CALLSITE_MAX + 3), -EINVAL);
	/* One that ends just inside it. */
	off = REC_CALLSITE_MAX - 3;
	memcpy(buf + off,
	       "\0"
	       "0\0",
	       3);
	assert_int_equal(rec_callsite__parse(&cs, buf, REC_CALLSITE_MAX * 2), 0);
	assert_int_equal(cs.blob_len, REC_CALLSITE_MAX);
	assert_int_equal(strlen(cs.message), REC_CALLSITE_MAX - 3 - (sizeof(head) - 1));
	free(buf);
}

static void test_failure_clears(void **state)
{
	(void)state;
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "1", "m", "1", "x\0")), 0);
	assert_int_equal(PARSE(BLOB("E", "2", "n", "t", "f.c", "z", "m", "1", "x\0")), -EINVAL);
	assert_null(cs.name);
	assert_null(cs.field_names[0]);
	assert_int_equal(cs.nfields, 0);
}

static void test_level_names(void **state)
{
	(void)state;
	assert_string_equal(rec_names__level(REC_LEVEL_TRACE), "TRACE");
	assert_string_equal(rec_names__level(REC_LEVEL_DEBUG), "DEBUG");
	assert_string_equal(rec_names__level(REC_LEVEL_INFO), "INFO");
	assert_string_equal(rec_names__level(REC_LEVEL_WARN), "WARN");
	assert_string_equal(rec_names__level(REC_LEVEL_ERROR), "ERROR");
	assert_string_equal(rec_names__level((enum rec_level)5), "?");
	assert_string_equal(rec_names__level((enum rec_level) - 1), "?");
	assert_int_equal(rec_names__level_letter(REC_LEVEL_TRACE), 'T');
	assert_int_equal(rec_names__level_letter(REC_LEVEL_DEBUG), 'D');
	assert_int_equal(rec_names__level_letter(REC_LEVEL_INFO), 'I');
	assert_int_equal(rec_names__level_letter(REC_LEVEL_WARN), 'W');
	assert_int_equal(rec_names__level_letter(REC_LEVEL_ERROR), 'E');
	assert_int_equal(rec_names__level_letter((enum rec_level)9), '?');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_event_blob),
		cmocka_unit_test(test_real_span_blob),
		cmocka_unit_test(test_recording_span_blob),
		cmocka_unit_test(test_printf_event_blob),
		cmocka_unit_test(test_all_levels_and_eight_fields),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_bad_kind),
		cmocka_unit_test(test_bad_level),
		cmocka_unit_test(test_bad_line),
		cmocka_unit_test(test_bad_nfields),
		cmocka_unit_test(test_fields_left_out),
		cmocka_unit_test(test_missing_names),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_failure_clears),
		cmocka_unit_test(test_level_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
