// SPDX-License-Identifier: MIT
/*
 * Snapshots and black boxes (private.h): written by the snapshot thread or
 * here, with the retention of each kind of file in the dump directory.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/text.h"
#include "session/private.h"

/* Writes t's black box into the dump directory; the path goes into path. */
/* The retention policy, after a black box was written at path: the oldest others go. */
/*
 * The retention of one kind of file in the dump directory (black boxes, or
 * snapshots: each its own, by name prefix), after path was written.
 */
static void keep_files(struct rec_session *s, const char *path, bool snapshots)
{
	const char *slash = strrchr(path, '/');
	struct rec_retention_count *count = snapshots ? &s->snapshots : &s->dumps;
	size_t keep = snapshots ? s->opts.keep_snapshots : s->opts.keep_dumps;
	uint64_t max = snapshots ? s->opts.max_snapshot_bytes : s->opts.max_dump_bytes;
	const char *opt = snapshots ? "snapshot" : "dump";
	uint64_t before = count->removed;
	int err;

	err = rec_retention__apply_prefix(
		s->opts.dump_dir, snapshots ? REC_RETENTION_SNAPSHOT : REC_RETENTION_BLACK_BOX,
		keep, max, slash ? slash + 1 : path, count);
	if (err)
		fprintf(stderr,
			"recorder-attach: could not apply --keep-%ss/--max-%s-bytes in %s: %s\n",
			opt, opt, s->opts.dump_dir, strerror(-err));
	else if (count->removed > before)
		fprintf(stderr,
			"recorder-attach: removed %" PRIu64 " old %s from %s (--keep-%ss %zu, "
			"--max-%s-bytes %" PRIu64 ")\n",
			count->removed - before, snapshots ? "snapshot(s)" : "black box(es)",
			s->opts.dump_dir, opt, keep, opt, max);
}

/* A black box to write (rec_retention__write_making_room's ctx). */
struct black_box {
	const char *dir;
	struct rec_proc *p;
	const struct rec_dump_opts *o;
	char *path;
	size_t len;
};

static int black_box__write(void *ctx)
{
	struct black_box *b = ctx;

	return rec_dump__write_file_opts(b->dir, b->p, b->o, b->path, b->len);
}

/*
 * t's black box, naming the npending triggers that fired as it ended. One that
 * does not fit takes the room of the oldest snapshots (said on one line).
 */
int snapshots__write_dump(struct rec_session *s, struct traced *t,
			  const struct rec_dump_trigger *pending, size_t npending, char *path,
			  size_t len)
{
	struct rec_dump_counters counters;
	struct rec_dump_opts o = { .counters = &counters,
				   .pending = pending,
				   .npending = npending };
	struct black_box b = { s->opts.dump_dir, &t->proc, &o, path, len };
	struct rec_retention_count before = s->room;
	int err;

	if (!s->opts.dump_dir)
		return -ENOENT;
	memcpy(counters.v, t->proc.counters, sizeof(counters.v));
	err = rec_retention__write_making_room(s->opts.dump_dir, black_box__write, &b, &s->room);
	if (s->room.removed > before.removed)
		fprintf(stderr,
			"recorder-attach: removed %" PRIu64 " snapshot(s) (%" PRIu64
			" bytes) from %s to make room for the black box of pid %d\n",
			s->room.removed - before.removed,
			s->room.removed_bytes - before.removed_bytes, s->opts.dump_dir,
			(int)t->proc.pid);
	if (!err)
		keep_files(s, path, false);
	return err;
}

/* The snapshot of pending p of t, into the dump directory; its path into path. */
static int snapshot_file(struct rec_session *s, struct traced *t,
			 const struct rec_incident_pending *pending, char *path, size_t len)
{
	static struct rec_dump_rule_counts counts[REC_TRIGGER_MAX_RULES];
	struct rec_dump_counters counters;
	struct rec_dump_trigger d;
	struct rec_dump_opts o = { .counters = &counters, .trigger = &d };
	int err;

	memcpy(counters.v, t->proc.counters, sizeof(counters.v));
	incidents__dump_trigger_of(s, t, pending, &d, counts);
	o.only_recording = s->opts.trigger_scope_process ? 0 : pending->recording;
	err = rec_dump__write_snapshot_file(s->opts.dump_dir, &t->proc, &o, path, len);
	/* A trigger of no recording (rec_trigger(NULL, ...)) holds the stacks of every thread. */
	if (err == -ENOENT && o.only_recording) {
		o.only_recording = 0;
		err = rec_dump__write_snapshot_file(s->opts.dump_dir, &t->proc, &o, path, len);
	}
	return err;
}

/* s escaped for a terminal (it came from the target) into buf. */
static void escape_to(char *buf, size_t len, const char *s)
{
	FILE *f = fmemopen(buf, len, "w");

	if (!f) {
		buf[0] = 0;
		return;
	}
	rec_text__escape(f, s, strnlen(s, REC_SUBJECT_MAX));
	fclose(f);
	buf[len - 1] = 0;
}

/* " (N more since)" if n lines were held back since the last one, else "". */
static const char *more_since(uint64_t n, char *buf, size_t len)
{
	if (!n)
		return "";
	snprintf(buf, len, " (%" PRIu64 " more since)", n);
	return buf;
}

/* A snapshot of one recording that the writer's thread writes (snapwriter.h). */
struct snapshot_job {
	struct rec_snapshot_job job; /* first: the writer hands it back */
	struct rec_incident_pending pending;
};

/*
 * The snapshot that pending stands for, t as it is now, copied for the
 * writer's thread (its recording and every thread's stack). Returns 0 once
 * pushed, or -errno: then it is to be written here (a trigger of no recording,
 * one of --trigger-scope process, or no memory for the copy).
 */
static int push_snapshot(struct rec_session *s, struct traced *t,
			 const struct rec_incident_pending *pending)
{
	struct snapshot_job *sj;
	int err;

	if (!s->opts.dump_dir || s->opts.trigger_scope_process || !pending->recording)
		return -EINVAL;
	sj = malloc(sizeof(*sj));
	if (!sj)
		return -ENOMEM;
	err = rec_proc__copy_recording(&sj->job.proc, &t->proc, pending->recording);
	if (err)
		goto out;
	memcpy(sj->job.counters.v, t->proc.counters, sizeof(sj->job.counters.v));
	incidents__dump_trigger_of(s, t, pending, &sj->job.trigger, sj->job.counts);
	sj->job.recording = pending->recording;
	sj->job.bytes = rec_spool__footprint(sj->job.proc.first->spool) +
			sj->job.proc.first->spans.n * sizeof(struct rec_kept_span) +
			sj->job.proc.nstacks * sizeof(struct rec_thread_stack);
	sj->job.dir = s->opts.dump_dir;
	sj->job.owner = t;
	sj->pending = *pending;
	err = rec_snapwriter__push(s->snapw, &sj->job);
out:
	if (err) {
		rec_proc__fini(&sj->job.proc);
		free(sj);
	}
	return err;
}

/*
 * The snapshot that pending stands for was written into path (err 0), or not
 * (-errno): says so on one stderr line, or why it could not (a line a second
 * at most, with a count of the rest); counts it saved or failed.
 */
static void snapshot_done(struct rec_session *s, struct traced *t,
			  const struct rec_incident_pending *pending, int err, const char *path)
{
	const struct rec_trigger_entry *e = pending->rule == REC_INCIDENT_NO_RULE
						    ? NULL
						    : rec_trigger__at(t->inc.rules, pending->rule);
	struct rec_rstate *rs =
		pending->recording ? rec_proc__find(&t->proc, pending->recording) : NULL;
	char subject[4 * REC_SUBJECT_MAX] = "", more[48];
	uint64_t held;

	if (!err)
		keep_files(s, path, true);
	if (rs)
		escape_to(subject, sizeof(subject), rs->subject);
	if (err) {
		t->snapshots_failed++;
		t->snapshot_err = err;
	}
	/* In a storm every snapshot fails alike (a full disk): a line a second says so. */
	if (err && rec_ratelimit__allow(&t->snapshot_failed_msg, rec_clock__mono_ns(), &held))
		fprintf(stderr,
			"recorder-attach: trigger '%s' fired in pid %d (%s): its snapshot could "
			"not be written into %s: %s%s\n",
			pending->rule_text, (int)t->proc.pid, subject, s->opts.dump_dir ?: "(none)",
			strerror(-err), more_since(held, more, sizeof(more)));
	else if (!err)
		fprintf(stderr,
			"recorder-attach: trigger '%s' fired in pid %d (%s): snapshot written to "
			"%s\n",
			pending->rule_text, (int)t->proc.pid, subject, path);
	/* A rule removed meanwhile has no counts left to report to. */
	if (e && e->id == pending->rule_id)
		rec_trigger__report(t->inc.rules, pending->rule, pending->sig_key, err, path);
	if (rs)
		rec_proc__unpin(&t->proc, rs);
}

/* The snapshots the writer's thread has written (of t only, with t): each said and counted. */
void snapshots__done(struct rec_session *s, struct traced *t)
{
	struct rec_snapshot_job *job;

	while ((job = rec_snapwriter__take_done(s->snapw, t))) {
		struct snapshot_job *sj = (struct snapshot_job *)job;

		snapshot_done(s, job->owner, &sj->pending, job->err, job->path);
		free(sj);
	}
}

/*
 * Writes the snapshot that pending stands for: t as it is (its caller
 * refreshed it), its recording (or, with --trigger-scope process, every one),
 * and every thread's stack. One of a recording goes to the writer's thread
 * with async; snapshot_done() says and counts it once it is written.
 */
static void write_snapshot(struct rec_session *s, struct traced *t,
			   const struct rec_incident_pending *pending, bool async)
{
	char path[PATH_MAX] = "";
	int err = -ENOENT;

	if (async && push_snapshot(s, t, pending) == 0)
		return;
	if (s->opts.dump_dir)
		err = snapshot_file(s, t, pending, path, sizeof(path));
	snapshot_done(s, t, pending, err, path);
}

/*
 * The snapshots t still had pending when it ended: its black box (info) holds
 * their story and names them; each is counted saved in it, or failed with it.
 */
void snapshots__ended_pending(struct rec_session *s, struct traced *t,
			      const struct rec_exit_info *info)
{
	struct rec_incident_pending p;
	char subject[4 * REC_SUBJECT_MAX];

	(void)s;
	while (rec_incident__take_due(&t->inc, 0, true, &p)) {
		struct rec_rstate *rs = p.recording ? rec_proc__find(&t->proc, p.recording) : NULL;

		escape_to(subject, sizeof(subject), rs ? rs->subject : "");
		if (info->dump_err)
			fprintf(stderr,
				"recorder-attach: trigger '%s' fired in pid %d (%s) as it ended: "
				"its "
				"black box could not be written either\n",
				p.rule_text, (int)t->proc.pid, subject);
		else
			fprintf(stderr,
				"recorder-attach: trigger '%s' fired in pid %d (%s) as it ended: "
				"its "
				"story is in its black box %s\n",
				p.rule_text, (int)t->proc.pid, subject, info->dump_path);
		if (p.rule != REC_INCIDENT_NO_RULE)
			rec_trigger__report(t->inc.rules, p.rule, p.sig_key, info->dump_err,
					    info->dump_path);
		if (rs)
			rec_proc__unpin(&t->proc, rs);
	}
}

/* Every recording p had: those it holds, and those it forgot. */
uint64_t snapshots__recordings_of(const struct rec_proc *p)
{
	struct rec_forgotten *v = NULL;
	ssize_t n = rec_proc__forgotten(p, &v);
	uint64_t total = 0;

	for (const struct rec_rstate *rs = p->first; rs; rs = rs->next)
		total++;
	for (ssize_t i = 0; i < n; i++)
		total += v[i].recordings;
	free(v);
	return total;
}

/*
 * The snapshots of every traced process that are due: pushed to the writer's
 * thread while it has room (the rest wait their turn, pending), each said
 * once written. With all (traced__end(), which waited for t's on the thread
 * first), every one of t's, written here.
 */
void snapshots__write_due(struct rec_session *s, struct traced *only, bool all)
{
	struct rec_incident_pending p;
	struct rec_incident_keep key;
	bool fresh;

	snapshots__done(s, NULL);
	for (size_t i = 0; i < s->ntraced; i++) {
		struct traced *t = s->traced[i];

		if ((only && t != only) || !t->inc.rules || t->done || t->waiting)
			continue;
		incidents__check_open(s, t);
		fresh = false;
		while ((all || rec_snapwriter__has_room(s->snapw)) &&
		       rec_incident__take_due(&t->inc, rec_clock__mono_ns(), all, &p)) {
			/* t as it is now: read once for the snapshots due together. */
			if (!fresh && t->proc.alive)
				tracer__refresh(s, t);
			fresh = true;
			write_snapshot(s, t, &p, !all);
		}
		while (rec_incident__take_keep(&t->inc, rec_clock__mono_ns(), all, &key))
			export__kept(s, t, &key);
	}
}
