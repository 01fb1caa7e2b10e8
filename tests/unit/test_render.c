/* SPDX-License-Identifier: MIT */
/* Unit tests of glog and JSON lines rendering (user/output/output_text.c, output_jsonl.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "output/output.h"
#include "base/text.h"

/* 2026-12-02T14:03:12.123456789Z */
#define TIME_NS (1796220192LL * 1000000000LL + 123456789LL)

#define BLOB(kind, lvl, name, target, file, line, msg, nfields, names)                             \
	("RCS1\0" kind "\0" lvl "\0" name "\0" target "\0" file "\0" line "\0" msg "\0" nfields    \
	 "\0" names)

static struct rec_callsite cs;
static char *text;
static size_t text_len;

/* A memory stream whose contents end up in text when closed. */
static FILE *open_text(void)
{
	FILE *f;

	free(text);
	text = NULL;
	f = open_memstream(&text, &text_len);
	assert_non_null(f);
	return f;
}

static const char *json_string(const char *s, size_t len)
{
	FILE *f = open_text();
	struct rec_json w;

	rec_json__init(&w, f);
	rec_json__string(&w, s, len);
	fclose(f);
	return text;
}

static const char *glog(const struct rec_event_view *ev)
{
	FILE *f = open_text();
	struct rec_output o;

	rec_output__init(&o, f, &rec_output_text__ops);
	rec_output__event(&o, ev);
	fclose(f);
	return text;
}

static const char *json(const struct rec_event_view *ev)
{
	FILE *f = open_text();
	struct rec_output o;

	rec_output__init(&o, f, &rec_output_jsonl__ops);
	rec_output__event(&o, ev);
	fclose(f);
	return text;
}

static struct rec_value i64(int64_t v)
{
	return (struct rec_value){ .type = REC_TYPE_I64, .i64 = v };
}

static struct rec_value u64(uint64_t v)
{
	return (struct rec_value){ .type = REC_TYPE_U64, .u64 = v };
}

static struct rec_value f64(double v)
{
	return (struct rec_value){ .type = REC_TYPE_F64, .f64 = v };
}

static struct rec_value boolean(bool v)
{
	return (struct rec_value){ .type = REC_TYPE_BOOL, .b = v };
}

static struct rec_value str(const char *s, size_t len, enum rec_str_status status)
{
	struct rec_value v = { .type = REC_TYPE_STR };

	v.str.ptr = s;
	v.str.len = (uint32_t)len;
	v.str.status = status;
	return v;
}

#define STR(lit) str((lit), sizeof(lit) - 1, REC_STR_OK)

/* The event of the examples in output_text.c and output_jsonl.c, with cs and values to fill in. */
static struct rec_event_view view(const struct rec_callsite *c, const struct rec_value *values,
				  uint32_t nfields)
{
	return (struct rec_event_view){
		.from = { .pid = 4242,
			  .tid = 4243,
			  .recording = 0x80000001ULL,
			  .recorder = 0x80000000ULL,
			  .subject = "actor[0]" },
		.seq = 7,
		.time_ns = TIME_NS,
		.cs = c,
		.meta = 0x401000,
		.nfields = nfields,
		.values = values,
	};
}

#define PARSE(lit) assert_int_equal(rec_callsite__parse(&cs, (lit), sizeof(lit)), 0)

static int setup(void **state)
{
	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(text);
	text = NULL;
	return 0;
}

static void test_json_string(void **state)
{
	(void)state;
	assert_string_equal(json_string("", 0), "\"\"");
	assert_string_equal(json_string("plain", 5), "\"plain\"");
	assert_string_equal(json_string("say \"hi\"", 8), "\"say \\\"hi\\\"\"");
	assert_string_equal(json_string("a\\b", 3), "\"a\\\\b\"");
	assert_string_equal(json_string("l1\nl2\tx\ry\bz\f", 12), "\"l1\\nl2\\tx\\ry\\bz\\f\"");
	assert_string_equal(json_string("\x01\x1f\x1b", 3), "\"\\u0001\\u001f\\u001b\"");
	assert_string_equal(json_string("a\0b", 3), "\"a\\u0000b\"");
	/* UTF-8 passes through unchanged; DEL and the C1 controls (U+0080..U+009F) do not. */
	assert_string_equal(json_string("caf\xc3\xa9 \xe2\x82\xac", 9),
			    "\"caf\xc3\xa9 \xe2\x82\xac\"");
	assert_string_equal(json_string("\x7f \xc2\x9b \xc2\x80 \xc2\x9f \xc2\xa0 \xc2", 15),
			    "\"\\u007f \\u009b \\u0080 \\u009f \xc2\xa0 \xc2\"");
	/* Only len bytes are written. */
	assert_string_equal(json_string("abcdef", 3), "\"abc\"");
}

static const char *text_escaped(const char *s, size_t len, size_t *written)
{
	FILE *f = open_text();

	*written = rec_text__escape(f, s, len);
	fclose(f);
	return text;
}

#define ESCAPED(lit) text_escaped((lit), sizeof(lit) - 1, &n)

/* Text for a terminal: no byte that moves the cursor or starts an escape sequence. */
static void test_text_escape(void **state)
{
	size_t n;

	(void)state;
	assert_string_equal(ESCAPED("plain \"q\" \\"), "plain \"q\" \\");
	assert_int_equal(n, 11);
	assert_string_equal(ESCAPED("a\nI0101 forged\x1b[2J\x7f\r\x07"),
			    "a\\nI0101 forged\\u001b[2J\\u007f\\r\\u0007");
	assert_int_equal(n, strlen(text));
	/* An 8-bit CSI written as UTF-8, and the NUL bytes a string may hold. */
	assert_string_equal(ESCAPED("\xc2\x9b"
				    "31m\0x"),
			    "\\u009b31m\\u0000x");
	assert_int_equal(n, strlen(text));
	assert_string_equal(ESCAPED("caf\xc3\xa9"), "caf\xc3\xa9");
	assert_int_equal(n, 5);
}

static void test_key_format(void **state)
{
	char buf[19];

	(void)state;
	assert_string_equal(rec_text__key(0, buf), "0x0");
	assert_string_equal(rec_text__key(0x80000001ULL, buf), "0x80000001");
	assert_string_equal(rec_text__key(0xABCDEF0123ULL, buf), "0xabcdef0123");
	assert_string_equal(rec_text__key(UINT64_MAX, buf), "0xffffffffffffffff");
	assert_ptr_equal(rec_text__key(1, buf), buf);
}

static void test_glog_example(void **state)
{
	struct rec_value values[] = { i64(7), boolean(true) };
	struct rec_event_view ev = view(&cs, values, 2);

	(void)state;
	PARSE(BLOB("E", "2", "event src/server.c:88", "server", "src/server.c", "88",
		   "handled request", "2", "id\0ok\0"));
	ev.from.tid = 4242;
	assert_string_equal(glog(&ev), "I1202 14:03:12.123456 4242 server.c:88] <actor[0]> "
				       "handled request, id: 7, ok: true\n");
}

static void test_json_example(void **state)
{
	struct rec_value values[] = { i64(7), boolean(true) };
	struct rec_event_view ev = view(&cs, values, 2);

	(void)state;
	PARSE(BLOB("E", "2", "event server.c:88", "server", "server.c", "88", "handled request",
		   "2", "id\0ok\0"));
	assert_string_equal(json(&ev),
			    "{\"pid\":4242,\"tid\":4243,\"recording\":\"0x80000001\","
			    "\"recorder\":\"0x80000000\",\"subject\":\"actor[0]\",\"seq\":7,"
			    "\"time\":\"2026-12-02T14:03:12.123456Z\",\"level\":\"INFO\","
			    "\"target\":\"server\",\"name\":\"event server.c:88\","
			    "\"file\":\"server.c\",\"line\":88,\"fields\":{\"message\":"
			    "\"handled request\",\"id\":7,\"ok\":true}}\n");
}

static void test_json_ns_pid_and_levels(void **state)
{
	struct rec_event_view ev = view(&cs, NULL, 0);

	(void)state;
	PARSE(BLOB("S", "4", "span", "t", "/abs/dir/f.c", "1", "", "0", ""));
	ev.from.ns_pid = 12;
	ev.from.subject = "";
	assert_string_equal(json(&ev),
			    "{\"pid\":4242,\"ns_pid\":12,\"tid\":4243,\"recording\":\"0x80000001\","
			    "\"recorder\":\"0x80000000\",\"subject\":\"\",\"seq\":7,"
			    "\"time\":\"2026-12-02T14:03:12.123456Z\",\"level\":\"ERROR\","
			    "\"target\":\"t\",\"name\":\"span\",\"file\":\"/abs/dir/f.c\","
			    "\"line\":1,\"fields\":{\"message\":\"\"}}\n");
	/* An empty subject is left out of glog; a file without a slash is kept whole. */
	assert_string_equal(glog(&ev), "E1202 14:03:12.123456 4243 f.c:1] \n");
	PARSE(BLOB("E", "0", "n", "t", "f.c", "3", "m", "0", ""));
	assert_string_equal(glog(&ev), "T1202 14:03:12.123456 4243 f.c:3] m\n");
	PARSE(BLOB("E", "1", "n", "t", "f.c", "3", "m", "0", ""));
	assert_string_equal(glog(&ev), "D1202 14:03:12.123456 4243 f.c:3] m\n");
	PARSE(BLOB("E", "3", "n", "t", "f.c", "3", "m", "0", ""));
	assert_string_equal(glog(&ev), "W1202 14:03:12.123456 4243 f.c:3] m\n");
}

/* With no callsite message, the string field named message is the message, shown once. */
static void test_message_from_field(void **state)
{
	struct rec_value values[] = { i64(7), STR("hello \"you\""), boolean(false) };
	struct rec_event_view ev = view(&cs, values, 3);

	(void)state;
	PARSE(BLOB("E", "2", "n", "t", "f.c", "5", "", "3", "id\0message\0ok\0"));
	assert_string_equal(glog(&ev), "I1202 14:03:12.123456 4243 f.c:5] <actor[0]> "
				       "hello \"you\", id: 7, ok: false\n");
	assert_non_null(strstr(json(&ev), ",\"fields\":{\"message\":\"hello \\\"you\\\"\","
					  "\"id\":7,\"ok\":false}}\n"));

	/* As REC_INFOF builds it: the only field is the message. */
	PARSE(BLOB("E", "2", "n", "t", "f.c", "5", "", "1", "message\0"));
	values[0] = STR("formatted 42");
	ev.nfields = 1;
	assert_string_equal(glog(&ev),
			    "I1202 14:03:12.123456 4243 f.c:5] <actor[0]> formatted 42\n");
	assert_non_null(strstr(json(&ev), ",\"fields\":{\"message\":\"formatted 42\"}}\n"));

	/* A message field that could not be read carries its marker, in JSON its status. */
	values[0] = str("", 0, REC_STR_FAULT);
	assert_string_equal(glog(&ev),
			    "I1202 14:03:12.123456 4243 f.c:5] <actor[0]> <unreadable>\n");
	assert_non_null(strstr(json(&ev), ",\"fields\":{\"message\":null},"
					  "\"field_status\":{\"message\":\"fault\"}}\n"));
}

static void test_no_message(void **state)
{
	struct rec_value values[] = { i64(-7), u64(UINT64_MAX) };
	struct rec_event_view ev = view(&cs, values, 2);

	(void)state;
	PARSE(BLOB("E", "2", "n", "t", "f.c", "5", "", "2", "a\0b\0"));
	assert_string_equal(glog(&ev), "I1202 14:03:12.123456 4243 f.c:5] <actor[0]> "
				       "a: -7, b: 18446744073709551615\n");
	assert_non_null(strstr(json(&ev), ",\"fields\":{\"message\":\"\",\"a\":-7,"
					  "\"b\":18446744073709551615}}\n"));
	/* A field named message that is not a string is an ordinary field. */
	PARSE(BLOB("E", "2", "n", "t", "f.c", "5", "", "2", "message\0b\0"));
	assert_string_equal(glog(&ev), "I1202 14:03:12.123456 4243 f.c:5] <actor[0]> "
				       "message: -7, b: 18446744073709551615\n");
}

static void test_f64(void **state)
{
	struct rec_value values[] = { f64(1.5),	      f64(NAN), f64(INFINITY),
				      f64(-INFINITY), f64(0.1), f64(-2e300) };
	struct rec_event_view ev = view(&cs, values, 6);

	(void)state;
	PARSE(BLOB("E", "2", "n", "t", "f.c", "5", "m", "6", "a\0b\0c\0d\0e\0f\0"));
	assert_string_equal(glog(&ev), "I1202 14:03:12.123456 4243 f.c:5] <actor[0]> m, "
				       "a: 1.5, b: nan, c: inf, d: -inf, e: 0.1, f: -2e+300\n");
	assert_non_null(strstr(json(&ev), ",\"fields\":{\"message\":\"m\",\"a\":1.5,"
					  "\"b\":\"nan\",\"c\":\"inf\",\"d\":\"-inf\","
					  "\"e\":0.1,\"f\":-2e+300}}\n"));
	/* JSON numbers read back exactly. */
	values[0] = f64(1.0 / 3.0);
	ev.nfields = 1;
	assert_non_null(strstr(json(&ev), "\"a\":0.3333333333333333}}\n"));
}

static void test_string_markers(void **state)
{
	struct rec_value values[] = {
		str("abcdef", 3, REC_STR_TRUNCATED),
		str("", 0, REC_STR_FAULT),
		str("", 0, REC_STR_NULL),
		str("", 0, REC_STR_NOSPACE),
		STR(""),
	};
	struct rec_event_view ev = view(&cs, values, 5);

	(void)state;
	PARSE(BLOB("E", "2", "n", "t", "f.c", "5", "m", "5", "a\0b\0c\0d\0e\0"));
	assert_string_equal(glog(&ev), "I1202 14:03:12.123456 4243 f.c:5] <actor[0]> m, "
				       "a: abc\xe2\x80\xa6[truncated], b: <unreadable>, "
				       "c: (null), d: <no space>, e: \n");
	/*
	 * JSON: the bytes read, or null when there are none; the status of each
	 * string not read whole, by field name, apart from the values.
	 */
	assert_non_null(strstr(json(&ev), ",\"fields\":{\"message\":\"m\",\"a\":\"abc\","
					  "\"b\":null,\"c\":null,\"d\":null,\"e\":\"\"},"
					  "\"field_status\":{\"a\":\"truncated\",\"b\":\"fault\","
					  "\"c\":\"null\",\"d\":\"nospace\"}}\n"));
	/* A string that came whole has no status, and nor has an event of only such strings. */
	ev.nfields = 1;
	values[0] = STR("fine");
	assert_non_null(strstr(json(&ev), ",\"fields\":{\"message\":\"m\",\"a\":\"fine\"}}\n"));
}

/* Text from the target never breaks the line. */
static void test_escaping(void **state)
{
	struct rec_value values[] = { STR("x\ny\"z\\w\0v\x01\xc3\xa9") };
	struct rec_event_view ev = view(&cs, values, 1);

	(void)state;
	PARSE(BLOB("E", "2", "n", "t", "dir/f\tc", "5", "line1\nline2", "1", "a\0"));
	ev.from.subject = "s\r";
	assert_string_equal(glog(&ev), "I1202 14:03:12.123456 4243 f\\tc:5] <s\\r> "
				       "line1\\nline2, a: x\\ny\"z\\w\\u0000v\\u0001\xc3\xa9\n");
	assert_string_equal(json(&ev),
			    "{\"pid\":4242,\"tid\":4243,\"recording\":\"0x80000001\","
			    "\"recorder\":\"0x80000000\",\"subject\":\"s\\r\",\"seq\":7,"
			    "\"time\":\"2026-12-02T14:03:12.123456Z\",\"level\":\"INFO\","
			    "\"target\":\"t\",\"name\":\"n\",\"file\":\"dir/f\\tc\",\"line\":5,"
			    "\"fields\":{\"message\":\"line1\\nline2\","
			    "\"a\":\"x\\ny\\\"z\\\\w\\u0000v\\u0001\xc3\xa9\"}}\n");
}

static void test_no_callsite(void **state)
{
	struct rec_value values[] = { i64(7), boolean(true) };
	struct rec_event_view ev = view(NULL, values, 2);

	(void)state;
	assert_string_equal(glog(&ev), "?1202 14:03:12.123456 4243 ?:0] <actor[0]> "
				       "<callsite 0x401000>, field0: 7, field1: true\n");
	assert_string_equal(json(&ev),
			    "{\"pid\":4242,\"tid\":4243,\"recording\":\"0x80000001\","
			    "\"recorder\":\"0x80000000\",\"subject\":\"actor[0]\",\"seq\":7,"
			    "\"time\":\"2026-12-02T14:03:12.123456Z\",\"level\":\"?\","
			    "\"target\":\"?\",\"name\":\"?\",\"file\":\"?\",\"line\":0,"
			    "\"fields\":{\"message\":\"<callsite 0x401000>\",\"field0\":7,"
			    "\"field1\":true}}\n");
}

/* More values than the callsite has names: the rest are field<i>. */
static void test_fewer_names(void **state)
{
	struct rec_value values[] = { i64(1), i64(2), i64(3) };
	struct rec_event_view ev = view(&cs, values, 3);

	(void)state;
	PARSE(BLOB("E", "2", "n", "t", "f.c", "5", "m", "1", "a\0"));
	assert_string_equal(glog(&ev), "I1202 14:03:12.123456 4243 f.c:5] <actor[0]> m, "
				       "a: 1, field1: 2, field2: 3\n");
	assert_non_null(strstr(json(&ev), "{\"message\":\"m\",\"a\":1,\"field1\":2,"
					  "\"field2\":3}}\n"));
}

static void test_time(void **state)
{
	struct rec_event_view ev = view(&cs, NULL, 0);

	(void)state;
	PARSE(BLOB("E", "2", "n", "t", "f.c", "5", "m", "0", ""));
	ev.time_ns = -1;
	assert_non_null(strstr(json(&ev), "\"time\":\"1969-12-31T23:59:59.999999Z\""));
	assert_string_equal(glog(&ev), "I1231 23:59:59.999999 4243 f.c:5] <actor[0]> m\n");
	ev.time_ns = 0;
	assert_non_null(strstr(json(&ev), "\"time\":\"1970-01-01T00:00:00.000000Z\""));
	/* glog uses local time, JSON stays in UTC. */
	setenv("TZ", "UTC-2", 1);
	tzset();
	ev.time_ns = TIME_NS;
	assert_string_equal(glog(&ev), "I1202 16:03:12.123456 4243 f.c:5] <actor[0]> m\n");
	assert_non_null(strstr(json(&ev), "\"time\":\"2026-12-02T14:03:12.123456Z\""));
	setenv("TZ", "UTC", 1);
	tzset();
}

/* rec_text__parse_rfc3339() reads exactly what rec_text__rfc3339() writes. */
static void test_parse_time(void **state)
{
	static const int64_t times[] = {
		0, -1, TIME_NS, INT64_MIN + 999, INT64_MAX - 854775807, 1796220192123456000LL
	};
	static const char *const bad[] = {
		"",
		"2026-12-02T14:03:12.123456",
		"2026-12-02T14:03:12.123456z",
		"2026-12-02 14:03:12.123456Z",
		"2026-12-02T14:03:12.12345Z",
		"2026-12-02T14:03:12.1234567Z",
		"2026-13-02T14:03:12.123456Z",
		"2026-02-30T14:03:12.123456Z",
		"2026-12-02T24:03:12.123456Z",
		"2026-12-02T14:03:60.123456Z",
		"2026-12-02T14:03:12.12345xZ",
		"+026-12-02T14:03:12.123456Z",
		"2026-12-00T14:03:12.123456Z",
	};
	char buf[REC_TEXT_TIME_MAX];
	int64_t t;

	(void)state;
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		int64_t usec = times[i] - ((times[i] % 1000) + 1000) % 1000;

		assert_int_equal(rec_text__parse_rfc3339(rec_text__rfc3339(times[i], buf), &t), 0);
		assert_int_equal(t, usec);
	}
	assert_int_equal(rec_text__parse_rfc3339("2024-02-29T00:00:00.000001Z", &t), 0);
	assert_int_equal(t, 1709164800000001000LL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rec_text__parse_rfc3339(bad[i], &t) != -EINVAL)
			fail_msg("\"%s\" was not refused", bad[i]);
	/* Past what int64_t nanoseconds hold. */
	assert_int_equal(rec_text__parse_rfc3339("2262-04-11T23:47:16.854776Z", &t), -ERANGE);
	assert_int_equal(rec_text__parse_rfc3339("1677-09-21T00:12:43.145223Z", &t), -ERANGE);
	assert_int_equal(rec_text__parse_rfc3339("2262-04-11T23:47:16.854775Z", &t), 0);
	assert_int_equal(t, INT64_MAX - 807);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_string),
		cmocka_unit_test(test_text_escape),
		cmocka_unit_test(test_key_format),
		cmocka_unit_test(test_glog_example),
		cmocka_unit_test(test_json_example),
		cmocka_unit_test(test_json_ns_pid_and_levels),
		cmocka_unit_test(test_message_from_field),
		cmocka_unit_test(test_no_message),
		cmocka_unit_test(test_f64),
		cmocka_unit_test(test_string_markers),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_no_callsite),
		cmocka_unit_test(test_fewer_names),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_parse_time),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
