// SPDX-License-Identifier: MIT
/*
 * Incidents (issue 23; private.h): the --trigger rules held against what
 * comes in, and what a rule that fires keeps and exports.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "session/private.h"

/* ---- incidents (issue 23): the --trigger rules held against what comes in ---- */

/* How often open spans are held against the span rules: a hung request is caught this late. */
#define OPEN_CHECK_MS 100

/* What a rule fired on, to name its signature by: a callsite (an event's or a span's), or a reason. */
struct fired_on {
	uint64_t key;  /* the signature's: the callsite's address, the reason's hash */
	int64_t at_ns; /* the event's or span's own time, CLOCK_MONOTONIC */
	uint64_t meta; /* the callsite's address */
	const struct rec_callsite *cs;	  /* NULL: unread, or a reason's */
	bool code;			  /* a rec_trigger() call, of reason */
	const char *reason;		  /* rec_trigger()'s; NULL: none given */
	struct rec_incident_quiet *quiet; /* its callsite's cache entry of the rule (incident.h) */
};

/* The key of rec_trigger()'s reason (NULL: none): its FNV-1a hash, never the fold's. */
static uint64_t reason_key(const char *reason)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *p = reason ? reason : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	h ^= reason ? 0 : 1;
	return h == REC_TRIGGER_SIG_FOLD ? h - 1 : h;
}

/* Names a new signature g of rule i of t by what it fired on (texts from the target, unescaped). */
static void name_sig(struct traced *t, unsigned int i, struct rec_trigger_sig *g,
		     const struct fired_on *on)
{
	char text[REC_TRIGGER_SIG_TEXT_MAX];
	const struct rec_callsite *cs = on->cs;

	if (on->code)
		snprintf(text, sizeof(text), "code '%s'", on->reason ? on->reason : "");
	else if (!cs)
		snprintf(text, sizeof(text), "callsite 0x%" PRIx64 " (unread)", on->meta);
	else if (cs->kind == 'S')
		snprintf(text, sizeof(text), "span %s at %s:%" PRIu32, cs->name, cs->file,
			 cs->line);
	else
		snprintf(text, sizeof(text), "'%s' at %s:%" PRIu32,
			 cs->message[0] ? cs->message : "(formatted)", cs->file, cs->line);
	rec_trigger__name_sig(t->inc.rules, i, g, text);
}

/*
 * Rule i of t fired in recording, on what on says: a snapshot, if its
 * signature's limiter admits it, pins the recording. Returns it, for the
 * caller to say in its what on what it fired; NULL if none was admitted. In a
 * storm most firings are only counted: the limiters ask the coarse clock, a
 * signature is named once, and only an admitted firing takes the precise time
 * and is described.
 */
static struct rec_incident_pending *fired(struct rec_session *s, struct traced *t, unsigned int i,
					  uint64_t recording, struct fired_on *on)
{
	struct rec_rstate *rs = NULL;
	struct rec_incident_pending *p;
	struct rec_trigger_sig *g;
	/* A batch's events fire in one instant: the limiters' clock is read once a record. */
	int64_t now = s->record_now_ns ? s->record_now_ns : coarse_mono_ns();

	/* --otlp-keep: exported whatever the snapshots' cooldown and cap say. */
	if (t->inc.rules->rules[i].keep && t->export && recording &&
	    rec_incident__keep(&t->inc, recording, now, s->opts.trigger_after_ns,
			       t->inc.rules->rules[i].id, on->key) &&
	    (rs = rec_proc__find(&t->proc, recording)))
		rs->pinned++;
	p = rec_incident__fire(&t->inc, i, on->key, recording, now, on->at_ns,
			       s->opts.trigger_after_ns, on->quiet, &g);
	if (g && !g->id) {
		if (on->meta && !on->cs && !on->code)
			on->cs = rec_proc__cached_callsite(&t->proc, on->meta);
		name_sig(t, i, g, on);
	}
	if (!p)
		return NULL;
	p->fired_ns = rec_clock__mono_ns();
	p->due_ns = p->fired_ns + s->opts.trigger_after_ns;
	if (g) {
		p->sig_id = g->id;
		snprintf(p->sig_text, sizeof(p->sig_text), "%s", g->text);
	}
	if (recording && (rs || (rs = rec_proc__find(&t->proc, recording))))
		rs->pinned++;
	return p;
}

/* incidents__check_event() past its first compare: a rule may fire. */
void __attribute__((noinline)) incidents__check_event_rules(struct rec_session *s, struct traced *t,
							    const struct rec_decoded *head)
{
	const struct rec_trigger_set *rules = t->inc.rules;
	const struct rec_callsite *cs = NULL;
	struct rec_event_view ev; /* set, and asked, only for a rule its callsite is not sure of */
	struct rec_incident_pending *p;
	struct fired_on on;
	uint64_t mask, sure;

	if (!rec_incident__cached_rules(&t->inc, head->meta, &mask, &sure)) {
		cs = rec_proc__cached_callsite(&t->proc, head->meta);
		mask = rec_incident__event_rules(&t->inc, head->meta, cs, &sure);
	}
	if (!mask)
		return;
	if (mask & ~sure) {
		/* A condition, or a formatted message: the event's own fields, as ingesting decoded them. */
		ev = (struct rec_event_view){
			.from.recording = head->recording,
			.seq = head->seq,
			.meta = head->meta,
			.level = head->level,
			.nfields = head->nfields,
			.values = head->values,
			.cs = cs ? cs : rec_proc__cached_callsite(&t->proc, head->meta),
		};
	}
	for (unsigned int i = 0; i < rules->n && i < 64; i++) {
		if (!(mask & (1ULL << i)) ||
		    (!(sure & (1ULL << i)) &&
		     !rec_trigger__match_event(&rules->rules[i].rule, &ev)))
			continue;
		on = (struct fired_on){ .key = head->meta,
					.at_ns = (int64_t)head->time_ns,
					.meta = head->meta,
					.cs = cs,
					.quiet = rec_incident__quiet(&t->inc, head->meta, i) };
		p = fired(s, t, i, head->recording, &on);
		if (!p)
			continue;
		cs = cs ? cs : rec_proc__cached_callsite(&t->proc, head->meta);
		snprintf(p->what, sizeof(p->what), "event seq %" PRIu64 ": %s", head->seq,
			 cs && cs->message[0] ? cs->message : "(formatted)");
	}
}

/* A span left (r, its times in CLOCK_MONOTONIC) against t's span rules. */
void incidents__check_span(struct rec_session *s, struct traced *t, const struct rec_span_rec *r)
{
	struct rec_incident_pending *p;
	const struct rec_trigger_set *rules = t->inc.rules;
	const struct rec_callsite *cs;
	struct rec_sched_figs kt;
	int64_t took;

	if (!r->enter || r->hdr.time_ns < r->enter)
		return;
	took = (int64_t)(r->hdr.time_ns - r->enter);
	/* Caught while it was open: its end is the same incident. */
	if (rec_incident__open_fired(&t->inc, r->id, false))
		return;
	cs = rec_proc__callsite(&t->proc, r->meta);
	/* Its kernel time, for the rules on a part of it (span:GLOB blocked>DURATION). */
	rec_offcpu__charge(&t->proc.sched, r->hdr.tid, r->enter, r->hdr.time_ns, &kt);
	for (unsigned int i = 0; i < rules->n; i++) {
		const struct rec_trigger_rule *rule = &rules->rules[i].rule;
		/* A span's own time is its end. */
		struct fired_on on = {
			.key = r->meta, .at_ns = (int64_t)r->hdr.time_ns, .meta = r->meta, .cs = cs
		};

		if (rec_trigger__match_span(rule, cs, took) &&
		    (p = fired(s, t, i, r->recording, &on)))
			snprintf(p->what, sizeof(p->what), "span %s lasted %" PRId64 " ms",
				 cs ? cs->name : "?", took / 1000000);
		else if (rec_trigger__match_span_part(rule, cs, &kt) &&
			 (p = fired(s, t, i, r->recording, &on)))
			snprintf(p->what, sizeof(p->what),
				 "span %s lasted %" PRId64 " ms (cpu %" PRIu64 ", blocked %" PRIu64
				 ", runq %" PRIu64 " ms)",
				 cs ? cs->name : "?", took / 1000000, kt.cpu_ns / 1000000,
				 kt.blocked_ns / 1000000, kt.runq_ns / 1000000);
	}
}

/*
 * t's open spans against its span rules, every OPEN_CHECK_MS: a span still
 * open past a rule's duration fires while it is open (a hung request), once.
 */
void incidents__check_open(struct rec_session *s, struct traced *t)
{
	struct rec_incident_pending *p;
	const struct rec_trigger_set *rules = t->inc.rules;
	int64_t now = rec_clock__mono_ns();
	struct fired_on on;

	if (!t->inc.span_rules || !t->proc.alive ||
	    rec_clock__mono_ms() - t->open_checked_ms < OPEN_CHECK_MS)
		return;
	t->open_checked_ms = rec_clock__mono_ms();
	tracer__refresh(s, t);
	for (size_t k = 0; k < t->proc.nstacks; k++) {
		const struct rec_thread_stack *st = &t->proc.stacks[k];

		for (uint32_t f = 0; f < st->depth && f < REC_MAX_DEPTH; f++) {
			const struct rec_frame *fr = &st->frames[f];
			const struct rec_callsite *cs;
			int64_t age;

			if (!fr->enter || !fr->recording || (int64_t)fr->enter > now)
				continue;
			age = now - (int64_t)fr->enter;
			cs = rec_proc__callsite(&t->proc, fr->meta);
			/* A span still open: its own time is its start. */
			on = (struct fired_on){ .key = fr->meta,
						.at_ns = (int64_t)fr->enter,
						.meta = fr->meta,
						.cs = cs };
			for (unsigned int i = 0; i < rules->n; i++)
				if (rec_trigger__match_span(&rules->rules[i].rule, cs, age) &&
				    !rec_incident__open_fired(&t->inc, fr->id, true) &&
				    (p = fired(s, t, i, fr->recording, &on)))
					snprintf(p->what, sizeof(p->what),
						 "span %s open for %" PRId64 " ms",
						 cs ? cs->name : "?", age / 1000000);
		}
	}
}

/* A rec_trigger() record against t's code rules. */
void incidents__check_code(struct rec_session *s, struct traced *t, const struct rec_trigger_rec *r)
{
	struct rec_incident_pending *p;
	const struct rec_trigger_set *rules = t->inc.rules;
	char reason[REC_TRIGGER_REASON_MAX] = "";
	struct fired_on on = { .at_ns = (int64_t)r->hdr.time_ns, .code = true };

	if (r->reason_len > 0) {
		memcpy(reason, r->reason, sizeof(reason));
		reason[sizeof(reason) - 1] = 0;
	}
	on.reason = r->reason_len > 0 ? reason : NULL;
	on.key = reason_key(on.reason);
	for (unsigned int i = 0; i < rules->n; i++)
		if (rec_trigger__match_code(&rules->rules[i].rule, on.reason) &&
		    (p = fired(s, t, i, r->recording, &on)))
			snprintf(p->what, sizeof(p->what), "code: %s",
				 r->reason_len > 0 ? reason : "(no reason)");
}

_Static_assert((int)REC_DUMP_TRIGGER_LEVEL == (int)REC_TRIGGER_LEVEL &&
		       (int)REC_DUMP_TRIGGER_SPAN == (int)REC_TRIGGER_SPAN &&
		       (int)REC_DUMP_TRIGGER_EVENT == (int)REC_TRIGGER_EVENT &&
		       (int)REC_DUMP_TRIGGER_CODE == (int)REC_TRIGGER_CODE,
	       "trigger kinds in dumps are the rules' kinds");

/*
 * What a dump says of the pending snapshot p of t: its rule, what fired it and
 * when, and the counts of every rule of t now, in counts (room for
 * REC_TRIGGER_MAX_RULES).
 */
void incidents__dump_trigger_of(struct rec_session *s, struct traced *t,
				const struct rec_incident_pending *p, struct rec_dump_trigger *d,
				struct rec_dump_rule_counts *counts)
{
	const struct rec_trigger_set *rules = t->inc.rules;
	struct rec_rstate *rs = p->recording ? rec_proc__find(&t->proc, p->recording) : NULL;
	struct rec_trigger_rule r = { 0 };
	char err[64];

	/* The firings the callsite cache held back, counted now that they are read. */
	rec_incident__flush(&t->inc);
	memset(d, 0, sizeof(*d));
	rec_trigger__parse(p->rule_text, &r, err, sizeof(err));
	d->rule_id = p->rule_id;
	d->kind = (enum rec_dump_trigger_kind)r.kind;
	snprintf(d->rule, sizeof(d->rule), "%s", p->rule_text);
	d->time_ns = p->fired_ns + t->proc.clock_offset_ns;
	d->at_ns = p->at_ns ? p->at_ns + t->proc.clock_offset_ns : 0;
	d->signature_id = p->sig_id;
	snprintf(d->signature, sizeof(d->signature), "%s", p->sig_text);
	if (rules) {
		d->signatures = rec_trigger__nsigs(rules);
		d->signatures_max = REC_TRIGGER_SIGNATURES_MAX;
		d->signatures_folded = rules->folded;
		d->signatures_new_capped = rules->new_capped;
	}
	d->recording = p->recording;
	if (rs)
		snprintf(d->subject, sizeof(d->subject), "%s", rs->subject);
	snprintf(d->what, sizeof(d->what), "%s", p->what);
	d->after_ns = (uint64_t)s->opts.trigger_after_ns;
	d->counts = counts;
	for (unsigned int i = 0; rules && i < rules->n && i < REC_TRIGGER_MAX_RULES; i++) {
		const struct rec_trigger_entry *e = rec_trigger__at(rules, i);

		counts[i] = (struct rec_dump_rule_counts){ .id = e->id,
							   .fired = e->count.fired,
							   .saved = e->count.saved,
							   .cooldown = e->count.cooldown,
							   .capped = e->count.capped,
							   .failed = e->count.failed };
		snprintf(counts[i].rule, sizeof(counts[i].rule), "%s", e->text);
		d->ncounts++;
	}
}
