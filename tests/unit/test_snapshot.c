// SPDX-License-Identifier: MIT
/*
 * Trigger snapshots (dump.h): a dump of one recording holds it whole and
 * nothing of the others but the stacks; the trigger of a snapshot and the
 * triggers pending of a black box are written, read and written again byte
 * for byte, and shown by every output that shows them; a malformed trigger is
 * refused with a message that names it; snapshot files are named apart from
 * black boxes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/dump.h"
#include "serving/query.h"
#include "dumps/retention.h"

#define KEY_A "0x8000000000000002"
#define KEY_B "0x8000000000000003"
#define KEY_C "0x8000000000000004"
#define NOW_NS 1796220192123456789LL

/*
 * A process of three recordings. A's events are of callsite 0x1000 and its
 * spans of 0x6000; B's events of 0x2000 and its spans of 0x4000; C's events of
 * 0x3000. Thread 7 is in a span of A (callsite 0x5000), and in it one of B
 * (0x4000); thread 8 in one of C (0x5000).
 */
static const char process_dump[] =
	"{\"format\":\"recorder-dump\",\"version\":2,\"pid\":42,\"ns_pid\":0,\n"
	"\"ended\":{\"how\":\"running\"},\n"
	"\"dumped_at\":\"2026-12-02T14:03:12.123456Z\",\"clock_offset_ns\":5,\n"
	"\"malformed\":1,\"orphans\":2,\n"
	"\"forgotten\":[{\"recorder\":\"0x1\",\"recordings\":3,\"seen\":9,\"kept\":8,"
	"\"dropped\":1}],\n"
	"\"callsites\":[\n"
	"{\"addr\":\"0x1000\",\"kind\":\"E\",\"level\":2,\"name\":\"ev a\",\"target\":\"t\","
	"\"file\":\"a.c\",\"line\":1,\"message\":\"from a\",\"fields\":[\"x\"]},\n"
	"{\"addr\":\"0x2000\",\"kind\":\"E\",\"level\":4,\"name\":\"ev b\",\"target\":\"t\","
	"\"file\":\"b.c\",\"line\":2,\"message\":\"from b\",\"fields\":[\"x\"]},\n"
	"{\"addr\":\"0x3000\",\"kind\":\"E\",\"level\":2,\"name\":\"ev c\",\"target\":\"t\","
	"\"file\":\"c.c\",\"line\":3,\"message\":\"from c\",\"fields\":[]},\n"
	"{\"addr\":\"0x4000\",\"kind\":\"S\",\"level\":2,\"name\":\"span b\",\"target\":\"t\","
	"\"file\":\"b.c\",\"line\":4,\"message\":\"\",\"fields\":[]},\n"
	"{\"addr\":\"0x5000\",\"kind\":\"S\",\"level\":2,\"name\":\"frame\",\"target\":\"t\","
	"\"file\":\"f.c\",\"line\":5,\"message\":\"\",\"fields\":[]},\n"
	"{\"addr\":\"0x6000\",\"kind\":\"S\",\"level\":2,\"name\":\"span a\",\"target\":\"t\","
	"\"file\":\"a.c\",\"line\":6,\"message\":\"\",\"fields\":[]}],\n"
	"\"recordings\":[\n"
	"{\"key\":\"" KEY_A
	"\",\"recorder\":\"0x1\",\"subject\":\"a\",\"cap\":4,\"state\":\"live\","
	"\"seen\":2,\"kept\":2,\"dropped\":0,\"stale\":0,\"events\":[\n"
	"{\"seq\":0,\"tid\":7,\"time_ns\":100,\"callsite\":\"0x1000\",\"values\":["
	"{\"type\":\"u64\",\"value\":1}]},\n"
	"{\"seq\":1,\"tid\":7,\"time_ns\":110,\"callsite\":\"0x1000\",\"values\":["
	"{\"type\":\"u64\",\"value\":2}]}],"
	"\"spans_seen\":1,\"spans_dropped\":0,\"spans\":[{\"id\":\"0x1\",\"parent\":\"0x0\","
	"\"tid\":7,\"callsite\":\"0x6000\",\"enter_ns\":90,\"exit_ns\":120}]},\n"
	"{\"key\":\"" KEY_B "\",\"recorder\":\"0x1\",\"subject\":\"b\\u001b[31m\",\"cap\":4,"
	"\"state\":\"live\",\"seen\":5,\"kept\":4,\"dropped\":1,\"stale\":0,\"events\":[\n"
	"{\"seq\":2,\"tid\":7,\"time_ns\":200,\"callsite\":\"0x2000\",\"values\":["
	"{\"type\":\"u64\",\"value\":3}]},\n"
	"{\"seq\":4,\"tid\":7,\"time_ns\":220,\"callsite\":\"0x2000\",\"values\":["
	"{\"type\":\"u64\",\"value\":4}]}],"
	"\"spans_seen\":3,\"spans_dropped\":1,\"spans\":[{\"id\":\"0x2\",\"parent\":\"0x0\","
	"\"tid\":7,\"callsite\":\"0x4000\",\"enter_ns\":190,\"exit_ns\":230},{\"id\":\"0x3\","
	"\"parent\":\"0x2\",\"tid\":7,\"callsite\":\"0x4000\",\"enter_ns\":195,\"exit_ns\":"
	"225}]},\n"
	"{\"key\":\"" KEY_C "\",\"recorder\":\"0x1\",\"subject\":\"c\",\"cap\":2,\"state\":"
	"\"retired\",\"seen\":1,\"kept\":1,\"dropped\":0,\"stale\":0,\"events\":[\n"
	"{\"seq\":0,\"tid\":8,\"time_ns\":300,\"callsite\":\"0x3000\",\"values\":[]}]}],\n"
	"\"stacks\":[\n"
	"{\"tid\":7,\"overflow\":0,\"frames\":[{\"span\":\"0x10\",\"callsite\":\"0x5000\","
	"\"recording\":\"" KEY_A "\",\"id\":\"0x8\",\"enter_ns\":50},{\"span\":\"0x20\","
	"\"callsite\":\"0x4000\",\"recording\":\"" KEY_B "\",\"id\":\"0x9\",\"enter_ns\":60}]},\n"
	"{\"tid\":8,\"overflow\":1,\"frames\":[{\"span\":\"0x30\",\"callsite\":\"0x5000\","
	"\"recording\":\"" KEY_C "\"}]}]}\n";

static const struct rec_dump_rule_counts rows[] = {
	{ .id = 1, .rule = "level>=error", .fired = 7, .saved = 2, .cooldown = 4, .capped = 1 },
	{ .id = 3, .rule = "span:'db *'>500ms", .fired = 1, .failed = 1 },
	{ .id = 4, .rule = "code:oom\t*", .fired = UINT64_MAX },
};

/* The trigger of a snapshot of B: its strings hold what a terminal must not see raw. */
static struct rec_dump_trigger trigger_of_b(void)
{
	struct rec_dump_trigger t = {
		.rule_id = 1,
		.kind = REC_DUMP_TRIGGER_LEVEL,
		.rule = "level>=error",
		.time_ns = 1796220192123456000LL,
		.recording = 0x8000000000000003ULL,
		.subject = "b\x1b[31m",
		.what = "event seq 4: from b \x1b]0;x\x07 \"q\"",
		.after_ns = 2000000000,
		.counts = rows,
		.ncounts = 3,
	};

	return t;
}

/* Two that fired as the process exited: one in no recording, one of no counts. */
static void pending_two(struct rec_dump_trigger pending[2])
{
	pending[0] = trigger_of_b();
	pending[0].rule_id = 3;
	pending[0].kind = REC_DUMP_TRIGGER_SPAN;
	strcpy(pending[0].rule, "span:'db *'>500ms");
	strcpy(pending[0].what, "span request open 812ms");
	pending[0].ncounts = 2;
	pending[1] = trigger_of_b();
	pending[1].rule_id = 4;
	pending[1].kind = REC_DUMP_TRIGGER_CODE;
	strcpy(pending[1].rule, "code:oom\t*");
	pending[1].recording = 0;
	pending[1].subject[0] = '\0';
	strcpy(pending[1].what, "code: out of memory");
	pending[1].counts = NULL;
	pending[1].ncounts = 0;
}

static void read_dump(const char *text, struct rec_proc *p)
{
	char err[256];

	if (rec_dump__read_mem(text, strlen(text), p, NULL, err, sizeof(err)))
		fail_msg("%s", err);
}

/* p written as opts says, into a new string; the return code into *rc. */
static char *write_dump(struct rec_proc *p, const struct rec_dump_opts *opts, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*rc = rec_dump__write_opts(f, p, opts);
	fclose(f);
	return buf;
}

static char *written(struct rec_proc *p, const struct rec_dump_opts *opts)
{
	int rc;
	char *text = write_dump(p, opts, &rc);

	assert_int_equal(rc, 0);
	return text;
}

#define assert_starts_with(s, prefix)                                                              \
	do {                                                                                       \
		if (strncmp((s), (prefix), strlen(prefix)))                                        \
			fail_msg("does not start with:\n%s\nit is:\n%.400s", (prefix), (s));       \
	} while (0)

static char *answer(struct rec_proc *p, uint32_t flags)
{
	struct rec_query q = { .flags = flags };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(rec_query__answer(f, p, &q), 0);
	fclose(f);
	return buf;
}

/* Reads text back and writes it again (rec_dump__write, as the golden test does): the same bytes. */
static void assert_written_back(const char *text)
{
	struct rec_proc p;
	char *again;
	int rc;
	struct rec_dump_opts opts = { .now_ns = NOW_NS };

	read_dump(text, &p);
	again = write_dump(&p, &opts, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(again, text);
	free(again);
	rec_proc__fini(&p);
}

static void test_scope_recording_holds_one_recording_and_every_stack(void **state)
{
	struct rec_dump_opts opts = { .now_ns = NOW_NS, .only_recording = 0x8000000000000003ULL };
	struct rec_proc p, back;
	char *text, *out;

	(void)state;
	read_dump(process_dump, &p);
	text = written(&p, &opts);
	assert_non_null(strstr(text, "\"clock_offset_ns\":5,\n\"scope\":\"recording\",\n"));
	/* B whole: its events, its spans and its counts. */
	assert_non_null(strstr(text, "\"key\":\"" KEY_B "\""));
	assert_non_null(strstr(text, "\"seen\":5,\"kept\":4,\"dropped\":1,"));
	assert_non_null(strstr(text, "{\"seq\":2,"));
	assert_non_null(strstr(text, "{\"seq\":4,"));
	assert_non_null(strstr(text, "\"spans_seen\":3,\"spans_dropped\":1,\"spans_lost\":1,"
				     "\"spans\":[\n"
				     "{\"id\":\"0x2\","));
	assert_non_null(strstr(text, "{\"id\":\"0x3\",\"parent\":\"0x2\","));
	/* Nothing of A and C but the frames of the stacks. */
	assert_null(strstr(text, "\"key\":\"" KEY_A "\""));
	assert_null(strstr(text, "\"key\":\"" KEY_C "\""));
	assert_null(strstr(text, "\"id\":\"0x1\",\"parent\""));
	assert_null(strstr(text, "from a"));
	assert_null(strstr(text, "from c"));
	assert_null(strstr(text, "span a"));
	assert_non_null(strstr(text, "\"recordings_omitted\":0,"));
	/* The callsites of its events and spans, and of every frame. */
	assert_non_null(strstr(text, "\"callsites\":[\n{\"addr\":\"0x2000\","));
	assert_non_null(strstr(text, "},\n{\"addr\":\"0x4000\","));
	assert_non_null(strstr(text, "},\n{\"addr\":\"0x5000\","));
	assert_non_null(strstr(text, "\"fields\":[]}],\n\"recordings\":["));
	/* Every thread's stack, and the process's counts. */
	assert_non_null(strstr(text, "{\"tid\":7,\"overflow\":0,\"frames\":[{\"span\":\"0x10\","
				     "\"callsite\":\"0x5000\",\"recording\":\"" KEY_A "\""));
	assert_non_null(strstr(text, "{\"tid\":8,\"overflow\":1,"));
	assert_non_null(strstr(text, "\"malformed\":1,\"orphans\":2,"));
	assert_non_null(strstr(text, "\"forgotten\":[{\"recorder\":\"0x1\",\"recordings\":3,"));

	/* It reads back as that recording alone, and says so; written again, the same. */
	read_dump(text, &back);
	assert_true(back.dump_one_recording);
	assert_null(rec_proc__find(&back, 0x8000000000000002ULL));
	assert_non_null(rec_proc__find(&back, 0x8000000000000003ULL));
	assert_null(rec_proc__find(&back, 0x8000000000000004ULL));
	assert_int_equal(back.nstacks, 2);
	out = answer(&back, REC_Q_LIST | REC_Q_JSON);
	assert_non_null(strstr(out, "\"recording\":\"" KEY_B "\""));
	assert_null(strstr(out, KEY_A));
	free(out);
	out = answer(&back, REC_Q_STATS);
	assert_non_null(strstr(out, "scope: one recording"));
	assert_non_null(strstr(out, "spans: 3 seen, 2 kept, 0 aged out (--span-cap), 1 lost"));
	free(out);
	out = answer(&back, REC_Q_STATS | REC_Q_JSON);
	assert_non_null(strstr(out, "\"state\":\"running\",\"scope\":\"recording\","));
	free(out);
	rec_proc__fini(&back);
	assert_written_back(text);
	free(text);

	/* The whole process: no scope, every recording and callsite. */
	opts.only_recording = 0;
	text = written(&p, &opts);
	assert_null(strstr(text, "\"scope\""));
	assert_non_null(strstr(text, "\"key\":\"" KEY_A "\""));
	assert_non_null(strstr(text, "\"key\":\"" KEY_C "\""));
	assert_non_null(strstr(text, "\"addr\":\"0x6000\""));
	free(text);
	rec_proc__fini(&p);
}

static void test_scope_of_an_unknown_recording_writes_nothing(void **state)
{
	struct rec_dump_opts opts = { .now_ns = NOW_NS, .only_recording = 0x77 };
	struct rec_proc p;
	char *text;
	int rc;

	(void)state;
	read_dump(process_dump, &p);
	text = write_dump(&p, &opts, &rc);
	assert_int_equal(rc, -ENOENT);
	assert_string_equal(text, "");
	free(text);
	rec_proc__fini(&p);
}

static void test_trigger_and_pending_round_trip(void **state)
{
	struct rec_dump_trigger t = trigger_of_b(), pending[2];
	struct rec_dump_opts opts = {
		.now_ns = NOW_NS,
		.only_recording = 0x8000000000000003ULL,
		.trigger = &t,
	};
	struct rec_proc p, back;
	char *text;

	(void)state;
	pending_two(pending);
	read_dump(process_dump, &p);
	text = written(&p, &opts);
	assert_non_null(strstr(
		text,
		"\n\"trigger\":{\"rule\":\"level>=error\",\"rule_id\":1,\"kind\":\"level\","
		"\"time\":\"2026-12-02T14:03:12.123456Z\",\"recording\":\"" KEY_B "\","
		"\"subject\":\"b\\u001b[31m\",\"what\":\"event seq 4: from b \\u001b]0;x\\u0007 "
		"\\\"q\\\"\",\"after_ns\":2000000000,\"counts\":[{\"id\":1,\"rule\":\"level>="
		"error\","
		"\"fired\":7,\"saved\":2,\"cooldown\":4,\"capped\":1,\"failed\":0},{\"id\":3,"
		"\"rule\":\"span:'db "
		"*'>500ms\",\"fired\":1,\"saved\":0,\"cooldown\":0,\"capped\":0,"
		"\"failed\":1},{\"id\":4,\"rule\":\"code:oom\\t*\",\"fired\":18446744073709551615,"
		"\"saved\":0,\"cooldown\":0,\"capped\":0,\"failed\":0}]},\n"));
	assert_null(strstr(text, "triggers_pending"));
	read_dump(text, &back);
	assert_non_null(back.trigger);
	assert_int_equal(back.ntriggers_pending, 0);
	assert_int_equal(back.trigger->rule_id, 1);
	assert_int_equal(back.trigger->kind, REC_DUMP_TRIGGER_LEVEL);
	assert_string_equal(back.trigger->rule, t.rule);
	assert_int_equal(back.trigger->time_ns, t.time_ns);
	assert_int_equal(back.trigger->recording, t.recording);
	assert_string_equal(back.trigger->subject, t.subject);
	assert_string_equal(back.trigger->what, t.what);
	assert_int_equal(back.trigger->after_ns, t.after_ns);
	assert_int_equal(back.trigger->ncounts, 3);
	assert_memory_equal(back.trigger->counts, rows, sizeof(rows));
	rec_proc__fini(&back);
	assert_written_back(text);
	free(text);

	/* A black box naming the triggers that fired as the process exited. */
	opts = (struct rec_dump_opts){ .now_ns = NOW_NS, .pending = pending, .npending = 2 };
	text = written(&p, &opts);
	assert_null(strstr(text, "\"trigger\""));
	assert_null(strstr(text, "\"scope\""));
	assert_non_null(strstr(text, "\n\"triggers_pending\":[\n{\"rule\":\"span:'db *'>500ms\","
				     "\"rule_id\":3,\"kind\":\"span\","));
	assert_non_null(strstr(text, "\"counts\":[]}],\n\"malformed\""));
	read_dump(text, &back);
	assert_null(back.trigger);
	assert_int_equal(back.ntriggers_pending, 2);
	assert_int_equal(back.triggers_pending[0].ncounts, 2);
	assert_memory_equal(back.triggers_pending[0].counts, rows, 2 * sizeof(rows[0]));
	assert_int_equal(back.triggers_pending[1].kind, REC_DUMP_TRIGGER_CODE);
	assert_int_equal(back.triggers_pending[1].recording, 0);
	assert_int_equal(back.triggers_pending[1].ncounts, 0);
	assert_null(back.triggers_pending[1].counts);
	rec_proc__fini(&back);
	assert_written_back(text);
	free(text);

	/* Both at once: the counts of each stay its own. */
	opts.trigger = &t;
	text = written(&p, &opts);
	read_dump(text, &back);
	assert_int_equal(back.trigger->ncounts, 3);
	assert_memory_equal(back.trigger->counts, rows, sizeof(rows));
	assert_memory_equal(back.triggers_pending[0].counts, rows, 2 * sizeof(rows[0]));
	rec_proc__fini(&back);
	assert_written_back(text);
	free(text);
	rec_proc__fini(&p);
}

/* What the outputs show of them: one line first, escaped; the counts in --stats. */
static void test_outputs_show_triggers(void **state)
{
	struct rec_dump_trigger t = trigger_of_b(), pending[2];
	struct rec_dump_opts opts = {
		.now_ns = NOW_NS,
		.only_recording = 0x8000000000000003ULL,
		.trigger = &t,
	};
	struct rec_proc p, back;
	char *text, *out;

	(void)state;
	pending_two(pending);
	read_dump(process_dump, &p);
	text = written(&p, &opts);
	read_dump(text, &back);
	free(text);

	out = answer(&back, 0);
	assert_non_null(strstr(out,
			       "snapshot: rule 'level>=error' (id 1) fired at "
			       "2026-12-02T14:03:12.123456Z in recording " KEY_B
			       " (b\\u001b[31m): event seq 4: from b \\u001b]0;x\\u0007 \"q\"\n"
			       "==> pid 42 running <==\n"));
	assert_starts_with(out, "snapshot: ");
	assert_null(strchr(out, '\x1b'));
	free(out);
	out = answer(&back, REC_Q_JSON);
	assert_starts_with(out,
			   "{\"type\":\"trigger\",\"pid\":42,\"pending\":false,\"rule\":"
			   "\"level>=error\",\"rule_id\":1,\"kind\":\"level\",\"time\":"
			   "\"2026-12-02T14:03:12.123456Z\",\"recording\":\"" KEY_B "\","
			   "\"subject\":\"b\\u001b[31m\",\"what\":\"event seq 4: from b "
			   "\\u001b]0;x\\u0007 \\\"q\\\"\",\"after_ns\":2000000000}\n{\"pid\":42,");
	free(out);
	out = answer(&back, REC_Q_STATS);
	assert_non_null(strstr(
		out, "trigger rules when rule 1 fired at 2026-12-02T14:03:12.123456Z (SAVED: "
		     "snapshots written):\n"
		     "    ID   RULE                                  FIRED      SAVED   COOLDOWN"
		     "     CAPPED     FAILED\n"
		     "    1    level>=error                              7          2          4"
		     "          1          0\n"
		     "    3    span:'db *'>500ms                         1          0          0"
		     "          0          1\n"
		     "    4    code:oom\\t*                      18446744073709551615          0"
		     "          0          0          0\n"));
	free(out);
	out = answer(&back, REC_Q_STATS | REC_Q_JSON);
	assert_non_null(strstr(
		out,
		"\"forgotten\":[{\"recorder\":\"0x1\",\"recordings\":3,"
		"\"seen\":9,\"delivered\":8,\"kept\":8,\"dropped\":1}],\"triggers\":[{\"id\":1,"
		"\"rule\":\"level>=error\",\"fired\":7,\"saved\":2,\"cooldown\":"
		"4,\"capped\":1,\"failed\":0},{\"id\":3,"));
	free(out);
	/* --list and --stacks show none of it. */
	out = answer(&back, REC_Q_LIST);
	assert_null(strstr(out, "snapshot"));
	free(out);
	rec_proc__fini(&back);

	/* A black box: how it ended, then each trigger pending; --stats has the last's counts. */
	opts = (struct rec_dump_opts){ .now_ns = NOW_NS, .pending = pending, .npending = 2 };
	text = written(&p, &opts);
	read_dump(text, &back);
	free(text);
	out = answer(&back, 0);
	assert_starts_with(out, "==> pid 42 running <==\n"
				"trigger: rule 'span:'db *'>500ms' (id 3) fired at "
				"2026-12-02T14:03:12.123456Z in recording " KEY_B
				" (b\\u001b[31m) as the process exited: span request open 812ms\n"
				"trigger: rule 'code:oom\\t*' (id 4) fired at "
				"2026-12-02T14:03:12.123456Z as the process exited: code: out of "
				"memory\n==> pid 42 recording " KEY_A);
	free(out);
	out = answer(&back, REC_Q_JSON);
	assert_non_null(strstr(out, "{\"type\":\"trigger\",\"pid\":42,\"pending\":true,\"rule\":"
				    "\"code:oom\\t*\",\"rule_id\":4,\"kind\":\"code\",\"time\":"
				    "\"2026-12-02T14:03:12.123456Z\",\"recording\":\"0x0\","
				    "\"subject\":\"\",\"what\":\"code: out of memory\","
				    "\"after_ns\":2000000000}\n"));
	free(out);
	out = answer(&back, REC_Q_STATS);
	assert_non_null(strstr(out, "trigger rules when rule 4 fired at "));
	assert_null(strstr(out, "    1    level>=error"));
	free(out);
	rec_proc__fini(&back);

	/* Nothing of triggers in a dump without them. */
	read_dump(process_dump, &back);
	out = answer(&back, REC_Q_STATS);
	assert_null(strstr(out, "trigger"));
	assert_null(strstr(out, "scope"));
	free(out);
	rec_proc__fini(&back);
	rec_proc__fini(&p);
}

/* The writer refuses, writing nothing, a trigger that would not read back. */
static void test_writer_refuses_bad_triggers(void **state)
{
	struct rec_dump_trigger t = trigger_of_b(), pending[REC_DUMP_MAX_TRIGGERS_PENDING + 1];
	struct rec_dump_opts opts = { .now_ns = NOW_NS, .trigger = &t };
	struct rec_proc p;
	char *text;
	int rc;

	(void)state;
	read_dump(process_dump, &p);
	t.kind = 0;
	text = write_dump(&p, &opts, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_string_equal(text, "");
	free(text);
	t = trigger_of_b();
	t.time_ns = -1;
	text = write_dump(&p, &opts, &rc);
	assert_int_equal(rc, -EINVAL);
	free(text);
	t = trigger_of_b();
	t.ncounts = REC_DUMP_MAX_RULES + 1;
	text = write_dump(&p, &opts, &rc);
	assert_int_equal(rc, -EINVAL);
	free(text);
	t = trigger_of_b();
	for (size_t i = 0; i <= REC_DUMP_MAX_TRIGGERS_PENDING; i++)
		pending[i] = t;
	opts = (struct rec_dump_opts){ .pending = pending,
				       .npending = REC_DUMP_MAX_TRIGGERS_PENDING + 1 };
	text = write_dump(&p, &opts, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_string_equal(text, "");
	free(text);
	/* Strings that fill their arrays are cut at their last byte. */
	memset(t.what, 'w', sizeof(t.what));
	memset(t.rule, 'r', sizeof(t.rule));
	opts = (struct rec_dump_opts){ .now_ns = NOW_NS, .trigger = &t };
	text = written(&p, &opts);
	assert_written_back(text);
	free(text);
	rec_proc__fini(&p);
}

/* A snapshot as a dump reader finds it: a trigger and a scope, for the bad cases. */
static const char snapshot_dump[] =
	"{\"format\":\"recorder-dump\",\"version\":2,\"pid\":42,\"ns_pid\":0,\n"
	"\"ended\":{\"how\":\"running\"},\n"
	"\"dumped_at\":\"2026-12-02T14:03:12.123456Z\",\"clock_offset_ns\":5,\n"
	"\"scope\":\"recording\",\n"
	"\"trigger\":{\"rule\":\"level>=error\",\"rule_id\":1,\"kind\":\"level\","
	"\"time\":\"2026-12-02T14:03:12.123456Z\",\"recording\":\"0x2\",\"subject\":\"s\","
	"\"what\":\"event seq 1: x\",\"after_ns\":0,\"counts\":[{\"id\":1,\"rule\":"
	"\"level>=error\",\"fired\":1,\"saved\":0,\"cooldown\":0,\"capped\":0,\"failed\":0}]},\n"
	"\"triggers_pending\":[\n"
	"{\"rule\":\"code\",\"rule_id\":2,\"kind\":\"code\",\"time\":"
	"\"2026-12-02T14:03:13.000000Z\",\"recording\":\"0x0\",\"subject\":\"\",\"what\":"
	"\"code: y\",\"after_ns\":0,\"counts\":[]}],\n"
	"\"malformed\":0,\"orphans\":0,\n"
	"\"callsites\":[],\n"
	"\"recordings\":[],\n"
	"\"stacks\":[]}\n";

struct bad_case {
	const char *from, *to; /* an edit of snapshot_dump */
	const char *expect;    /* the message */
};

static const struct bad_case bad_cases[] = {
	{ "\"scope\":\"recording\"", "\"scope\":\"thread\"",
	  "scope: expected \"process\" or \"recording\"" },
	{ "\"scope\":\"recording\"", "\"scope\":1",
	  "scope: expected \"process\" or \"recording\"" },
	{ "\"trigger\":{", "\"trigger\":[],\"x\":{", "trigger: expected an object" },
	{ "\"rule_id\":1", "\"rule_id\":\"1\"", "trigger.rule_id: expected an unsigned integer" },
	{ "\"rule_id\":1", "\"rule_id\":-1", "trigger.rule_id: expected an unsigned integer" },
	{ "\"rule_id\":1", "\"rule_id\":4294967296",
	  "trigger.rule_id: 4294967296 is out of range (0..4294967295)" },
	{ "\"rule\":\"level>=error\",\"rule_id\"", "\"rule_id\"", "trigger: missing \"rule\"" },
	{ "\"rule\":\"level>=error\",\"rule_id\"", "\"rule\":7,\"rule_id\"",
	  "trigger.rule: expected a string" },
	{ "\"kind\":\"level\"", "\"kind\":\"fatal\"",
	  "trigger.kind: expected \"level\", \"span\", \"event\" or \"code\"" },
	{ "\"kind\":\"level\"", "\"kind\":\"LEVEL\"",
	  "trigger.kind: expected \"level\", \"span\", \"event\" or \"code\"" },
	{ "\"time\":\"2026-12-02T14:03:12.123456Z\",\"recording\"",
	  "\"time\":\"2026-12-02 14:03:12\",\"recording\"",
	  "trigger.time: expected an RFC 3339 UTC time with microseconds" },
	{ "\"time\":\"2026-12-02T14:03:12.123456Z\",\"recording\"",
	  "\"time\":1796220192123456000,\"recording\"", "trigger.time: expected a string" },
	{ "\"time\":\"2026-12-02T14:03:12.123456Z\",\"recording\"",
	  "\"time\":\"1969-12-31T23:59:59.999999Z\",\"recording\"",
	  "trigger.time: 1969-12-31T23:59:59.999999Z is out of range (1970 to 2262)" },
	{ "\"time\":\"2026-12-02T14:03:12.123456Z\",\"recording\"",
	  "\"time\":\"2263-01-01T00:00:00.000000Z\",\"recording\"",
	  "trigger.time: 2263-01-01T00:00:00.000000Z is out of range (1970 to 2262)" },
	{ "\"recording\":\"0x2\"", "\"recording\":2", "trigger.recording: expected a string" },
	{ "\"recording\":\"0x2\"", "\"recording\":\"2\"",
	  "trigger.recording: expected a \"0x\" hex string" },
	{ "\"subject\":\"s\"", "\"subject\":\"s\\u0000\"", "trigger.subject: contains a NUL byte" },
	{ "\"what\":\"event seq 1: x\",", "", "trigger: missing \"what\"" },
	{ "\"after_ns\":0,\"counts\":[{", "\"after_ns\":0.5,\"counts\":[{",
	  "trigger.after_ns: expected an unsigned integer" },
	{ "\"counts\":[{", "\"counts\":{\"a\":0},\"x\":[{", "trigger.counts: expected an array" },
	{ "\"counts\":[{", "\"counts\":[7,{", "trigger.counts[0]: expected an object" },
	{ "\"fired\":1", "\"fired\":-1", "trigger.counts[0].fired: expected an unsigned integer" },
	{ ",\"failed\":0}]}", "}]}", "trigger.counts[0]: missing \"failed\"" },
	{ "{\"id\":1,", "{\"id\":\"0x1\",", "trigger.counts[0].id: expected an unsigned integer" },
	{ "\"rule\":\"level>=error\",\"fired\"", "\"rule\":null,\"fired\"",
	  "trigger.counts[0].rule: expected a string" },
	{ "\"triggers_pending\":[", "\"triggers_pending\":{\"a\":0},\"x\":[",
	  "triggers_pending: expected an array" },
	{ "\"kind\":\"code\"", "\"kind\":\"cod\"",
	  "triggers_pending[0].kind: expected \"level\", \"span\", \"event\" or \"code\"" },
	{ "\"what\":\"code: y\"", "\"what\":\"code: \\u0000\"",
	  "triggers_pending[0].what: contains a NUL byte" },
	{ "\"triggers_pending\":[\n{", "\"triggers_pending\":[\n\"x\",{",
	  "triggers_pending[0]: expected an object" },
	{ "\"triggers_pending\":[\n{\"rule\":\"code\",", "\"triggers_pending\":[\n{",
	  "triggers_pending[0]: missing \"rule\"" },
	{ "\"scope\":\"recording\",", "\"scope\":\"recording\",\"scope\":\"process\",",
	  "\"scope\" appears twice" },
	{ "\"rule_id\":1,", "\"rule_id\":1,\"rule_id\":1,", "trigger: \"rule_id\" appears twice" },
};

static void check_bad(const char *text, const char *expect)
{
	struct rec_proc p, zero;
	char err[256];
	int ret;

	memset(&zero, 0, sizeof(zero));
	ret = rec_dump__read_mem(text, strlen(text), &p, NULL, err, sizeof(err));
	if (ret != -EINVAL || !strstr(err, expect))
		fail_msg("expected -EINVAL and \"%s\", got %d and \"%s\"", expect, ret, err);
	assert_memory_equal(&p, &zero, sizeof(p));
}

static char *edited(const char *from, const char *to)
{
	const char *at = strstr(snapshot_dump, from);
	char *out;

	if (!at)
		fail_msg("\"%s\" not in the dump", from);
	assert_true(asprintf(&out, "%.*s%s%s", (int)(at - snapshot_dump), snapshot_dump, to,
			     at + strlen(from)) > 0);
	return out;
}

/* The snapshot with from replaced by fmt around a string of n bytes: refused, as expect says. */
static void check_too_long(const char *from, const char *fmt, size_t n, const char *expect)
{
	char *big = calloc(1, n + 1), *to, *text;

	assert_non_null(big);
	memset(big, 'x', n);
	assert_true(asprintf(&to, fmt, big) > 0);
	text = edited(from, to);
	check_bad(text, expect);
	free(text);
	free(to);
	free(big);
}

static char *repeat(const char *s, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? "," : "", s);
	fclose(f);
	return buf;
}

static void test_reader_names_the_bad_member(void **state)
{
	struct rec_proc p;
	char *text, *to, *many;

	(void)state;
	/* The good one reads, and what it is written back as reads back the same. */
	read_dump(snapshot_dump, &p);
	assert_true(p.dump_one_recording);
	assert_int_equal(p.trigger->time_ns, 1796220192123456000LL);
	assert_int_equal(p.ntriggers_pending, 1);
	assert_int_equal(p.triggers_pending[0].time_ns, 1796220193000000000LL);
	text = written(&p, &(struct rec_dump_opts){ .now_ns = NOW_NS });
	assert_written_back(text);
	free(text);
	rec_proc__fini(&p);

	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		text = edited(bad_cases[i].from, bad_cases[i].to);
		check_bad(text, bad_cases[i].expect);
		free(text);
	}

	/* Too many rows, too many pending, strings too long. */
	many = repeat(
		"{\"id\":1,\"rule\":\"r\",\"fired\":1,\"saved\":0,\"cooldown\":0,\"capped\":0,"
		"\"failed\":0}",
		REC_DUMP_MAX_RULES + 1);
	assert_true(asprintf(&to, "\"counts\":[%s,{", many) > 0);
	text = edited("\"counts\":[{", to);
	check_bad(text, "trigger.counts: 258 elements, more than 256");
	free(text);
	free(to);
	free(many);
	many = repeat("{\"rule\":\"code\",\"rule_id\":2,\"kind\":\"code\",\"time\":"
		      "\"2026-12-02T14:03:13.000000Z\",\"recording\":\"0x0\",\"subject\":\"\","
		      "\"what\":\"\",\"after_ns\":0,\"counts\":[]}",
		      REC_DUMP_MAX_TRIGGERS_PENDING);
	assert_true(asprintf(&to, "\"triggers_pending\":[%s,", many) > 0);
	text = edited("\"triggers_pending\":[", to);
	check_bad(text, "triggers_pending: 257 elements, more than 256");
	free(text);
	free(to);
	free(many);
	check_too_long("\"what\":\"event seq 1: x\"", "\"what\":\"%s\"", REC_DUMP_WHAT_MAX,
		       "trigger.what: longer than 511 bytes");
	check_too_long("\"rule\":\"level>=error\",\"rule_id\"", "\"rule\":\"%s\",\"rule_id\"",
		       REC_DUMP_RULE_MAX, "trigger.rule: longer than 1023 bytes");
	text = edited(
		"\"subject\":\"s\"",
		"\"subject\":\"0123456789012345678901234567890123456789012345678901234567890123\"");
	check_bad(text, "trigger.subject: longer than 63 bytes");
	free(text);
}

/*
 * A snapshot file: named snapshot-PID-…Z.json, 0600, read back with its
 * trigger; a file that the retention of black boxes never counts. A black box
 * written with triggers pending is a black box.
 */
static void test_snapshot_file(void **state)
{
	char dir[] = "/tmp/test_snapshot.XXXXXX", path[4096], err[256];
	struct rec_dump_trigger t = trigger_of_b();
	struct rec_dump_opts opts = { .only_recording = 0x8000000000000003ULL, .trigger = &t };
	const char *name;
	struct rec_proc p, back;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	read_dump(process_dump, &p);
	p.uid = (uid_t)-1;
	assert_int_equal(rec_dump__write_snapshot_file(dir, &p, &opts, path, sizeof(path)), 0);
	name = strrchr(path, '/') + 1;
	assert_int_equal(strncmp(name, "snapshot-42-", 12), 0);
	assert_int_equal(strlen(name), strlen("snapshot-42-20261202T140312.123456Z.json"));
	assert_string_equal(name + strlen(name) - 6, "Z.json");
	assert_true(rec_retention__is_named(name, REC_RETENTION_SNAPSHOT));
	assert_false(rec_retention__is_dump(name));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(rec_dump__read(path, &back, NULL, err, sizeof(err)), 0);
	assert_true(back.dump_one_recording);
	assert_non_null(back.trigger);
	assert_string_equal(back.trigger->what, t.what);
	rec_proc__fini(&back);
	assert_int_equal(unlink(path), 0);
	/* No trigger to write as asked: nothing left behind. */
	opts.only_recording = 0x77;
	assert_int_equal(rec_dump__write_snapshot_file(dir, &p, &opts, path, sizeof(path)),
			 -ENOENT);

	opts = (struct rec_dump_opts){ .pending = &t, .npending = 1 };
	assert_int_equal(rec_dump__write_file_opts(dir, &p, &opts, path, sizeof(path)), 0);
	name = strrchr(path, '/') + 1;
	assert_true(rec_retention__is_dump(name));
	assert_int_equal(rec_dump__read(path, &back, NULL, err, sizeof(err)), 0);
	assert_null(back.trigger);
	assert_int_equal(back.ntriggers_pending, 1);
	rec_proc__fini(&back);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	rec_proc__fini(&p);
}

/*
 * A snapshot written from a copy of one recording (rec_proc__copy_recording(),
 * what recorder-attach's snapshot thread writes from) is byte for byte the one
 * written from the process itself, for each recording, with and without a
 * trigger; and the copy holds only that recording.
 */
static void test_a_copy_of_a_recording_writes_the_same_snapshot(void **state)
{
	static const uint64_t keys[] = { 0x8000000000000002ULL, 0x8000000000000003ULL,
					 0x8000000000000004ULL };
	struct rec_dump_trigger t = trigger_of_b();
	struct rec_proc p, copy;

	(void)state;
	read_dump(process_dump, &p);
	/* What a live model has and a dump of version 2 does not: in the copy too. */
	p.attached_ns = 40;
	p.span_orphans = 3;
	p.spans_before_attach = 2;
	p.fields_left_out = 5;
	p.sched.since_ns = 30;
	p.sched.count.intervals = 11;
	p.sched.count.lost = 1;
	p.use[REC_L_CALLSITES] = (struct rec_limit_use){ .limit = 9, .used = 6, .over = 2 };
	rec_proc__forget(&p, 0x2, 1, 4, 4, 0);
	rec_proc__forget(&p, UINT64_MAX, 2, 6, 5, 1);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		for (int with = 0; with < 2; with++) {
			struct rec_dump_opts opts = { .now_ns = NOW_NS,
						      .only_recording = keys[k],
						      .trigger = with ? &t : NULL };
			char *want = written(&p, &opts), *got;

			assert_int_equal(rec_proc__copy_recording(&copy, &p, keys[k]), 0);
			assert_non_null(copy.first);
			assert_null(copy.first->next);
			assert_null(copy.reader.read);
			got = written(&copy, &opts);
			assert_string_equal(got, want);
			free(got);
			free(want);
			rec_proc__fini(&copy);
		}
	}
	/* No such recording: nothing to copy, and nothing to leak. */
	assert_int_equal(rec_proc__copy_recording(&copy, &p, 0x77), -ENOENT);
	rec_proc__fini(&copy);
	rec_proc__fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scope_recording_holds_one_recording_and_every_stack),
		cmocka_unit_test(test_scope_of_an_unknown_recording_writes_nothing),
		cmocka_unit_test(test_trigger_and_pending_round_trip),
		cmocka_unit_test(test_outputs_show_triggers),
		cmocka_unit_test(test_writer_refuses_bad_triggers),
		cmocka_unit_test(test_reader_names_the_bad_member),
		cmocka_unit_test(test_snapshot_file),
		cmocka_unit_test(test_a_copy_of_a_recording_writes_the_same_snapshot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
