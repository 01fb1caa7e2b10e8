// SPDX-License-Identifier: MIT
/*
 * Writes the golden dumps of triggers (tests/golden/make-dumps.sh runs it
 * after the real runs, from their black boxes), as recorder-attach would
 * write them, through the real writer (rec_dump__write_opts):
 *   snapshot.json          a snapshot of spans.json's process: its recording
 *                          (scope "recording"), for the event that fired an
 *                          event rule, with the counts of three rules
 *   killed_triggered.json  killed.json's black box, naming a trigger that fired
 *                          as the process was killed (--trigger-after 500ms:
 *                          too late for its own snapshot)
 *   snapshot_signature.json  snapshot.json as recorder-attach writes it since
 *                          issue 35: the trigger's signature (named as
 *                          trigger_set.c names it), its event's own time
 *                          ("occurred") 40 ms before recorder-attach saw it,
 *                          and the process's signature counts
 * Usage: mksnapshots DUMPS_DIR (reads spans.json and killed.json there, writes
 * the three files there).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "model/dump.h"
#include "serving/query.h"
#include "wire/clock.h"
#include "incidents/trigger.h"

/* The event of seq in rs: its CLOCK_REALTIME time into *time_ns. */
struct find_event {
	uint64_t seq;
	uint64_t mono_ns;
	int found;
};

static int find_visit(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct find_event *f = ctx;
	struct rec_decoded d;

	if (seq != f->seq || rec_event__decode(data, len, &d))
		return 0;
	f->mono_ns = d.time_ns;
	f->found = 1;
	return 1;
}

static int event_time(const struct rec_proc *p, const struct rec_rstate *rs, uint64_t seq,
		      int64_t *time_ns)
{
	struct find_event f = { .seq = seq };

	rec_spool__tail(rs->spool, 0, find_visit, &f);
	if (!f.found)
		return -ENOENT;
	*time_ns = rec_clock__realtime(f.mono_ns, p->clock_offset_ns);
	return 0;
}

static int read_dump(const char *dir, const char *name, struct rec_proc *p,
		     struct rec_dump_counters *c)
{
	char path[4096], err[512];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = rec_dump__read(path, p, c, err, sizeof(err));
	if (rc)
		fprintf(stderr, "mksnapshots: %s\n", err);
	return rc;
}

static int write_dump(const char *dir, const char *name, struct rec_proc *p,
		      const struct rec_dump_opts *opts)
{
	char path[4096];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "mksnapshots: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	rc = rec_dump__write_opts(f, p, opts);
	if (fclose(f) && !rc)
		rc = -EIO;
	if (rc)
		fprintf(stderr, "mksnapshots: %s: %s\n", path, strerror(-rc));
	return rc;
}

/* The snapshot written when event seq 100 ("inside held") fired rule 1. */
static int snapshot(const char *dir)
{
	static const struct rec_dump_rule_counts rows[] = {
		{ .id = 1, .rule = "event:'inside held'", .fired = 1 },
		{ .id = 2, .rule = "span:held>1s" },
		{ .id = 3, .rule = "level>=warn", .fired = 3, .saved = 1, .cooldown = 2 },
	};
	struct rec_dump_trigger t = {
		.rule_id = 1,
		.kind = REC_DUMP_TRIGGER_EVENT,
		.rule = "event:'inside held'",
		.what = "event seq 100: inside held",
		.counts = rows,
		.ncounts = sizeof(rows) / sizeof(rows[0]),
	};
	struct rec_dump_counters c;
	struct rec_dump_opts opts = { .counters = &c, .trigger = &t };
	struct rec_proc p;
	int rc;

	rc = read_dump(dir, "spans.json", &p, &c);
	if (rc)
		return rc;
	rc = -ENOENT;
	if (p.first && !event_time(&p, p.first, 100, &t.time_ns)) {
		t.recording = p.first->key;
		snprintf(t.subject, sizeof(t.subject), "%s", p.first->subject);
		opts.only_recording = p.first->key;
		/* Written 1 ms after it fired. */
		opts.now_ns = t.time_ns + 1000000;
		rc = write_dump(dir, "snapshot.json", &p, &opts);
	}
	rec_proc__fini(&p);
	return rc;
}

/* snapshot.json with its signature and its event's own time (issue 35). */
static int snapshot_signature(const char *dir)
{
	static const struct rec_dump_rule_counts rows[] = {
		{ .id = 1, .rule = "event:'inside held'", .fired = 1 },
		{ .id = 2, .rule = "span:held>1s" },
		{ .id = 3, .rule = "level>=warn", .fired = 3, .saved = 1, .cooldown = 2 },
	};
	struct rec_dump_trigger t = {
		.rule_id = 1,
		.kind = REC_DUMP_TRIGGER_EVENT,
		.rule = "event:'inside held'",
		.what = "event seq 100: inside held",
		.signatures = 3,
		.signatures_max = REC_TRIGGER_SIGNATURES_MAX,
		.signatures_folded = 0,
		.signatures_new_capped = 0,
		.counts = rows,
		.ncounts = sizeof(rows) / sizeof(rows[0]),
	};
	struct rec_dump_counters c;
	struct rec_dump_opts opts = { .counters = &c, .trigger = &t };
	struct rec_trigger_set set;
	struct rec_trigger_sig *g;
	struct rec_proc p;
	int rc;

	/* Named as recorder-attach names it. */
	rec_trigger__init(&set, 0, 0);
	rec_trigger__add(&set, t.rule, NULL, 0);
	rec_trigger__fire(&set, 0, 1, 0, 0, false, &g);
	if (!g)
		return -ENOMEM;
	rec_trigger__name_sig(&set, 0, g, "'inside held' at tests/targets/scenario.c:733");
	t.signature_id = g->id;
	snprintf(t.signature, sizeof(t.signature), "%s", g->text);
	rec_trigger__fini(&set);
	rc = read_dump(dir, "spans.json", &p, &c);
	if (rc)
		return rc;
	rc = -ENOENT;
	if (p.first && !event_time(&p, p.first, 100, &t.at_ns)) {
		/* Seen a collection later, on the batch path. */
		t.time_ns = t.at_ns + 40000000;
		t.recording = p.first->key;
		snprintf(t.subject, sizeof(t.subject), "%s", p.first->subject);
		opts.only_recording = p.first->key;
		opts.now_ns = t.time_ns + 1000000;
		rc = write_dump(dir, "snapshot_signature.json", &p, &opts);
	}
	rec_proc__fini(&p);
	return rc;
}

/* The black box of killed.json, naming the trigger event seq 29 of its last recording fired. */
static int killed_triggered(const char *dir)
{
	static const struct rec_dump_rule_counts rows[] = {
		{ .id = 1, .rule = "event:'workload event' n>=29", .fired = 4, .saved = 3 },
	};
	struct rec_dump_trigger t = {
		.rule_id = 1,
		.kind = REC_DUMP_TRIGGER_EVENT,
		.rule = "event:'workload event' n>=29",
		.what = "event seq 29: workload event",
		.after_ns = 500000000,
		.counts = rows,
		.ncounts = 1,
	};
	struct rec_dump_counters c;
	struct rec_dump_opts opts = { .counters = &c, .pending = &t, .npending = 1 };
	struct rec_proc p;
	int rc;

	rc = read_dump(dir, "killed.json", &p, &c);
	if (rc)
		return rc;
	rc = -ENOENT;
	if (p.last && !event_time(&p, p.last, 29, &t.time_ns)) {
		t.recording = p.last->key;
		snprintf(t.subject, sizeof(t.subject), "%s", p.last->subject);
		opts.now_ns = t.time_ns + 2000000;
		rc = write_dump(dir, "killed_triggered.json", &p, &opts);
	}
	rec_proc__fini(&p);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mksnapshots DUMPS_DIR\n");
		return 2;
	}
	return snapshot(argv[1]) || killed_triggered(argv[1]) || snapshot_signature(argv[1]) ? 1
											     : 0;
}
