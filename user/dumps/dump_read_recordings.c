// SPDX-License-Identifier: MIT
/*
 * Reading a dump (dump_read.c): its recordings, their counts and their spans
 * (their events are dump_read_events.c's).
 */
#include <inttypes.h>
#include <string.h>

#include "dumps/dump_reader.h"
#include "model/names.h"

enum {
	RS_KEY,
	RS_RECORDER,
	RS_SUBJECT,
	RS_CAP,
	RS_STATE,
	RS_SEEN,
	RS_KEPT,
	RS_DROPPED,
	RS_STALE,
	RS_EVENTS,
	RS_INVALID,
	RS_UNTRACKED,
	RS_SPANS_SEEN,
	RS_SPANS_DROPPED,
	RS_SPANS_AGED,
	RS_SPANS_LOST,
	RS_SPANS,
	RS_ASKED_CAP,
	RS_N
};
static const char *const recording_keys[RS_N] = {
	[RS_KEY] = "key",
	[RS_RECORDER] = "recorder",
	[RS_SUBJECT] = "subject",
	[RS_CAP] = "cap",
	[RS_STATE] = "state",
	[RS_SEEN] = "seen",
	[RS_KEPT] = "kept",
	[RS_DROPPED] = "dropped",
	[RS_STALE] = "stale",
	[RS_EVENTS] = "events",
	[RS_INVALID] = "invalid",
	[RS_UNTRACKED] = "untracked",
	[RS_SPANS_SEEN] = "spans_seen",
	[RS_SPANS_DROPPED] = "spans_dropped",
	[RS_SPANS_AGED] = "spans_aged",
	[RS_SPANS_LOST] = "spans_lost",
	[RS_SPANS] = "spans",
	[RS_ASKED_CAP] = "asked_cap",
};

enum {
	SP_ID,
	SP_PARENT,
	SP_TID,
	SP_CALLSITE,
	SP_ENTER,
	SP_EXIT,
	SP_CPU,
	SP_BLOCKED,
	SP_RUNQ,
	SP_SWITCHES,
	SP_BLOCKED_BY,
	SP_PARTIAL,
	SP_OFF_CPU,
	SP_OFF_CPU_OMITTED,
	SP_N
};
static const char *const span_keys[SP_N] = {
	[SP_ID] = "id",
	[SP_PARENT] = "parent",
	[SP_TID] = "tid",
	[SP_CALLSITE] = "callsite",
	[SP_ENTER] = "enter_ns",
	[SP_EXIT] = "exit_ns",
	[SP_CPU] = "cpu_ns",
	[SP_BLOCKED] = "blocked_ns",
	[SP_RUNQ] = "runq_ns",
	[SP_SWITCHES] = "switches",
	[SP_BLOCKED_BY] = "blocked_by",
	[SP_PARTIAL] = "sched_partial",
	[SP_OFF_CPU] = "off_cpu",
	[SP_OFF_CPU_OMITTED] = "off_cpu_omitted",
};

enum {
	SL_OFF,
	SL_WAKE,
	SL_ON,
	SL_CAUSE,
	SL_N
};
static const char *const slice_keys[SL_N] = {
	[SL_OFF] = "off_ns",
	[SL_WAKE] = "wake_ns",
	[SL_ON] = "on_ns",
	[SL_CAUSE] = "cause",
};

/* One of a span's longest intervals off the CPU (version 3): inside the span, in order. */
static int read_slice(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
		      size_t index, void *ctx)
{
	struct rec_kept_span *s = ctx;
	struct rec_sched_slice *sl = &s->sched.slices[index];
	struct rec_json_value m[SL_N];
	struct rec_dump_object o = { path, slice_keys, SL_N, m };
	char cause[32];
	int err;

	err = rec_dump_read__scan_object(r, v, &o) ?:
	      rec_dump_read__get_u64(r, &o, SL_OFF, s->enter, s->exit, &sl->off) ?:
	      rec_dump_read__get_u64(r, &o, SL_WAKE, sl->off, s->exit, &sl->wake) ?:
	      rec_dump_read__get_u64(r, &o, SL_ON, sl->wake, s->exit, &sl->on) ?:
	      rec_dump_read__get_cstr(r, &o, SL_CAUSE, sizeof(cause) - 1, cause);
	if (err)
		return err;
	if (rec_names__parse_offcpu_cause(cause, &sl->cause))
		return rec_dump_read__fail_at(r, path, "cause", "\"%s\" is not a cause", cause);
	if (index && sl->off < s->sched.slices[index - 1].off)
		return rec_dump_read__fail_at(r, path, "off_ns", "before the one before it");
	s->sched.nslices = (uint32_t)index + 1;
	return 0;
}

/*
 * A span's blocked_by (version 3): cause name -> ns, at most REC_SCHED_TOP
 * causes the most first, then "other"; they add up to its blocked_ns.
 */
static int read_blocked_by(struct rec_dump_read *r, const struct rec_json_value *v,
			   const char *path, struct rec_sched_figs *f)
{
	struct rec_json_value m;
	struct rec_json_iter it;
	char key[32];
	size_t keylen;
	uint64_t ns, sum = 0;
	unsigned int n = 0;
	int32_t cause;
	int ret;

	ret = rec_json_read__iter(r->jr, v, &it);
	if (ret)
		return rec_dump_read__fail_input(r, ret);
	while ((ret = rec_json_read__next(r->jr, &it, &m, key, sizeof(key), &keylen)) > 0) {
		if (keylen >= sizeof(key))
			return rec_dump_read__fail_at(r, path, "blocked_by",
						      "a cause name is too long");
		ret = rec_dump_read__as_u64(r, &m, path, "blocked_by", 1, UINT64_MAX, &ns);
		if (ret)
			return ret;
		if (!strcmp(key, "other")) {
			f->other_ns = ns;
		} else if (rec_names__parse_offcpu_cause(key, &cause)) {
			return rec_dump_read__fail_at(r, path, "blocked_by",
						      "\"%s\" is not a cause", key);
		} else if (n == REC_SCHED_TOP) {
			return rec_dump_read__fail_at(r, path, "blocked_by", "more than %d causes",
						      REC_SCHED_TOP);
		} else {
			f->top[n].cause = cause;
			f->top[n++].ns = ns;
		}
		sum += ns;
	}
	if (ret)
		return rec_dump_read__fail_input(r, ret);
	if (sum != f->blocked_ns)
		return rec_dump_read__fail_at(r, path, "blocked_by",
					      "adds up to %" PRIu64 ", not blocked_ns", sum);
	return 0;
}

/* A span's kernel time (version 3, optional): cpu + blocked + runq = its duration. */
static int read_span_sched(struct rec_dump_read *r, const struct rec_dump_object *o,
			   struct rec_kept_span *s)
{
	struct rec_sched_figs *f = &s->sched;
	const struct rec_json_value *v;
	int partial = 0, err;

	if (o->m[SP_CPU].type == REC_JSON_NONE)
		return 0;
	err = rec_dump_read__get_u64(r, o, SP_CPU, 0, UINT64_MAX, &f->cpu_ns) ?:
	      rec_dump_read__get_u64(r, o, SP_BLOCKED, 0, UINT64_MAX, &f->blocked_ns) ?:
	      rec_dump_read__get_u64(r, o, SP_RUNQ, 0, UINT64_MAX, &f->runq_ns) ?:
	      rec_dump_read__get_u32(r, o, SP_SWITCHES, &f->switches) ?:
	      rec_dump_read__get_object(r, o, SP_BLOCKED_BY, &v) ?:
	      read_blocked_by(r, v, o->path, f);
	if (!err && o->m[SP_PARTIAL].type != REC_JSON_NONE)
		err = rec_dump_read__get_bool(r, o, SP_PARTIAL, &partial);
	if (!err && o->m[SP_OFF_CPU_OMITTED].type != REC_JSON_NONE)
		err = rec_dump_read__get_u32(r, o, SP_OFF_CPU_OMITTED, &f->slices_omitted);
	if (!err && s->enter && o->m[SP_OFF_CPU].type != REC_JSON_NONE) {
		char spath[REC_DUMP_PATH2];

		err = rec_dump_read__get_array(r, o, SP_OFF_CPU, REC_SCHED_SLICES, &v)
			      ?: rec_dump_read__each_object(r, o, SP_OFF_CPU, v, spath,
							    sizeof(spath), read_slice, s);
	}
	if (err)
		return err;
	if (!s->enter || f->cpu_ns > s->exit - s->enter ||
	    f->blocked_ns > s->exit - s->enter - f->cpu_ns ||
	    f->runq_ns != s->exit - s->enter - f->cpu_ns - f->blocked_ns)
		return rec_dump_read__fail_at(
			r, o->path, "cpu_ns",
			"cpu_ns + blocked_ns + runq_ns is not exit_ns - enter_ns");
	f->flags = REC_SCHED_KNOWN | (partial ? REC_SCHED_PARTIAL : 0);
	return 0;
}

/* A span of a recording (version 2), kept as it was. */
static int read_span(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
		     size_t index, void *ctx)
{
	struct rec_rstate *rs = ctx;
	struct rec_json_value m[SP_N];
	struct rec_dump_object o = { path, span_keys, SP_N, m };
	struct rec_kept_span s = { 0 };
	int err;

	(void)index;
	err = rec_dump_read__scan_object(r, v, &o) ?:
	      rec_dump_read__get_key(r, &o, SP_ID, &s.id) ?:
	      rec_dump_read__get_key(r, &o, SP_PARENT, &s.parent) ?:
	      rec_dump_read__get_u32(r, &o, SP_TID, &s.tid) ?:
	      rec_dump_read__get_key(r, &o, SP_CALLSITE, &s.meta) ?:
	      rec_dump_read__get_u64(r, &o, SP_ENTER, 0, UINT64_MAX, &s.enter) ?:
	      rec_dump_read__get_u64(r, &o, SP_EXIT, 1, UINT64_MAX, &s.exit);
	if (err)
		return err;
	if (!s.id)
		return rec_dump_read__fail_at(r, path, "id", "0x0 is not a span id");
	if (s.enter > s.exit)
		return rec_dump_read__fail_at(r, path, "enter_ns", "after its exit_ns");
	err = read_span_sched(r, &o, &s);
	if (err)
		return err;
	if (rec_spans__add(&rs->spans, 0, &s))
		return rec_dump_read__fail_nomem(r);
	return 0;
}

/*
 * A recording's spans (version 2, optional): spans_seen = the spans kept +
 * spans_dropped, which is spans_aged + spans_lost (each optional, missing: 0).
 * A dump that predates those two says only spans_dropped: aging and loss were
 * not told apart then, and its spans_dropped reads as lost.
 */
static int read_spans(struct rec_dump_read *r, const struct rec_dump_object *o,
		      struct rec_rstate *rs)
{
	const struct rec_json_value *spans;
	uint64_t seen, dropped, aged = 0, lost = 0;
	char spath[REC_DUMP_PATH2];
	int err;

	if (o->m[RS_SPANS].type == REC_JSON_NONE && o->m[RS_SPANS_SEEN].type == REC_JSON_NONE &&
	    o->m[RS_SPANS_DROPPED].type == REC_JSON_NONE)
		return 0;
	err = rec_dump_read__get_u64(r, o, RS_SPANS_SEEN, 0, UINT64_MAX, &seen) ?:
	      rec_dump_read__get_u64(r, o, RS_SPANS_DROPPED, 0, seen, &dropped) ?:
	      rec_dump_read__get_array(r, o, RS_SPANS, REC_SPAN_CAP_MAX, &spans);
	if (!err && o->m[RS_SPANS_AGED].type != REC_JSON_NONE)
		err = rec_dump_read__get_u64(r, o, RS_SPANS_AGED, 0, dropped, &aged);
	if (!err && o->m[RS_SPANS_LOST].type != REC_JSON_NONE)
		err = rec_dump_read__get_u64(r, o, RS_SPANS_LOST, 0, dropped, &lost);
	if (err)
		return err;
	if (spans->count != seen - dropped)
		return rec_dump_read__fail_at(
			r, o->path, "spans_seen",
			"%" PRIu64 " is not the %zu spans kept plus spans_dropped %" PRIu64, seen,
			(size_t)spans->count, dropped);
	if (o->m[RS_SPANS_AGED].type == REC_JSON_NONE && o->m[RS_SPANS_LOST].type == REC_JSON_NONE)
		lost = dropped;
	else if (aged + lost != dropped)
		return rec_dump_read__fail_at(r, o->path, "spans_dropped",
					      "%" PRIu64 " is not spans_aged %" PRIu64
					      " plus spans_lost %" PRIu64,
					      dropped, aged, lost);
	err = rec_dump_read__each_object(r, o, RS_SPANS, spans, spath, sizeof(spath), read_span,
					 rs);
	if (err)
		return err;
	rs->spans.seen = seen;
	rs->spans.aged = aged;
	rs->spans.lost = lost;
	return 0;
}

int rec_dump_read__recording(struct rec_dump_read *r, const struct rec_json_value *v,
			     const char *path, size_t index, void *ctx)
{
	struct rec_proc *p = ctx;
	struct rec_json_value m[RS_N];
	struct rec_dump_object o = { path, recording_keys, RS_N, m };
	uint64_t key, recorder, cap, seen, kept, dropped, stale, invalid = 0, asked = 0;
	const struct rec_json_value *events;
	char subject[REC_SUBJECT_MAX], state[17], why[17];
	int untracked = 0, retired;
	char epath[REC_DUMP_PATH2];
	struct rec_dump_recording_ctx rc = { .p = p };
	int err;

	(void)index;
	err = rec_dump_read__scan_object(r, v, &o) ?:
	      rec_dump_read__get_key(r, &o, RS_KEY, &key) ?:
	      rec_dump_read__get_key(r, &o, RS_RECORDER, &recorder) ?:
	      rec_dump_read__get_cstr(r, &o, RS_SUBJECT, REC_SUBJECT_MAX - 1, subject) ?:
	      rec_dump_read__get_u64(r, &o, RS_CAP, 2, REC_CAP_MAX, &cap) ?:
	      rec_dump_read__get_cstr(r, &o, RS_STATE, 16, state) ?:
	      rec_dump_read__get_u64(r, &o, RS_SEEN, 0, UINT64_MAX, &seen) ?:
	      rec_dump_read__get_u64(r, &o, RS_KEPT, 0, UINT64_MAX, &kept) ?:
	      rec_dump_read__get_u64(r, &o, RS_DROPPED, 0, UINT64_MAX, &dropped) ?:
	      rec_dump_read__get_u64(r, &o, RS_STALE, 0, UINT64_MAX, &stale) ?:
	      rec_dump_read__get_array(r, &o, RS_EVENTS, cap, &events);
	if (err)
		return err;
	if (key == 0 || key == UINT64_MAX)
		return rec_dump_read__fail_at(r, path, "key",
					      "0x%" PRIx64 " is not a recording key", key);
	if (rec_proc__find(p, key))
		return rec_dump_read__fail_at(r, path, "key", "duplicate 0x%" PRIx64, key);
	if (rec_names__parse_retired(state, &retired))
		return rec_dump_read__fail_at(r, path, "state", "expected \"live\" or \"retired\"");
	/* Optional (newer dumps): the dropped events that failed validation, why untracked. */
	if (m[RS_INVALID].type != REC_JSON_NONE &&
	    (err = rec_dump_read__get_u64(r, &o, RS_INVALID, 0, dropped, &invalid)))
		return err;
	if (m[RS_UNTRACKED].type != REC_JSON_NONE) {
		if (rec_dump_read__get_cstr(r, &o, RS_UNTRACKED, 16, why) ||
		    rec_names__parse_untracked(why, &untracked))
			return rec_dump_read__fail_at(r, path, "untracked",
						      "expected \"over-quota\" or \"table-full\"");
	}

	/* Optional: the cap the program asked for, when --min-cap or --max-cap changed it. */
	if (m[RS_ASKED_CAP].type != REC_JSON_NONE &&
	    (err = rec_dump_read__get_u64(r, &o, RS_ASKED_CAP, 0, UINT64_MAX, &asked)))
		return err;
	rc.rs = rec_proc__get(p, key, recorder, cap);
	if (!rc.rs)
		return rec_dump_read__fail_nomem(r);
	rc.rs->asked_cap = m[RS_ASKED_CAP].type != REC_JSON_NONE ? asked : cap;
	strcpy(rc.rs->subject, subject);
	rc.rs->retired = retired;
	rc.rs->untracked = untracked;
	rc.rs->produced = seen;
	rc.rs->received = kept;
	rc.rs->dropped = dropped - invalid;
	rc.rs->invalid = invalid;
	rc.rs->stale = stale;
	return rec_dump_read__each_object(r, &o, RS_EVENTS, events, epath, sizeof(epath),
					  rec_dump_read__event, &rc)
		       ?: read_spans(r, &o, rc.rs);
}
