// SPDX-License-Identifier: MIT
/*
 * Reading a dump (dump_read.c): the triggers that fired, "scope", "trigger"
 * and "triggers_pending", with the counts of each rule.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dumps/dump_reader.h"
#include "base/text.h"
#include "model/names.h"

enum {
	RC_ID,
	RC_RULE,
	RC_FIRED,
	RC_SAVED,
	RC_COOLDOWN,
	RC_CAPPED,
	RC_FAILED,
	RC_N
};
static const char *const rule_counts_keys[RC_N] = {
	[RC_ID] = "id",		[RC_RULE] = "rule",	    [RC_FIRED] = "fired",
	[RC_SAVED] = "saved",	[RC_COOLDOWN] = "cooldown", [RC_CAPPED] = "capped",
	[RC_FAILED] = "failed",
};

/* One row of a trigger's "counts", into the next row of p->trigger_counts. */
static int read_rule_counts(struct rec_dump_read *r, const struct rec_json_value *v,
			    const char *path, size_t index, void *ctx)
{
	struct rec_dump_rule_counts *c = (struct rec_dump_rule_counts *)ctx + index;
	struct rec_json_value m[RC_N];
	struct rec_dump_object o = { path, rule_counts_keys, RC_N, m };

	return rec_dump_read__scan_object(r, v, &o) ?:
	       rec_dump_read__get_u32(r, &o, RC_ID, &c->id) ?:
	       rec_dump_read__get_cstr(r, &o, RC_RULE, REC_DUMP_RULE_MAX - 1, c->rule) ?:
	       rec_dump_read__get_u64(r, &o, RC_FIRED, 0, UINT64_MAX, &c->fired) ?:
	       rec_dump_read__get_u64(r, &o, RC_SAVED, 0, UINT64_MAX, &c->saved) ?:
	       rec_dump_read__get_u64(r, &o, RC_COOLDOWN, 0, UINT64_MAX, &c->cooldown) ?:
	       rec_dump_read__get_u64(r, &o, RC_CAPPED, 0, UINT64_MAX, &c->capped) ?:
	       rec_dump_read__get_u64(r, &o, RC_FAILED, 0, UINT64_MAX, &c->failed);
}

enum {
	TG_RULE,
	TG_RULE_ID,
	TG_KIND,
	TG_TIME,
	TG_RECORDING,
	TG_SUBJECT,
	TG_WHAT,
	TG_AFTER_NS,
	TG_COUNTS,
	TG_OCCURRED,
	TG_SIGNATURE_ID,
	TG_SIGNATURE,
	TG_SIGNATURES,
	TG_SIGNATURES_MAX,
	TG_SIGNATURES_FOLDED,
	TG_SIGNATURES_NEW_CAPPED,
	TG_N
};
static const char *const trigger_keys[TG_N] = {
	[TG_RULE] = "rule",
	[TG_RULE_ID] = "rule_id",
	[TG_KIND] = "kind",
	[TG_TIME] = "time",
	[TG_RECORDING] = "recording",
	[TG_SUBJECT] = "subject",
	[TG_WHAT] = "what",
	[TG_AFTER_NS] = "after_ns",
	[TG_COUNTS] = "counts",
	[TG_OCCURRED] = "occurred",
	[TG_SIGNATURE_ID] = "signature_id",
	[TG_SIGNATURE] = "signature",
	[TG_SIGNATURES] = "signatures",
	[TG_SIGNATURES_MAX] = "signatures_max",
	[TG_SIGNATURES_FOLDED] = "signatures_folded",
	[TG_SIGNATURES_NEW_CAPPED] = "signatures_new_capped",
};

/* An optional u64 member i of o into *out (left as it is if absent). */
static int opt_u64(struct rec_dump_read *r, const struct rec_dump_object *o, int i, uint64_t *out)
{
	return o->m[i].type == REC_JSON_NONE ? 0
					     : rec_dump_read__get_u64(r, o, i, 0, UINT64_MAX, out);
}

/*
 * The optional keys of a trigger that issue 35 added: its own time
 * ("occurred"), its signature and the process's signature counts.
 */
static int read_trigger_signature(struct rec_dump_read *r, const struct rec_dump_object *o,
				  const char *path, struct rec_dump_trigger *t)
{
	char time[33], id[17], *end;
	int err;

	if (o->m[TG_OCCURRED].type != REC_JSON_NONE) {
		err = rec_dump_read__get_cstr(r, o, TG_OCCURRED, 32, time);
		if (err)
			return err;
		err = rec_text__parse_rfc3339(time, &t->at_ns);
		if (err || t->at_ns <= 0)
			return rec_dump_read__fail_at(
				r, path, "occurred",
				"expected an RFC 3339 UTC time with microseconds, "
				"1970 to 2262");
	}
	if (o->m[TG_SIGNATURE_ID].type != REC_JSON_NONE) {
		err = rec_dump_read__get_cstr(r, o, TG_SIGNATURE_ID, 16, id);
		if (err)
			return err;
		errno = 0;
		t->signature_id = strtoull(id, &end, 16);
		if (strlen(id) != 12 || *end || errno || !t->signature_id)
			return rec_dump_read__fail_at(
				r, path, "signature_id",
				"expected 12 lower-case hex digits, not all 0");
		err = rec_dump_read__get_cstr(r, o, TG_SIGNATURE, REC_DUMP_SIGNATURE_MAX - 1,
					      t->signature);
		if (err)
			return err;
	}
	return opt_u64(r, o, TG_SIGNATURES, &t->signatures) ?:
	       opt_u64(r, o, TG_SIGNATURES_MAX, &t->signatures_max) ?:
	       opt_u64(r, o, TG_SIGNATURES_FOLDED, &t->signatures_folded) ?:
	       opt_u64(r, o, TG_SIGNATURES_NEW_CAPPED, &t->signatures_new_capped);
}

/*
 * A trigger that fired ("trigger", or one of "triggers_pending") into t; the
 * rows of its counts are added to p->trigger_counts, and t->counts is set by
 * rec_dump_read__triggers() once they all are (the array moves as it grows).
 */
static int read_trigger(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			size_t index, void *ctx)
{
	struct rec_proc *p = ctx;
	struct rec_dump_trigger *t = index == SIZE_MAX ? p->trigger : &p->triggers_pending[index];
	struct rec_json_value m[TG_N];
	struct rec_dump_object o = { path, trigger_keys, TG_N, m };
	const struct rec_json_value *counts;
	struct rec_dump_rule_counts *rows;
	char kind[17], time[33], cpath[REC_DUMP_PATH2];
	size_t have = 0;
	int err, k;

	err = rec_dump_read__scan_object(r, v, &o) ?:
	      rec_dump_read__get_cstr(r, &o, TG_RULE, REC_DUMP_RULE_MAX - 1, t->rule) ?:
	      rec_dump_read__get_u32(r, &o, TG_RULE_ID, &t->rule_id) ?:
	      rec_dump_read__get_cstr(r, &o, TG_KIND, 16, kind) ?:
	      rec_dump_read__get_cstr(r, &o, TG_TIME, 32, time) ?:
	      rec_dump_read__get_key(r, &o, TG_RECORDING, &t->recording) ?:
	      rec_dump_read__get_cstr(r, &o, TG_SUBJECT, REC_SUBJECT_MAX - 1, t->subject) ?:
	      rec_dump_read__get_cstr(r, &o, TG_WHAT, REC_DUMP_WHAT_MAX - 1, t->what) ?:
	      rec_dump_read__get_u64(r, &o, TG_AFTER_NS, 0, UINT64_MAX, &t->after_ns) ?:
	      rec_dump_read__get_array(r, &o, TG_COUNTS, REC_DUMP_MAX_RULES, &counts);
	if (err)
		return err;
	if (rec_names__parse_trigger_kind(kind, &k))
		return rec_dump_read__fail_at(
			r, path, "kind", "expected \"level\", \"span\", \"event\" or \"code\"");
	t->kind = (enum rec_dump_trigger_kind)k;
	err = rec_text__parse_rfc3339(time, &t->time_ns);
	if (err == -EINVAL)
		return rec_dump_read__fail_at(r, path, "time",
					      "expected an RFC 3339 UTC time with microseconds "
					      "(\"2026-12-02T14:03:12.123456Z\")");
	if (err || t->time_ns < 0)
		return rec_dump_read__fail_at(r, path, "time", "%s is out of range (1970 to 2262)",
					      time);
	err = read_trigger_signature(r, &o, path, t);
	if (err)
		return err;

	if (!counts->count)
		return 0;
	/* At most REC_DUMP_MAX_RULES a trigger, each row at least 80 bytes of the file. */
	if (p->trigger)
		have = p->trigger->ncounts;
	for (size_t i = 0; index != SIZE_MAX && i < index; i++)
		have += p->triggers_pending[i].ncounts;
	rows = realloc(p->trigger_counts, (have + counts->count) * sizeof(*rows));
	if (!rows)
		return rec_dump_read__fail_nomem(r);
	p->trigger_counts = rows;
	memset(rows + have, 0, counts->count * sizeof(*rows));
	err = rec_dump_read__each_object(r, &o, TG_COUNTS, counts, cpath, sizeof(cpath),
					 read_rule_counts, rows + have);
	if (!err)
		t->ncounts = counts->count;
	return err;
}

/*
 * The optional "scope", "trigger" and "triggers_pending" (a snapshot's, or a
 * black box's): into p, the counts of each trigger pointing into
 * p->trigger_counts.
 */
int rec_dump_read__triggers(struct rec_dump_read *r, const struct rec_dump_object *o,
			    struct rec_proc *p)
{
	const struct rec_json_value *v;
	struct rec_dump_rule_counts *row;
	char scope[17], path[REC_DUMP_PATH1];
	int err = 0;

	if (o->m[TOP_SCOPE].type != REC_JSON_NONE) {
		if (rec_dump_read__get_cstr(r, o, TOP_SCOPE, 16, scope) ||
		    rec_names__parse_scope(scope, &p->dump_one_recording))
			return rec_dump_read__fail_at(r, "", "scope",
						      "expected \"process\" or \"recording\"");
	}
	if (o->m[TOP_TRIGGER].type != REC_JSON_NONE) {
		err = rec_dump_read__get_object(r, o, TOP_TRIGGER, &v);
		if (err)
			return err;
		p->trigger = calloc(1, sizeof(*p->trigger));
		if (!p->trigger)
			return rec_dump_read__fail_nomem(r);
		err = read_trigger(r, v, "trigger", SIZE_MAX, p);
		if (err)
			return err;
	}
	if (o->m[TOP_TRIGGERS_PENDING].type != REC_JSON_NONE) {
		err = rec_dump_read__get_array(r, o, TOP_TRIGGERS_PENDING,
					       REC_DUMP_MAX_TRIGGERS_PENDING, &v);
		if (err || !v->count)
			return err;
		p->triggers_pending = calloc(v->count, sizeof(*p->triggers_pending));
		if (!p->triggers_pending)
			return rec_dump_read__fail_nomem(r);
		p->ntriggers_pending = v->count;
		err = rec_dump_read__each_object(r, o, TOP_TRIGGERS_PENDING, v, path, sizeof(path),
						 read_trigger, p);
		if (err)
			return err;
	}
	/* Now that the rows have stopped moving: each trigger's own, in the order read. */
	row = p->trigger_counts;
	/* No rows at all: row is NULL, and moves nowhere (NULL + 0 is undefined). */
	if (p->trigger) {
		p->trigger->counts = p->trigger->ncounts ? row : NULL;
		if (p->trigger->ncounts)
			row += p->trigger->ncounts;
	}
	for (size_t i = 0; i < p->ntriggers_pending; i++) {
		p->triggers_pending[i].counts = p->triggers_pending[i].ncounts ? row : NULL;
		if (p->triggers_pending[i].ncounts)
			row += p->triggers_pending[i].ncounts;
	}
	return 0;
}
