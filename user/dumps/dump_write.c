// SPDX-License-Identifier: MIT
/*
 * Writing black-box dumps (dump.h, docs/dump-format.md): the model as one JSON
 * object (base/json.h), into a temporary file renamed when whole.
 * dump_read.c reads them back.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/dump.h"
#include "dumps/retention.h"
#include "base/json.h"
#include "model/names.h"
#include "output/output.h"

/* ---- writing ---- */

static void write_ended(struct rec_json *w, const struct rec_proc *p)
{
	const char *name = rec_names__signal(p->end_code);
	char buf[16];

	rec_json__begin_object(w);
	rec_json__member_cstr(w, "how", rec_names__end_how(p->end));
	switch (p->end) {
	case REC_END_EXIT:
		rec_json__member_i64(w, "code", p->end_code);
		break;
	case REC_END_SIGNAL:
		if (!name) {
			snprintf(buf, sizeof(buf), "SIG%d", p->end_code);
			name = buf;
		}
		rec_json__member_i64(w, "signal", p->end_code);
		rec_json__member_cstr(w, "name", name);
		rec_json__member_bool(w, "core_dumped", p->end_core);
		break;
	default:
		break;
	}
	/* When it died: a black box's spans still open are drawn up to it. */
	if ((p->end == REC_END_EXIT || p->end == REC_END_SIGNAL) && p->ended_ns)
		rec_json__member_u64(w, "time_ns", p->ended_ns);
	rec_json__end_object(w);
}

static void write_value(struct rec_json *w, const struct rec_value *v)
{
	/* rec_event__decode never yields another type. */
	if (v->type < REC_TYPE_STR || v->type > REC_TYPE_BOOL)
		return;
	rec_json__begin_object(w);
	rec_json__member_cstr(w, "type", rec_names__field_type(v->type));
	rec_json__key(w, "value");
	/* A string keeps its bytes whatever its status, and the status beside them. */
	if (v->type == REC_TYPE_STR) {
		rec_json__string(w, v->str.ptr, v->str.len);
		rec_json__member_cstr(w, "status", rec_names__str_status(v->str.status));
	} else {
		rec_output__json_value(w, v);
	}
	rec_json__end_object(w);
}

static void write_callsite(struct rec_json *w, uint64_t addr, const struct rec_callsite *cs)
{
	rec_json__begin_object(w);
	rec_json__member_hex(w, "addr", addr);
	rec_json__key(w, "kind");
	rec_json__string(w, &cs->kind, 1);
	rec_json__member_u64(w, "level", (unsigned int)cs->level);
	rec_json__member_cstr(w, "name", cs->name);
	rec_json__member_cstr(w, "target", cs->target);
	rec_json__member_cstr(w, "file", cs->file);
	rec_json__member_u64(w, "line", cs->line);
	rec_json__member_cstr(w, "message", cs->message);
	rec_json__key(w, "fields");
	rec_json__begin_array(w);
	for (uint32_t i = 0; i < cs->nfields && i < REC_MAX_FIELDS; i++)
		rec_json__cstr(w, cs->field_names[i]);
	rec_json__end_array(w);
	rec_json__end_object(w);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct event_walk {
	struct rec_json *w;
	struct rec_proc *p;
	/* Callsites referred to that the cache has no room for (address -> itself). */
	struct rec_u64map uncached;
	/* A dump of one recording: the callsites it refers to (address -> itself). */
	struct rec_u64map used;
	int one_recording;
	int err;
};

/*
 * Every readable callsite in p's cache, and those in ew->uncached (read again
 * now), by address, one a line; in a dump of one recording, only those it
 * refers to (ew->used). Returns 0 or -ENOMEM.
 */
static int write_callsites(struct rec_json *w, struct rec_proc *p, const struct event_walk *ew)
{
	const struct rec_u64map *maps[] = { &p->callsites, &ew->uncached };
	size_t nmaps = 2, total = p->callsites.live + ew->uncached.live, n = 0;
	uint64_t *addrs = NULL;

	if (ew->one_recording) {
		maps[0] = &ew->used;
		nmaps = 1;
		total = ew->used.live;
	}

	if (total) {
		addrs = malloc(total * sizeof(*addrs));
		if (!addrs)
			return -ENOMEM;
	}
	for (size_t m = 0; m < nmaps; m++)
		for (size_t i = 0; i < maps[m]->cap && n < total; i++) {
			uint64_t k = maps[m]->keys[i];

			if (k && k != UINT64_MAX)
				addrs[n++] = k;
		}
	if (n)
		qsort(addrs, n, sizeof(*addrs), cmp_u64);
	rec_json__key(w, "callsites");
	rec_json__begin_array(w);
	for (size_t i = 0; i < n; i++) {
		/* A cached address that could not be read comes back NULL: skip it. */
		const struct rec_callsite *cs = rec_proc__callsite(p, addrs[i]);

		if (!cs)
			continue;
		rec_json__newline(w);
		write_callsite(w, addrs[i], cs);
	}
	rec_json__end_array(w);
	free(addrs);
	return 0;
}

/*
 * Reads the callsite at addr into the cache (it usually is already); one that
 * does not fit is remembered in ew->uncached, to be written all the same.
 */
static void resolve_callsite(struct event_walk *ew, uint64_t addr)
{
	if (!rec_proc__callsite(ew->p, addr))
		return;
	if (ew->one_recording && !rec_u64map__get(&ew->used, addr) &&
	    rec_u64map__put(&ew->used, addr, ew))
		ew->err = -ENOMEM;
	if (rec_proc__cached_callsite(ew->p, addr) || rec_u64map__get(&ew->uncached, addr))
		return;
	if (rec_u64map__put(&ew->uncached, addr, ew))
		ew->err = -ENOMEM;
}

static int resolve_visit(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct event_walk *ew = ctx;
	struct rec_decoded d;

	(void)seq;
	if (rec_event__decode(data, len, &d) == 0)
		resolve_callsite(ew, d.meta);
	return 0;
}

/* One event a line. */
static int event_visit(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct rec_json *w = ctx;
	struct rec_decoded d;

	(void)seq;
	if (rec_event__decode(data, len, &d) != 0)
		return 0;
	rec_json__newline(w);
	rec_json__begin_object(w);
	rec_json__member_u64(w, "seq", d.seq);
	rec_json__member_u64(w, "tid", d.tid);
	rec_json__member_u64(w, "time_ns", d.time_ns);
	rec_json__member_hex(w, "callsite", d.meta);
	/* Its own level (REC_EVENT_LEVEL), when not 0: TRACE, or a site's own level. */
	if (d.level)
		rec_json__member_u64(w, "level", (unsigned int)d.level);
	rec_json__key(w, "values");
	rec_json__begin_array(w);
	for (uint32_t i = 0; i < d.nfields; i++)
		write_value(w, &d.values[i]);
	rec_json__end_array(w);
	rec_json__end_object(w);
	return 0;
}

static void write_recording(struct rec_json *w, const struct rec_rstate *rs)
{
	rec_json__begin_object(w);
	rec_json__member_hex(w, "key", rs->key);
	rec_json__member_hex(w, "recorder", rs->recorder);
	rec_json__key(w, "subject");
	rec_json__string(w, rs->subject, strnlen(rs->subject, sizeof(rs->subject)));
	rec_json__member_u64(w, "cap", rs->cap);
	/* The cap the program asked for, when --min-cap or --max-cap changed it. */
	if (rs->asked_cap != rs->cap)
		rec_json__member_u64(w, "asked_cap", rs->asked_cap);
	rec_json__member_cstr(w, "state", rec_names__retired(rs->retired));
	rec_json__member_u64(w, "seen", rs->produced);
	rec_json__member_u64(w, "kept", rs->received);
	rec_json__member_u64(w, "dropped", rec_rstate__dropped(rs));
	rec_json__member_u64(w, "invalid", rs->invalid);
	rec_json__member_u64(w, "stale", rs->stale);
	if (rs->untracked)
		rec_json__member_cstr(w, "untracked", rec_names__untracked(rs->untracked));
	rec_json__key(w, "events");
	rec_json__begin_array(w);
	rec_spool__tail(rs->spool, 0, event_visit, w);
	rec_json__end_array(w);
	/* Version 2: its spans, if it saw any. */
	if (rs->spans.seen) {
		rec_json__member_u64(w, "spans_seen", rs->spans.seen);
		/* Aged out and lost apart, when not 0; their sum for older readers. */
		rec_json__member_u64(w, "spans_dropped", rs->spans.aged + rs->spans.lost);
		if (rs->spans.aged)
			rec_json__member_u64(w, "spans_aged", rs->spans.aged);
		if (rs->spans.lost)
			rec_json__member_u64(w, "spans_lost", rs->spans.lost);
		rec_json__key(w, "spans");
		rec_json__begin_array(w);
		for (size_t i = 0; i < rs->spans.n; i++) {
			const struct rec_kept_span *s = rec_spans__at(&rs->spans, i);

			rec_json__newline(w);
			rec_json__begin_object(w);
			rec_json__member_hex(w, "id", s->id);
			rec_json__member_hex(w, "parent", s->parent);
			rec_json__member_u64(w, "tid", s->tid);
			rec_json__member_hex(w, "callsite", s->meta);
			rec_json__member_u64(w, "enter_ns", s->enter);
			rec_json__member_u64(w, "exit_ns", s->exit);
			/* Version 3: its kernel time, if measured (--sched). */
			if (s->sched.flags)
				rec_output__sched_members(w, &s->sched, 1);
			rec_json__end_object(w);
		}
		rec_json__end_array(w);
	}
	rec_json__end_object(w);
}

static void write_stack(struct rec_json *w, const struct rec_thread_stack *ts)
{
	uint32_t depth = ts->depth < REC_MAX_DEPTH ? ts->depth : REC_MAX_DEPTH;

	rec_json__begin_object(w);
	rec_json__member_u64(w, "tid", ts->tid);
	rec_json__member_u64(w, "overflow", ts->overflow);
	rec_json__key(w, "frames");
	rec_json__begin_array(w);
	for (uint32_t i = 0; i < depth; i++) {
		const struct rec_frame *f = &ts->frames[i];

		rec_json__begin_object(w);
		rec_json__member_hex(w, "span", f->span);
		rec_json__member_hex(w, "callsite", f->meta);
		rec_json__member_hex(w, "recording", f->recording);
		/* Version 2: its span id and enter time, when known. */
		if (f->id)
			rec_json__member_hex(w, "id", f->id);
		if (f->enter)
			rec_json__member_u64(w, "enter_ns", f->enter);
		/* Open for certain, entered at a moment BPF missed (REC_FF_UNCERTAIN). */
		if (f->flags & REC_FF_UNCERTAIN)
			rec_json__member_bool(w, "uncertain", true);
		rec_json__end_object(w);
	}
	rec_json__end_array(w);
	rec_json__end_object(w);
}

/* Each limit of p, its use and what did not fit ("limits"). */
static void write_limits(struct rec_json *w, const struct rec_proc *p)
{
	rec_json__key(w, "limits");
	rec_json__begin_object(w);
	for (int l = 0; l < REC_L_MAX; l++) {
		rec_json__key(w, rec_names__limit(l));
		rec_json__begin_object(w);
		rec_json__member_u64(w, "limit", p->use[l].limit);
		rec_json__member_u64(w, "used", p->use[l].used);
		rec_json__member_u64(w, "over", p->use[l].over);
		rec_json__member_u64(w, "events", p->use[l].events);
		rec_json__end_object(w);
	}
	rec_json__end_object(w);
}

/* The tally of recordings forgotten to make room, per recorder ("forgotten"). */
static int write_forgotten(struct rec_json *w, const struct rec_proc *p)
{
	struct rec_forgotten *v;
	ssize_t n = rec_proc__forgotten(p, &v);

	if (n < 0)
		return (int)n;
	rec_json__key(w, "forgotten");
	rec_json__begin_array(w);
	for (ssize_t i = 0; i < n; i++) {
		rec_json__begin_object(w);
		rec_json__member_hex(w, "recorder", v[i].recorder);
		rec_json__member_u64(w, "recordings", v[i].recordings);
		rec_json__member_u64(w, "seen", v[i].seen);
		rec_json__member_u64(w, "kept", v[i].kept);
		rec_json__member_u64(w, "dropped", v[i].dropped);
		rec_json__end_object(w);
	}
	rec_json__end_array(w);
	free(v);
	return 0;
}

/* A trigger's counts of every rule ("counts"). */
static void write_rule_counts(struct rec_json *w, const struct rec_dump_trigger *t)
{
	rec_json__key(w, "counts");
	rec_json__begin_array(w);
	for (size_t i = 0; i < t->ncounts; i++) {
		rec_output__json_rule_counts(w, &t->counts[i]);
	}
	rec_json__end_array(w);
}

/* A trigger that fired, on one line ("trigger", and each of "triggers_pending"). */
static void write_trigger(struct rec_json *w, const struct rec_dump_trigger *t)
{
	rec_json__begin_object(w);
	rec_json__key(w, "rule");
	rec_json__string(w, t->rule, strnlen(t->rule, sizeof(t->rule) - 1));
	rec_json__member_u64(w, "rule_id", t->rule_id);
	rec_json__member_cstr(w, "kind", rec_names__trigger_kind(t->kind));
	rec_json__key(w, "time");
	rec_json__time(w, t->time_ns);
	/* Issue 35, each optional: absent from a dump that predates it, and so written back. */
	if (t->at_ns > 0) {
		rec_json__key(w, "occurred");
		rec_json__time(w, t->at_ns);
	}
	rec_json__member_hex(w, "recording", t->recording);
	rec_json__key(w, "subject");
	rec_json__string(w, t->subject, strnlen(t->subject, sizeof(t->subject) - 1));
	rec_json__key(w, "what");
	rec_json__string(w, t->what, strnlen(t->what, sizeof(t->what) - 1));
	if (t->signature_id) {
		char id[24];

		snprintf(id, sizeof(id), "%012" PRIx64, t->signature_id);
		rec_json__member_cstr(w, "signature_id", id);
		rec_json__key(w, "signature");
		rec_json__string(w, t->signature, strnlen(t->signature, sizeof(t->signature) - 1));
	}
	rec_json__member_u64(w, "after_ns", t->after_ns);
	if (t->signatures_max) {
		rec_json__member_u64(w, "signatures", t->signatures);
		rec_json__member_u64(w, "signatures_max", t->signatures_max);
		rec_json__member_u64(w, "signatures_folded", t->signatures_folded);
		rec_json__member_u64(w, "signatures_new_capped", t->signatures_new_capped);
	}
	write_rule_counts(w, t);
	rec_json__end_object(w);
}

/* Whether t can be written so that it reads back (dump_read.c takes no other). */
static int trigger_ok(const struct rec_dump_trigger *t)
{
	return strcmp(rec_names__trigger_kind(t->kind), "?") != 0 && t->time_ns >= 0 &&
	       t->ncounts <= REC_DUMP_MAX_RULES && (t->counts || !t->ncounts);
}

/* What a dump is written of: opts, completed by what p read from a dump. */
struct dump_plan {
	const struct rec_dump_opts *opts;
	struct rec_rstate *only; /* the one recording written, or NULL: all */
	int one_recording;	 /* "scope": "recording" */
	const struct rec_dump_trigger *trigger;
	const struct rec_dump_trigger *pending;
	size_t npending;
};

/* Fills plan from opts and p. Returns 0, -ENOENT (no such recording) or -EINVAL (a trigger). */
static int plan_dump(struct dump_plan *plan, struct rec_proc *p, const struct rec_dump_opts *opts)
{
	*plan = (struct dump_plan){
		.opts = opts,
		.one_recording = opts->only_recording || p->dump_one_recording,
		.trigger = opts->trigger ? opts->trigger : p->trigger,
		.pending = opts->pending ? opts->pending : p->triggers_pending,
		.npending = opts->pending ? opts->npending : p->ntriggers_pending,
	};
	if (opts->only_recording) {
		plan->only = rec_proc__find(p, opts->only_recording);
		if (!plan->only)
			return -ENOENT;
	}
	if (plan->trigger && !trigger_ok(plan->trigger))
		return -EINVAL;
	if (plan->npending > REC_DUMP_MAX_TRIGGERS_PENDING)
		return -EINVAL;
	for (size_t i = 0; i < plan->npending; i++)
		if (!trigger_ok(&plan->pending[i]))
			return -EINVAL;
	return 0;
}

/* Whether the dump planned holds rs. */
static int holds(const struct dump_plan *plan, const struct rec_rstate *rs)
{
	return !plan->only || rs == plan->only;
}

/* Its scope, if not the whole process, and the triggers it names, a line each. */
static void write_scope_and_triggers(struct rec_json *w, const struct dump_plan *plan)
{
	if (plan->one_recording) {
		rec_json__member_cstr(w, "scope", rec_names__scope(1));
		rec_json__newline(w);
	}
	if (plan->trigger) {
		rec_json__key(w, "trigger");
		write_trigger(w, plan->trigger);
		rec_json__newline(w);
	}
	if (plan->npending) {
		rec_json__key(w, "triggers_pending");
		rec_json__begin_array(w);
		for (size_t i = 0; i < plan->npending; i++) {
			rec_json__newline(w);
			write_trigger(w, &plan->pending[i]);
		}
		rec_json__end_array(w);
		rec_json__newline(w);
	}
}

/*
 * Writes p as a dump to out: one object, a few members a line, each callsite,
 * recording, event and stack on a line of its own. The callsites of held events,
 * spans and stack frames are read into p's cache first (from the process if it
 * is alive), so that the dump has every callsite that can still be read.
 */
int rec_dump__write_opts(FILE *out, struct rec_proc *p, const struct rec_dump_opts *opts)
{
	struct event_walk ew = { .p = p };
	size_t nrec = 0, nuntracked = 0, skip_untracked, written = 0, nstacks;
	struct dump_plan plan;
	struct rec_rstate *rs;
	struct rec_json w;
	int err;

	err = plan_dump(&plan, p, opts);
	if (err)
		return err;
	ew.one_recording = plan.one_recording;
	for (rs = p->first; rs; rs = rs->next) {
		if (!holds(&plan, rs))
			continue;
		rec_spool__tail(rs->spool, 0, resolve_visit, &ew);
		for (size_t i = 0; i < rs->spans.n; i++)
			resolve_callsite(&ew, rec_spans__at(&rs->spans, i)->meta);
	}
	for (size_t t = 0; t < p->nstacks; t++) {
		const struct rec_thread_stack *ts = &p->stacks[t];

		for (uint32_t i = 0; i < ts->depth && i < REC_MAX_DEPTH; i++)
			resolve_callsite(&ew, ts->frames[i].meta);
	}
	if (ew.err)
		goto out;

	rec_json__init(&w, out);
	rec_json__begin_object(&w);
	rec_json__member_cstr(&w, "format", "recorder-dump");
	rec_json__member_i64(&w, "version", REC_DUMP_VERSION);
	rec_json__member_i64(&w, "pid", p->pid);
	rec_json__member_i64(&w, "ns_pid", p->ns_pid);
	rec_json__newline(&w);
	rec_json__key(&w, "ended");
	write_ended(&w, p);
	rec_json__newline(&w);
	rec_json__key(&w, "dumped_at");
	rec_json__time(&w, opts->now_ns);
	rec_json__member_i64(&w, "clock_offset_ns", p->clock_offset_ns);
	if (p->attached_ns)
		rec_json__member_u64(&w, "attached_ns", p->attached_ns);
	rec_json__newline(&w);
	write_scope_and_triggers(&w, &plan);
	if (opts->counters) {
		rec_json__key(&w, "counters");
		rec_json__begin_object(&w);
		for (int c = 0; c < REC_C_MAX; c++)
			rec_json__member_u64(&w, rec_names__counter(c), opts->counters->v[c]);
		rec_json__end_object(&w);
		rec_json__newline(&w);
	}
	rec_json__member_u64(&w, "malformed", p->malformed);
	rec_json__member_u64(&w, "orphans", p->orphans);
	if (p->span_orphans)
		rec_json__member_u64(&w, "span_orphans", p->span_orphans);
	if (p->spans_before_attach)
		rec_json__member_u64(&w, "spans_before_attach", p->spans_before_attach);
	if (p->fields_left_out)
		rec_json__member_u64(&w, "fields_left_out", p->fields_left_out);
	/* Version 3: what the kernel time per span could not keep (--sched). */
	if (p->sched.since_ns)
		rec_output__sched_counts(&w, &p->sched);
	rec_json__newline(&w);
	/* What a reader accepts: the untracked recordings (no events) go first. */
	for (rs = p->first; rs; rs = rs->next) {
		if (!holds(&plan, rs))
			continue;
		nrec++;
		nuntracked += rs->untracked != 0;
	}
	skip_untracked = nrec > REC_DUMP_MAX_RECORDINGS ? nrec - REC_DUMP_MAX_RECORDINGS : 0;
	if (skip_untracked > nuntracked)
		skip_untracked = nuntracked;
	nstacks = p->nstacks < REC_DUMP_MAX_STACKS ? p->nstacks : REC_DUMP_MAX_STACKS;
	write_limits(&w, p);
	rec_json__newline(&w);
	rec_json__member_u64(&w, "recordings_omitted",
			     nrec > REC_DUMP_MAX_RECORDINGS ? nrec - REC_DUMP_MAX_RECORDINGS : 0);
	rec_json__member_u64(&w, "stacks_omitted", p->nstacks - nstacks);
	rec_json__newline(&w);
	ew.err = write_forgotten(&w, p);
	if (ew.err)
		goto out;
	rec_json__newline(&w);

	ew.err = write_callsites(&w, p, &ew);
	if (ew.err)
		goto out;
	rec_json__newline(&w);

	rec_json__key(&w, "recordings");
	rec_json__begin_array(&w);
	for (rs = p->first; rs && written < REC_DUMP_MAX_RECORDINGS; rs = rs->next) {
		if (!holds(&plan, rs))
			continue;
		if (rs->untracked && skip_untracked) {
			skip_untracked--;
			continue;
		}
		rec_json__newline(&w);
		write_recording(&w, rs);
		written++;
	}
	rec_json__end_array(&w);
	rec_json__newline(&w);
	rec_json__key(&w, "stacks");
	rec_json__begin_array(&w);
	/* The last ones: for a process that is gone, the threads that died last. */
	for (size_t t = p->nstacks - nstacks; t < p->nstacks; t++) {
		rec_json__newline(&w);
		write_stack(&w, &p->stacks[t]);
	}
	rec_json__end_array(&w);
	rec_json__end_object(&w);
	rec_json__newline(&w);

	if (fflush(out) != 0 || ferror(out))
		ew.err = -EIO;
out:
	rec_u64map__free(&ew.uncached);
	rec_u64map__free(&ew.used);
	return ew.err;
}

int rec_dump__write(FILE *out, struct rec_proc *p, const struct rec_dump_counters *counters,
		    int64_t now_ns)
{
	struct rec_dump_opts opts = { .counters = counters, .now_ns = now_ns };

	return rec_dump__write_opts(out, p, &opts);
}

/*
 * Creates dir and its missing parents: parents 0755 (as mkdir -p), dir itself
 * 0711, so that the owner of a dump can open it by its path and nobody else can
 * list the directory. A directory that exists is left as it is: recorder never
 * changes the mode or the owner of a directory it did not create.
 */
static int mkdir_p(const char *dir)
{
	char buf[4096];
	size_t len;

	len = (size_t)snprintf(buf, sizeof(buf), "%s", dir);
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0711) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Whether the effective user may create files in the directory st through its
 * mode alone, as the kernel decides without CAP_DAC_OVERRIDE: owner bits for
 * its owner, else group bits for its group, else the others' bits.
 */
static int writable_by_mode(const struct stat *st)
{
	gid_t groups[256];
	int n = getgroups(sizeof(groups) / sizeof(groups[0]), groups);

	if (st->st_uid == geteuid())
		return (st->st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR);
	for (int i = -1; i < n; i++) {
		if (st->st_gid == (i < 0 ? getegid() : groups[i]))
			return (st->st_mode & (S_IWGRP | S_IXGRP)) == (S_IWGRP | S_IXGRP);
	}
	return (st->st_mode & (S_IWOTH | S_IXOTH)) == (S_IWOTH | S_IXOTH);
}

int rec_dump__prepare_dir(const char *dir)
{
	char probe[4200];
	struct stat st;
	int fd, err = 0;

	err = mkdir_p(dir);
	if (err)
		return err;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	/* recorder-attach gives up CAP_DAC_OVERRIDE once attached: root needs the mode too. */
	if (!writable_by_mode(&st))
		return -EACCES;
	/* A file is created and written as a dump would be: this finds EROFS, EACCES, ENOSPC. */
	if (snprintf(probe, sizeof(probe), "%s/.recorder-probe-%d", dir, (int)getpid()) >=
	    (int)sizeof(probe))
		return -ENAMETOOLONG;
	unlink(probe);
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, "{}\n", 3) != 3)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	unlink(probe);
	return err;
}

/* A stdio stream onto a descriptor that remembers why a write failed (stdio says EIO). */
struct sink {
	int fd;
	int err; /* the first failed write, a negative errno */
};

static ssize_t sink_write(void *cookie, const char *buf, size_t size)
{
	struct sink *s = cookie;
	size_t done = 0;

	while (done < size) {
		ssize_t n = write(s->fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!s->err)
				s->err = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/*
 * Writes p's dump as opts says into dir, named PREFIX-PID-STAMP.json (prefix:
 * retention.h), as rec_dump__write_file_opts() promises.
 */
static int write_named(const char *dir, const char *prefix, struct rec_proc *p,
		       const struct rec_dump_opts *opts, char *path, size_t len)
{
	cookie_io_functions_t io = { .write = sink_write };
	struct sink sink = { .fd = -1 };
	struct rec_dump_opts now_opts = *opts;
	char tmp[4200], stamp[32];
	struct timespec now;
	struct tm tm;
	FILE *f;
	int err;

	err = mkdir_p(dir);
	if (err)
		return err;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	if (snprintf(path, len, "%s/%s%d-%s.%06ldZ.json", dir, prefix, (int)p->pid, stamp,
		     now.tv_nsec / 1000) >= (int)len)
		return -ENAMETOOLONG;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* 0600 from the start, whatever the umask: the temporary file is never wider. */
	sink.fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (sink.fd < 0)
		return -errno;
	if (fchmod(sink.fd, 0600)) {
		err = -errno;
		goto out;
	}
	f = fopencookie(&sink, "w", io);
	if (!f) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * One thread writes it: no lock a character (the writer puts most of a
	 * dump a character at a time), and writes of 64 KiB. Snapshots of one
	 * recording are written on a thread of their own (snapwriter.h).
	 */
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	now_opts.now_ns = now.tv_sec * 1000000000LL + now.tv_nsec;
	err = rec_dump__write_opts(f, p, &now_opts);
	if (fclose(f) && !err)
		err = -EIO;
	/* The reason a write failed: ENOSPC, EDQUOT, EIO... */
	if (err == -EIO && sink.err)
		err = sink.err;
	if (err)
		goto out;
	/* Given to the target's owner once whole, never before. */
	if (p->uid != (uid_t)-1 && p->uid != 0 && fchown(sink.fd, p->uid, (gid_t)-1)) {
		/* An owner that cannot be given files here: the dump stays root's, 0600. */
	}
out:
	if (close(sink.fd) && !err)
		err = -errno;
	/* Renamed only when whole: a reader never sees half a dump. */
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int rec_dump__write_file_opts(const char *dir, struct rec_proc *p, const struct rec_dump_opts *opts,
			      char *path, size_t len)
{
	return write_named(dir, REC_RETENTION_BLACK_BOX, p, opts, path, len);
}

int rec_dump__write_file(const char *dir, struct rec_proc *p,
			 const struct rec_dump_counters *counters, char *path, size_t len)
{
	struct rec_dump_opts opts = { .counters = counters };

	return rec_dump__write_file_opts(dir, p, &opts, path, len);
}

int rec_dump__write_snapshot_file(const char *dir, struct rec_proc *p,
				  const struct rec_dump_opts *opts, char *path, size_t len)
{
	return write_named(dir, REC_RETENTION_SNAPSHOT, p, opts, path, len);
}
