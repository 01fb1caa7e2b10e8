// SPDX-License-Identifier: MIT
/*
 * Black-box dumps: a model built by hand (callsites are real blobs from
 * recorder.h, read back from this very process) is written, read back, and must
 * answer every query byte for byte as the live model does. Malformed dumps are
 * refused with a message that names the offending path.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REC_TARGET "srv"
#include "recorder.h"

#include "model/dump.h"
#include "model/proc.h"
#include "model/names.h"
#include "serving/query.h"
#include "target/target.h"

#define KEY_A 0x8000000000000002ULL
#define KEY_B 0x8000000000000003ULL
#define KEY_C 0x8000000000000004ULL
#define UNKNOWN_META 0xdead0000ULL
#define NOW_NS 1796220192123456789LL

/* This process as a target: the live models read its memory (target/target.h). */
static struct rec_target self;

static void proc_init_self(struct rec_proc *p)
{
	struct rec_reader reader;

	if (!self.pid)
		assert_int_equal(rec_target__open(&self, getpid()), 0);
	rec_target__reader(&self, &reader);
	rec_proc__init(p, getpid(), &reader);
	p->ns_pid = self.ns_pid;
	p->uid = self.uid;
}

static const char *rec_meta = "RCS1\0S\0"
			      "2\0recording\0recorder\0recorder.h\0"
			      "0\0\0"
			      "3\0recording\0recorder\0subject\0";
static const char *span_meta = REC__SPAN_META(INFO, "handle");
static const char *req_meta =
	REC__META("E", WARN, "event a", "request done", 5, "path\0status\0ms\0ok\0delta\0");
static const char *quote_meta =
	REC__META("E", ERROR, "event b", "bad \"q\" \\ x\ty \xc3\xa9", 0, "");
static const char *str_meta = REC__META("E", INFO, "event c", "", 5, "message\0t\0f\0n\0s\0");
static const char *num_meta =
	REC__META("E", DEBUG, "event d", "numbers", 8, "a\0b\0c\0d\0e\0f\0g\0h\0");

/* ---- building a live model ---- */

struct ev {
	int n;
	uint32_t off;
	int has_str;
	union {
		struct rec_event_rec e;
		unsigned char bytes[REC_EVENT_REC_MAX];
	} u;
};

static void ev_init(struct ev *ev, uint64_t key, uint64_t seq, uint64_t meta)
{
	memset(ev, 0, sizeof(*ev));
	ev->u.e.hdr.type = REC_RT_EVENT;
	ev->u.e.hdr.tgid = getpid();
	ev->u.e.hdr.tid = 77 + (uint32_t)(seq & 1);
	ev->u.e.hdr.time_ns = 5000000000ULL + seq * 1234567ULL;
	ev->u.e.recording = key;
	ev->u.e.seq = seq;
	ev->u.e.meta = meta;
}

static void ev_raw(struct ev *ev, enum rec_field_type type, uint64_t raw)
{
	ev->u.e.types |= (uint64_t)type << (4 * ev->n);
	ev->u.e.values[ev->n++] = raw;
}

static void ev_f64(struct ev *ev, double v)
{
	uint64_t raw;

	memcpy(&raw, &v, sizeof(raw));
	ev_raw(ev, REC_TYPE_F64, raw);
}

static void ev_str(struct ev *ev, const char *s, enum rec_str_status st)
{
	uint32_t len = (uint32_t)strlen(s);

	ev->has_str = 1;
	if (st != REC_STR_OK && st != REC_STR_TRUNCATED) {
		ev_raw(ev, REC_TYPE_STR, REC_STR_SLOT(0, 0, st));
		return;
	}
	memcpy(ev->u.bytes + sizeof(ev->u.e) + ev->off, s, len);
	ev_raw(ev, REC_TYPE_STR, REC_STR_SLOT(ev->off, len, st));
	ev->off += len + 1;
}

static int ev_ingest(struct rec_proc *p, struct ev *ev)
{
	size_t size = sizeof(ev->u.e) + (ev->has_str ? REC_STR_AREA : 0);
	struct rec_decoded d;
	struct rec_rstate *rs;

	ev->u.e.hdr.size = (uint16_t)size;
	return rec_proc__ingest_event(p, ev->u.bytes, size, &d, &rs);
}

static void add_recording(struct rec_proc *p, uint64_t key, const char *subject, uint64_t cap,
			  uint32_t state, uint64_t seq, uint64_t dropped)
{
	struct rec_recording_rec r = { .key = key,
				       .recorder = 0x80000001,
				       .cap = cap,
				       .seq = seq,
				       .dropped = dropped,
				       .state = state,
				       .has_subject = 1 };

	strcpy(r.subject, subject);
	assert_int_equal(rec_proc__ingest_recording(p, &r), 0);
}

static void frame(struct rec_stack_rec *t, uint64_t meta, uint64_t key)
{
	t->frames[t->depth++] = (struct rec_frame){
		.span = 0x7f0000001000ULL + t->depth * 64,
		.meta = meta,
		.recording = key,
	};
}

static uint64_t addr(const char *meta)
{
	return (uintptr_t)meta;
}

/*
 * The model of a process that just died, as the loader holds it when it writes
 * the dump: every kind of value, gap and string status, a callsite that can't be
 * read, and the stacks its threads exited in.
 */
static void build_live(struct rec_proc *p)
{
	char longstr[REC_STR_MAX];
	struct rec_stack_rec st[2] = {
		{ .hdr = { .type = REC_RT_STACK, .size = sizeof(st[0]), .tid = 77 } },
		{ .hdr = { .type = REC_RT_STACK, .size = sizeof(st[0]), .tid = 78 },
		  .overflow = 3 },
	};
	struct rec_exit_rec ex = {
		.hdr = { .type = REC_RT_EXIT, .size = sizeof(ex), .time_ns = 7000000123ULL },
		.status = SIGSEGV | 0x80
	};
	struct ev ev;

	proc_init_self(p);
	add_recording(p, KEY_A, "a", 4, REC_RS_LIVE, 8, 1);
	add_recording(p, KEY_B, "b \"quoted\"\tand\\more", 10, REC_RS_LIVE, 0, 0);
	add_recording(p, KEY_C, "", 2, REC_RS_RETIRED, 3, 3);

	/* A: seqs 0..6 with 3 lost; cap 4 keeps 2, 4, 5, 6. */
	for (uint64_t seq = 0; seq < 7; seq++) {
		if (seq == 3)
			continue;
		ev_init(&ev, KEY_A, seq, seq == 5 ? UNKNOWN_META : addr(req_meta));
		ev_str(&ev, seq == 4 ? "" : "/index.html", REC_STR_OK);
		ev_raw(&ev, REC_TYPE_U64, 200 + seq);
		ev_f64(&ev, 1.5 * (double)seq);
		ev_raw(&ev, REC_TYPE_BOOL, seq & 1);
		ev_raw(&ev, REC_TYPE_I64, (uint64_t)(int64_t)-42);
		assert_int_equal(ev_ingest(p, &ev), 0);
	}
	/* Late: counted as stale. */
	ev_init(&ev, KEY_A, 0, addr(req_meta));
	assert_int_equal(ev_ingest(p, &ev), -ESTALE);

	/* B: every string status, then every kind of number. */
	memset(longstr, 'x', sizeof(longstr) - 1);
	longstr[sizeof(longstr) - 1] = '\0';
	ev_init(&ev, KEY_B, 0, addr(str_meta));
	ev_str(&ev, "hello\nworld \"\\\x01", REC_STR_OK);
	ev_str(&ev, longstr, REC_STR_TRUNCATED);
	ev_str(&ev, "", REC_STR_FAULT);
	ev_str(&ev, "", REC_STR_NULL);
	ev_str(&ev, "", REC_STR_NOSPACE);
	assert_int_equal(ev_ingest(p, &ev), 0);
	ev_init(&ev, KEY_B, 1, addr(num_meta));
	ev_f64(&ev, NAN);
	ev_f64(&ev, INFINITY);
	ev_f64(&ev, -INFINITY);
	ev_f64(&ev, -0.0);
	ev_f64(&ev, 0.1);
	ev_f64(&ev, 1e300);
	ev_raw(&ev, REC_TYPE_U64, UINT64_MAX);
	ev_raw(&ev, REC_TYPE_I64, (uint64_t)INT64_MIN);
	assert_int_equal(ev_ingest(p, &ev), 0);
	ev_init(&ev, KEY_B, 2, addr(quote_meta));
	assert_int_equal(ev_ingest(p, &ev), 0);

	/* An orphan and a malformed record are counted. */
	ev_init(&ev, 0x1234, 0, addr(req_meta));
	assert_int_equal(ev_ingest(p, &ev), -ENOENT);
	ev_init(&ev, KEY_A, 7, addr(req_meta));
	ev.u.e.types = 0x9;
	assert_int_equal(ev_ingest(p, &ev), -EINVAL);
	/* A span of a recording nothing is known of, too. */
	{
		struct rec_span_rec sr = { .hdr = { .type = REC_RT_SPAN,
						    .size = sizeof(sr),
						    .tgid = (uint32_t)getpid(),
						    .tid = 4243,
						    .time_ns = 20 },
					   .recording = 0x1234,
					   .id = 1,
					   .enter = 10 };

		assert_int_equal(rec_proc__ingest_span(p, &sr), -ENOENT);
	}

	/* It dies: the stacks its threads exited in, its wait status, then gone. */
	frame(&st[0], addr(rec_meta), KEY_A);
	frame(&st[0], addr(span_meta), KEY_A);
	frame(&st[0], UNKNOWN_META, KEY_A);
	frame(&st[1], addr(rec_meta), KEY_B);
	frame(&st[1], addr(span_meta), KEY_B);
	frame(&st[1], addr(span_meta), 0);
	assert_int_equal(rec_proc__ingest_stack(p, &st[0]), 0);
	assert_int_equal(rec_proc__ingest_stack(p, &st[1]), 0);
	rec_proc__ingest_exit(p, &ex);
	rec_proc__died(p);
}

/* ---- helpers ---- */

static char tmp_path[64];

static int setup_tmp(void **state)
{
	int fd;

	(void)state;
	strcpy(tmp_path, "/tmp/test_dump.XXXXXX");
	fd = mkstemp(tmp_path);
	assert_true(fd >= 0);
	close(fd);
	return 0;
}

static int teardown_tmp(void **state)
{
	(void)state;
	unlink(tmp_path);
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;

	assert_non_null(f);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* Writes p to tmp_path and returns the dump's text. */
static char *dump_to_file(struct rec_proc *p, const struct rec_dump_counters *counters)
{
	FILE *f = fopen(tmp_path, "w");

	assert_non_null(f);
	assert_int_equal(rec_dump__write(f, p, counters, NOW_NS), 0);
	fclose(f);
	return slurp(tmp_path);
}

static void text_to_file(const char *text)
{
	FILE *f = fopen(tmp_path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *answer(struct rec_proc *p, uint32_t flags, int64_t n)
{
	struct rec_query q = { .flags = flags, .n = n };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(rec_query__answer(f, p, &q), 0);
	fclose(f);
	return buf;
}

/* Replaces the first occurrence of from in *s with to (which must be found). */
static void replace(char **s, const char *from, const char *to)
{
	char *at = strstr(*s, from);
	char *out;

	if (!at)
		fail_msg("\"%s\" not in the dump", from);
	assert_true(asprintf(&out, "%.*s%s%s", (int)(at - *s), *s, to, at + strlen(from)) > 0);
	free(*s);
	*s = out;
}

/* ---- round trip ---- */

static void test_round_trip_answers_identically(void **state)
{
	static const uint32_t flags[] = {
		0,
		REC_Q_JSON,
		REC_Q_LIST,
		REC_Q_LIST | REC_Q_JSON,
		REC_Q_STACKS,
		REC_Q_STACKS | REC_Q_JSON,
		REC_Q_STATS,
		REC_Q_STATS | REC_Q_JSON,
	};
	struct rec_dump_counters counters, back_counters;
	struct rec_proc live, back;
	char err[256], *text, *text2;

	(void)state;
	for (int c = 0; c < REC_C_MAX; c++)
		counters.v[c] = 100 + c;
	counters.v[REC_C_RING_FULL] = UINT64_MAX;
	build_live(&live);
	memcpy(live.counters, counters.v, sizeof(live.counters));
	text = dump_to_file(&live, &counters);
	assert_int_equal(rec_dump__read(tmp_path, &back, &back_counters, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_memory_equal(&counters, &back_counters, sizeof(counters));
	assert_memory_equal(counters.v, back.counters, sizeof(back.counters));

	assert_false(back.alive);
	assert_int_equal(back.pid, live.pid);
	assert_int_equal(back.ns_pid, live.ns_pid);
	assert_int_equal(back.clock_offset_ns, live.clock_offset_ns);
	assert_int_equal(back.malformed, 1);
	assert_int_equal(back.orphans, 1);
	assert_int_equal(back.span_orphans, 1);
	assert_int_equal(back.end, REC_END_SIGNAL);
	assert_int_equal(back.end_code, SIGSEGV);
	assert_int_equal(back.end_core, 1);
	/* When it died: its open spans are shown up to it (issue 35, item 5). */
	assert_int_equal(back.ended_ns, 7000000123ULL);
	assert_non_null(strstr(text, "\"core_dumped\":true,\"time_ns\":7000000123}"));
	assert_int_equal(rec_proc__find(&back, KEY_A)->stale, 1);
	assert_true(rec_proc__find(&back, KEY_C)->retired);
	assert_null(back.reader.read);

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		for (int64_t n = 0; n <= 2; n += 2) {
			char *a = answer(&live, flags[i], n), *b = answer(&back, flags[i], n);

			assert_string_equal(a, b);
			free(a);
			free(b);
		}
	}

	/* The dump of the dump is the same dump, read from a file or from memory. */
	text2 = dump_to_file(&back, &back_counters);
	assert_string_equal(text, text2);
	free(text2);
	{
		struct rec_dump_counters mem_counters;
		struct rec_proc mem;

		assert_int_equal(rec_dump__read_mem(text, strlen(text), &mem, &mem_counters, err,
						    sizeof(err)),
				 0);
		text2 = dump_to_file(&mem, &mem_counters);
		assert_string_equal(text, text2);
		free(text2);
		rec_proc__fini(&mem);
	}

	/* Spot checks of the text and of what the queries showed. */
	assert_non_null(strstr(text, "{\"format\":\"recorder-dump\",\"version\":3,"));
	assert_non_null(
		strstr(text, "\"ended\":{\"how\":\"signal\",\"signal\":11,"
			     "\"name\":\"SIGSEGV\",\"core_dumped\":true,\"time_ns\":7000000123}"));
	assert_non_null(strstr(text, "\"dumped_at\":\"2026-12-02T"));
	assert_non_null(strstr(text, "\"counters\":{\"ring_full\":18446744073709551615,"
				     "\"str_fault\":101,"));
	assert_non_null(strstr(text, "\"bad_arg\":108,"));
	assert_non_null(strstr(text, "\"status\":\"truncated\""));
	assert_non_null(strstr(text, "{\"type\":\"str\",\"value\":\"\",\"status\":\"fault\"},"
				     "{\"type\":\"str\",\"value\":\"\",\"status\":\"null\"},"
				     "{\"type\":\"str\",\"value\":\"\",\"status\":\"nospace\"}"));
	assert_non_null(strstr(text, "{\"type\":\"f64\",\"value\":\"nan\"},"
				     "{\"type\":\"f64\",\"value\":\"inf\"},"
				     "{\"type\":\"f64\",\"value\":\"-inf\"},"
				     "{\"type\":\"f64\",\"value\":-0.0},"
				     "{\"type\":\"f64\",\"value\":0.1},"
				     "{\"type\":\"f64\",\"value\":1e+300},"
				     "{\"type\":\"u64\",\"value\":18446744073709551615},"
				     "{\"type\":\"i64\",\"value\":-9223372036854775808}"));
	assert_non_null(strstr(text, "\"subject\":\"b \\\"quoted\\\"\\tand\\\\more\""));
	/* The unreadable callsite is referenced but not listed. */
	assert_non_null(strstr(text, "\"callsite\":\"0xdead0000\""));
	assert_null(strstr(text, "\"addr\":\"0xdead0000\""));
	{
		char *tail = answer(&back, 0, 0);

		assert_non_null(strstr(tail, "<callsite 0xdead0000>"));
		assert_non_null(strstr(tail, "hello\\nworld"));
		assert_non_null(strstr(tail, "request done, path: /index.html"));
		free(tail);
	}
	free(text);
	rec_proc__fini(&live);
	rec_proc__fini(&back);
}

/*
 * Callsites are cached in the bytes they use, up to the limit; past it they are
 * read at each use, counted, and a dump still carries every one its events need.
 * The limits, the tally of forgotten recordings and the invalid count go
 * through the dump too.
 */
static void test_limits_round_trip(void **state)
{
	const struct rec_callsite *cs;
	struct rec_proc live, back;
	struct rec_rstate *rs;
	struct ev ev;
	char err[256], *text, *tail;

	(void)state;
	proc_init_self(&live);
	live.limits.max_callsites = 2;
	assert_non_null(rec_proc__callsite(&live, addr(req_meta)));
	cs = rec_proc__cached_callsite(&live, addr(req_meta));
	assert_non_null(cs);
	assert_string_equal(cs->field_names[4], "delta");
	/* A few hundred bytes at most, where the struct holds a 2 KiB blob. */
	assert_true(malloc_usable_size((void *)cs) < sizeof(struct rec_callsite) / 4);
	assert_non_null(rec_proc__callsite(&live, addr(span_meta)));
	cs = rec_proc__callsite(&live, addr(quote_meta));
	assert_non_null(cs);
	assert_string_equal(cs->name, "event b");
	assert_null(rec_proc__cached_callsite(&live, addr(quote_meta)));
	assert_int_equal(live.callsites.live, 2);
	assert_int_equal(live.use[REC_L_CALLSITES].over, 1);

	add_recording(&live, KEY_A, "a", 10, REC_RS_LIVE, 0, 0);
	ev_init(&ev, KEY_A, 0, addr(quote_meta));
	assert_int_equal(ev_ingest(&live, &ev), 0);
	ev_init(&ev, KEY_A, 1, addr(quote_meta));
	ev_raw(&ev, REC_TYPE_BOOL, 2);
	assert_int_equal(ev_ingest(&live, &ev), -EINVAL);
	rs = rec_proc__find(&live, KEY_A);
	assert_int_equal(rs->invalid, 1);
	rec_proc__forget(&live, 0x80000001, 3, 9, 8, 1);
	live.use[REC_L_DEAD_STACKS] = (struct rec_limit_use){ 10, 10, 40, 0 };

	text = dump_to_file(&live, NULL);
	assert_non_null(strstr(text, "\"forgotten\":[{\"recorder\":\"0x80000001\",\"recordings\":3,"
				     "\"seen\":9,\"kept\":8,\"dropped\":1}]"));
	assert_non_null(strstr(text, "\"dead_stacks\":{\"limit\":10,\"used\":10,\"over\":40,"
				     "\"events\":0}"));
	assert_non_null(strstr(text, "\"seen\":2,\"kept\":1,\"dropped\":1,\"invalid\":1,"));
	assert_int_equal(rec_dump__read(tmp_path, &back, NULL, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	/* The callsite past the cache is in the dump, so its event reads right. */
	tail = answer(&back, 0, 0);
	assert_non_null(strstr(tail, "bad \"q\""));
	assert_null(strstr(tail, "<callsite"));
	free(tail);
	{
		char *a = answer(&live, REC_Q_LIST | REC_Q_JSON, 0);
		char *b = answer(&back, REC_Q_LIST | REC_Q_JSON, 0);

		assert_string_equal(a, b);
		free(a);
		free(b);
		/* Reads past the cache keep counting: only the dump's own rows are compared. */
		b = answer(&back, REC_Q_STATS | REC_Q_JSON, 0);
		assert_non_null(strstr(b, "\"retired_kept\":{\"limit\":0,\"used\":0,\"over\":3,"
					  "\"events\":9}"));
		assert_non_null(strstr(b, "\"dead_stacks\":{\"limit\":10,\"used\":10,"
					  "\"over\":40,"));
		assert_non_null(strstr(b, "\"forgotten\":[{\"recorder\":\"0x80000001\","
					  "\"recordings\":3,"));
		free(b);
	}
	free(text);
	rec_proc__fini(&live);
	rec_proc__fini(&back);
}

/* Decodes the one event the spool holds into ctx, and stops. */
static int decode_one(uint64_t seq, const void *data, size_t len, void *ctx)
{
	(void)seq;
	assert_int_equal(rec_event__decode(data, len, ctx), 0);
	return 1;
}

/* Values come back bit for bit, including nan/inf and -0.0. */
static void test_values_exact(void **state)
{
	struct rec_proc live, back;
	struct rec_rstate *rs;
	struct rec_decoded d;
	struct ev ev;
	char err[256];
	static const double f[] = { NAN, INFINITY, -INFINITY,	  -0.0,
				    0.1, 1e-310,   123456789.125, -2.5e-7 };

	(void)state;
	proc_init_self(&live);
	add_recording(&live, KEY_A, "f", 2, REC_RS_LIVE, 0, 0);
	ev_init(&ev, KEY_A, 0, addr(num_meta));
	for (int i = 0; i < 8; i++)
		ev_f64(&ev, f[i]);
	assert_int_equal(ev_ingest(&live, &ev), 0);
	free(dump_to_file(&live, NULL));
	assert_int_equal(rec_dump__read(tmp_path, &back, NULL, err, sizeof(err)), 0);

	rs = rec_proc__find(&back, KEY_A);
	assert_int_equal(rec_spool__tail(rs->spool, 0, decode_one, &d), 1);
	assert_int_equal(d.nfields, 8);
	assert_true(isnan(d.values[0].f64));
	for (int i = 1; i < 8; i++)
		assert_memory_equal(&d.values[i].f64, &f[i], sizeof(double));
	assert_int_equal(d.tid, 77);
	assert_int_equal(d.time_ns, 5000000000ULL);
	assert_int_equal(d.meta, addr(num_meta));
	assert_int_equal(d.tgid, getpid());
	rec_proc__fini(&live);
	rec_proc__fini(&back);
}

static void test_ended_variants(void **state)
{
	static const struct {
		enum rec_end end;
		int code, core;
		const char *text;
	} cases[] = {
		{ REC_END_EXIT, 3, 0, "\"ended\":{\"how\":\"exit\",\"code\":3}" },
		{ REC_END_SIGNAL, SIGKILL, 0,
		  "\"ended\":{\"how\":\"signal\",\"signal\":9,"
		  "\"name\":\"SIGKILL\",\"core_dumped\":false}" },
		{ REC_END_SIGNAL, SIGABRT, 1, "\"name\":\"SIGABRT\",\"core_dumped\":true}" },
		{ REC_END_SIGNAL, 40, 0, "\"signal\":40,\"name\":\"SIG40\"" },
		{ REC_END_SIGNAL, SIGALRM, 0, "\"signal\":14,\"name\":\"SIGALRM\"" },
		{ REC_END_RUNNING, 0, 0, "\"ended\":{\"how\":\"running\"}" },
		{ REC_END_UNKNOWN, 0, 0, "\"ended\":{\"how\":\"unknown\"}" },
	};
	struct rec_proc p, back;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text;

		memset(&p, 0, sizeof(p));
		p.pid = 4242;
		p.ns_pid = 7;
		p.end = cases[i].end;
		p.end_code = cases[i].code;
		p.end_core = cases[i].core;
		text = dump_to_file(&p, NULL);
		assert_non_null(strstr(text, cases[i].text));
		assert_null(strstr(text, "\"counters\""));
		assert_int_equal(rec_dump__read(tmp_path, &back, NULL, err, sizeof(err)), 0);
		assert_int_equal(back.end, cases[i].end);
		assert_int_equal(back.end_code, cases[i].code);
		assert_int_equal(back.end_core, cases[i].core);
		assert_int_equal(back.pid, 4242);
		assert_int_equal(back.ns_pid, 7);
		assert_false(back.alive);
		free(text);
		rec_proc__fini(&back);
	}
}

static void test_counter_names(void **state)
{
	(void)state;
	assert_string_equal(rec_names__counter(REC_C_RING_FULL), "ring_full");
	assert_string_equal(rec_names__counter(REC_C_EXIT_OUT_OF_ORDER), "exit_out_of_order");
	assert_string_equal(rec_names__counter(REC_C_BAD_ARG), "bad_arg");
}

/* ---- reading hand-written dumps ---- */

static const char base_dump[] =
	"{\"format\":\"recorder-dump\",\"version\":1,\"pid\":42,\"ns_pid\":0,\n"
	"\"ended\":{\"how\":\"exit\",\"code\":0},\n"
	"\"dumped_at\":\"2026-12-02T14:03:12.123456Z\",\"clock_offset_ns\":5,\n"
	"\"malformed\":0,\"orphans\":0,\n"
	"\"callsites\":[{\"addr\":\"0x1000\",\"kind\":\"E\",\"level\":2,\"name\":\"ev\","
	"\"target\":\"t\",\"file\":\"f.c\",\"line\":12,\"message\":\"hi\","
	"\"fields\":[\"a\",\"b\"]}],\n"
	"\"recordings\":[{\"key\":\"0x8000000000000002\",\"recorder\":\"0x1\",\"subject\":\"s\","
	"\"cap\":4,\"state\":\"live\",\"seen\":6,\"kept\":3,\"dropped\":3,\"stale\":0,"
	"\"events\":[\n"
	"{\"seq\":1,\"tid\":7,\"time_ns\":100,\"callsite\":\"0x1000\",\"values\":["
	"{\"type\":\"str\",\"value\":\"x\",\"status\":\"ok\"},{\"type\":\"i64\",\"value\":-1}]},\n"
	"{\"seq\":2,\"tid\":7,\"time_ns\":200,\"callsite\":\"0x1000\",\"values\":[]}]}],\n"
	"\"stacks\":[{\"tid\":7,\"overflow\":0,\"frames\":["
	"{\"span\":\"0x10\",\"callsite\":\"0x1000\","
	"\"recording\":\"0x8000000000000002\"}]}]}\n";

static int read_text(const char *text, struct rec_proc *p, struct rec_dump_counters *c, char *err,
		     size_t errlen)
{
	text_to_file(text);
	return rec_dump__read(tmp_path, p, c, err, errlen);
}

static void test_reads_hand_written_dump(void **state)
{
	struct rec_dump_counters c;
	struct rec_proc p;
	char err[256], *out;

	(void)state;
	memset(&c, 0xff, sizeof(c));
	assert_int_equal(read_text(base_dump, &p, &c, err, sizeof(err)), 0);
	for (int i = 0; i < REC_C_MAX; i++)
		assert_int_equal(c.v[i], 0);
	out = answer(&p, 0, 0);
	assert_non_null(strstr(out, "==> pid 42 recording 0x8000000000000002 <s> cap 4, seen 6, "
				    "delivered 3, dropped 3 <==\n"));
	assert_non_null(strstr(out, " 7 f.c:12] <s> hi, a: x, b: -1\n"));
	assert_non_null(strstr(out, "-- 3 events lost (seq 3..5) --\n"));
	free(out);
	out = answer(&p, REC_Q_STACKS, 0);
	assert_string_equal(out, "pid 42 tid 7 recording 0x8000000000000002 <s>:\n"
				 "    ev (f.c:12)\n");
	free(out);
	rec_proc__fini(&p);
}

/* Version 2: a recording's spans and a frame's span id and enter time; --spans shows them. */
static void test_reads_spans(void **state)
{
	struct rec_dump_counters c;
	struct rec_proc p;
	char err[256], *text = strdup(base_dump), *out;

	(void)state;
	replace(&text, "\"version\":1", "\"version\":2");
	replace(&text, "\"stale\":0,",
		"\"stale\":0,\"spans_seen\":2,\"spans_dropped\":1,\"spans\":[{\"id\":\"0x5\","
		"\"parent\":\"0x0\",\"tid\":7,\"callsite\":\"0x1000\",\"enter_ns\":10,\"exit_ns\":"
		"20}],");
	replace(&text, "\"recording\":\"0x8000000000000002\"}",
		"\"recording\":\"0x8000000000000002\",\"id\":\"0x9\",\"enter_ns\":300}");
	assert_int_equal(read_text(text, &p, &c, err, sizeof(err)), 0);
	out = answer(&p, REC_Q_SPANS | REC_Q_LIST | REC_Q_JSON, 0);
	/* A dump before spans_aged and spans_lost: its spans_dropped reads as lost. */
	assert_non_null(strstr(
		out, "\"spans_seen\":2,\"spans_kept\":1,\"spans_aged\":0,\"spans_lost\":1}"));
	free(out);
	out = answer(&p, REC_Q_SPANS | REC_Q_JSON, 0);
	/* The span left, then the one still open (its parent: none, the bottom frame). */
	assert_non_null(strstr(
		out,
		"{\"type\":\"span\",\"pid\":42,\"tid\":7,\"recording\":\"0x8000000000000002\","
		"\"recorder\":\"0x1\",\"subject\":\"s\",\"id\":\"0x5\",\"parent\":null,\"name\":"
		"\"ev\",\"target\":\"t\",\"file\":\"f.c\",\"line\":12,\"enter\":\"1970-01-01T00:00:"
		"00.000000Z\",\"exit\":\"1970-01-01T00:00:00.000000Z\",\"duration_ns\":10,"
		"\"entered_before_attach\":false}\n"));
	assert_non_null(strstr(out, "\"id\":\"0x9\",\"parent\":null,\"name\":\"ev\",\"target\":"
				    "\"t\",\"file\":\"f.c\",\"line\":12,\"enter\":\"1970-01-01T00:"
				    "00:00.000000Z\",\"exit\":null,\"duration_ns\":null,"
				    "\"entered_before_attach\":false}\n"));
	free(out);
	/* Without --spans, nothing of them. */
	out = answer(&p, REC_Q_JSON, 0);
	assert_null(strstr(out, "span"));
	free(out);
	free(text);
	rec_proc__fini(&p);
}

/*
 * The cap the program asked for beside the one kept (--min-cap, --max-cap),
 * the attach's time, spans aged out apart from those lost, and a frame entered
 * before the attach: read, shown, and written back.
 */
static void test_reads_caps_the_attach_and_span_aging(void **state)
{
	struct rec_dump_counters c;
	struct rec_proc p;
	char err[256], *text = strdup(base_dump), *out;

	(void)state;
	replace(&text, "\"version\":1", "\"version\":2");
	replace(&text, "\"cap\":4,", "\"cap\":4,\"asked_cap\":64,");
	replace(&text, "\"clock_offset_ns\":5,", "\"clock_offset_ns\":5,\"attached_ns\":1000,");
	replace(&text, "\"orphans\":0,", "\"orphans\":0,\"spans_before_attach\":3,");
	replace(&text, "\"stale\":0,",
		"\"stale\":0,\"spans_seen\":3,\"spans_dropped\":2,\"spans_aged\":1,"
		"\"spans_lost\":1,\"spans\":[{\"id\":\"0x5\",\"parent\":\"0x0\",\"tid\":7,"
		"\"callsite\":\"0x1000\",\"enter_ns\":0,\"exit_ns\":2000}],");
	replace(&text, "\"recording\":\"0x8000000000000002\"}",
		"\"recording\":\"0x8000000000000002\",\"id\":\"0x9\"}");
	assert_int_equal(read_text(text, &p, &c, err, sizeof(err)), 0);
	out = answer(&p, 0, 0);
	assert_non_null(strstr(out, "<s> cap 4 (asked 64), seen 6, delivered 3, dropped 3 <==\n"));
	free(out);
	out = answer(&p, REC_Q_LIST | REC_Q_SPANS | REC_Q_JSON, 0);
	assert_non_null(strstr(out, "\"cap\":4,\"asked_cap\":64,"));
	assert_non_null(strstr(
		out, "\"spans_seen\":3,\"spans_kept\":1,\"spans_aged\":1,\"spans_lost\":1}"));
	free(out);
	out = answer(&p, REC_Q_LIST | REC_Q_SPANS, 0);
	assert_non_null(strstr(out, " CAP    ASKED "));
	assert_non_null(strstr(out, " SPANS-SEEN SPANS-KEPT SPANS-AGED SPANS-LOST\n"));
	free(out);
	out = answer(&p, REC_Q_STATS, 0);
	assert_non_null(strstr(out,
			       "spans: 3 seen, 1 kept, 1 aged out (--span-cap), 1 lost; "
			       "orphan spans: 0; spans of recordings older than the attach: 3\n"));
	free(out);
	/* The frame seeded at the attach: open since before it, aged from it to the dump. */
	out = answer(&p, REC_Q_STACKS, 0);
	assert_non_null(strstr(out, "    ev (f.c:12) open since before the attach, over 1796"));
	free(out);
	out = answer(&p, REC_Q_STACKS | REC_Q_JSON, 0);
	assert_non_null(strstr(out, "\"enter\":null,\"age_ns\":1796"));
	assert_non_null(strstr(out, "\"entered_before_attach\":true}"));
	free(out);
	/* The span left, entered before the attach; the one open, timed by the attach. */
	out = answer(&p, REC_Q_SPANS, 0);
	assert_non_null(strstr(out, "span ev: entered before the attach, id 0x5\n"));
	assert_non_null(strstr(out, ":00.000001 7 f.c:12] <s> span ev: open, entered before the "
				    "attach, id 0x9\n"));
	free(out);
	rec_proc__fini(&p);
	assert_int_equal(read_text(text, &p, &c, err, sizeof(err)), 0);
	out = dump_to_file(&p, NULL);
	assert_non_null(strstr(out, "\"cap\":4,\"asked_cap\":64,"));
	assert_non_null(strstr(out, "\"attached_ns\":1000"));
	assert_non_null(strstr(out, "\"spans_before_attach\":3"));
	assert_non_null(strstr(out, "\"spans_seen\":3,\"spans_dropped\":2,\"spans_aged\":1,"
				    "\"spans_lost\":1,"));
	free(out);
	rec_proc__fini(&p);
	/* A dump that predates attached_ns: the open span is timed by its writing, never 1970. */
	replace(&text, "\"attached_ns\":1000,", "");
	assert_int_equal(read_text(text, &p, &c, err, sizeof(err)), 0);
	out = answer(&p, REC_Q_SPANS, 0);
	assert_non_null(strstr(out, ":03:12.123456 7 f.c:12] <s> span ev: open, entered before the "
				    "attach, id 0x9\n"));
	free(out);
	out = answer(&p, REC_Q_STACKS, 0);
	assert_non_null(strstr(out, "    ev (f.c:12) open since before the attach\n"));
	free(out);
	free(text);
	rec_proc__fini(&p);
}

/* Keys this version does not know are ignored; an unknown callsite address is fine. */
static void test_reader_tolerates(void **state)
{
	struct rec_dump_counters c;
	struct rec_proc p;
	char err[256], *text = strdup(base_dump), *out;

	(void)state;
	replace(&text, "{\"format\"", "{\"future\":{\"x\":[1,2.5,null]},\"format\"");
	replace(&text, "\"seq\":2,", "\"seq\":2,\"extra\":true,");
	replace(&text, "\"callsite\":\"0x1000\",\"values\":[]",
		"\"callsite\":\"0x9999\",\"values\":[]");
	replace(&text, "\"malformed\"",
		"\"counters\":{\"str_fault\":3,\"new_one\":9},\"malformed\"");
	assert_int_equal(read_text(text, &p, &c, err, sizeof(err)), 0);
	assert_int_equal(c.v[REC_C_STR_FAULT], 3);
	assert_int_equal(c.v[REC_C_RING_FULL], 0);
	out = answer(&p, 0, 0);
	assert_non_null(strstr(out, "<callsite 0x9999>"));
	free(out);
	free(text);
	rec_proc__fini(&p);
}

static char *repeat(const char *s, int n, const char *sep)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (int i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? sep : "", s);
	fclose(f);
	return buf;
}

struct bad_case {
	const char *edits[6]; /* from, to pairs applied to base_dump; NULL ends */
	const char *expect;   /* substring of the message */
};

/* text must be refused with expect in the message, from a file and from memory alike. */
static void check_bad(const char *text, const char *expect)
{
	struct rec_dump_counters c;
	struct rec_proc p, zero;
	char err[256], err_mem[256];
	int ret;

	memset(&zero, 0, sizeof(zero));
	memset(&c, 0xff, sizeof(c));
	ret = read_text(text, &p, &c, err, sizeof(err));
	if (ret != -EINVAL || !strstr(err, expect))
		fail_msg("expected -EINVAL and \"%s\", got %d and \"%s\"", expect, ret, err);
	assert_memory_equal(&p, &zero, sizeof(p));
	for (int i = 0; i < REC_C_MAX; i++)
		assert_int_equal(c.v[i], 0);

	memset(&c, 0xff, sizeof(c));
	assert_int_equal(rec_dump__read_mem(text, strlen(text), &p, &c, err_mem, sizeof(err_mem)),
			 -EINVAL);
	assert_string_equal(err_mem, err);
	assert_memory_equal(&p, &zero, sizeof(p));
	for (int i = 0; i < REC_C_MAX; i++)
		assert_int_equal(c.v[i], 0);
}

/* Each case edits base_dump and must be refused with the message given. */
static const struct bad_case bad_cases[] = {
	{ { "{\"format\":\"recorder-dump\",", "[1,2]\n{\"a\":1," }, "not JSON: " },
	{ { "\"format\":\"recorder-dump\",", "" }, "not a recorder dump: missing \"format\"" },
	{ { "\"recorder-dump\"", "\"black-box\"" },
	  "not a recorder dump: \"format\" is not \"recorder-dump\"" },
	{ { "\"version\":1", "\"version\":4" },
	  "version 4 is not supported (this build reads versions 1 to 3)" },
	{ { "\"version\":1", "\"version\":0" },
	  "version 0 is not supported (this build reads versions 1 to 3)" },
	{ { "\"version\":1,", "" }, "missing \"version\"" },
	{ { "\"stale\":0,", "\"stale\":0,\"spans_seen\":3,\"spans_dropped\":1,\"spans\":[{\"id\":"
			    "\"0x5\",\"parent\":\"0x0\",\"tid\":7,\"callsite\":\"0x1000\",\"enter_"
			    "ns\":10,\"exit_ns\":20}]," },
	  "recordings[0].spans_seen: 3 is not the 1 spans kept plus spans_dropped 1" },
	{ { "\"stale\":0,", "\"stale\":0,\"spans_seen\":2,\"spans_dropped\":1,\"spans\":[{\"id\":"
			    "\"0x0\",\"parent\":\"0x0\",\"tid\":7,\"callsite\":\"0x1000\",\"enter_"
			    "ns\":10,\"exit_ns\":20}]," },
	  "recordings[0].spans[0].id: 0x0 is not a span id" },
	{ { "\"stale\":0,", "\"stale\":0,\"spans_seen\":2,\"spans_dropped\":1,\"spans\":[{\"id\":"
			    "\"0x5\",\"parent\":\"0x0\",\"tid\":7,\"callsite\":\"0x1000\",\"enter_"
			    "ns\":30,\"exit_ns\":20}]," },
	  "recordings[0].spans[0].enter_ns: after its exit_ns" },
	{ { "\"stale\":0,",
	    "\"stale\":0,\"spans_seen\":2,\"spans\":[{\"id\":\"0x5\",\"parent\":\"0x0\",\"tid\":7,"
	    "\"callsite\":\"0x1000\",\"enter_ns\":10,\"exit_ns\":20}]," },
	  "recordings[0]: missing \"spans_dropped\"" },
	{ { "\"stale\":0,",
	    "\"stale\":0,\"spans_seen\":2,\"spans_dropped\":1,\"spans_aged\":1,"
	    "\"spans_lost\":1,\"spans\":[{\"id\":\"0x5\",\"parent\":\"0x0\",\"tid\":7,"
	    "\"callsite\":\"0x1000\",\"enter_ns\":10,\"exit_ns\":20}]," },
	  "recordings[0].spans_dropped: 1 is not spans_aged 1 plus spans_lost 1" },
	{ { "\"pid\":42,", "" }, "missing \"pid\"" },
	{ { "\"pid\":42", "\"pid\":\"42\"" }, "pid: expected an unsigned integer" },
	{ { "\"pid\":42", "\"pid\":0" }, "pid: 0 is out of range (1..2147483647)" },
	{ { "\"ns_pid\":0", "\"ns_pid\":-1" }, "ns_pid: expected an unsigned integer" },
	{ { "\"how\":\"exit\",\"code\":0", "\"how\":\"vanished\"" },
	  "ended.how: expected \"exit\", \"signal\", \"running\" or \"unknown\"" },
	{ { "\"code\":0", "\"code\":256" }, "ended.code: 256 is out of range (0..255)" },
	{ { "\"how\":\"exit\",\"code\":0", "\"how\":\"signal\",\"signal\":9" },
	  "ended: missing \"core_dumped\"" },
	{ { "\"ended\":{\"how\":\"exit\",\"code\":0}", "\"ended\":[]" },
	  "ended: expected an object" },
	{ { "\"clock_offset_ns\":5", "\"clock_offset_ns\":5.5" },
	  "clock_offset_ns: expected an integer" },
	{ { "\"malformed\":0", "\"malformed\":true" }, "malformed: expected an unsigned integer" },
	{ { "\"orphans\":0,", "\"orphans\":0,\"span_orphans\":-1," },
	  "span_orphans: expected an unsigned integer" },
	{ { "\"malformed\"", "\"counters\":{\"ring_full\":-1},\"malformed\"" },
	  "counters.ring_full: expected an unsigned integer" },
	{ { "\"line\":12", "\"line\":\"12\"" }, "callsites[0].line: expected an unsigned integer" },
	{ { "\"line\":12", "\"line\":4294967296" },
	  "callsites[0].line: 4294967296 is out of range" },
	{ { "\"kind\":\"E\"", "\"kind\":\"X\"" }, "callsites[0].kind: expected \"E\" or \"S\"" },
	{ { "\"level\":2", "\"level\":8" }, "callsites[0].level: 8 is out of range (0..7)" },
	{ { "\"level\":2", "\"level\":5" }, "callsites[0]: not a valid callsite" },
	{ { "[\"a\",\"b\"]", "[\"a\",\"\"]" }, "callsites[0].fields[1]: empty field name" },
	{ { "[\"a\",\"b\"]", "[\"a\",7]" }, "callsites[0].fields[1]: expected a string" },
	{ { "\"name\":\"ev\"", "\"name\":\"e\\u0000v\"" },
	  "callsites[0].name: contains a NUL byte" },
	{ { "\"addr\":\"0x1000\"", "\"addr\":\"4096\"" },
	  "callsites[0].addr: expected a \"0x\" hex string" },
	{ { "\"addr\":\"0x1000\"", "\"addr\":\"0x10000000000000000\"" },
	  "callsites[0].addr: expected a \"0x\" hex string of at most 16 digits" },
	{ { "\"callsites\":[{",
	    "\"callsites\":[{\"addr\":\"0x1000\",\"kind\":\"S\","
	    "\"level\":0,\"name\":\"n\",\"target\":\"t\",\"file\":\"f\",\"line\":0,"
	    "\"message\":\"\",\"fields\":[]},{" },
	  "callsites[1].addr: duplicate 0x1000" },
	{ { "\"callsites\":[", "\"callsites\":[\"x\"," }, "callsites[0]: expected an object" },
	{ { "\"recordings\":[", "\"recordings\":{\"a\":[", "]}],\n\"stacks\"",
	    "]}]},\n\"stacks\"" },
	  "recordings: expected an array" },
	{ { "\"cap\":4", "\"cap\":-4" }, "recordings[0].cap: expected an unsigned integer" },
	{ { "\"cap\":4", "\"cap\":1" }, "recordings[0].cap: 1 is out of range (2..1048576)" },
	{ { "\"key\":\"0x8000000000000002\"", "\"key\":\"0xzz\"" },
	  "recordings[0].key: expected a \"0x\" hex string" },
	{ { "\"key\":\"0x8000000000000002\"", "\"key\":\"0x0\"" },
	  "recordings[0].key: 0x0 is not a recording key" },
	{ { "\"recordings\":[{",
	    "\"recordings\":[{\"key\":\"0x8000000000000002\","
	    "\"recorder\":\"0x1\",\"subject\":\"\",\"cap\":2,\"state\":\"live\",\"seen\":0,"
	    "\"kept\":0,\"dropped\":0,\"stale\":0,\"events\":[]},{" },
	  "recordings[1].key: duplicate 0x8000000000000002" },
	{ { "\"state\":\"live\"", "\"state\":\"dead\"" },
	  "recordings[0].state: expected \"live\" or \"retired\"" },
	{ { "\"stale\":0,", "" }, "recordings[0]: missing \"stale\"" },
	{ { "\"seq\":2,", "\"seq\":1," }, "recordings[0].events[1].seq: duplicate seq 1" },
	{ { "\"seq\":2,", "\"seq\":6," }, "recordings[0].events[1].seq: 6 is not below seen (6)" },
	{ { "\"seen\":6", "\"seen\":60", "\"seq\":1,", "\"seq\":50,", "\"seq\":2,", "\"seq\":1," },
	  "recordings[0].events[1].seq: 1 comes after seq 50 (events are oldest first)" },
	{ { "\"cap\":4", "\"cap\":2", "\"values\":[]}",
	    "\"values\":[]},{\"seq\":3,\"tid\":7,"
	    "\"time_ns\":300,\"callsite\":\"0x1000\",\"values\":[]}" },
	  "recordings[0].events: 3 elements, more than 2" },
	{ { "\"tid\":7,\"time_ns\":100", "\"time_ns\":100" },
	  "recordings[0].events[0]: missing \"tid\"" },
	{ { "\"tid\":7,\"time_ns\":100", "\"tid\":4294967296,\"time_ns\":100" },
	  "recordings[0].events[0].tid: 4294967296 is out of range" },
	{ { "\"time_ns\":100", "\"time_ns\":-100" },
	  "recordings[0].events[0].time_ns: expected an unsigned integer" },
	{ { "\"type\":\"i64\"", "\"type\":\"i32\"" },
	  "recordings[0].events[0].values[1].type: expected \"str\", \"i64\", \"u64\", \"f64\" "
	  "or \"bool\"" },
	{ { "\"type\":\"i64\"", "\"type\":\"u64\"" },
	  "recordings[0].events[0].values[1].value: expected an unsigned integer" },
	{ { "\"type\":\"i64\",\"value\":-1", "\"type\":\"i64\",\"value\":9223372036854775808" },
	  "recordings[0].events[0].values[1].value: 9223372036854775808 is out of range" },
	{ { "\"type\":\"i64\",\"value\":-1", "\"type\":\"bool\",\"value\":1" },
	  "recordings[0].events[0].values[1].value: expected true or false" },
	{ { "\"type\":\"i64\",\"value\":-1", "\"type\":\"f64\",\"value\":\"nope\"" },
	  "recordings[0].events[0].values[1].value: expected a number, \"nan\", \"inf\" or "
	  "\"-inf\"" },
	{ { "\"type\":\"i64\",\"value\":-1", "\"type\":\"i64\"" },
	  "recordings[0].events[0].values[1]: missing \"value\"" },
	{ { "\"status\":\"ok\"", "\"status\":\"fault\"" },
	  "recordings[0].events[0].values[0].value: must be \"\" when the status is \"fault\"" },
	{ { ",\"status\":\"ok\"", "" }, "recordings[0].events[0].values[0]: missing \"status\"" },
	{ { "\"status\":\"ok\"", "\"status\":\"weird\"" },
	  "recordings[0].events[0].values[0].status: expected \"ok\"" },
	{ { "\"value\":\"x\"", "\"value\":3" },
	  "recordings[0].events[0].values[0].value: expected a string" },
	{ { "\"values\":[{", "\"values\":[[],{" },
	  "recordings[0].events[0].values[0]: expected an object" },
	{ { "\"stacks\":[{\"tid\"", "\"stacks\":[7,{\"tid\"" }, "stacks[0]: expected an object" },
	{ { "\"overflow\":0", "\"overflow\":-1" },
	  "stacks[0].overflow: expected an unsigned integer" },
	{ { "\"span\":\"0x10\"", "\"span\":16" }, "stacks[0].frames[0].span: expected a string" },
	{ { "\"stacks\":[", "\"stacks\":[{\"tid\":1,\"overflow\":0,\"frames\":[]},", "\"span\"",
	    "\"spam\"" },
	  "stacks[1].frames[0]: missing \"span\"" },
	/* A member this version knows may appear once. */
	{ { "\"seq\":2,", "\"seq\":2,\"seq\":3," },
	  "recordings[0].events[1]: \"seq\" appears twice" },
	{ { "\"pid\":42,", "\"pid\":42,\"pid\":43," }, "\"pid\" appears twice" },
	/* Integers past 64 bits are refused, not clamped. */
	{ { "\"seen\":6", "\"seen\":18446744073709551616" },
	  "recordings[0].seen: 18446744073709551616 is out of range (0..18446744073709551615)" },
	{ { "\"type\":\"i64\",\"value\":-1", "\"type\":\"i64\",\"value\":-9223372036854775809" },
	  "recordings[0].events[0].values[1].value: -9223372036854775809 is out of range for a "
	  "signed integer" },
	{ { "\"type\":\"i64\",\"value\":-1", "\"type\":\"f64\",\"value\":1e400" },
	  "recordings[0].events[0].values[1].value: 1e400 is out of range for a double" },
	{ { "\"time_ns\":100", "\"time_ns\":100.0" },
	  "recordings[0].events[0].time_ns: expected an unsigned integer" },
	/* Strict JSON. */
	{ { "[\"a\",\"b\"]", "[\"a\",\"b\",]" }, "not JSON: expected a value at byte " },
	{ { "\"ns_pid\":0", "\"ns_pid\":00" }, "not JSON: a number with a leading zero at byte " },
	{ { "\"name\":\"ev\"", "\"name\":\"e\tv\"" }, "not JSON: a control character (0x09)" },
	{ { "\"name\":\"ev\"", "\"name\":\"\\ud800\"" }, "not JSON: an unpaired surrogate" },
	{ { "{\"format\"", "{\"deep\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
			   "[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
			   "]],\"format\"" },
	  "not JSON: nested deeper than 64 levels at byte " },
	{ { "{\"format\":\"recorder-dump\",", "[{\"format\":\"recorder-dump\",", "]}\n", "]}]\n" },
	  "not a recorder dump: expected a JSON object" },
};

static void test_rejects_malformed(void **state)
{
	char *text;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		text = strdup(base_dump);
		for (int e = 0; e < 6 && bad_cases[i].edits[e]; e += 2)
			replace(&text, bad_cases[i].edits[e], bad_cases[i].edits[e + 1]);
		check_bad(text, bad_cases[i].expect);
		free(text);
	}
}

/* Malformed dumps that are easier to generate than to write down. */
static void test_rejects_generated(void **state)
{
	char *text, *long_str, *vals, *strs, *frames, *to;

	(void)state;
	check_bad("hello", "not JSON: ");
	check_bad("", "not JSON: ");
	check_bad("{\"format\":\"recorder-dump\",", "not JSON: the document ends early");
	text = strdup(base_dump);
	replace(&text, "}]}]}\n", "}]}]} x\n");
	check_bad(text, "not JSON: ");
	free(text);

	/* A string value of 256 bytes. */
	long_str = repeat("x", REC_STR_MAX, "");
	assert_true(asprintf(&to, "\"value\":\"%s\"", long_str) > 0);
	text = strdup(base_dump);
	replace(&text, "\"value\":\"x\"", to);
	check_bad(text, "recordings[0].events[0].values[0].value: string longer than 255 bytes");
	free(text);
	free(to);
	free(long_str);

	/* Four strings of 255 bytes: three fill the string area, the fourth does not fit. */
	long_str = repeat("y", REC_STR_MAX - 1, "");
	assert_true(asprintf(&to, "{\"type\":\"str\",\"value\":\"%s\",\"status\":\"ok\"}",
			     long_str) > 0);
	strs = repeat(to, 4, ",");
	free(to);
	assert_true(asprintf(&to, "\"values\":[%s]", strs) > 0);
	text = strdup(base_dump);
	replace(&text, "\"values\":[]", to);
	check_bad(text, "recordings[0].events[1].values[3].value: the event's strings take more "
			"than the 768 bytes of its string area");
	free(text);
	free(to);
	free(strs);

	/* ...while three of them are fine. */
	strs = repeat("{\"type\":\"str\",\"value\":\"abc\",\"status\":\"truncated\"}", 3, ",");
	assert_true(asprintf(&to, "\"values\":[%s]", strs) > 0);
	text = strdup(base_dump);
	replace(&text, "\"values\":[]", to);
	{
		struct rec_proc p;
		char err[256];

		assert_int_equal(read_text(text, &p, NULL, err, sizeof(err)), 0);
		rec_proc__fini(&p);
	}
	free(text);
	free(to);
	free(strs);
	free(long_str);

	/* Nine values. */
	vals = repeat("{\"type\":\"u64\",\"value\":1}", 9, ",");
	assert_true(asprintf(&to, "\"values\":[%s]", vals) > 0);
	text = strdup(base_dump);
	replace(&text, "\"values\":[]", to);
	check_bad(text, "recordings[0].events[1].values: 9 elements, more than 8");
	free(text);
	free(to);
	free(vals);

	/* Nine field names. */
	vals = repeat("\"f\"", 9, ",");
	assert_true(asprintf(&to, "\"fields\":[%s]", vals) > 0);
	text = strdup(base_dump);
	replace(&text, "\"fields\":[\"a\",\"b\"]", to);
	check_bad(text, "callsites[0].fields: 9 elements, more than 8");
	free(text);
	free(to);
	free(vals);

	/* A callsite too long to be one. */
	long_str = repeat("m", REC_CALLSITE_MAX, "");
	assert_true(asprintf(&to, "\"message\":\"%s\"", long_str) > 0);
	text = strdup(base_dump);
	replace(&text, "\"message\":\"hi\"", to);
	check_bad(text, "callsites[0]: longer than the 2048 bytes a callsite may take");
	free(text);
	free(to);
	free(long_str);

	/* A subject of 64 bytes. */
	long_str = repeat("s", REC_SUBJECT_MAX, "");
	assert_true(asprintf(&to, "\"subject\":\"%s\"", long_str) > 0);
	text = strdup(base_dump);
	replace(&text, "\"subject\":\"s\"", to);
	check_bad(text, "recordings[0].subject: longer than 63 bytes");
	free(text);
	free(to);
	free(long_str);

	/* A stack of 33 frames. */
	frames = repeat("{\"span\":\"0x1\",\"callsite\":\"0x1\",\"recording\":\"0x1\"}",
			REC_MAX_DEPTH + 1, ",");
	assert_true(asprintf(&to, "\"frames\":[%s]", frames) > 0);
	text = strdup(base_dump);
	replace(&text, "\"frames\":[", "\"frames\":[],\"old\":[");
	replace(&text, "\"frames\":[]", to);
	check_bad(text, "stacks[0].frames: 33 elements, more than 32");
	free(text);
	free(to);
	free(frames);
}

static void test_missing_file(void **state)
{
	struct rec_proc p;
	char err[256];

	(void)state;
	assert_int_equal(rec_dump__read("/nonexistent/dump.json", &p, NULL, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/dump.json: "));
	/* No room for a message is fine too. */
	text_to_file("nope");
	assert_int_equal(rec_dump__read(tmp_path, &p, NULL, NULL, 0), -EINVAL);
}

/* Members may come in any order, at every level: the answers are those of base_dump. */
static void test_reader_takes_any_member_order(void **state)
{
	static const char reordered[] =
		"{\"stacks\":[{\"frames\":[{\"recording\":\"0x8000000000000002\","
		"\"callsite\":\"0x1000\",\"span\":\"0x10\"}],\"overflow\":0,\"tid\":7}],\n"
		"\"recordings\":[{\"events\":[\n"
		"{\"values\":[{\"status\":\"ok\",\"value\":\"x\",\"type\":\"str\"},"
		"{\"value\":-1,\"type\":\"i64\"}],\"callsite\":\"0x1000\",\"time_ns\":100,"
		"\"tid\":7,\"seq\":1},\n"
		"{\"values\":[],\"seq\":2,\"callsite\":\"0x1000\",\"time_ns\":200,\"tid\":7}],"
		"\"stale\":0,\"dropped\":3,\"kept\":3,\"seen\":6,\"state\":\"live\",\"cap\":4,"
		"\"subject\":\"s\",\"recorder\":\"0x1\",\"key\":\"0x8000000000000002\"}],\n"
		"\"callsites\":[{\"fields\":[\"a\",\"b\"],\"message\":\"hi\",\"line\":12,"
		"\"file\":\"f.c\",\"target\":\"t\",\"name\":\"ev\",\"level\":2,\"kind\":\"E\","
		"\"addr\":\"0x1000\"}],\n"
		"\"orphans\":0,\"malformed\":0,\"clock_offset_ns\":5,"
		"\"dumped_at\":\"2026-12-02T14:03:12.123456Z\",\n"
		"\"ended\":{\"code\":0,\"how\":\"exit\"},\"ns_pid\":0,\"pid\":42,\"version\":1,"
		"\"format\":\"recorder-dump\"}\n";
	static const uint32_t flags[] = { 0, REC_Q_JSON, REC_Q_LIST, REC_Q_STACKS, REC_Q_STATS };
	struct rec_proc a, b;
	char err[256];

	(void)state;
	assert_int_equal(read_text(base_dump, &a, NULL, err, sizeof(err)), 0);
	if (read_text(reordered, &b, NULL, err, sizeof(err)))
		fail_msg("refused: %s", err);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		char *x = answer(&a, flags[i], 0), *y = answer(&b, flags[i], 0);

		assert_string_equal(x, y);
		free(x);
		free(y);
	}
	rec_proc__fini(&a);
	rec_proc__fini(&b);
}

/* Unknown members, however big or deep (up to 64 levels), are skipped at every level. */
static void test_unknown_members_are_skipped(void **state)
{
	char *text = strdup(base_dump), *big = repeat("[],", 200000, ""), *to, *out;
	struct rec_proc p;
	char err[256];

	(void)state;
	assert_true(asprintf(&to,
			     "{\"future\":[%s{\"a\":[[[[[[[[[[\"\\u00e9\"]]]]]]]]]]}],"
			     "\"format\"",
			     big) > 0);
	replace(&text, "{\"format\"", to);
	replace(&text, "\"how\":\"exit\"", "\"later\":[1.5e300,null,true],\"how\":\"exit\"");
	replace(&text, "\"key\":", "\"extra\":{\"k\":{\"key\":\"0x0\"}},\"key\":");
	replace(&text, "{\"type\":\"i64\"", "{\"note\":\"x\",\"type\":\"i64\"");
	replace(&text, "{\"span\":", "{\"depth\":-1,\"span\":");
	replace(&text, "\"fields\":[", "\"fieldz\":7,\"fields\":[");
	if (read_text(text, &p, NULL, err, sizeof(err)))
		fail_msg("refused: %s", err);
	out = answer(&p, 0, 0);
	assert_non_null(strstr(out, " 7 f.c:12] <s> hi, a: x, b: -1\n"));
	free(out);
	rec_proc__fini(&p);
	free(text);
	free(to);
	free(big);
}

/*
 * A FIFO, a device and a directory are refused before they are opened: a
 * FIFO without a writer would block the open forever, /dev/zero never ends.
 */
static void test_special_files_are_refused(void **state)
{
	static const struct {
		const char *path, *kind;
	} cases[] = {
		{ "/tmp/test_dump.fifo", "a FIFO" },
		{ "/dev/zero", "a character device" },
		{ "/dev/null", "a character device" },
		{ "/tmp", "a directory" },
	};
	struct rec_proc p;
	char err[256], want[256];

	(void)state;
	unlink(cases[0].path);
	assert_int_equal(mkfifo(cases[0].path, 0600), 0);
	/* A read that blocks ends the test here instead of hanging it. */
	alarm(10);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = rec_dump__read(cases[i].path, &p, NULL, err, sizeof(err));

		snprintf(want, sizeof(want), "%s: %s, not a regular file", cases[i].path,
			 cases[i].kind);
		if (ret != -ENOTSUP || strcmp(err, want))
			fail_msg("%s: expected -ENOTSUP and \"%s\", got %d \"%s\"", cases[i].path,
				 want, ret, err);
	}
	alarm(0);
	unlink(cases[0].path);
}

/*
 * A process whose 70,000 threads ended inside spans writes 70,000 stacks: the
 * reader takes them (item 5 of issue 10; it used to stop at 65,536).
 */
static void test_stacks_beyond_65536_are_read(void **state)
{
	const size_t n = 70000;
	char *text = NULL, *stacks, *to;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct rec_proc p;
	char err[256];

	(void)state;
	for (size_t i = 0; i < n; i++)
		fprintf(f,
			"%s{\"tid\":%zu,\"overflow\":0,\"frames\":[{\"span\":\"0x10\","
			"\"callsite\":\"0x1000\",\"recording\":\"0x8000000000000002\"}]}",
			i ? "," : "", i + 1);
	fclose(f);
	stacks = strdup(base_dump);
	assert_true(asprintf(&to, "\"stacks\":[%s]}\n", text) > 0);
	*strstr(stacks, "\"stacks\":[") = '\0';
	free(text);
	assert_true(asprintf(&text, "%s%s", stacks, to) > 0);
	if (read_text(text, &p, NULL, err, sizeof(err)))
		fail_msg("refused: %s", err);
	assert_int_equal(p.nstacks, n);
	assert_int_equal(p.stacks[n - 1].tid, n);
	assert_int_equal(p.stacks[n - 1].depth, 1);
	rec_proc__fini(&p);
	free(text);
	free(to);
	free(stacks);
}

static int record_len(uint64_t seq, const void *data, size_t len, void *ctx)
{
	size_t *lens = ctx;

	(void)data;
	lens[seq] = len;
	return 0;
}

/* An event read back keeps only the string bytes it uses, as a live one does. */
static void test_events_are_kept_trimmed(void **state)
{
	size_t lens[3] = { 0 };
	struct rec_proc p;
	char err[256];

	(void)state;
	assert_int_equal(
		rec_dump__read_mem(base_dump, strlen(base_dump), &p, NULL, err, sizeof(err)), 0);
	rec_spool__tail(rec_proc__find(&p, KEY_A)->spool, 0, record_len, lens);
	/* "x" and its NUL; no string at all. */
	assert_int_equal(lens[1], sizeof(struct rec_event_rec) + 2);
	assert_int_equal(lens[2], sizeof(struct rec_event_rec));
	rec_proc__fini(&p);
}

/*
 * A dump file is 0600 from its creation, whatever the umask, and belongs to the
 * target's owner; the directories recorder creates are 0711 (the dump's own)
 * and 0755 (its parents); one that exists is never changed.
 */
static void test_write_file_mode_owner_and_directories(void **state)
{
	char dir[] = "/tmp/test_dump_dir.XXXXXX", sub[128], path[4096], file[128];
	uid_t owner = geteuid() == 0 ? 65534 : getuid();
	struct rec_proc p;
	struct stat st;
	mode_t old_umask;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0777), 0);
	memset(&p, 0, sizeof(p));
	p.pid = 4242;
	p.uid = owner;

	old_umask = umask(0);
	assert_int_equal(rec_dump__write_file(dir, &p, NULL, path, sizeof(path)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, owner);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0777);
	assert_int_equal(unlink(path), 0);

	/* An owner nobody knows leaves the dump to root (or whoever writes it). */
	p.uid = (uid_t)-1;
	snprintf(sub, sizeof(sub), "%s/a/b/boxes/", dir);
	assert_int_equal(rec_dump__write_file(sub, &p, NULL, path, sizeof(path)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(unlink(path), 0);
	umask(old_umask);

	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0711);
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);

	/* What prepare_dir finds is what a dump would meet; it leaves nothing behind. */
	assert_int_equal(rec_dump__prepare_dir(dir), 0);
	snprintf(file, sizeof(file), "%s/file", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(rec_dump__prepare_dir(file), -ENOTDIR);
	snprintf(sub, sizeof(sub), "%s/file/boxes", dir);
	assert_int_equal(rec_dump__prepare_dir(sub), -ENOTDIR);
	assert_int_equal(rec_dump__write_file(sub, &p, NULL, path, sizeof(path)), -ENOTDIR);
	assert_int_equal(unlink(file), 0);
	/* Not writable through its mode, as recorder-attach finds it without CAP_DAC_OVERRIDE. */
	snprintf(sub, sizeof(sub), "%s/a/b/boxes", dir);
	assert_int_equal(chmod(sub, 0555), 0);
	assert_int_equal(rec_dump__prepare_dir(sub), -EACCES);
	assert_int_equal(chmod(sub, 0711), 0);
	assert_int_equal(rec_dump__prepare_dir(sub), 0);
	assert_int_equal(rmdir(sub), 0);
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	assert_int_equal(rmdir(sub), 0);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	assert_int_equal(rmdir(sub), 0);
	/* Empty again: no probe file was left. */
	assert_int_equal(rmdir(dir), 0);
}

/* A failing stream is reported. */
static void test_write_error(void **state)
{
	struct rec_proc p;
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	memset(&p, 0, sizeof(p));
	p.pid = 1;
	assert_int_equal(rec_dump__write(f, &p, NULL, 0), -EIO);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_answers_identically, setup_tmp,
						teardown_tmp),
		cmocka_unit_test_setup_teardown(test_values_exact, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_limits_round_trip, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_ended_variants, setup_tmp, teardown_tmp),
		cmocka_unit_test(test_counter_names),
		cmocka_unit_test_setup_teardown(test_reads_hand_written_dump, setup_tmp,
						teardown_tmp),
		cmocka_unit_test_setup_teardown(test_reads_spans, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_reads_caps_the_attach_and_span_aging,
						setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_reader_tolerates, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_rejects_malformed, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_rejects_generated, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_missing_file, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_reader_takes_any_member_order, setup_tmp,
						teardown_tmp),
		cmocka_unit_test_setup_teardown(test_unknown_members_are_skipped, setup_tmp,
						teardown_tmp),
		cmocka_unit_test(test_special_files_are_refused),
		cmocka_unit_test_setup_teardown(test_stacks_beyond_65536_are_read, setup_tmp,
						teardown_tmp),
		cmocka_unit_test(test_events_are_kept_trimmed),
		cmocka_unit_test(test_write_file_mode_owner_and_directories),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
