// SPDX-License-Identifier: MIT
/*
 * Stack reconstruction, tails with gaps, lists and record validation, on a
 * process model built by hand. Callsites are real blobs from recorder.h, read
 * back from this very process the way the loader reads a target.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REC_TARGET "srv"
#include "recorder.h"

#include "model/proc.h"
#include "serving/query.h"
#include "target/target.h"

#define KEY_A 0x8000000000000002ULL
#define KEY_B 0x8000000000000003ULL

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
/* Each on the line of its metadata, whose __LINE__ is the span's line. */
/* clang-format off */
static const char *child_meta = REC__SPAN_META(INFO, "child_span"); static const int child_line = __LINE__;
static const char *inner_meta = REC__SPAN_META(DEBUG, "inner"); static const int inner_line = __LINE__;
/* clang-format on */
static const char *evil_meta = REC__SPAN_META(INFO, "evil\x1b]0;title\x07\nspan");
static const char *event_meta = REC__META("E", INFO, "event x.c:1", "hello", 1, "n\0");

static void add_recording(struct rec_proc *p, uint64_t key, const char *subject, uint64_t cap)
{
	struct rec_recording_rec r = { .key = key,
				       .recorder = 0x80000001,
				       .cap = cap,
				       .state = REC_RS_LIVE,
				       .has_subject = 1 };

	strcpy(r.subject, subject);
	assert_int_equal(rec_proc__ingest_recording(p, &r), 0);
}

static int ingest(struct rec_proc *p, uint64_t key, uint64_t seq, uint64_t n)
{
	struct rec_event_rec e = {
		.hdr = { .type = REC_RT_EVENT, .size = sizeof(e), .tgid = p->pid, .tid = 7 },
		.recording = key,
		.seq = seq,
		.meta = (uintptr_t)event_meta,
		.types = REC_TYPE_U64,
		.values = { n },
	};
	struct rec_decoded d;
	struct rec_rstate *rs;

	return rec_proc__ingest_event(p, &e, sizeof(e), &d, &rs);
}

static void frame(struct rec_thread_stack *t, const char *meta, uint64_t key)
{
	t->frames[t->depth++] = (struct rec_frame){
		.span = 0x1000 + t->depth,
		.meta = (uintptr_t)meta,
		.recording = key,
	};
}

static char *answer(struct rec_proc *p, uint32_t flags, const char *subject)
{
	struct rec_query q = { .flags = flags };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (subject)
		strcpy(q.subject, subject);
	assert_int_equal(rec_query__answer(f, p, &q), 0);
	fclose(f);
	return buf;
}

static int setup(void **state)
{
	struct rec_proc *p = malloc(sizeof(*p));

	proc_init_self(p);
	add_recording(p, KEY_A, "a", 10);
	add_recording(p, KEY_B, "b", 10);
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	rec_proc__fini(*state);
	free(*state);
	return 0;
}

/* A ⊃ B on one thread: each recording sees only its own spans, leaf first (rules 5, 6). */
static void test_nested_recordings_split_stacks(void **state)
{
	struct rec_proc *p = *state;
	struct rec_thread_stack *v = calloc(1, sizeof(*v));
	char *out;

	v->tid = 42;
	frame(v, rec_meta, KEY_A);
	frame(v, child_meta, KEY_A);
	frame(v, rec_meta, KEY_B);
	frame(v, inner_meta, KEY_B);
	rec_proc__set_stacks(p, v, 1);
	out = answer(p, REC_Q_STACKS | REC_Q_JSON, "a");
	{
		char expect[512];

		snprintf(expect, sizeof(expect),
			 "{\"pid\":%d,\"tid\":42,\"recording\":\"0x8000000000000002\",\"subject\":"
			 "\"a\","
			 "\"stack\":[{\"name\":\"child_span\",\"target\":\"srv\",\"file\":\"%s\","
			 "\"line\":%d,\"enter\":null,\"age_ns\":null,\"entered_before_attach\":"
			 "false},"
			 "{\"name\":\"recording\",\"target\":\"recorder\",\"file\":\"recorder.h\","
			 "\"line\":0,\"enter\":null,\"age_ns\":null,\"entered_before_attach\":"
			 "false}]}\n",
			 (int)getpid(), __FILE__, child_line);
		assert_string_equal(out, expect);
	}
	free(out);
	out = answer(p, REC_Q_STACKS, "b");
	{
		char expect[512];

		snprintf(expect, sizeof(expect),
			 "pid %d tid 42 recording 0x8000000000000003 <b>:\n"
			 "    inner (test_query.c:%d)\n"
			 "    recording\n",
			 (int)getpid(), inner_line);
		assert_string_equal(out, expect);
	}
	free(out);
}

/* Two threads in one recording give two stacks; a thread outside it gives none. */
static void test_one_stack_per_thread(void **state)
{
	struct rec_proc *p = *state;
	struct rec_thread_stack *v = calloc(3, sizeof(*v));
	char *out, *line;
	int n = 0;

	v[0].tid = 1;
	frame(&v[0], rec_meta, KEY_A);
	v[1].tid = 2;
	frame(&v[1], rec_meta, KEY_A);
	frame(&v[1], child_meta, KEY_A);
	v[2].tid = 3;
	frame(&v[2], rec_meta, KEY_B);
	rec_proc__set_stacks(p, v, 3);
	out = answer(p, REC_Q_STACKS | REC_Q_JSON, "a");
	for (line = out; (line = strchr(line, '\n')); line++)
		n++;
	assert_int_equal(n, 2);
	assert_non_null(strstr(out, "\"tid\":1,"));
	assert_non_null(strstr(out, "\"tid\":2,"));
	assert_null(strstr(out, "\"tid\":3,"));
	free(out);
}

/* Dropped seqs show as gaps, including after the last event kept. */
static void test_tail_shows_gaps(void **state)
{
	struct rec_proc *p = *state;
	struct rec_rstate *rs = rec_proc__find(p, KEY_A);
	char *out;

	assert_int_equal(ingest(p, KEY_A, 0, 0), 0);
	assert_int_equal(ingest(p, KEY_A, 1, 1), 0);
	assert_int_equal(ingest(p, KEY_A, 4, 4), 0);
	rs->produced = 7;
	rs->dropped = 4;
	out = answer(p, 0, "a");
	assert_non_null(strstr(out, "] <a> hello, n: 1\n-- 2 events lost (seq 2..3) --\n"));
	assert_non_null(strstr(out, "] <a> hello, n: 4\n-- 2 events lost (seq 5..6) --\n"));
	assert_non_null(strstr(out, "cap 10, seen 7, delivered 3, dropped 4 <==\n"));
	free(out);
	out = answer(p, REC_Q_LIST | REC_Q_JSON, "a");
	assert_string_equal(strstr(out, "\"subject\""),
			    "\"subject\":\"a\",\"cap\":10,\"asked_cap\":10,\"seen\":7,"
			    "\"delivered\":3,\"kept\":3,\"dropped\":4,"
			    "\"invalid\":0,\"tail\":3,\"state\":\"live\"}\n");
	free(out);
}

/* Events are refused, and counted, when malformed or of an unknown recording. */
static void test_ingest_validates(void **state)
{
	struct rec_proc *p = *state;
	struct rec_event_rec e = { .hdr = { .type = REC_RT_EVENT, .size = sizeof(e) },
				   .recording = KEY_A,
				   .types = 0x9 };
	struct rec_decoded d;
	struct rec_rstate *rs;

	assert_int_equal(rec_proc__ingest_event(p, &e, sizeof(e), &d, &rs), -EINVAL);
	assert_int_equal(rec_proc__ingest_event(p, &e, 10, &d, &rs), -EINVAL);
	assert_int_equal(p->malformed, 2);
	assert_int_equal(ingest(p, 0x1234, 0, 0), -ENOENT);
	assert_int_equal(p->orphans, 1);
	assert_int_equal(ingest(p, KEY_B, 20, 0), 0);
	assert_int_equal(ingest(p, KEY_B, 5, 0), -ESTALE);
	assert_int_equal(rec_proc__find(p, KEY_B)->stale, 1);
}

/*
 * An event that fails validation was numbered by its recording: it counts
 * there, so that seen = kept + dropped, in the list too.
 */
static void test_invalid_event_counts_in_its_recording(void **state)
{
	struct rec_proc *p = *state;
	struct rec_event_rec e = { .hdr = { .type = REC_RT_EVENT, .size = sizeof(e) },
				   .recording = KEY_A,
				   .seq = 1,
				   .types = 0x7 };
	struct rec_rstate *rs = rec_proc__find(p, KEY_A);
	struct rec_decoded d;
	char *out;

	assert_int_equal(ingest(p, KEY_A, 0, 0), 0);
	assert_int_equal(rec_proc__ingest_event(p, &e, sizeof(e), &d, &rs), -EINVAL);
	assert_int_equal(ingest(p, KEY_A, 2, 2), 0);
	rs = rec_proc__find(p, KEY_A);
	assert_int_equal(rs->invalid, 1);
	assert_int_equal(p->malformed, 1);
	out = answer(p, REC_Q_LIST | REC_Q_JSON, "a");
	assert_non_null(
		strstr(out, "\"seen\":3,\"delivered\":2,\"kept\":2,\"dropped\":1,\"invalid\":1,"));
	free(out);
	/* Of a recording not known yet: an orphan, until it is. */
	e.recording = 0x4242;
	assert_int_equal(rec_proc__ingest_event(p, &e, sizeof(e), &d, &rs), -ENOENT);
	assert_int_equal(d.recording, 0x4242);
	assert_int_equal(p->orphans, 1);
	assert_int_equal(p->malformed, 1);
}

/* A retired recording stays listed as retired; caps are clamped. */
static void test_retire_and_clamp(void **state)
{
	struct rec_proc *p = *state;
	struct rec_recording_rec r = { .key = KEY_A,
				       .recorder = 1,
				       .cap = 10,
				       .seq = 12,
				       .dropped = 1,
				       .state = REC_RS_RETIRED };

	assert_int_equal(rec_proc__ingest_recording(p, &r), 0);
	assert_true(rec_proc__find(p, KEY_A)->retired);
	assert_int_equal(rec_proc__find(p, KEY_A)->produced, 12);
	assert_int_equal(rec_proc__get(p, 77, 1, UINT64_MAX)->cap, REC_CAP_MAX);
	assert_int_equal(rec_proc__get(p, 78, 1, 0)->cap, 2);
	r.state = 9;
	assert_int_equal(rec_proc__ingest_recording(p, &r), -EINVAL);
}

/*
 * --min-cap and --max-cap: a recording keeps the cap its program asked for,
 * clamped, raised to the least and lowered to the most; it remembers what
 * was asked, from an announcement as from an event's recovery.
 */
static void test_min_and_max_cap(void **state)
{
	struct rec_proc *p = *state;
	struct rec_limits l = { .min_cap = 100, .max_cap = 1000 };
	struct rec_recording_rec r = {
		.key = 0x76, .recorder = 1, .cap = 64, .state = REC_RS_LIVE
	};
	struct rec_rstate *rs;

	assert_int_equal(rec_proc__effective_cap(&l, 64), 100);
	assert_int_equal(rec_proc__effective_cap(&l, 500), 500);
	assert_int_equal(rec_proc__effective_cap(&l, 5000), 1000);
	assert_int_equal(rec_proc__effective_cap(&l, UINT64_MAX), 1000);
	assert_int_equal(rec_proc__effective_cap(&l, 0), 100);
	l = (struct rec_limits){ 0 };
	assert_int_equal(rec_proc__effective_cap(&l, 0), 2);
	assert_int_equal(rec_proc__effective_cap(&l, 64), 64);
	l.max_cap = 8;
	assert_int_equal(rec_proc__effective_cap(&l, 64), 8);
	assert_int_equal(rec_proc__effective_cap(&l, 3), 3);

	p->limits.min_cap = 100;
	assert_int_equal(rec_proc__ingest_recording(p, &r), 0);
	rs = rec_proc__find(p, 0x76);
	assert_int_equal(rs->cap, 100);
	assert_int_equal(rs->asked_cap, 64);
	rs = rec_proc__get(p, 77, 1, 1u << 30);
	assert_int_equal(rs->cap, REC_CAP_MAX);
	assert_int_equal(rs->asked_cap, 1u << 30);
	p->limits.max_cap = 200;
	rs = rec_proc__get(p, 78, 1, 300);
	assert_int_equal(rs->cap, 200);
	assert_int_equal(rs->asked_cap, 300);
}

/*
 * A span of a recording nothing announced: entered before the attach (its
 * enter not known, or before attached_ns) it is what an attach mid-flight
 * expects; entered after, an orphan.
 */
static void test_span_of_an_unknown_recording(void **state)
{
	struct rec_proc *p = *state;
	struct rec_span_rec r = { .hdr = { .type = REC_RT_SPAN, .size = sizeof(r), .time_ns = 500 },
				  .recording = 0x99,
				  .id = 1,
				  .meta = 0x10 };

	p->attached_ns = 100;
	assert_int_equal(rec_proc__ingest_span(p, &r), -ENOENT);
	r.enter = 50;
	assert_int_equal(rec_proc__ingest_span(p, &r), -ENOENT);
	assert_int_equal(p->spans_before_attach, 2);
	assert_int_equal(p->span_orphans, 0);
	r.enter = 150;
	assert_int_equal(rec_proc__ingest_span(p, &r), -ENOENT);
	assert_int_equal(p->spans_before_attach, 2);
	assert_int_equal(p->span_orphans, 1);
	/* Not knowing when the attach was, only an unknown enter says before it. */
	p->attached_ns = 0;
	r.enter = 50;
	assert_int_equal(rec_proc__ingest_span(p, &r), -ENOENT);
	assert_int_equal(p->span_orphans, 2);
}

/*
 * A span record's callsite is read when the record comes in, while the
 * process lives: the Rust layer's blobs are on its heap, which no file holds
 * once the process is gone (docs/probe-abi.md, "The Rust emitter").
 */
static void test_span_callsite_read_at_ingest(void **state)
{
	static const char blob[] = REC__SPAN_META(INFO, "heap_span");
	struct rec_proc *p = *state;
	size_t len = sizeof(blob);
	char *heap = malloc(len);
	const struct rec_callsite *cs;
	struct rec_span_rec r = { .hdr = { .type = REC_RT_SPAN, .size = sizeof(r), .time_ns = 500 },
				  .recording = KEY_A,
				  .id = 1,
				  .enter = 400 };

	assert_non_null(heap);
	memcpy(heap, blob, len);
	r.meta = (uintptr_t)heap;
	assert_int_equal(rec_proc__ingest_span(p, &r), 0);
	/* The process is gone, and its heap with it. */
	p->alive = 0;
	memset(heap, 0, len);
	cs = rec_proc__callsite(p, r.meta);
	assert_non_null(cs);
	assert_string_equal(cs->name, "heap_span");
	free(heap);
}

/* True if out holds a byte below 0x20 other than the newline ending each line, or DEL. */
static int has_control(const char *out)
{
	for (const unsigned char *c = (const unsigned char *)out; *c; c++)
		if ((*c < 0x20 && *c != '\n') || *c == 0x7f)
			return 1;
	return 0;
}

static int count_lines(const char *out)
{
	int n = 0;

	for (; *out; out++)
		n += *out == '\n';
	return n;
}

/*
 * What the target named (subjects, span names) is escaped in every text
 * answer: a newline cannot forge a line, nor an ESC reach the terminal.
 */
static void test_text_answers_escape_target_text(void **state)
{
	static const char subject[] = "x\nI0101 00:00:00.000000 1 forged.c:1] forged\x1b[2J\x7f";
	struct rec_proc *p = *state;
	struct rec_thread_stack *v = calloc(1, sizeof(*v));
	char *out;

	add_recording(p, 0x8000000000000009ULL, subject, 10);
	assert_int_equal(ingest(p, 0x8000000000000009ULL, 0, 1), 0);
	v->tid = 42;
	frame(v, rec_meta, 0x8000000000000009ULL);
	frame(v, evil_meta, 0x8000000000000009ULL);
	rec_proc__set_stacks(p, v, 1);

	out = answer(p, REC_Q_LIST, subject);
	assert_false(has_control(out));
	assert_int_equal(count_lines(out), 2);
	assert_non_null(
		strstr(out, " x\\nI0101 00:00:00.000000 1 forged.c:1] forged\\u001b[2J"
			    "\\u007f       10       10          1          1          0        1 "
			    "live\n"));
	free(out);

	out = answer(p, 0, subject);
	assert_false(has_control(out));
	assert_int_equal(count_lines(out), 2);
	assert_non_null(strstr(out, " <x\\nI0101 00:00:00.000000 1 forged.c:1] forged\\u001b[2J"
				    "\\u007f> cap 10, seen 1, delivered 1, dropped 0 <==\n"));
	free(out);

	out = answer(p, REC_Q_STACKS, subject);
	assert_false(has_control(out));
	assert_int_equal(count_lines(out), 3);
	assert_non_null(strstr(out, " <x\\nI0101 00:00:00.000000 1 forged.c:1] forged\\u001b[2J"
				    "\\u007f>:\n    evil\\u001b]0;title\\u0007\\nspan "
				    "(test_query.c:"));
	free(out);

	out = answer(p, REC_Q_STACKS | REC_Q_JSON, subject);
	assert_false(has_control(out));
	assert_int_equal(count_lines(out), 1);
	free(out);
	out = answer(p, REC_Q_LIST | REC_Q_JSON, subject);
	assert_false(has_control(out));
	assert_int_equal(count_lines(out), 1);
	free(out);
}

/* What a recorder-attach adds: its clients in --stats, and a slow follower's notice. */
static void test_clients_and_not_sent(void **state)
{
	static const struct rec_output_clients clients = {
		.connected = 1,
		.max_clients = 2,
		.accepted = 3,
		.denied = 4,
		.refused = 5,
		.timed_out = 6,
		.not_sent = 7,
		.libraries_failed = 8,
		.libraries_retrying = 9,
		.libraries_attached_later = 10,
		.libraries_given_up = 11,
		.dumps_removed = 12,
		.dumps_removed_bytes = 13,
		.attach_pid = 14,
		.binary = "/usr/sbin/server",
		.snapshots_failed = 15,
		.snapshots_removed = 16,
		.snapshots_removed_bytes = 17,
		.snapshots_made_room = 18,
		.snapshots_made_room_bytes = 19,
	};
	struct rec_output_clients by_pid = clients;
	struct rec_proc *p = *state;
	struct rec_query q = { .flags = REC_Q_STATS };
	struct rec_output o;
	char *buf = NULL, *want;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(rec_query__answer_live(f, p, &q, &clients), 0);
	fclose(f);
	assert_non_null(strstr(buf, "BPF counters (all traced processes):\n"));
	/* Internal sizes only with -v: the limits table and the BPF table's entries. */
	assert_null(strstr(buf, "entries in the BPF recordings table"));
	assert_non_null(strstr(buf, "limits: nothing went over its limit (-v shows each limit"));
	assert_non_null(strstr(
		buf, "\ntraced by: recorder-attach 14, --binary /usr/sbin/server\n"
		     "clients of this recorder-attach (all traced processes):\n"
		     "    connected            1 (at most 2)\n"
		     "    accepted             3\n    denied               4\n"
		     "    refused              5\n    timed_out            6\n"
		     "    events_not_sent      7\n"
		     "libraries loaded after the attach whose probes failed to attach:\n"
		     "    failed               8\n    retrying             9\n"
		     "    attached_later       10\n    given_up             11\n"
		     "black boxes removed by --keep-dumps and --max-dump-bytes:\n"
		     "    removed              12\n    removed_bytes        13\n"
		     "snapshots: not written (this process), removed by --keep-snapshots "
		     "and --max-snapshot-bytes, removed to make room for black boxes (made_room):\n"
		     "    failed               15\n    removed              16\n"
		     "    removed_bytes        17\n    made_room            18\n"
		     "    made_room_bytes      19\n"));
	assert_int_equal(buf[len - 1], '\n');
	free(buf);

	q.flags = REC_Q_STATS | REC_Q_VERBOSE;
	f = open_memstream(&buf, &len);
	assert_int_equal(rec_query__answer_live(f, p, &q, &clients), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\nentries in the BPF recordings table: "));
	assert_non_null(
		strstr(buf, "\nlimits (OVER: what did not fit; EVENTS: the events of those):\n"));
	free(buf);

	q.flags = REC_Q_STATS | REC_Q_JSON;
	f = open_memstream(&buf, &len);
	assert_int_equal(rec_query__answer_live(f, p, &q, &clients), 0);
	fclose(f);
	assert_non_null(strstr(buf,
			       ",\"clients\":{\"connected\":1,\"max_clients\":2,"
			       "\"accepted\":3,\"denied\":4,\"refused\":5,\"timed_out\":6,"
			       "\"events_not_sent\":7},\"libraries\":{\"failed\":8,\"retrying\":9,"
			       "\"attached_later\":10,\"given_up\":11},"
			       "\"dumps\":{\"removed\":12,\"removed_bytes\":13},"
			       "\"snapshots\":{\"failed\":15,\"removed\":16,\"removed_bytes\":17,"
			       "\"made_room\":18,\"made_room_bytes\":19},"
			       "\"traced_by\":{\"pid\":14,\"binary\":\"/usr/sbin/server\"}}\n"));
	assert_int_equal(count_lines(buf), 1);
	free(buf);
	/* Traced by a -p recorder-attach: no binary. */
	by_pid.binary = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(rec_query__answer_live(f, p, &q, &by_pid), 0);
	fclose(f);
	assert_non_null(strstr(buf, ",\"traced_by\":{\"pid\":14,\"binary\":null}}\n"));
	free(buf);
	q.flags = REC_Q_STATS;
	f = open_memstream(&buf, &len);
	assert_int_equal(rec_query__answer_live(f, p, &q, &by_pid), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\ntraced by: recorder-attach 14, -p\n"));
	free(buf);
	q.flags = REC_Q_STATS | REC_Q_JSON;
	/* recorder-tail --file has no clients. */
	buf = answer(p, REC_Q_STATS | REC_Q_JSON, NULL);
	assert_null(strstr(buf, "clients"));
	free(buf);

	f = open_memstream(&buf, &len);
	rec_query__output(&o, f, &q);
	rec_output__not_sent(&o, p, 1);
	q.flags = 0;
	rec_query__output(&o, f, &q);
	rec_output__not_sent(&o, p, 1);
	rec_output__not_sent(&o, p, 9);
	fclose(f);
	assert_true(asprintf(&want,
			     "{\"pid\":%d,\"not_sent\":1,\"reason\":\"reader too slow\"}\n"
			     "-- 1 event not sent: reader too slow --\n"
			     "-- 9 events not sent: reader too slow --\n",
			     (int)p->pid) > 0);
	assert_string_equal(buf, want);
	free(want);
	free(buf);
}

/* --where: ANDed conditions on the fields; -n takes the last N they select; gaps still show. */
static void test_where_selects_by_field(void **state)
{
	struct rec_proc *p = *state;
	struct rec_query q = { .subject = "a", .nwhere = 2 };
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f;

	for (uint64_t i = 0; i < 10; i++)
		if (i != 3)
			assert_int_equal(ingest(p, KEY_A, i, i), 0);
	assert_int_equal(rec_cond__parse("n>=2", &q.where[0], err, sizeof(err)), 0);
	assert_int_equal(rec_cond__parse("n!=7", &q.where[1], err, sizeof(err)), 0);
	f = open_memstream(&buf, &len);
	assert_int_equal(rec_query__answer(f, p, &q), 0);
	fclose(f);
	/* Its header, n 2, the lost seq 3, n 4..6 and 8..9: 7 and those below 2 left out. */
	assert_int_equal(count_lines(buf), 1 + 1 + 1 + 3 + 2);
	assert_non_null(strstr(buf, "] <a> hello, n: 2\n-- 1 event lost (seq 3..3) --\n"));
	assert_non_null(strstr(buf, "] <a> hello, n: 6\nI"));
	assert_non_null(strstr(buf, "] <a> hello, n: 8\n"));
	assert_null(strstr(buf, "n: 7\n"));
	assert_null(strstr(buf, "n: 1\n"));
	free(buf);
	buf = NULL;
	q.n = 2;
	f = open_memstream(&buf, &len);
	assert_int_equal(rec_query__answer(f, p, &q), 0);
	fclose(f);
	assert_int_equal(count_lines(buf), 1 + 2);
	assert_non_null(strstr(buf, "] <a> hello, n: 8\n"));
	assert_non_null(strstr(buf, "] <a> hello, n: 9\n"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nested_recordings_split_stacks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_one_stack_per_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tail_shows_gaps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_where_selects_by_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ingest_validates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_event_counts_in_its_recording, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_retire_and_clamp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_min_and_max_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_span_of_an_unknown_recording, setup, teardown),
		cmocka_unit_test_setup_teardown(test_span_callsite_read_at_ingest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_answers_escape_target_text, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_clients_and_not_sent, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
