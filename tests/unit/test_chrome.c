// SPDX-License-Identifier: MIT
/*
 * The Chrome trace-event backend (user/output/output_chrome.c) on synthetic
 * events and spans: the document is pinned by tests/golden/chrome/spans.json
 * (RECORDER_UPDATE_GOLDEN=1 rewrites it), which tests/chrome/check_trace.py
 * also checks (nesting, metadata, counts). RECORDER_CHROME_OUT=PATH writes
 * the document to PATH too: the browser test renders it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/output.h"

#define GOLDEN "tests/golden/chrome/spans.json"

/* ns after a fixed epoch second, so that the timestamps look real. */
#define T(us) (1764820000000000000LL + (int64_t)(us)*1000 + 123)

static struct rec_callsite ev_cs = {
	.kind = 'E',
	.level = REC_LEVEL_INFO,
	.name = "event src/conn.c:42",
	.target = "conn",
	.file = "src/conn.c",
	.line = 42,
	.message = "read \"block\"\n",
	.nfields = 1,
	.field_names = { "bytes" },
};

static struct rec_callsite span_cs[4] = {
	{ .kind = 'S', .name = "handle", .target = "conn", .file = "src/conn.c", .line = 10 },
	{ .kind = 'S', .name = "parse", .target = "conn", .file = "src/conn.c", .line = 20 },
	{ .kind = 'S', .name = "reply", .target = "conn", .file = "src/conn.c", .line = 30 },
	{ .kind = 'S', .name = "span \x1b[2J", .target = "x", .file = "src/x.c", .line = 40 },
};

static void event(struct rec_output *o, uint32_t tid, uint64_t recording, const char *subject,
		  uint64_t seq, int64_t t)
{
	struct rec_value v = { .type = REC_TYPE_U64, .u64 = seq * 100 };
	struct rec_event_view ev = {
		.from = { .pid = 4242,
			  .tid = tid,
			  .recording = recording,
			  .recorder = 0x8000000000000001ULL,
			  .subject = subject },
		.seq = seq,
		.time_ns = t,
		.cs = &ev_cs,
		.nfields = 1,
		.values = &v,
	};

	rec_output__event(o, &ev);
}

/* When the spans are read (their view's read_ns): an open one ends there; 0: not known. */
static int64_t read_at;

static void span(struct rec_output *o, uint32_t tid, uint64_t recording, const char *subject,
		 uint64_t id, uint64_t parent, int cs, int64_t enter, int64_t exit)
{
	struct rec_span_view sp = {
		.from = { .pid = 4242,
			  .tid = tid,
			  .recording = recording,
			  .recorder = 0x8000000000000001ULL,
			  .subject = subject },
		.id = id,
		.parent = parent,
		.cs = cs >= 0 ? &span_cs[cs] : NULL,
		.meta = 0x5000,
		.enter_ns = enter,
		.exit_ns = exit,
		.read_ns = read_at,
	};

	rec_output__span(o, &sp);
}

/* The scenario of the golden file, as a tail gives it: events, then spans by exit, open last. */
static char *scenario(size_t *len)
{
	struct rec_output o;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	rec_output__init(&o, f, &rec_output_chrome__ops);
	rec_output__begin(&o);
	/* Read (a snapshot taken) at 13 ms: the open spans end there. */
	read_at = T(13000);
	/* Thread 100 serves one recording: named by its subject. */
	event(&o, 100, 0x10, "actor[0]", 1, T(1000));		     /* at the outer B: inside */
	event(&o, 100, 0x10, "actor[0]", 2, T(3000));		     /* in parse */
	event(&o, 100, 0x10, "actor[0]", 3, T(4000));		     /* parse ends, reply starts */
	event(&o, 100, 0x10, "actor[0]", 4, T(9500));		     /* after handle */
	event(&o, 100, 0x10, "actor[0]", 5, T(12000));		     /* in the open spans */
	span(&o, 100, 0x10, "actor[0]", 2, 1, 1, T(2000), T(4000));  /* parse */
	span(&o, 100, 0x10, "actor[0]", 4, 3, -1, T(5000), T(5000)); /* zero long, in reply */
	span(&o, 100, 0x10, "actor[0]", 3, 1, 2, T(4000), T(6000));  /* reply, after parse */
	span(&o, 100, 0x10, "actor[0]", 5, 1, 2, T(7000), T(9000));  /* ends with its parent */
	span(&o, 100, 0x10, "actor[0]", 1, 0, 0, T(1000), T(9000));  /* handle */
	span(&o, 100, 0x10, "actor[0]", 6, 0, 3, 0, T(9700));	     /* enter fell out */
	span(&o, 100, 0x10, "actor[0]", 7, 0, 0, T(10000), 0);	     /* open */
	span(&o, 100, 0x10, "actor[0]", 8, 7, 1, T(11000), 0);	     /* open, inside */
	span(&o, 100, 0x10, "actor[0]", 11, 0, 0, 0, 0); /* open since before the attach */
	/* Thread 101 serves two recordings; its spans overlap (a damaged input). */
	event(&o, 101, 0x20, "actor[1]", 1, T(1500));
	event(&o, 101, 0x30, "actor[2]", 1, T(6000));
	span(&o, 101, 0x20, "actor[1]", 9, 0, 0, T(1000), T(5000));
	span(&o, 101, 0x30, "actor[2]", 10, 0, 1, T(2000), T(8000)); /* cut at 5000 */
	rec_output__end(&o);
	assert_int_equal(fclose(f), 0);
	read_at = 0;
	return buf;
}

static void test_scenario_matches_golden(void **state)
{
	size_t len, want_len;
	char *got = scenario(&len), *want;
	FILE *f;

	(void)state;
	/* The browser test renders the document today's backend writes. */
	if (getenv("RECORDER_CHROME_OUT")) {
		f = fopen(getenv("RECORDER_CHROME_OUT"), "w");
		assert_non_null(f);
		fwrite(got, 1, len, f);
		assert_int_equal(fclose(f), 0);
	}
	if (getenv("RECORDER_UPDATE_GOLDEN")) {
		f = fopen(GOLDEN, "w");
		assert_non_null(f);
		fwrite(got, 1, len, f);
		assert_int_equal(fclose(f), 0);
	}
	f = fopen(GOLDEN, "r");
	assert_non_null(f);
	want = malloc(1 << 20);
	assert_non_null(want);
	want_len = fread(want, 1, 1 << 20, f);
	fclose(f);
	if (want_len != len || memcmp(want, got, len)) {
		fprintf(stderr, "got:\n%.*s\n", (int)len, got);
		fail_msg("the document differs from " GOLDEN);
	}
	free(want);
	free(got);
}

/* Parts of the document that the golden file holds, said once more in words. */
static void test_scenario_parts(void **state)
{
	size_t len;
	char *got = scenario(&len);

	(void)state;
	assert_true(strncmp(got, "{\"traceEvents\":[", 16) == 0);
	assert_non_null(strstr(got,
			       "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":4242,\"tid\":100,"
			       "\"args\":{\"name\":\"actor[0]\"}"));
	assert_non_null(strstr(got, "\"tid\":101,\"args\":{\"name\":\"tid 101 (several "
				    "recordings)\"}"));
	/* Microseconds with the nanoseconds as three decimals. */
	assert_non_null(strstr(got, "\"ts\":1764820000001000.123"));
	/* Strings from the target are escaped. */
	assert_non_null(strstr(got, "read \\\"block\\\"\\n"));
	assert_non_null(strstr(got, "span \\u001b[2J"));
	assert_null(strchr(got, '\x1b'));
	/* The exit whose enter fell out is an instant; the open spans end when read. */
	assert_non_null(strstr(got, "\"enter\":\"before the attach\""));
	assert_non_null(strstr(got, "\"open\":true"));
	assert_non_null(strstr(
		got, "{\"name\":\"parse (open)\",\"ph\":\"E\",\"ts\":1764820000013000.123,"
		     "\"pid\":4242,\"tid\":100},\n"
		     "{\"name\":\"handle (open)\",\"ph\":\"E\",\"ts\":1764820000013000.123,"));
	assert_non_null(strstr(got, "\"clipped\":true"));
	assert_non_null(strstr(got, "\"recorder_spans_open_untimed\":1}"));
	/* handle's B comes before parse's, and parse's E before reply's B. */
	assert_true(strstr(got, "\"span\":\"0x1\"") < strstr(got, "\"span\":\"0x2\""));
	assert_true(strstr(got, "\"ph\":\"E\",\"ts\":1764820000004000.123") <
		    strstr(got, "\"ph\":\"B\",\"ts\":1764820000004000.123"));
	free(got);
}

/*
 * The request a snapshot was taken for (issue 35, item 5): a set that took 3 ms,
 * then a get whose command and lookup spans are still open when the snapshot
 * is taken 1,010 ms later. Each open span gets its E at the snapshot's time,
 * named as its B ("lookup (open)"), args.open true: the viewers draw it.
 */
static void test_open_spans_end_when_read(void **state)
{
	struct rec_output o;
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	rec_output__init(&o, f, &rec_output_chrome__ops);
	rec_output__begin(&o);
	read_at = T(1060000);
	span(&o, 100, 0x10, "set", 1, 0, 0, T(1000), T(4000));
	span(&o, 100, 0x20, "get", 2, 0, 0, T(50000), 0);
	span(&o, 100, 0x20, "get", 3, 2, 1, T(50010), 0);
	rec_output__end(&o);
	assert_int_equal(fclose(f), 0);
	read_at = 0;
	assert_non_null(strstr(buf, "{\"name\":\"handle (open)\",\"cat\":\"conn\",\"ph\":\"B\","
				    "\"ts\":1764820000050000.123,"));
	assert_non_null(strstr(buf, "{\"name\":\"parse (open)\",\"cat\":\"conn\",\"ph\":\"B\","
				    "\"ts\":1764820000050010.123,"));
	assert_non_null(
		strstr(buf, "\"line\":20,\"open\":true}},\n"
			    "{\"name\":\"parse (open)\",\"ph\":\"E\",\"ts\":1764820001060000.123,"
			    "\"pid\":4242,\"tid\":100},\n"
			    "{\"name\":\"handle (open)\",\"ph\":\"E\",\"ts\":1764820001060000.123,"
			    "\"pid\":4242,\"tid\":100}]}\n"));
	/* The span that ended is named as it was. */
	assert_non_null(
		strstr(buf, "{\"name\":\"handle\",\"ph\":\"E\",\"ts\":1764820000004000.123,"));
	free(buf);
}

/* Read at a time not known (an older dump): an open span ends at the document's last time. */
static void test_open_spans_end_at_the_last_time_if_not_known(void **state)
{
	struct rec_output o;
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	rec_output__init(&o, f, &rec_output_chrome__ops);
	rec_output__begin(&o);
	span(&o, 100, 0x10, "a", 1, 0, 0, T(1000), 0);
	event(&o, 100, 0x10, "a", 1, T(2000));
	span(&o, 101, 0x20, "b", 2, 0, 1, T(1500), T(3000));
	span(&o, 102, 0x30, "c", 3, 0, 2, T(5000), 0);
	rec_output__end(&o);
	assert_int_equal(fclose(f), 0);
	assert_non_null(
		strstr(buf, "{\"name\":\"handle (open)\",\"ph\":\"E\",\"ts\":1764820000005000.123,"
			    "\"pid\":4242,\"tid\":100}"));
	/* One entered after everything else: zero long, at its enter. */
	assert_non_null(
		strstr(buf, "{\"name\":\"reply (open)\",\"ph\":\"E\",\"ts\":1764820000005000.123,"
			    "\"pid\":4242,\"tid\":102}"));
	free(buf);
}

/* A follower's events come without a begin: not shown, and nothing breaks. */
static void test_event_without_a_document(void **state)
{
	struct rec_output o;
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	rec_output__init(&o, f, &rec_output_chrome__ops);
	event(&o, 1, 1, "s", 1, T(1));
	span(&o, 1, 1, "s", 1, 0, 0, T(1), T(2));
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
}

/* An empty tail is a valid, empty document. */
static void test_empty_tail(void **state)
{
	struct rec_output o;
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	rec_output__init(&o, f, &rec_output_chrome__ops);
	rec_output__begin(&o);
	rec_output__end(&o);
	fclose(f);
	assert_string_equal(buf, "{\"traceEvents\":[]}\n");
	free(buf);
}

static void test_micros(void **state)
{
	static const struct {
		int64_t ns;
		const char *want;
	} cases[] = {
		{ 0, "0.000" },
		{ 1, "0.001" },
		{ 999, "0.999" },
		{ 1234567891, "1234567.891" },
		{ -1500, "-1.500" },
		{ INT64_MAX, "9223372036854775.807" },
		{ INT64_MIN, "-9223372036854775.808" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rec_json w;
		char *buf = NULL;
		size_t len;
		FILE *f = open_memstream(&buf, &len);

		rec_json__init(&w, f);
		rec_json__micros(&w, cases[i].ns);
		fclose(f);
		assert_string_equal(buf, cases[i].want);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scenario_matches_golden),
		cmocka_unit_test(test_scenario_parts),
		cmocka_unit_test(test_open_spans_end_when_read),
		cmocka_unit_test(test_open_spans_end_at_the_last_time_if_not_known),
		cmocka_unit_test(test_event_without_a_document),
		cmocka_unit_test(test_empty_tail),
		cmocka_unit_test(test_micros),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
