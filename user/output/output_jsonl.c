// SPDX-License-Identifier: MIT
/*
 * The JSON lines backend (output.h): one object a line per event, list row,
 * stack, stats answer and follow notice, written with the JSON writer. It
 * shows no headers and no gap lines: an event's seq says what was lost.
 */
#include <inttypes.h>
#include <string.h>

#include "model/dump.h"
#include "model/names.h"
#include "output/output.h"
#include "base/text.h"

/*
 * "field_status": {name: status, ...} for the string fields of ev that were
 * not read whole, the message field included; nothing if there are none.
 */
static void json_field_status(struct rec_json *w, const struct rec_event_view *ev)
{
	char name_buf[REC_OUTPUT_FIELD_NAME_MAX];
	bool any = false;

	for (uint32_t i = 0; i < ev->nfields; i++) {
		const struct rec_value *v = &ev->values[i];

		if (v->type != REC_TYPE_STR || v->str.status == REC_STR_OK)
			continue;
		if (!any) {
			rec_json__key(w, "field_status");
			rec_json__begin_object(w);
			any = true;
		}
		rec_json__member_cstr(w, rec_output__field_name(ev, i, name_buf),
				      rec_names__str_status(v->str.status));
	}
	if (any)
		rec_json__end_object(w);
}

/* "name": an RFC 3339 time, or null for 0 (not known). */
static void json_time_or_null(struct rec_json *w, const char *name, int64_t time_ns)
{
	rec_json__key(w, name);
	if (time_ns)
		rec_json__time(w, time_ns);
	else
		rec_json__null(w);
}

/* Where an event or a span came from: pid, [ns_pid,] tid, recording, recorder, subject. */
static void json_origin(struct rec_json *w, const struct rec_origin *from)
{
	rec_json__member_u64(w, "pid", from->pid);
	if (from->ns_pid)
		rec_json__member_u64(w, "ns_pid", from->ns_pid);
	rec_json__member_u64(w, "tid", from->tid);
	rec_json__member_hex(w, "recording", from->recording);
	rec_json__member_hex(w, "recorder", from->recorder);
	rec_json__member_cstr(w, "subject", from->subject);
}

/*
 * One object, keys in this order: pid, tid, recording, recorder, subject, seq,
 * time, level, target, name, file, line, fields. ns_pid is added after pid
 * when non-zero. recording and recorder are "0x…" strings (lower-case hex, no
 * padding), time is RFC 3339 UTC with microseconds
 * ("2026-12-02T14:03:12.123456Z"), level is "INFO" etc. fields is an object
 * whose first key is "message" (the callsite's message, or the field named
 * message when the callsite has none; "" when there is none), then each field
 * by name. A string is its bytes (the first 255 of a truncated one) or null
 * when none were read (NULL, unreadable, no space); each string not read whole
 * is named with its status in "field_status", after "fields" and only when
 * there is one: {"long":"truncated","p":"null","q":"fault","r":"nospace"}. f64
 * that are not finite are strings ("nan", "inf", "-inf"). With cs NULL, level,
 * target, name and file are "?", line is 0 and the message "<callsite 0x…>".
 */
static void jsonl_event(struct rec_output *o, const struct rec_event_view *ev)
{
	char name_buf[REC_OUTPUT_FIELD_NAME_MAX], buf[REC_TEXT_CALLSITE_MAX];
	const struct rec_callsite *cs = ev->cs;
	struct rec_json *w = &o->json;
	const char *msg;
	int msg_field;

	rec_json__begin_object(w);
	json_origin(w, &ev->from);
	rec_json__member_u64(w, "seq", ev->seq);
	rec_json__key(w, "time");
	rec_json__time(w, ev->time_ns);
	rec_json__member_cstr(w, "level",
			      cs ? rec_names__level((enum rec_level)rec_output__level(ev)) : "?");
	rec_json__member_cstr(w, "target", cs ? cs->target : "?");
	rec_json__member_cstr(w, "name", cs ? cs->name : "?");
	rec_json__member_cstr(w, "file", cs ? cs->file : "?");
	rec_json__member_u64(w, "line", cs ? cs->line : 0);

	msg = rec_output__message(ev, &msg_field);
	rec_json__key(w, "fields");
	rec_json__begin_object(w);
	rec_json__key(w, "message");
	if (!cs)
		rec_json__cstr(w, rec_text__callsite(ev->meta, buf));
	else if (msg_field >= 0)
		rec_output__json_value(w, &ev->values[msg_field]);
	else
		rec_json__cstr(w, msg);
	for (uint32_t i = 0; i < ev->nfields; i++) {
		if ((int)i == msg_field)
			continue;
		rec_json__key(w, rec_output__field_name(ev, i, name_buf));
		rec_output__json_value(w, &ev->values[i]);
	}
	rec_json__end_object(w);
	json_field_status(w, ev);
	rec_json__end_object(w);
	rec_json__newline(w);
}

/*
 * A span (--spans): {"type":"span", pid, [ns_pid,] tid, recording, recorder,
 * subject, id, parent, name, target, file, line, enter, exit, duration_ns,
 * entered_before_attach}. id and parent are "0x…" strings (parent null: none
 * known); enter and exit are RFC 3339 like an event's time, enter null if not
 * known (entered before the attach: entered_before_attach true), exit null and
 * duration_ns null while it is open. With cs NULL, name is "<callsite 0x…>"
 * and target and file "?". With --sched, a closed span has its kernel time too
 * (rec_output__sched_members).
 */
static void jsonl_span(struct rec_output *o, const struct rec_span_view *sp)
{
	char buf[REC_TEXT_CALLSITE_MAX];
	const struct rec_callsite *cs = sp->cs;
	struct rec_json *w = &o->json;

	rec_json__begin_object(w);
	rec_json__member_cstr(w, "type", "span");
	json_origin(w, &sp->from);
	rec_json__member_hex(w, "id", sp->id);
	if (sp->parent)
		rec_json__member_hex(w, "parent", sp->parent);
	else
		rec_json__key(w, "parent"), rec_json__null(w);
	rec_json__member_cstr(w, "name", cs ? cs->name : rec_text__callsite(sp->meta, buf));
	rec_json__member_cstr(w, "target", cs ? cs->target : "?");
	rec_json__member_cstr(w, "file", cs ? cs->file : "?");
	rec_json__member_u64(w, "line", cs ? cs->line : 0);
	json_time_or_null(w, "enter", sp->enter_ns);
	json_time_or_null(w, "exit", sp->exit_ns);
	rec_json__key(w, "duration_ns");
	if (sp->enter_ns && sp->exit_ns)
		rec_json__i64(w, sp->exit_ns - sp->enter_ns);
	else
		rec_json__null(w);
	rec_json__member_bool(w, "entered_before_attach", !sp->enter_ns);
	if (sp->sched)
		rec_output__sched_members(w, sp->sched, 0);
	rec_json__end_object(w);
	rec_json__newline(w);
}

/*
 * A trigger a dump names: {"type":"trigger", pid, pending, rule, rule_id,
 * kind, time, recording, subject, what, after_ns[, occurred, signature_id,
 * signature]}: time is when recorder-attach saw it, occurred the event's or
 * span's own time (dumps since issue 35). pending is false for the
 * trigger of a snapshot, true for one that fired while the process exited;
 * time is RFC 3339 like an event's; recording a "0x…" string.
 */
static void jsonl_trigger(struct rec_output *o, const struct rec_proc *p,
			  const struct rec_dump_trigger *t, int pending)
{
	struct rec_json *w = &o->json;

	rec_json__begin_object(w);
	rec_json__member_cstr(w, "type", "trigger");
	rec_json__member_i64(w, "pid", p->pid);
	rec_json__member_bool(w, "pending", pending);
	rec_json__key(w, "rule");
	rec_json__string(w, t->rule, strnlen(t->rule, sizeof(t->rule)));
	rec_json__member_u64(w, "rule_id", t->rule_id);
	rec_json__member_cstr(w, "kind", rec_names__trigger_kind(t->kind));
	rec_json__key(w, "time");
	rec_json__time(w, t->time_ns);
	rec_json__member_hex(w, "recording", t->recording);
	rec_json__key(w, "subject");
	rec_json__string(w, t->subject, strnlen(t->subject, sizeof(t->subject)));
	rec_json__key(w, "what");
	rec_json__string(w, t->what, strnlen(t->what, sizeof(t->what)));
	rec_json__member_u64(w, "after_ns", t->after_ns);
	if (t->at_ns > 0) {
		rec_json__key(w, "occurred");
		rec_json__time(w, t->at_ns);
	}
	if (t->signature_id) {
		char id[24];

		snprintf(id, sizeof(id), "%012" PRIx64, t->signature_id);
		rec_json__member_cstr(w, "signature_id", id);
		rec_json__key(w, "signature");
		rec_json__string(w, t->signature, strnlen(t->signature, sizeof(t->signature)));
	}
	rec_json__end_object(w);
	rec_json__newline(w);
}

static void jsonl_not_sent(struct rec_output *o, const struct rec_proc *p, uint64_t n)
{
	struct rec_json *w = &o->json;

	rec_json__begin_object(w);
	rec_json__member_i64(w, "pid", p->pid);
	rec_json__member_u64(w, "not_sent", n);
	rec_json__member_cstr(w, "reason", "reader too slow");
	rec_json__end_object(w);
	rec_json__newline(w);
}

static void jsonl_list_row(struct rec_output *o, const struct rec_proc *p,
			   const struct rec_rstate *rs)
{
	struct rec_json *w = &o->json;
	struct rec_sched_totals t;

	rec_json__begin_object(w);
	rec_json__member_i64(w, "pid", p->pid);
	rec_json__member_hex(w, "recording", rs->key);
	rec_json__member_hex(w, "recorder", rs->recorder);
	rec_json__member_cstr(w, "subject", rs->subject);
	rec_json__member_u64(w, "cap", rs->cap);
	rec_json__member_u64(w, "asked_cap", rs->asked_cap);
	rec_json__member_u64(w, "seen", rs->produced);
	rec_json__member_u64(w, "delivered", rs->received);
	/* The old name of delivered, for one more version. */
	rec_json__member_u64(w, "kept", rs->received);
	rec_json__member_u64(w, "dropped", rec_rstate__dropped(rs));
	rec_json__member_u64(w, "invalid", rs->invalid);
	rec_json__member_u64(w, "tail", rec_spool__count(rs->spool));
	rec_json__member_cstr(w, "state", rec_names__recording_state(rs->retired, rs->untracked));
	if (rs->untracked)
		rec_json__member_cstr(w, "untracked", rec_names__untracked(rs->untracked));
	if (o->spans) {
		rec_json__member_u64(w, "spans_seen", rs->spans.seen);
		rec_json__member_u64(w, "spans_kept", rs->spans.n);
		rec_json__member_u64(w, "spans_aged", rs->spans.aged);
		rec_json__member_u64(w, "spans_lost", rs->spans.lost);
	}
	/* Its kernel time: the sums over its outermost spans kept (--sched). */
	if (o->sched && !rec_output__sched_totals(rs, &t)) {
		rec_json__member_u64(w, "cpu_ns", t.cpu_ns);
		rec_json__member_u64(w, "blocked_ns", t.blocked_ns);
		rec_json__member_u64(w, "runq_ns", t.runq_ns);
	}
	rec_json__end_object(w);
	rec_json__newline(w);
}

/*
 * A frame: name, target, file, line (one that could not be read: its name
 * "<callsite 0x…>"), then enter (RFC 3339, null if not known), age_ns (how
 * long it has been open when the stack was read; null if not known) and
 * entered_before_attach (its enter not known because it came before the
 * attach; its age_ns, if any, is then since the attach: a least), and
 * uncertain true for a frame read again from the thread's chain after BPF
 * missed some of its enters or exits (its enter and age not known).
 */
static void json_frame(struct rec_json *w, const struct rec_stack_view *s,
		       const struct rec_frame_view *f)
{
	char buf[REC_TEXT_CALLSITE_MAX];
	int64_t age = rec_output__frame_age(s, f);

	rec_json__begin_object(w);
	if (!f->cs) {
		rec_json__member_cstr(w, "name", rec_text__callsite(f->meta, buf));
	} else {
		rec_json__member_cstr(w, "name", f->cs->name);
		rec_json__member_cstr(w, "target", f->cs->target);
		rec_json__member_cstr(w, "file", f->cs->file);
		rec_json__member_u64(w, "line", f->cs->line);
	}
	json_time_or_null(w, "enter", f->enter_ns);
	rec_json__key(w, "age_ns");
	if (age >= 0)
		rec_json__i64(w, age);
	else
		rec_json__null(w);
	rec_json__member_bool(w, "entered_before_attach", f->before_attach);
	/* Only where true: read again from the thread's chain, entered at a moment BPF missed. */
	if (f->uncertain)
		rec_json__member_bool(w, "uncertain", true);
	rec_json__end_object(w);
}

static void jsonl_stack(struct rec_output *o, const struct rec_stack_view *s)
{
	struct rec_json *w = &o->json;

	rec_json__begin_object(w);
	rec_json__member_i64(w, "pid", s->p->pid);
	rec_json__member_u64(w, "tid", s->tid);
	rec_json__member_hex(w, "recording", s->rs->key);
	rec_json__member_cstr(w, "subject", s->rs->subject);
	rec_json__key(w, "stack");
	rec_json__begin_array(w);
	for (uint32_t i = 0; i < s->nframes; i++)
		json_frame(w, s, &s->frames[i]);
	rec_json__end_array(w);
	rec_json__end_object(w);
	rec_json__newline(w);
}

static void jsonl_stats(struct rec_output *o, const struct rec_stats_view *s)
{
	const struct rec_proc *p = s->p;
	struct rec_span_totals sp = rec_proc__span_totals(p);
	struct rec_json *w = &o->json;
	char how[64];

	rec_json__begin_object(w);
	rec_json__member_i64(w, "pid", p->pid);
	rec_json__member_cstr(w, "state",
			      rec_names__end(p->end, p->end_code, p->end_core, how, sizeof(how)));
	/* A dump of one recording: its spans are its own, the rest is the process's. */
	if (p->dump_one_recording)
		rec_json__member_cstr(w, "scope", rec_names__scope(1));
	rec_json__member_u64(w, "malformed", p->malformed);
	rec_json__member_u64(w, "orphans", p->orphans);
	if (p->fields_left_out)
		rec_json__member_u64(w, "fields_left_out", p->fields_left_out);
	rec_json__key(w, "spans");
	rec_json__begin_object(w);
	rec_json__member_u64(w, "seen", sp.seen);
	rec_json__member_u64(w, "kept", sp.kept);
	rec_json__member_u64(w, "aged", sp.aged);
	rec_json__member_u64(w, "lost", sp.lost);
	rec_json__member_u64(w, "orphans", p->span_orphans);
	rec_json__member_u64(w, "before_attach", p->spans_before_attach);
	rec_json__end_object(w);
	/* A live recorder-attach's table: nothing in a dump. */
	if (s->clients) {
		rec_json__member_u64(w, "bpf_recordings", p->bpf_recordings);
		rec_json__key(w, "events_taken");
		rec_json__begin_object(w);
		rec_json__member_u64(w, "batches", p->batches);
		rec_json__member_u64(w, "batched", p->batched_events);
		rec_json__member_u64(w, "single", p->single_events);
		rec_json__end_object(w);
		rec_json__key(w, "recordings_taken");
		rec_json__begin_object(w);
		rec_json__member_u64(w, "batched", p->batched_recordings);
		rec_json__member_u64(w, "single", p->single_recordings);
		rec_json__end_object(w);
	}
	if (p->dump_omitted_recordings || p->dump_omitted_stacks) {
		rec_json__member_u64(w, "recordings_omitted", p->dump_omitted_recordings);
		rec_json__member_u64(w, "stacks_omitted", p->dump_omitted_stacks);
	}
	if (p->sched.since_ns)
		rec_output__sched_counts(w, &p->sched);
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
	rec_json__key(w, "forgotten");
	rec_json__begin_array(w);
	for (size_t i = 0; i < s->nforgotten; i++) {
		rec_json__begin_object(w);
		rec_json__member_hex(w, "recorder", s->forgotten[i].recorder);
		rec_json__member_u64(w, "recordings", s->forgotten[i].recordings);
		rec_json__member_u64(w, "seen", s->forgotten[i].seen);
		rec_json__member_u64(w, "delivered", s->forgotten[i].kept);
		/* The old name of delivered, for one more version. */
		rec_json__member_u64(w, "kept", s->forgotten[i].kept);
		rec_json__member_u64(w, "dropped", s->forgotten[i].dropped);
		rec_json__end_object(w);
	}
	rec_json__end_array(w);
	/* A dump's trigger: every rule of the process when it fired. */
	if (s->trigger) {
		rec_json__key(w, "triggers");
		rec_json__begin_array(w);
		for (size_t i = 0; i < s->trigger->ncounts; i++)
			rec_output__json_rule_counts(w, &s->trigger->counts[i]);
		rec_json__end_array(w);
	}
	/* Issue 35: the signatures' limits, what did not fit and what the cap refused. */
	if (s->trigger && s->trigger->signatures_max) {
		rec_json__key(w, "trigger_signatures");
		rec_json__begin_object(w);
		rec_json__member_u64(w, "used", s->trigger->signatures);
		rec_json__member_u64(w, "limit", s->trigger->signatures_max);
		rec_json__member_u64(w, "folded", s->trigger->signatures_folded);
		rec_json__member_u64(w, "new_capped", s->trigger->signatures_new_capped);
		rec_json__end_object(w);
	}
	rec_json__key(w, "counters");
	rec_json__begin_object(w);
	for (int c = 0; c < REC_C_MAX; c++)
		rec_json__member_u64(w, rec_names__counter(c), p->counters[c]);
	rec_json__end_object(w);
	if (s->clients) {
		rec_json__key(w, "clients");
		rec_json__begin_object(w);
		rec_json__member_u64(w, "connected", s->clients->connected);
		rec_json__member_u64(w, "max_clients", s->clients->max_clients);
		rec_json__member_u64(w, "accepted", s->clients->accepted);
		rec_json__member_u64(w, "denied", s->clients->denied);
		rec_json__member_u64(w, "refused", s->clients->refused);
		rec_json__member_u64(w, "timed_out", s->clients->timed_out);
		rec_json__member_u64(w, "events_not_sent", s->clients->not_sent);
		rec_json__end_object(w);
		rec_json__key(w, "libraries");
		rec_json__begin_object(w);
		rec_json__member_u64(w, "failed", s->clients->libraries_failed);
		rec_json__member_u64(w, "retrying", s->clients->libraries_retrying);
		rec_json__member_u64(w, "attached_later", s->clients->libraries_attached_later);
		rec_json__member_u64(w, "given_up", s->clients->libraries_given_up);
		rec_json__end_object(w);
		rec_json__key(w, "dumps");
		rec_json__begin_object(w);
		rec_json__member_u64(w, "removed", s->clients->dumps_removed);
		rec_json__member_u64(w, "removed_bytes", s->clients->dumps_removed_bytes);
		rec_json__end_object(w);
		rec_json__key(w, "snapshots");
		rec_json__begin_object(w);
		rec_json__member_u64(w, "failed", s->clients->snapshots_failed);
		rec_json__member_u64(w, "removed", s->clients->snapshots_removed);
		rec_json__member_u64(w, "removed_bytes", s->clients->snapshots_removed_bytes);
		rec_json__member_u64(w, "made_room", s->clients->snapshots_made_room);
		rec_json__member_u64(w, "made_room_bytes", s->clients->snapshots_made_room_bytes);
		rec_json__end_object(w);
		/* Who traces it: a -p recorder-attach (binary null) or a --binary one. */
		rec_json__key(w, "traced_by");
		rec_json__begin_object(w);
		rec_json__member_u64(w, "pid", (uint64_t)s->clients->attach_pid);
		rec_json__key(w, "binary");
		if (s->clients->binary)
			rec_json__cstr(w, s->clients->binary);
		else
			rec_json__null(w);
		rec_json__end_object(w);
	}
	rec_json__end_object(w);
	rec_json__newline(w);
}

const struct rec_output_ops rec_output_jsonl__ops = {
	.trigger = jsonl_trigger,
	.event = jsonl_event,
	.span = jsonl_span,
	.not_sent = jsonl_not_sent,
	.list_row = jsonl_list_row,
	.stack = jsonl_stack,
	.stats = jsonl_stats,
};
