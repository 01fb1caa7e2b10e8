// SPDX-License-Identifier: MIT
/*
 * The text backend (output.h): events as glog lines, tails under a header per
 * recording with a line where events were lost, lists as a table, stacks as
 * indented frames, stats as labelled lines. Everything that came from the
 * target is escaped (rec_text__escape), so that one event is always one line.
 */
#include <inttypes.h>
#include <string.h>

#include "model/dump.h"
#include "model/names.h"
#include "output/output.h"
#include "base/text.h"

/* Writes a string field's bytes and, if it was not read whole, its mark. */
static void put_str_value(FILE *out, const struct rec_value *v)
{
	const char *mark = rec_names__str_mark(v->str.status);

	rec_text__escape(out, v->str.ptr, v->str.len);
	rec_text__escape(out, mark, strlen(mark));
}

static void put_value(FILE *out, const struct rec_value *v)
{
	switch (v->type) {
	case REC_TYPE_STR:
		put_str_value(out, v);
		break;
	case REC_TYPE_I64:
		fprintf(out, "%" PRId64, v->i64);
		break;
	case REC_TYPE_U64:
		fprintf(out, "%" PRIu64, v->u64);
		break;
	case REC_TYPE_F64:
		fprintf(out, "%g", v->f64);
		break;
	case REC_TYPE_BOOL:
		fputs(v->b ? "true" : "false", out);
		break;
	default:
		fputs("?", out);
	}
}

/*
 * One glog-style line, newline included:
 *	I1202 14:03:12.123456 4242 server.c:88] <actor[0]> handled request, id: 7, ok: true
 * Level letter, local month/day and time with microseconds, tid, basename of the
 * file, line, the subject in angle brackets (left out when empty), the message,
 * then ", name: value" per field; with no message, the fields follow the
 * subject directly ("id: 7, ok: true"). A string that was not read whole is
 * followed by its mark: "…[truncated]", "<unreadable>", "(null)", "<no space>".
 * f64 uses %g; bool true/false. With cs NULL, the level is '?', the file "?",
 * the line 0 and the message "<callsite 0x…>".
 */
static void text_event(struct rec_output *o, const struct rec_event_view *ev)
{
	const struct rec_callsite *cs = ev->cs;
	char name_buf[REC_OUTPUT_FIELD_NAME_MAX], buf[REC_TEXT_CALLSITE_MAX];
	FILE *out = o->out;
	const char *msg;
	bool first = true;
	int msg_field;
	uint32_t i;

	rec_text__glog_head(
		out, cs ? rec_names__level_letter((enum rec_level)rec_output__level(ev)) : '?',
		ev->time_ns, ev->from.tid, cs && cs->file ? cs->file : "?", cs ? cs->line : 0);
	if (ev->from.subject && ev->from.subject[0]) {
		fputc('<', out);
		rec_text__escape(out, ev->from.subject, strlen(ev->from.subject));
		fputs("> ", out);
	}
	msg = rec_output__message(ev, &msg_field);
	if (!cs) {
		fputs(rec_text__callsite(ev->meta, buf), out);
		first = false;
	} else if (msg) {
		rec_text__escape(out, msg, strlen(msg));
		first = false;
	} else if (msg_field >= 0) {
		put_str_value(out, &ev->values[msg_field]);
		first = false;
	}
	for (i = 0; i < ev->nfields; i++) {
		const char *name = rec_output__field_name(ev, i, name_buf);

		if ((int)i == msg_field)
			continue;
		if (!first)
			fputs(", ", out);
		first = false;
		rec_text__escape(out, name, strlen(name));
		fputs(": ", out);
		put_value(out, &ev->values[i]);
	}
	fputc('\n', out);
}

/* A duration in ns as seconds with microseconds: "2.345678 s". */
static void put_seconds(FILE *out, int64_t ns)
{
	fprintf(out, "%" PRId64 ".%06" PRId64 " s", ns / 1000000000, ns % 1000000000 / 1000);
}

/* ns as milliseconds with one decimal, rounded. */
static void text_ms1(FILE *out, uint64_t ns)
{
	uint64_t tenths = (ns + 50000) / 100000;

	fprintf(out, "%" PRIu64 ".%" PRIu64, tenths / 10, tenths % 10);
}

/*
 * A span's kernel time, in ms: " (cpu 3.1, blocked 470.0 [futex 465.2, read
 * 4.8], runq 7.1)", the blocked split by cause, the most first, then other;
 * ", partial" before the ")" if some intervals were lost.
 */
static void text_sched(FILE *out, const struct rec_sched_figs *f)
{
	char buf[24];

	fputs(" (cpu ", out);
	text_ms1(out, f->cpu_ns);
	fputs(", blocked ", out);
	text_ms1(out, f->blocked_ns);
	for (int i = 0; i < REC_SCHED_TOP && f->top[i].ns; i++) {
		fputs(i ? ", " : " [", out);
		fputs(rec_names__offcpu_cause(f->top[i].cause, buf, sizeof(buf)), out);
		fputc(' ', out);
		text_ms1(out, f->top[i].ns);
	}
	if (f->other_ns) {
		fputs(", other ", out);
		text_ms1(out, f->other_ns);
	}
	if (f->top[0].ns)
		fputc(']', out);
	fputs(", runq ", out);
	text_ms1(out, f->runq_ns);
	if (f->flags & REC_SCHED_PARTIAL)
		fputs(", partial", out);
	fputc(')', out);
}

/*
 * A span (--spans), a line like an event's, timed by its enter (by its exit
 * if the enter is not known) and lettered S:
 *	S1202 14:03:12.123456 4242 server.c:88] <conn#6> span handle: 1.234567 ms, id 0x…, parent 0x…
 * and "open" for the time of one still open. One entered before the attach
 * says so; if still open, its line is timed by the attach (if that is not
 * known, a dump that predates it, by when it was read: the dump's writing).
 * With --sched its kernel time follows its time (text_sched).
 */
static void text_span(struct rec_output *o, const struct rec_span_view *sp)
{
	const struct rec_callsite *cs = sp->cs;
	char buf[REC_TEXT_CALLSITE_MAX];
	FILE *out = o->out;
	int64_t at = sp->enter_ns      ? sp->enter_ns
		     : sp->exit_ns     ? sp->exit_ns
		     : sp->attached_ns ? sp->attached_ns
				       : sp->read_ns;

	rec_text__glog_head(out, 'S', at, sp->from.tid, cs && cs->file ? cs->file : "?",
			    cs ? cs->line : 0);
	if (sp->from.subject && sp->from.subject[0]) {
		fputc('<', out);
		rec_text__escape(out, sp->from.subject, strlen(sp->from.subject));
		fputs("> ", out);
	}
	fputs("span ", out);
	if (cs)
		rec_text__escape(out, cs->name, strlen(cs->name));
	else
		fputs(rec_text__callsite(sp->meta, buf), out);
	if (!sp->exit_ns && !sp->enter_ns)
		fputs(": open, entered before the attach", out);
	else if (!sp->exit_ns)
		fputs(": open", out);
	else if (!sp->enter_ns)
		fputs(": entered before the attach", out);
	else
		fprintf(out, ": %" PRId64 ".%06" PRId64 " ms",
			(sp->exit_ns - sp->enter_ns) / 1000000,
			(sp->exit_ns - sp->enter_ns) % 1000000);
	if (sp->sched && sp->exit_ns && sp->enter_ns)
		text_sched(out, sp->sched);
	fprintf(out, ", id 0x%" PRIx64, sp->id);
	if (sp->parent)
		fprintf(out, ", parent 0x%" PRIx64, sp->parent);
	fputc('\n', out);
}

static void text_ended(struct rec_output *o, const struct rec_proc *p)
{
	char how[64];

	fprintf(o->out, "==> pid %d %s <==\n", (int)p->pid,
		rec_names__end(p->end, p->end_code, p->end_core, how, sizeof(how)));
}

/*
 * A trigger a dump names, on one line:
 *	snapshot: rule 'level>=error' (id 1) fired at 2026-12-02T14:03:12.123456Z in recording 0x… (conn#6): event seq 1234: request failed
 * or, with a signature and its own time (issue 35):
 *	snapshot: rule 'level>=error' (id 1) signature 3fa2… ('request failed' at srv.c:42) happened at T1, seen at T2 in recording …
 * "trigger: … as the process exited: …" for one pending in a black box; no
 * "in recording" for recording 0, no "(subject)" for an empty one.
 */
static void text_trigger(struct rec_output *o, const struct rec_proc *p,
			 const struct rec_dump_trigger *t, int pending)
{
	char time[REC_TEXT_TIME_MAX], key[REC_TEXT_KEY_MAX];
	FILE *out = o->out;

	(void)p;
	fprintf(out, "%s: rule '", pending ? "trigger" : "snapshot");
	rec_text__escape(out, t->rule, strnlen(t->rule, sizeof(t->rule)));
	fprintf(out, "' (id %" PRIu32 ")", t->rule_id);
	if (t->signature_id) {
		fprintf(out, " signature %012" PRIx64 " (", t->signature_id);
		rec_text__escape(out, t->signature, strnlen(t->signature, sizeof(t->signature)));
		fputc(')', out);
	}
	/* Its own time first: recorder-attach saw it up to a collection later. */
	if (t->at_ns > 0)
		fprintf(out, " happened at %s, seen", rec_text__rfc3339(t->at_ns, time));
	else
		fputs(" fired", out);
	fprintf(out, " at %s", rec_text__rfc3339(t->time_ns, time));
	if (t->recording)
		fprintf(out, " in recording %s", rec_text__key(t->recording, key));
	if (t->subject[0]) {
		fputs(" (", out);
		rec_text__escape(out, t->subject, strnlen(t->subject, sizeof(t->subject)));
		fputc(')', out);
	}
	if (pending)
		fputs(" as the process exited", out);
	fputs(": ", out);
	rec_text__escape(out, t->what, strnlen(t->what, sizeof(t->what)));
	fputc('\n', out);
}

static void text_recording(struct rec_output *o, const struct rec_proc *p,
			   const struct rec_rstate *rs)
{
	char key[REC_TEXT_KEY_MAX], ns[32] = "", asked[48] = "";

	if (p->ns_pid)
		snprintf(ns, sizeof(ns), " (ns pid %d)", (int)p->ns_pid);
	if (rs->asked_cap != rs->cap)
		snprintf(asked, sizeof(asked), " (asked %" PRIu64 ")", rs->asked_cap);
	fprintf(o->out, "==> pid %d%s recording %s <", (int)p->pid, ns,
		rec_text__key(rs->key, key));
	rec_text__pad(o->out, rs->subject, 0);
	fprintf(o->out,
		"> cap %" PRIu64 "%s, seen %" PRIu64 ", delivered %" PRIu64 ", dropped %" PRIu64
		"%s <==\n",
		rs->cap, asked, rs->produced, rs->received, rec_rstate__dropped(rs),
		rs->retired ? ", retired" : "");
}

static void text_gap(struct rec_output *o, uint64_t from, uint64_t to)
{
	fprintf(o->out, "-- %" PRIu64 " event%s lost (seq %" PRIu64 "..%" PRIu64 ") --\n",
		to - from + 1, to == from ? "" : "s", from, to);
}

static void text_not_sent(struct rec_output *o, const struct rec_proc *p, uint64_t n)
{
	(void)p;
	fprintf(o->out, "-- %" PRIu64 " event%s not sent: reader too slow --\n", n,
		n == 1 ? "" : "s");
}

static void text_list_header(struct rec_output *o)
{
	fprintf(o->out, "%-8s %-20s %-20s %-16s %8s %8s %10s %10s %10s %8s %s", "PID", "RECORDING",
		"RECORDER", "SUBJECT", "CAP", "ASKED", "SEEN", "DELIVERED", "DROPPED", "TAIL",
		"STATE");
	if (o->spans)
		fprintf(o->out, " %10s %10s %10s %10s", "SPANS-SEEN", "SPANS-KEPT", "SPANS-AGED",
			"SPANS-LOST");
	if (o->sched)
		fprintf(o->out, " %10s %10s %10s", "CPU-MS", "BLOCKED-MS", "RUNQ-MS");
	fputc('\n', o->out);
}

static void text_list_row(struct rec_output *o, const struct rec_proc *p,
			  const struct rec_rstate *rs)
{
	char key[REC_TEXT_KEY_MAX], recorder[REC_TEXT_KEY_MAX];

	fprintf(o->out, "%-8d %-20s %-20s ", (int)p->pid, rec_text__key(rs->key, key),
		rec_text__key(rs->recorder, recorder));
	rec_text__pad(o->out, rs->subject[0] ? rs->subject : "-", 16);
	fprintf(o->out,
		" %8" PRIu64 " %8" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %8zu %s",
		rs->cap, rs->asked_cap, rs->produced, rs->received, rec_rstate__dropped(rs),
		rec_spool__count(rs->spool),
		rec_names__recording_state(rs->retired, rs->untracked));
	if (o->spans)
		fprintf(o->out, " %10" PRIu64 " %10zu %10" PRIu64 " %10" PRIu64, rs->spans.seen,
			rs->spans.n, rs->spans.aged, rs->spans.lost);
	if (o->sched) {
		struct rec_sched_totals t;

		if (rec_output__sched_totals(rs, &t))
			fprintf(o->out, " %10s %10s %10s", "?", "?", "?");
		else
			fprintf(o->out, " %10.1f %10.1f %10.1f", t.cpu_ns / 1e6, t.blocked_ns / 1e6,
				t.runq_ns / 1e6);
	}
	fputc('\n', o->out);
}

/*
 * The frames under a heading line, innermost first; a frame with a line shows
 * its file, then how long it has been open (its age, when known):
 *	    handle (server.c:88) open 2.345678 s
 *	    recording open since before the attach, over 12.000000 s
 *	    lookup (server.c:95) open, entered at a moment recorder missed (uncertain)
 */
static void text_stack(struct rec_output *o, const struct rec_stack_view *s)
{
	char key[REC_TEXT_KEY_MAX], buf[REC_TEXT_CALLSITE_MAX];
	FILE *out = o->out;

	fprintf(out, "pid %d tid %u recording %s <", (int)s->p->pid, s->tid,
		rec_text__key(s->rs->key, key));
	rec_text__pad(out, s->rs->subject, 0);
	fputs(">:\n", out);
	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct rec_frame_view *f = &s->frames[i];
		int64_t age = rec_output__frame_age(s, f);

		fputs("    ", out);
		if (!f->cs) {
			fputs(rec_text__callsite(f->meta, buf), out);
		} else {
			rec_text__pad(out, f->cs->name, 0);
			if (f->cs->line) {
				fputs(" (", out);
				rec_text__pad(out, rec_text__basename(f->cs->file), 0);
				fprintf(out, ":%u)", f->cs->line);
			}
		}
		if (f->uncertain) {
			fputs(" open, entered at a moment recorder missed (uncertain)", out);
		} else if (f->before_attach) {
			fputs(" open since before the attach", out);
			if (age >= 0) {
				fputs(", over ", out);
				put_seconds(out, age);
			}
		} else if (age >= 0) {
			fputs(" open ", out);
			put_seconds(out, age);
		}
		fputc('\n', out);
	}
}

/*
 * Each limit: its maximum, its use, what went over. Without verbose, only the
 * limits something went over: those a user can act on (raise the option).
 */
static void text_stats_limits(FILE *out, const struct rec_proc *p, int verbose)
{
	int over = 0;

	for (int l = 0; l < REC_L_MAX; l++)
		over |= p->use[l].over || p->use[l].events;
	if (!verbose && !over) {
		fputs("limits: nothing went over its limit (-v shows each limit and its use)\n",
		      out);
		return;
	}
	fprintf(out,
		"limits (OVER: what did not fit; EVENTS: the events of those):\n"
		"    %-24s %10s %10s %10s %12s\n",
		"LIMIT", "MAX", "USED", "OVER", "EVENTS");
	for (int l = 0; l < REC_L_MAX; l++) {
		const struct rec_limit_use *u = &p->use[l];

		if (!verbose && !u->over && !u->events)
			continue;
		fprintf(out, "    %-24s ", rec_names__limit(l));
		if (u->limit)
			fprintf(out, "%10" PRIu64, u->limit);
		else
			fprintf(out, "%10s", "-");
		fprintf(out, " %10" PRIu64 " %10" PRIu64 " %12" PRIu64 "\n", u->used, u->over,
			u->events);
	}
}

static void text_stats_forgotten(FILE *out, const struct rec_stats_view *s)
{
	char key[REC_TEXT_KEY_MAX];

	fputs("recordings forgotten to make room, per recorder:\n", out);
	for (size_t i = 0; i < s->nforgotten; i++) {
		const struct rec_forgotten *f = &s->forgotten[i];

		fprintf(out,
			"    %-8s %-20s recordings %" PRIu64 ", seen %" PRIu64
			", delivered %" PRIu64 ", dropped %" PRIu64 "\n",
			f->recorder ? "recorder" : "others", rec_text__key(f->recorder, key),
			f->recordings, f->seen, f->kept, f->dropped);
	}
	if (!s->nforgotten)
		fputs("    none\n", out);
}

/* The rules of the process when the trigger fired, and what had become of their fires. */
static void text_stats_triggers(FILE *out, const struct rec_dump_trigger *t)
{
	char time[REC_TEXT_TIME_MAX];

	/* A live process's rules, now (no rule of its fired them). */
	if (!t->rule_id)
		fprintf(out, "trigger rules (SAVED: snapshots written):\n");
	else
		fprintf(out,
			"trigger rules when rule %" PRIu32
			" fired at %s (SAVED: snapshots written):\n",
			t->rule_id, rec_text__rfc3339(t->time_ns, time));
	fprintf(out, "    %-4s %-32s %10s %10s %10s %10s %10s\n", "ID", "RULE", "FIRED", "SAVED",
		"COOLDOWN", "CAPPED", "FAILED");
	for (size_t i = 0; i < t->ncounts; i++) {
		const struct rec_dump_rule_counts *c = &t->counts[i];
		size_t n;

		fprintf(out, "    %-4" PRIu32 " ", c->id);
		n = rec_text__escape(out, c->rule, strnlen(c->rule, sizeof(c->rule)));
		for (; n < 32; n++)
			fputc(' ', out);
		fprintf(out,
			" %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
			c->fired, c->saved, c->cooldown, c->capped, c->failed);
	}
	/* Issue 35: the signatures' limits, what did not fit and what the cap refused. */
	if (t->signatures_max)
		fprintf(out,
			"    signatures: %" PRIu64 " of %" PRIu64
			"; folded (firings past them) %" PRIu64 "; new ones capped %" PRIu64 "\n",
			t->signatures, t->signatures_max, t->signatures_folded,
			t->signatures_new_capped);
}

static void text_stats_clients(FILE *out, const struct rec_output_clients *k)
{
	fprintf(out, "traced by: recorder-attach %d, ", (int)k->attach_pid);
	if (k->binary) {
		fputs("--binary ", out);
		rec_text__pad(out, k->binary, 0);
	} else {
		fputs("-p", out);
	}
	fputc('\n', out);
	fprintf(out,
		"clients of this recorder-attach (all traced processes):\n"
		"    %-20s %" PRIu64 " (at most %" PRIu64 ")\n    %-20s %" PRIu64
		"\n    %-20s %" PRIu64 "\n    %-20s %" PRIu64 "\n    %-20s %" PRIu64
		"\n    %-20s %" PRIu64 "\n",
		"connected", k->connected, k->max_clients, "accepted", k->accepted, "denied",
		k->denied, "refused", k->refused, "timed_out", k->timed_out, "events_not_sent",
		k->not_sent);
	fprintf(out,
		"libraries loaded after the attach whose probes failed to attach:\n"
		"    %-20s %" PRIu64 "\n    %-20s %" PRIu64 "\n    %-20s %" PRIu64
		"\n    %-20s %" PRIu64 "\n",
		"failed", k->libraries_failed, "retrying", k->libraries_retrying, "attached_later",
		k->libraries_attached_later, "given_up", k->libraries_given_up);
	fprintf(out,
		"black boxes removed by --keep-dumps and --max-dump-bytes:\n"
		"    %-20s %" PRIu64 "\n    %-20s %" PRIu64 "\n",
		"removed", k->dumps_removed, "removed_bytes", k->dumps_removed_bytes);
	fprintf(out,
		"snapshots: not written (this process), removed by --keep-snapshots and "
		"--max-snapshot-bytes, removed to make room for black boxes (made_room):\n"
		"    %-20s %" PRIu64 "\n    %-20s %" PRIu64 "\n    %-20s %" PRIu64
		"\n    %-20s %" PRIu64 "\n    %-20s %" PRIu64 "\n",
		"failed", k->snapshots_failed, "removed", k->snapshots_removed, "removed_bytes",
		k->snapshots_removed_bytes, "made_room", k->snapshots_made_room, "made_room_bytes",
		k->snapshots_made_room_bytes);
}

/* The process's own counters, its limits, its forgotten recordings, then the BPF side's. */
static void text_stats(struct rec_output *o, const struct rec_stats_view *s)
{
	const struct rec_proc *p = s->p;
	struct rec_span_totals sp = rec_proc__span_totals(p);
	FILE *out = o->out;
	char how[64];

	fprintf(out, "pid %d: %s\nmalformed records: %" PRIu64 "\norphan events: %" PRIu64 "\n",
		(int)p->pid, rec_names__end(p->end, p->end_code, p->end_core, how, sizeof(how)),
		p->malformed, p->orphans);
	if (p->fields_left_out)
		fprintf(out,
			"fields left out: %" PRIu64 " (of events whose callsite has more than %d: "
			"the first %d are kept)\n",
			p->fields_left_out, REC_MAX_FIELDS, REC_MAX_FIELDS);
	if (p->dump_one_recording)
		fputs("scope: one recording (its spans and recordings are its own; the rest is the "
		      "whole process's)\n",
		      out);
	fprintf(out,
		"spans: %" PRIu64 " seen, %" PRIu64 " kept, %" PRIu64
		" aged out (--span-cap), %" PRIu64 " lost; orphan spans: %" PRIu64
		"; spans of recordings older than the attach: %" PRIu64 "\n",
		sp.seen, sp.kept, sp.aged, sp.lost, p->span_orphans, p->spans_before_attach);
	if (p->sched.since_ns)
		fprintf(out,
			"kernel time (--sched): %" PRIu64 " intervals off the CPU, %" PRIu64
			" lost (ring full), %" PRIu64 " forgotten (past %d a thread), %" PRIu64
			" of threads past %d; %" PRIu64 " spans partial\n",
			p->sched.count.intervals, p->sched.count.lost, p->sched.count.forgotten,
			REC_SCHED_THREAD_CAP, p->sched.count.threads_full, REC_SCHED_MAX_THREADS,
			p->sched.count.partial);
	/* How the events came: a live recorder-attach's, nothing in a dump. */
	if (s->clients)
		fprintf(out,
			"events taken: %" PRIu64 " in %" PRIu64 " batches, %" PRIu64
			" one by one (the per-event path)\n"
			"recordings' new, subject and free taken: %" PRIu64 " in batches, %" PRIu64
			" one by one\n",
			p->batched_events, p->batches, p->single_events, p->batched_recordings,
			p->single_recordings);
	/* An internal size, and of a live recorder-attach only: nothing in a dump. */
	if (s->verbose && s->clients)
		fprintf(out, "entries in the BPF recordings table: %" PRIu64 "\n",
			p->bpf_recordings);
	if (p->dump_omitted_recordings || p->dump_omitted_stacks)
		fprintf(out, "left out of the dump: %" PRIu64 " recordings, %" PRIu64 " stacks\n",
			p->dump_omitted_recordings, p->dump_omitted_stacks);
	text_stats_limits(out, p, s->verbose);
	text_stats_forgotten(out, s);
	if (s->trigger)
		text_stats_triggers(out, s->trigger);
	fputs("BPF counters (all traced processes):\n", out);
	for (int c = 0; c < REC_C_MAX; c++)
		fprintf(out, "    %-20s %" PRIu64 "\n", rec_names__counter(c), p->counters[c]);
	if (s->clients)
		text_stats_clients(out, s->clients);
}

const struct rec_output_ops rec_output_text__ops = {
	.ended = text_ended,
	.trigger = text_trigger,
	.recording = text_recording,
	.event = text_event,
	.span = text_span,
	.gap = text_gap,
	.not_sent = text_not_sent,
	.list_header = text_list_header,
	.list_row = text_list_row,
	.stack = text_stack,
	.stats = text_stats,
};
