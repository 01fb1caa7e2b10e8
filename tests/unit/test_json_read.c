/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the pull JSON reader (user/base/json_read.c): every document is
 * read from a buffer and from a file (through the 64 KiB window), and walked
 * back into text by going back to each value's mark after its container was
 * walked, which is how the dump reader uses it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json_read.h"

/* A reader of text, from memory (file == 0) or from a temporary file. */
struct src {
	struct rec_json_read *jr;
	int fd;
};

static void src_open(struct src *s, const char *text, size_t len, int file)
{
	s->fd = -1;
	if (!file) {
		assert_int_equal(rec_json_read__new_mem(&s->jr, text, len), 0);
		return;
	}
	{
		char path[] = "/tmp/test_json_read.XXXXXX";

		s->fd = mkstemp(path);
		assert_true(s->fd >= 0);
		unlink(path);
		assert_int_equal(write(s->fd, text, len), (ssize_t)len);
		assert_int_equal(rec_json_read__new_fd(&s->jr, s->fd, len), 0);
	}
}

static void src_close(struct src *s)
{
	rec_json_read__free(s->jr);
	if (s->fd >= 0)
		close(s->fd);
}

/* Writes v back as text: each container is walked first, its elements read after. */
static void walk(struct rec_json_read *jr, const struct rec_json_value *v, FILE *out)
{
	struct rec_json_value elems[64];
	char keys[64][32];
	struct rec_json_iter it;
	struct rec_json_number n;
	struct rec_json_str info;
	char buf[256];
	size_t count = 0, keylen;
	int ret;

	switch (v->type) {
	case REC_JSON_NULL:
		fputs("null", out);
		return;
	case REC_JSON_TRUE:
		fputs("true", out);
		return;
	case REC_JSON_FALSE:
		fputs("false", out);
		return;
	case REC_JSON_NUMBER:
		assert_int_equal(rec_json_read__number(jr, v, &n), 0);
		fputs(n.text, out);
		return;
	case REC_JSON_STRING:
		assert_int_equal(rec_json_read__string(jr, v, buf, sizeof(buf), &info), 0);
		assert_true(info.len < sizeof(buf));
		fputc('"', out);
		for (size_t i = 0; i < info.len; i++) {
			unsigned char c = (unsigned char)buf[i];

			if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
				fprintf(out, "<%02x>", c);
			else
				fputc(c, out);
		}
		fputc('"', out);
		return;
	case REC_JSON_ARRAY:
	case REC_JSON_OBJECT:
		break;
	default:
		fail_msg("no type");
	}
	assert_int_equal(rec_json_read__iter(jr, v, &it), 0);
	while ((ret = rec_json_read__next(jr, &it, &elems[count], keys[count], sizeof(keys[0]),
					  &keylen)) > 0) {
		if (v->type == REC_JSON_OBJECT)
			assert_true(keylen < sizeof(keys[0]));
		count++;
		assert_true(count < 64);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(count, v->count);
	/* Once done, the walk stays done. */
	assert_int_equal(rec_json_read__next(jr, &it, &elems[count], NULL, 0, NULL), 0);
	fputc(v->type == REC_JSON_OBJECT ? '{' : '[', out);
	for (size_t i = 0; i < count; i++) {
		if (i)
			fputc(',', out);
		if (v->type == REC_JSON_OBJECT)
			fprintf(out, "%s:", keys[i]);
		assert_int_equal(elems[i].depth, v->depth + 1);
		walk(jr, &elems[i], out);
	}
	fputc(v->type == REC_JSON_OBJECT ? '}' : ']', out);
}

/* text, walked back, from memory and from a file. */
static void check_walk(const char *text, const char *expect)
{
	for (int file = 0; file < 2; file++) {
		struct rec_json_value root;
		struct src s;
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);

		src_open(&s, text, strlen(text), file);
		if (rec_json_read__check(s.jr, &root))
			fail_msg("refused (%s): %s", rec_json_read__error(s.jr), text);
		assert_int_equal(root.depth, 0);
		walk(s.jr, &root, out);
		fclose(out);
		if (strcmp(buf, expect))
			fail_msg("%s\n  walked back as %s\n  expected       %s", text, buf, expect);
		free(buf);
		src_close(&s);
	}
}

static void test_walks_valid_documents(void **state)
{
	(void)state;
	check_walk("1", "1");
	check_walk(" \t\r\n-0.5e+10 \n", "-0.5e+10");
	check_walk("\"\"", "\"\"");
	check_walk("[]", "[]");
	check_walk("{}", "{}");
	check_walk("[[],{},[[]]]", "[[],{},[[]]]");
	check_walk(" { \"a\" : [ 1 , -2.5E3 , true , false , null , { } ] , \"b\" : \"x\" } ",
		   "{a:[1,-2.5E3,true,false,null,{}],b:\"x\"}");
	check_walk("[0,-0,10,1e5,1E-5,0.25,18446744073709551616]",
		   "[0,-0,10,1e5,1E-5,0.25,18446744073709551616]");
	/* Escapes, \u to UTF-8 (a surrogate pair to 4 bytes), raw bytes as they are. */
	check_walk("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\",\"\\u00e9\\u20AC\\ud83d\\ude00\",\"\xff\x7f\"]",
		   "[\"<22><5c>/<08><0c><0a><0d><09>\","
		   "\"<c3><a9><e2><82><ac><f0><9f><98><80>\",\"<ff><7f>\"]");
	/* Keys are unescaped too; duplicate keys are the caller's business. */
	check_walk("{\"a\\u0062\":1,\"a\\u0062\":2}", "{ab:1,ab:2}");
}

static void test_counts_and_types(void **state)
{
	static const char text[] = "{\"a\":[1,[2,3],{\"x\":[4]}],\"b\":{},\"c\":\"s\"}";
	struct rec_json_value root, m[3], e;
	struct rec_json_iter it;
	char key[2];
	size_t keylen;

	(void)state;
	for (int file = 0; file < 2; file++) {
		struct src s;
		int n = 0;

		src_open(&s, text, strlen(text), file);
		assert_int_equal(rec_json_read__check(s.jr, &root), 0);
		assert_int_equal(root.type, REC_JSON_OBJECT);
		assert_int_equal(root.count, 3);
		assert_int_equal(root.pos, 0);
		assert_int_equal(rec_json_read__iter(s.jr, &root, &it), 0);
		while (rec_json_read__next(s.jr, &it, &m[n], key, sizeof(key), &keylen) > 0) {
			assert_int_equal(keylen, 1);
			assert_int_equal(key[0], "abc"[n]);
			n++;
		}
		assert_int_equal(n, 3);
		assert_int_equal(m[0].type, REC_JSON_ARRAY);
		assert_int_equal(m[0].count, 3);
		assert_int_equal(m[0].pos, 5);
		assert_int_equal(m[1].type, REC_JSON_OBJECT);
		assert_int_equal(m[1].count, 0);
		assert_int_equal(m[2].type, REC_JSON_STRING);
		assert_int_equal(m[2].count, 0);
		/* Back into "a": its second element is [2,3]. */
		assert_int_equal(rec_json_read__iter(s.jr, &m[0], &it), 0);
		assert_int_equal(rec_json_read__next(s.jr, &it, &e, NULL, 0, NULL), 1);
		assert_int_equal(rec_json_read__next(s.jr, &it, &e, NULL, 0, NULL), 1);
		assert_int_equal(e.type, REC_JSON_ARRAY);
		assert_int_equal(e.count, 2);
		assert_int_equal(e.depth, 2);
		/* A string is not a container. */
		assert_int_equal(rec_json_read__iter(s.jr, &m[2], &it), -EINVAL);
		src_close(&s);
	}
}

static void test_numbers(void **state)
{
	static const struct {
		const char *text;
		int integer, negative, overflow;
		uint64_t magnitude;
	} cases[] = {
		{ "0", 1, 0, 0, 0 },
		{ "-0", 1, 1, 0, 0 },
		{ "42", 1, 0, 0, 42 },
		{ "-9223372036854775808", 1, 1, 0, 9223372036854775808ULL },
		{ "18446744073709551615", 1, 0, 0, UINT64_MAX },
		{ "18446744073709551616", 1, 0, 1, 0 },
		{ "-99999999999999999999999", 1, 1, 1, 0 },
		{ "1.0", 0, 0, 0, 0 },
		{ "1e2", 0, 0, 0, 0 },
		{ "-1.5E-7", 0, 1, 0, 0 },
	};
	char longest[REC_JSON_NUMBER_MAX + 1];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rec_json_value v;
		struct rec_json_number n;
		struct src s;

		src_open(&s, cases[i].text, strlen(cases[i].text), 0);
		assert_int_equal(rec_json_read__check(s.jr, &v), 0);
		assert_int_equal(v.type, REC_JSON_NUMBER);
		assert_int_equal(rec_json_read__number(s.jr, &v, &n), 0);
		assert_string_equal(n.text, cases[i].text);
		assert_int_equal(n.integer, cases[i].integer);
		assert_int_equal(n.negative, cases[i].negative);
		assert_int_equal(n.overflow, cases[i].overflow);
		assert_int_equal(n.magnitude, cases[i].magnitude);
		src_close(&s);
	}
	/* The longest number there is room for. */
	memset(longest, '7', REC_JSON_NUMBER_MAX);
	longest[REC_JSON_NUMBER_MAX] = '\0';
	check_walk(longest, longest);
}

static void test_strings_are_cut_to_the_buffer(void **state)
{
	static const char text[] = "[\"abcdef\",\"a\\u0000b\",\"\"]";
	struct rec_json_value root, e[3];
	struct rec_json_iter it;
	struct rec_json_str info;
	char buf[4];
	struct src s;

	(void)state;
	src_open(&s, text, strlen(text), 0);
	assert_int_equal(rec_json_read__check(s.jr, &root), 0);
	assert_int_equal(rec_json_read__iter(s.jr, &root, &it), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rec_json_read__next(s.jr, &it, &e[i], NULL, 0, NULL), 1);
	assert_int_equal(rec_json_read__string(s.jr, &e[0], buf, sizeof(buf), &info), 0);
	assert_string_equal(buf, "abc");
	assert_int_equal(info.len, 6);
	assert_false(info.has_nul);
	assert_int_equal(rec_json_read__string(s.jr, &e[1], buf, sizeof(buf), &info), 0);
	assert_memory_equal(buf, "a\0b", 4);
	assert_int_equal(info.len, 3);
	assert_true(info.has_nul);
	/* Measured only. */
	assert_int_equal(rec_json_read__string(s.jr, &e[0], NULL, 0, &info), 0);
	assert_int_equal(info.len, 6);
	assert_int_equal(rec_json_read__string(s.jr, &e[2], buf, 1, &info), 0);
	assert_string_equal(buf, "");
	assert_int_equal(info.len, 0);
	src_close(&s);
}

/* Each must be refused, from memory and from a file, with this message. */
static const struct {
	const char *text;
	const char *msg;
} bad[] = {
	{ "", "the document ends early" },
	{ " \n ", "the document ends early" },
	{ "[", "the document ends early" },
	{ "[1", "the document ends early" },
	{ "[1,", "the document ends early" },
	{ "{\"a\"", "the document ends early" },
	{ "{\"a\":", "the document ends early" },
	{ "\"abc", "the document ends early" },
	{ "\"a\\", "the document ends early" },
	{ "tru", "the document ends early" },
	{ "1 2", "trailing data at byte 2" },
	{ "[]]", "trailing data at byte 2" },
	{ "{} x", "trailing data at byte 3" },
	{ "\xef\xbb\xbf{}", "expected a value at byte 0" },
	{ "[1,]", "expected a value at byte 3" },
	{ "[,1]", "expected a value at byte 1" },
	{ "{\"a\":1,}", "expected a string (an object's key) at byte 7" },
	{ "{a:1}", "expected a string (an object's key) at byte 1" },
	{ "{\"a\" 1}", "expected ':' at byte 5" },
	{ "{\"a\":1 \"b\":2}", "expected ',' or '}' at byte 7" },
	{ "[1 2]", "expected ',' or ']' at byte 3" },
	{ "[1}", "expected ',' or ']' at byte 2" },
	{ "{\"a\":1]", "expected ',' or '}' at byte 6" },
	{ "trUe", "expected a value at byte 0" },
	{ "nul1", "expected a value at byte 0" },
	{ "NaN", "expected a value at byte 0" },
	{ "Infinity", "expected a value at byte 0" },
	{ "'a'", "expected a value at byte 0" },
	{ "/* c */ 1", "expected a value at byte 0" },
	{ "+1", "expected a value at byte 0" },
	{ ".5", "expected a value at byte 0" },
	{ "01", "a number with a leading zero at byte 0" },
	{ "-01", "a number with a leading zero at byte 0" },
	{ "-", "the document ends early" },
	{ "-a", "expected a digit at byte 1" },
	{ "1.", "the document ends early" },
	{ "1.e5", "expected a digit after '.' at byte 2" },
	{ "1e", "the document ends early" },
	{ "1e+", "the document ends early" },
	{ "[1e+x]", "expected a digit in the exponent at byte 4" },
	{ "0x10", "trailing data at byte 1" },
	{ "\"a\x01z\"", "a control character (0x01) in a string at byte 2" },
	{ "\"a\nz\"", "a control character (0x0a) in a string at byte 2" },
	{ "\"\\x\"", "an invalid escape in a string at byte 1" },
	{ "\"\\'\"", "an invalid escape in a string at byte 1" },
	{ "\"\\u12\"", "expected 4 hex digits after \\u at byte 5" },
	{ "\"\\u12G4\"", "expected 4 hex digits after \\u at byte 5" },
	{ "\"\\udc00\"", "an unpaired surrogate \\udc00 at byte 1" },
	{ "\"\\ud800\"", "an unpaired surrogate \\ud800 at byte 1" },
	{ "\"\\ud800x\"", "an unpaired surrogate \\ud800 at byte 1" },
	{ "\"\\ud800\\u0041\"", "an unpaired surrogate \\ud800 at byte 1" },
	{ "[\"\\ud800\\ud800\"]", "an unpaired surrogate \\ud800 at byte 2" },
	/* A key is checked as any string is. */
	{ "{\"\x1f\":1}", "a control character (0x1f) in a string at byte 2" },
	/* Every value is checked, also where nobody will read it. */
	{ "{\"unknown\":[1,{\"x\":[01]}]}", "a number with a leading zero at byte 20" },
};

static void test_refuses_invalid_documents(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (int file = 0; file < 2; file++) {
			struct rec_json_value root;
			struct src s;
			int ret;

			src_open(&s, bad[i].text, strlen(bad[i].text), file);
			ret = rec_json_read__check(s.jr, &root);
			if (ret != -EINVAL || strcmp(rec_json_read__error(s.jr), bad[i].msg))
				fail_msg("%s (%s): expected \"%s\", got %d \"%s\"", bad[i].text,
					 file ? "file" : "memory", bad[i].msg, ret,
					 rec_json_read__error(s.jr));
			src_close(&s);
		}
	}
}

/* A document nested n levels deep: [[[...]]] around 1. */
static char *nested(int n)
{
	char *s = malloc(2 * (size_t)n + 2);

	memset(s, '[', (size_t)n);
	s[n] = '1';
	memset(s + n + 1, ']', (size_t)n);
	s[2 * n + 1] = '\0';
	return s;
}

static void test_depth_and_number_limits(void **state)
{
	char *ok = nested(REC_JSON_MAX_DEPTH), *deep = nested(REC_JSON_MAX_DEPTH + 1);
	char number[REC_JSON_NUMBER_MAX + 2], msg[80];
	struct rec_json_value root;
	struct src s;

	(void)state;
	src_open(&s, ok, strlen(ok), 0);
	assert_int_equal(rec_json_read__check(s.jr, &root), 0);
	src_close(&s);

	src_open(&s, deep, strlen(deep), 1);
	assert_int_equal(rec_json_read__check(s.jr, &root), -EINVAL);
	snprintf(msg, sizeof(msg), "nested deeper than %d levels at byte %d", REC_JSON_MAX_DEPTH,
		 REC_JSON_MAX_DEPTH);
	assert_string_equal(rec_json_read__error(s.jr), msg);
	src_close(&s);

	/* Objects count as levels as arrays do. */
	free(deep);
	deep = malloc(8 * (REC_JSON_MAX_DEPTH + 1) + 8);
	deep[0] = '\0';
	for (int i = 0; i <= REC_JSON_MAX_DEPTH; i++)
		strcat(deep, "{\"a\":");
	strcat(deep, "1");
	for (int i = 0; i <= REC_JSON_MAX_DEPTH; i++)
		strcat(deep, "}");
	src_open(&s, deep, strlen(deep), 0);
	assert_int_equal(rec_json_read__check(s.jr, &root), -EINVAL);
	assert_non_null(strstr(rec_json_read__error(s.jr), "nested deeper than"));
	src_close(&s);

	memset(number, '7', sizeof(number) - 1);
	number[sizeof(number) - 1] = '\0';
	src_open(&s, number, strlen(number), 0);
	assert_int_equal(rec_json_read__check(s.jr, &root), -EINVAL);
	snprintf(msg, sizeof(msg), "a number longer than %d characters at byte 0",
		 REC_JSON_NUMBER_MAX);
	assert_string_equal(rec_json_read__error(s.jr), msg);
	src_close(&s);
	free(ok);
	free(deep);
}

/*
 * A file much bigger than the window: strings and escapes that straddle its
 * edges, elements read back in reverse order (each a jump back across the file).
 */
static void test_file_bigger_than_the_window(void **state)
{
	const size_t n = 3000;
	char *text = NULL, *buf = malloc(200);
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct rec_json_value root, *e = calloc(n, sizeof(*e));
	struct rec_json_iter it;
	struct rec_json_str info;
	struct src s;
	size_t i;

	(void)state;
	fputc('[', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s\"%05zu%0150d\\u00e9\\ud83d\\ude00\\n\"", i ? ",\n" : "", i, 0);
	fputc(']', f);
	fclose(f);
	assert_true(len > 4 * REC_JSON_WINDOW);

	src_open(&s, text, len, 1);
	assert_int_equal(rec_json_read__check(s.jr, &root), 0);
	assert_int_equal(root.count, n);
	assert_int_equal(rec_json_read__iter(s.jr, &root, &it), 0);
	for (i = 0; rec_json_read__next(s.jr, &it, &e[i], NULL, 0, NULL) > 0; i++)
		;
	assert_int_equal(i, n);
	while (i--) {
		char want[24];

		assert_int_equal(rec_json_read__string(s.jr, &e[i], buf, 200, &info), 0);
		assert_int_equal(info.len, 5 + 150 + 2 + 4 + 1);
		snprintf(want, sizeof(want), "%05zu", i);
		assert_memory_equal(buf, want, 5);
		assert_memory_equal(buf + 155, "\xc3\xa9\xf0\x9f\x98\x80\n", 7);
	}
	src_close(&s);
	free(e);
	free(buf);
	free(text);
}

/* The file's first size bytes are the document: what is past them is not read. */
static void test_file_size_bounds_the_read(void **state)
{
	static const char text[] = "[1,2]garbage";
	struct rec_json_value root;
	struct src s;

	(void)state;
	src_open(&s, text, strlen(text), 1);
	rec_json_read__free(s.jr);
	assert_int_equal(rec_json_read__new_fd(&s.jr, s.fd, 5), 0);
	assert_int_equal(rec_json_read__check(s.jr, &root), 0);
	assert_int_equal(root.count, 2);
	rec_json_read__free(s.jr);
	/* A file shorter than said is read to its end. */
	assert_int_equal(rec_json_read__new_fd(&s.jr, s.fd, 100), 0);
	assert_int_equal(rec_json_read__check(s.jr, &root), -EINVAL);
	assert_string_equal(rec_json_read__error(s.jr), "trailing data at byte 5");
	src_close(&s);
}

/* A descriptor that cannot be read gives its errno, not a parse error. */
static void test_read_error(void **state)
{
	struct rec_json_read *jr;
	struct rec_json_value root;
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(rec_json_read__new_fd(&jr, fd, 10), 0);
	assert_int_equal(rec_json_read__check(jr, &root), -EISDIR);
	rec_json_read__free(jr);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walks_valid_documents),
		cmocka_unit_test(test_counts_and_types),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_strings_are_cut_to_the_buffer),
		cmocka_unit_test(test_refuses_invalid_documents),
		cmocka_unit_test(test_depth_and_number_limits),
		cmocka_unit_test(test_file_bigger_than_the_window),
		cmocka_unit_test(test_file_size_bounds_the_read),
		cmocka_unit_test(test_read_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
