// SPDX-License-Identifier: MIT
/*
 * Reading a dump (dump_read.c): the parts of the process, "ended",
 * "counters", "forgotten", "limits", "sched" and "stacks".
 */
#include <stdio.h>
#include <stdlib.h>

#include "dumps/dump_reader.h"
#include "model/names.h"

enum {
	ENDED_HOW,
	ENDED_CODE,
	ENDED_SIGNAL,
	ENDED_CORE_DUMPED,
	ENDED_TIME_NS,
	ENDED_N
};
static const char *const ended_keys[ENDED_N] = {
	[ENDED_HOW] = "how",	     [ENDED_CODE] = "code",
	[ENDED_SIGNAL] = "signal",   [ENDED_CORE_DUMPED] = "core_dumped",
	[ENDED_TIME_NS] = "time_ns",
};

int rec_dump_read__ended(struct rec_dump_read *r, const struct rec_json_value *v,
			 struct rec_proc *p)
{
	struct rec_json_value m[ENDED_N];
	struct rec_dump_object o = { "ended", ended_keys, ENDED_N, m };
	enum rec_end end;
	uint64_t code;
	char how[17];
	int err;

	err = rec_dump_read__scan_object(r, v, &o)
		      ?: rec_dump_read__get_cstr(r, &o, ENDED_HOW, 16, how);
	if (err)
		return err;
	if (rec_names__parse_end_how(how, &end))
		return rec_dump_read__fail_at(
			r, "ended", "how",
			"expected \"exit\", \"signal\", \"running\" or \"unknown\"");
	p->end = end;
	switch (end) {
	case REC_END_EXIT:
		err = rec_dump_read__get_u64(r, &o, ENDED_CODE, 0, 255, &code);
		p->end_code = (int)code;
		break;
	case REC_END_SIGNAL:
		err = rec_dump_read__get_u64(r, &o, ENDED_SIGNAL, 1, 127, &code)
			      ?: rec_dump_read__get_bool(r, &o, ENDED_CORE_DUMPED, &p->end_core);
		p->end_code = (int)code;
		break;
	default:
		break;
	}
	/* Optional: when it died. */
	if (!err && (end == REC_END_EXIT || end == REC_END_SIGNAL) &&
	    m[ENDED_TIME_NS].type != REC_JSON_NONE)
		err = rec_dump_read__get_u64(r, &o, ENDED_TIME_NS, 0, UINT64_MAX, &p->ended_ns);
	return err;
}

/* The counters go to p->counters (for --stats) and, if not NULL, to counters. */
int rec_dump_read__counters(struct rec_dump_read *r, const struct rec_json_value *v,
			    struct rec_proc *p, struct rec_dump_counters *counters)
{
	const char *names[REC_C_MAX];
	struct rec_json_value m[REC_C_MAX];
	struct rec_dump_object o = { "counters", names, REC_C_MAX, m };
	int err;

	for (int c = 0; c < REC_C_MAX; c++)
		names[c] = rec_names__counter(c);
	err = rec_dump_read__scan_object(r, v, &o);
	for (int c = 0; !err && c < REC_C_MAX; c++) {
		uint64_t val = 0;

		/* A counter this dump does not have reads as zero. */
		if (m[c].type == REC_JSON_NONE)
			continue;
		err = rec_dump_read__as_u64(r, &m[c], "counters", names[c], 0, UINT64_MAX, &val);
		p->counters[c] = val;
		if (counters)
			counters->v[c] = val;
	}
	return err;
}

enum {
	FR_SPAN,
	FR_CALLSITE,
	FR_RECORDING,
	FR_ID,
	FR_ENTER,
	FR_UNCERTAIN,
	FR_N
};
static const char *const frame_keys[FR_N] = {
	[FR_SPAN] = "span", [FR_CALLSITE] = "callsite", [FR_RECORDING] = "recording",
	[FR_ID] = "id",	    [FR_ENTER] = "enter_ns",	[FR_UNCERTAIN] = "uncertain",
};

static int read_frame(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
		      size_t index, void *ctx)
{
	struct rec_thread_stack *ts = ctx;
	struct rec_json_value m[FR_N];
	struct rec_dump_object o = { path, frame_keys, FR_N, m };
	uint64_t span, meta, recording, id = 0, enter = 0;
	int err, uncertain = 0;

	err = rec_dump_read__scan_object(r, v, &o) ?:
	      rec_dump_read__get_key(r, &o, FR_SPAN, &span) ?:
	      rec_dump_read__get_key(r, &o, FR_CALLSITE, &meta) ?:
	      rec_dump_read__get_key(r, &o, FR_RECORDING, &recording);
	/* Version 2, optional: the span's id and enter time. */
	if (!err && m[FR_ID].type != REC_JSON_NONE)
		err = rec_dump_read__get_key(r, &o, FR_ID, &id);
	if (!err && m[FR_ENTER].type != REC_JSON_NONE)
		err = rec_dump_read__get_u64(r, &o, FR_ENTER, 0, UINT64_MAX, &enter);
	/* Optional: true if it was read again from the thread's chain (enter not known). */
	if (!err && m[FR_UNCERTAIN].type != REC_JSON_NONE)
		err = rec_dump_read__get_bool(r, &o, FR_UNCERTAIN, &uncertain);
	if (err)
		return err;
	ts->frames[index] = (struct rec_frame){ .span = span,
						.meta = meta,
						.recording = recording,
						.id = id,
						.enter = enter,
						.flags = uncertain ? REC_FF_UNCERTAIN : 0 };
	ts->depth = (uint32_t)index + 1;
	return 0;
}

enum {
	ST_TID,
	ST_OVERFLOW,
	ST_FRAMES,
	ST_N
};
static const char *const stack_keys[ST_N] = {
	[ST_TID] = "tid",
	[ST_OVERFLOW] = "overflow",
	[ST_FRAMES] = "frames",
};

static int read_stack(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
		      size_t index, void *ctx)
{
	struct rec_thread_stack *ts = (struct rec_thread_stack *)ctx + index;
	struct rec_json_value m[ST_N];
	struct rec_dump_object o = { path, stack_keys, ST_N, m };
	const struct rec_json_value *frames;
	char fpath[REC_DUMP_PATH2];

	return rec_dump_read__scan_object(r, v, &o) ?:
	       rec_dump_read__get_u32(r, &o, ST_TID, &ts->tid) ?:
	       rec_dump_read__get_u32(r, &o, ST_OVERFLOW, &ts->overflow) ?:
	       rec_dump_read__get_array(r, &o, ST_FRAMES, REC_MAX_DEPTH, &frames) ?:
	       rec_dump_read__each_object(r, &o, ST_FRAMES, frames, fpath, sizeof(fpath), read_frame,
					  ts);
}

enum {
	FG_RECORDER,
	FG_RECORDINGS,
	FG_SEEN,
	FG_KEPT,
	FG_DROPPED,
	FG_N
};
static const char *const forgotten_keys[FG_N] = {
	[FG_RECORDER] = "recorder", [FG_RECORDINGS] = "recordings", [FG_SEEN] = "seen",
	[FG_KEPT] = "kept",	    [FG_DROPPED] = "dropped",
};

/* One row of the tally of recordings forgotten to make room ("forgotten"). */
static int read_forgotten(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			  size_t index, void *ctx)
{
	struct rec_proc *p = ctx;
	struct rec_json_value m[FG_N];
	struct rec_dump_object o = { path, forgotten_keys, FG_N, m };
	uint64_t recorder, recordings, seen, kept, dropped;
	int err;

	(void)index;
	err = rec_dump_read__scan_object(r, v, &o) ?:
	      rec_dump_read__get_key(r, &o, FG_RECORDER, &recorder) ?:
	      rec_dump_read__get_u64(r, &o, FG_RECORDINGS, 1, UINT64_MAX, &recordings) ?:
	      rec_dump_read__get_u64(r, &o, FG_SEEN, 0, UINT64_MAX, &seen) ?:
	      rec_dump_read__get_u64(r, &o, FG_KEPT, 0, seen, &kept) ?:
	      rec_dump_read__get_u64(r, &o, FG_DROPPED, 0, seen - kept, &dropped);
	if (err)
		return err;
	rec_proc__forget(p, recorder, recordings, seen, kept, dropped);
	return 0;
}

enum {
	LU_LIMIT,
	LU_USED,
	LU_OVER,
	LU_EVENTS,
	LU_N
};
static const char *const limit_keys[LU_N] = {
	[LU_LIMIT] = "limit",
	[LU_USED] = "used",
	[LU_OVER] = "over",
	[LU_EVENTS] = "events",
};

/* "limits": each limit of the process, its use and what did not fit (see --stats). */
static int read_limits(struct rec_dump_read *r, const struct rec_json_value *v, struct rec_proc *p)
{
	const char *names[REC_L_MAX];
	struct rec_json_value m[REC_L_MAX], lm[LU_N];
	struct rec_dump_object o = { "limits", names, REC_L_MAX, m };
	char path[REC_DUMP_PATH1];
	int err;

	for (int l = 0; l < REC_L_MAX; l++)
		names[l] = rec_names__limit(l);
	err = rec_dump_read__scan_object(r, v, &o);
	for (int l = 0; !err && l < REC_L_MAX; l++) {
		struct rec_limit_use *u = &p->use[l];
		struct rec_dump_object lo = { path, limit_keys, LU_N, lm };

		/* A limit this dump does not have keeps its defaults. */
		if (m[l].type == REC_JSON_NONE)
			continue;
		snprintf(path, sizeof(path), "limits.%s", names[l]);
		if (m[l].type != REC_JSON_OBJECT)
			return rec_dump_read__fail_at(r, path, NULL, "expected an object");
		err = rec_dump_read__scan_object(r, &m[l], &lo) ?:
		      rec_dump_read__get_u64(r, &lo, LU_LIMIT, 0, UINT64_MAX, &u->limit) ?:
		      rec_dump_read__get_u64(r, &lo, LU_USED, 0, UINT64_MAX, &u->used) ?:
		      rec_dump_read__get_u64(r, &lo, LU_OVER, 0, UINT64_MAX, &u->over) ?:
		      rec_dump_read__get_u64(r, &lo, LU_EVENTS, 0, UINT64_MAX, &u->events);
	}
	return err;
}

enum {
	SC_INTERVALS,
	SC_LOST,
	SC_FORGOTTEN,
	SC_THREADS_FULL,
	SC_PARTIAL,
	SC_N
};
static const char *const sched_keys[SC_N] = {
	[SC_INTERVALS] = "intervals",	    [SC_LOST] = "lost",	      [SC_FORGOTTEN] = "forgotten",
	[SC_THREADS_FULL] = "threads_full", [SC_PARTIAL] = "partial",
};

/* The counts of the kernel time per span (version 3, "sched"): it was on. */
int rec_dump_read__sched_counts(struct rec_dump_read *r, const struct rec_json_value *v,
				struct rec_proc *p)
{
	struct rec_offcpu_counts *c = &p->sched.count;
	struct rec_json_value m[SC_N];
	struct rec_dump_object o = { "sched", sched_keys, SC_N, m };

	p->sched.since_ns = 1;
	return rec_dump_read__scan_object(r, v, &o) ?:
	       rec_dump_read__get_u64(r, &o, SC_INTERVALS, 0, UINT64_MAX, &c->intervals) ?:
	       rec_dump_read__get_u64(r, &o, SC_LOST, 0, UINT64_MAX, &c->lost) ?:
	       rec_dump_read__get_u64(r, &o, SC_FORGOTTEN, 0, UINT64_MAX, &c->forgotten) ?:
	       rec_dump_read__get_u64(r, &o, SC_THREADS_FULL, 0, UINT64_MAX, &c->threads_full) ?:
	       rec_dump_read__get_u64(r, &o, SC_PARTIAL, 0, UINT64_MAX, &c->partial);
}

/*
 * The optional keys of the limits (newer dumps): "recordings_omitted",
 * "stacks_omitted", "forgotten", then "limits", last because the tally of the
 * forgotten also counts into the retired row.
 */
int rec_dump_read__limit_keys(struct rec_dump_read *r, const struct rec_dump_object *o,
			      struct rec_proc *p)
{
	const struct rec_json_value *v;
	char path[REC_DUMP_PATH1];
	int err = 0;

	if (o->m[TOP_RECORDINGS_OMITTED].type != REC_JSON_NONE)
		err = rec_dump_read__get_u64(r, o, TOP_RECORDINGS_OMITTED, 0, UINT64_MAX,
					     &p->dump_omitted_recordings);
	if (!err && o->m[TOP_STACKS_OMITTED].type != REC_JSON_NONE)
		err = rec_dump_read__get_u64(r, o, TOP_STACKS_OMITTED, 0, UINT64_MAX,
					     &p->dump_omitted_stacks);
	if (!err && o->m[TOP_FORGOTTEN].type != REC_JSON_NONE)
		err = rec_dump_read__get_array(r, o, TOP_FORGOTTEN, 1u << 20, &v)
			      ?: rec_dump_read__each_object(r, o, TOP_FORGOTTEN, v, path,
							    sizeof(path), read_forgotten, p);
	if (!err && o->m[TOP_LIMITS].type != REC_JSON_NONE)
		err = rec_dump_read__get_object(r, o, TOP_LIMITS, &v) ?: read_limits(r, v, p);
	return err;
}

int rec_dump_read__stacks(struct rec_dump_read *r, const struct rec_dump_object *o,
			  struct rec_proc *p)
{
	const struct rec_json_value *arr;
	struct rec_thread_stack *v;
	char path[REC_DUMP_PATH1];
	int err;

	err = rec_dump_read__get_array(r, o, TOP_STACKS, REC_DUMP_READ_MAX_STACKS, &arr);
	if (err || !arr->count)
		return err;
	/* At most REC_DUMP_READ_MAX_STACKS, and each took at least 30 bytes of the file. */
	v = calloc(arr->count, sizeof(*v));
	if (!v)
		return rec_dump_read__fail_nomem(r);
	err = rec_dump_read__each_object(r, o, TOP_STACKS, arr, path, sizeof(path), read_stack, v);
	if (err) {
		free(v);
		return err;
	}
	rec_proc__set_stacks(p, v, arr->count);
	return 0;
}
