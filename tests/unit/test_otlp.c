// SPDX-License-Identifier: MIT
/* The OTLP exporter's pure parts: URLs, the request envelope, the IDs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>

#include "export/http.h"
#include "export/otlp.h"
#include "output/output.h"

static void urls(void **state)
{
	struct rec_http_url u;
	const char *why = NULL;

	(void)state;
	assert_int_equal(rec_http__parse_url("http://127.0.0.1:4318", &u, &why), 0);
	assert_string_equal(u.host, "127.0.0.1");
	assert_string_equal(u.port, "4318");
	assert_string_equal(u.path, "");
	assert_int_equal(rec_http__parse_url("http://collector/otlp/", &u, &why), 0);
	assert_string_equal(u.port, "80");
	assert_string_equal(u.path, "/otlp");
	assert_int_equal(rec_http__parse_url("https://x", &u, &why), -EINVAL);
	assert_string_equal(why, "https is not supported: use http://");
	assert_int_equal(rec_http__parse_url("ftp://x", &u, &why), -EINVAL);
	assert_int_equal(rec_http__parse_url("http://:80", &u, &why), -EINVAL);
	assert_int_equal(rec_http__parse_url("http://x:8a", &u, &why), -EINVAL);
	assert_int_equal(rec_http__parse_url("http://x/a b", &u, &why), -EINVAL);
}

static void envelope(void **state)
{
	struct rec_otlp_opts o = { .service_name = "svc \"q\"", .pid = 42 };
	char *body = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(rec_otlp__envelope(&o, REC_OTLP_LOGS, "host", "{\"a\":1},{\"b\":2}", 15,
					    &body, &len),
			 0);
	assert_string_equal(
		body, "{\"resourceLogs\":[{\"resource\":{\"attributes\":["
		      "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"svc \\\"q\\\"\"}},"
		      "{\"key\":\"process.pid\",\"value\":{\"intValue\":\"42\"}},"
		      "{\"key\":\"host.name\",\"value\":{\"stringValue\":\"host\"}}]},"
		      "\"scopeLogs\":[{\"scope\":{\"name\":\"recorder\",\"version\":\"0.1\"},"
		      "\"logRecords\":[{\"a\":1},{\"b\":2}]}]}]}");
	free(body);
}

static void ids(void **state)
{
	char t1[33], s1[17], t2[33], s2[17];

	(void)state;
	rec_output_otlp__ids(0x8000000000000001ULL, 7, t1, s1);
	rec_output_otlp__ids(0x8000000000000001ULL, 7, t2, s2);
	assert_string_equal(t1, t2);
	assert_int_equal(strlen(t1), 32);
	assert_int_equal(strlen(s1), 16);
	assert_int_equal(strspn(t1, "0123456789abcdef"), 32);
	/* Another salt (another run), another trace. */
	rec_output_otlp__ids(0x8000000000000001ULL, 8, t2, s2);
	assert_string_not_equal(t1, t2);
	rec_output_otlp__ids(0x8000000000000002ULL, 7, t2, s2);
	assert_string_not_equal(t1, t2);
}

/* Renders sp with the OTLP backend under salt 7, read at read_ns, into a string. */
static char *span_json(const struct rec_span_view *sp, int64_t read_ns)
{
	struct rec_output o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	rec_output__init(&o, f, &rec_output_otlp__ops);
	o.salt = 7;
	rec_output_otlp__span(&o, sp, read_ns);
	fclose(f);
	return buf;
}

/* The value of string member name in json (the first), into out (size bytes). */
static void member(const char *json, const char *name, char *out, size_t size)
{
	char pat[64];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\"%s\":\"", name);
	p = strstr(json, pat);
	assert_non_null(p);
	p += strlen(pat);
	e = strchr(p, '"');
	assert_non_null(e);
	assert_true((size_t)(e - p) < size);
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = 0;
}

static const struct rec_callsite span_cs = {
	.kind = 'S', .name = "handle", .target = "app::http", .file = "src/http.c", .line = 42
};

static void span_closed(void **state)
{
	struct rec_span_view sp = {
		.from = { .pid = 10,
			  .tid = 11,
			  .recording = 0x8000000000000001ULL,
			  .subject = "req \"7\"" },
		.id = 5,
		.parent = 0,
		.cs = &span_cs,
		.enter_ns = 1700000000000000001LL,
		.exit_ns = 1700000000000000999LL,
	};
	char tid[33], sid[17], want[33], v[64], *j = span_json(&sp, 1800000000000000000LL);

	(void)state;
	rec_output_otlp__ids(sp.from.recording, 7, want, sid);
	member(j, "traceId", tid, sizeof(tid));
	assert_string_equal(tid, want);
	member(j, "spanId", v, sizeof(v));
	assert_int_equal(strlen(v), 16);
	assert_int_equal(strspn(v, "0123456789abcdef"), 16);
	assert_string_not_equal(v, sid); /* not the recording's span ID of the log records */
	/* The whole line, but for the IDs. */
	assert_non_null(strstr(
		j, "\",\"name\":\"handle\",\"kind\":1,"
		   "\"startTimeUnixNano\":\"1700000000000000001\","
		   "\"endTimeUnixNano\":\"1700000000000000999\",\"attributes\":["
		   "{\"key\":\"thread.id\",\"value\":{\"intValue\":\"11\"}},"
		   "{\"key\":\"code.filepath\",\"value\":{\"stringValue\":\"src/http.c\"}},"
		   "{\"key\":\"code.lineno\",\"value\":{\"intValue\":\"42\"}},"
		   "{\"key\":\"recorder.target\",\"value\":{\"stringValue\":\"app::http\"}},"
		   "{\"key\":\"recorder.subject\",\"value\":{\"stringValue\":\"req \\\"7\\\"\"}},"
		   "{\"key\":\"recorder.recording\","
		   "\"value\":{\"stringValue\":\"0x8000000000000001\"}}]}\n"));
	assert_null(strstr(j, "parentSpanId"));			/* no parent known: a root */
	assert_int_equal(strncmp(j, "{\"traceId\":\"", 12), 0); /* how otlp.c tells spans */
	free(j);
}

/*
 * Through the backend's ops, as recorder-tail writes it: a span open in a
 * snapshot ends at the snapshot's time (the view's read_ns), not when the file
 * is read, and says it is open (issue 35, item 5).
 */
static void span_open_ends_at_its_read_time(void **state)
{
	struct rec_span_view sp = {
		.from = { .tid = 11, .recording = 1, .subject = "get" },
		.id = 6,
		.cs = &span_cs,
		.enter_ns = 1700000000000000150LL,
		.read_ns = 1700000001010000150LL,
	};
	struct rec_output o;
	char *buf = NULL, v[24];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	rec_output__init(&o, f, &rec_output_otlp__ops);
	rec_output__span(&o, &sp);
	fclose(f);
	member(buf, "endTimeUnixNano", v, sizeof(v));
	assert_string_equal(v, "1700000001010000150");
	assert_non_null(strstr(buf, "{\"key\":\"recorder.open\",\"value\":{\"boolValue\":true}}"));
	free(buf);
}

static void span_parent_open_and_unknown_enter(void **state)
{
	struct rec_span_view parent = {
		.from = { .tid = 11, .recording = 1, .subject = "s" },
		.id = 5,
		.cs = &span_cs,
		.enter_ns = 100,
		.exit_ns = 200,
	};
	struct rec_span_view child = parent;
	char psid[17], v[24], *pj = span_json(&parent, 999), *cj;

	(void)state;
	member(pj, "spanId", psid, sizeof(psid));
	/* Open: it ends at the read, and says so. */
	child.id = 6;
	child.parent = 5;
	child.enter_ns = 150;
	child.exit_ns = 0;
	cj = span_json(&child, 999);
	member(cj, "parentSpanId", v, sizeof(v));
	assert_string_equal(v, psid);
	member(cj, "spanId", v, sizeof(v));
	assert_string_not_equal(v, psid);
	member(cj, "startTimeUnixNano", v, sizeof(v));
	assert_string_equal(v, "150");
	member(cj, "endTimeUnixNano", v, sizeof(v));
	assert_string_equal(v, "999");
	assert_non_null(strstr(cj, "{\"key\":\"recorder.open\",\"value\":{\"boolValue\":true}}"));
	assert_null(strstr(cj, "recorder.enter_unknown"));
	free(cj);
	/* Entered before the attach: a zero-length span at its exit. */
	child.enter_ns = 0;
	child.exit_ns = 180;
	child.cs = NULL;
	child.meta = 0x1234;
	cj = span_json(&child, 999);
	member(cj, "startTimeUnixNano", v, sizeof(v));
	assert_string_equal(v, "180");
	member(cj, "endTimeUnixNano", v, sizeof(v));
	assert_string_equal(v, "180");
	assert_non_null(
		strstr(cj, "{\"key\":\"recorder.enter_unknown\",\"value\":{\"boolValue\":true}}"));
	assert_null(strstr(cj, "recorder.open"));
	member(cj, "name", v, sizeof(v));
	assert_non_null(strstr(v, "1234"));
	free(cj);
	/* Both unknown: at the read. */
	child.exit_ns = 0;
	cj = span_json(&child, 999);
	member(cj, "startTimeUnixNano", v, sizeof(v));
	assert_string_equal(v, "999");
	free(cj);
	free(pj);
}

/* The backend's span call is the one above; spans and log records go to their own batches. */
static void spans_are_routed(void **state)
{
	struct rec_otlp_opts opts = { .url = "http://127.0.0.1:1",
				      .service_name = "s",
				      .log = stderr };
	struct rec_span_view sp = {
		.from = { .recording = 1, .subject = "s" },
		.id = 5,
		.cs = &span_cs,
		.enter_ns = 100,
		.exit_ns = 200,
	};
	struct rec_otlp *ex;
	struct rec_output o;
	const char *why;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	rec_output__init(&o, f, &rec_output_otlp__ops);
	rec_output__span(&o, &sp);
	fclose(f);
	assert_non_null(strstr(buf, "\"endTimeUnixNano\":\"200\""));
	assert_int_equal(rec_otlp__new(&ex, &opts, &why), 0);
	rec_otlp__write(ex, buf, len);
	rec_otlp__write(ex, "{\"timeUnixNano\":\"1\"}\n", 21);
	assert_int_equal(rec_otlp__counts(ex)->sig[REC_OTLP_TRACES].taken, 1);
	assert_int_equal(rec_otlp__counts(ex)->sig[REC_OTLP_LOGS].taken, 1);
	rec_otlp__free(ex);
	free(buf);
}

static void envelope_traces(void **state)
{
	struct rec_otlp_opts o = { .service_name = "svc", .pid = 42 };
	char *body = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(
		rec_otlp__envelope(&o, REC_OTLP_TRACES, "host", "{\"a\":1}", 7, &body, &len), 0);
	assert_string_equal(
		body, "{\"resourceSpans\":[{\"resource\":{\"attributes\":["
		      "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"svc\"}},"
		      "{\"key\":\"process.pid\",\"value\":{\"intValue\":\"42\"}},"
		      "{\"key\":\"host.name\",\"value\":{\"stringValue\":\"host\"}}]},"
		      "\"scopeSpans\":[{\"scope\":{\"name\":\"recorder\",\"version\":\"0.1\"},"
		      "\"spans\":[{\"a\":1}]}]}]}");
	free(body);
}

/*
 * With REC_OTLP_TRACES_URL set (tests/e2e/test_otlp.sh): sends three synthetic
 * spans (a closed root, an open child, a child entered before the attach)
 * through the exporter to that receiver, /v1/traces, and expects them taken.
 * Until the recorder produces spans, this is how the traces path meets a
 * real receiver and the official schema.
 */
static void traces_to_a_receiver(void **state)
{
	const char *url = getenv("REC_OTLP_TRACES_URL");
	struct rec_otlp_opts opts = {
		.url = url, .service_name = "synthetic", .pid = 42, .log = stderr
	};
	struct rec_span_view sp[3] = {
		{ .from = { .tid = 11, .recording = 0x8000000000000001ULL, .subject = "req" },
		  .id = 5,
		  .cs = &span_cs,
		  .enter_ns = 1700000000000000100LL,
		  .exit_ns = 1700000000000000900LL },
		{ .from = { .tid = 11, .recording = 0x8000000000000001ULL, .subject = "req" },
		  .id = 6,
		  .parent = 5,
		  .cs = &span_cs,
		  .enter_ns = 1700000000000000200LL },
		{ .from = { .tid = 12, .recording = 0x8000000000000001ULL, .subject = "req" },
		  .id = 7,
		  .parent = 5,
		  .cs = &span_cs,
		  .exit_ns = 1700000000000000300LL },
	};
	struct rec_otlp *ex;
	const char *why;

	(void)state;
	if (!url)
		return; /* a unit run: the e2e test sets it */
	assert_int_equal(rec_otlp__new(&ex, &opts, &why), 0);
	for (int i = 0; i < 3; i++) {
		char *j = span_json(&sp[i], 1700000000000000999LL);

		rec_otlp__write(ex, j, strlen(j));
		free(j);
	}
	assert_int_equal(rec_otlp__finish(ex, "test_otlp"), 0);
	assert_int_equal(rec_otlp__counts(ex)->sig[REC_OTLP_TRACES].sent, 3);
	rec_otlp__free(ex);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(urls),
		cmocka_unit_test(envelope),
		cmocka_unit_test(ids),
		cmocka_unit_test(span_closed),
		cmocka_unit_test(span_parent_open_and_unknown_enter),
		cmocka_unit_test(span_open_ends_at_its_read_time),
		cmocka_unit_test(spans_are_routed),
		cmocka_unit_test(envelope_traces),
		cmocka_unit_test(traces_to_a_receiver),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
