// SPDX-License-Identifier: MIT
/*
 * Answering what recorder-tail asks (query.h): selects the recordings, walks
 * their spools and stacks, and hands what it finds to the output backend of
 * the format asked for (output/output.h), which alone decides how it looks.
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/dump.h"
#include "output/output.h"
#include "serving/query.h"
#include "wire/clock.h"

int rec_query__match(const struct rec_query *q, const struct rec_rstate *rs)
{
	if ((q->flags & REC_Q_HAS_RECORDING) && rs->key != q->recording)
		return 0;
	if ((q->flags & REC_Q_HAS_RECORDER) && rs->recorder != q->recorder)
		return 0;
	/* The subject as written, or as a glob: 'actor[0]' still means itself. */
	if (q->subject[0] && strcmp(q->subject, rs->subject) != 0 &&
	    fnmatch(q->subject, rs->subject, 0) != 0)
		return 0;
	return 1;
}

int rec_query__view_match(const struct rec_query *q, const struct rec_event_view *v)
{
	const struct rec_callsite *cs = v->cs;
	int level;

	if ((q->flags & REC_Q_HAS_SINCE) && v->time_ns < q->since_ns)
		return 0;
	if (!(q->flags & REC_Q_HAS_LEVEL) && !q->target[0] && !q->nwhere)
		return 1;
	if (!cs)
		return 0;
	level = cs->level == REC_LEVEL_RUNTIME ? (int)v->level : (int)cs->level;
	if ((q->flags & REC_Q_HAS_LEVEL) && level < (int)q->level)
		return 0;
	if (q->target[0] && strcmp(q->target, cs->target) != 0 && fnmatch(q->target, cs->target, 0))
		return 0;
	if (q->nwhere && !rec_cond__match_event(q->where, q->nwhere, v))
		return 0;
	return 1;
}

int rec_query__event_match(const struct rec_query *q, struct rec_proc *p,
			   const struct rec_decoded *d)
{
	struct rec_event_view v = {
		.time_ns = rec_clock__realtime(d->time_ns, p->clock_offset_ns),
		.meta = d->meta,
		.level = d->level,
		.nfields = d->nfields,
		.values = d->values,
	};

	/* The callsite only for a filter that asks it. */
	if ((q->flags & REC_Q_HAS_LEVEL) || q->target[0] || q->nwhere)
		v.cs = rec_proc__callsite(p, d->meta);
	return rec_query__view_match(q, &v);
}

int rec_query__selects_nothing(const struct rec_proc *p, const struct rec_query *q, char *what,
			       size_t len)
{
	const char *sep = "";
	int n = 0;

	if ((q->flags & (REC_Q_STATS | REC_Q_FOLLOW)) ||
	    !(q->subject[0] || (q->flags & (REC_Q_HAS_RECORDING | REC_Q_HAS_RECORDER))))
		return 0;
	for (const struct rec_rstate *rs = p->first; rs; rs = rs->next)
		if (rec_query__match(q, rs))
			return 0;
	what[0] = 0;
	if (q->subject[0]) {
		n += snprintf(what + n, len - n, "--subject '%s'", q->subject);
		sep = " ";
	}
	if ((q->flags & REC_Q_HAS_RECORDING) && (size_t)n < len) {
		n += snprintf(what + n, len - n, "%s--recording 0x%" PRIx64, sep, q->recording);
		sep = " ";
	}
	if ((q->flags & REC_Q_HAS_RECORDER) && (size_t)n < len)
		snprintf(what + n, len - n, "%s--recorder 0x%" PRIx64, sep, q->recorder);
	return 1;
}

void rec_query__output(struct rec_output *o, FILE *out, const struct rec_query *q)
{
	rec_output__init(o, out,
			 q->flags & REC_Q_OTLP	   ? &rec_output_otlp__ops
			 : q->flags & REC_Q_CHROME ? &rec_output_chrome__ops
			 : q->flags & REC_Q_JSON   ? &rec_output_jsonl__ops
						   : &rec_output_text__ops);
	rec_query__fit(o, q);
}

void rec_query__fit(struct rec_output *o, const struct rec_query *q)
{
	o->salt = q->otlp_salt;
	o->spans = !!(q->flags & REC_Q_SPANS);
}

/* What a view of thread tid's event or span in rs of p says it came from. */
struct rec_origin rec_query__origin(const struct rec_proc *p, const struct rec_rstate *rs,
				    uint32_t tid)
{
	return (struct rec_origin){
		.pid = p->pid,
		.ns_pid = p->ns_pid,
		.tid = tid,
		.recording = rs->key,
		.recorder = rs->recorder,
		.subject = rs->subject,
	};
}

struct rec_event_view rec_query__event_view(struct rec_proc *p, const struct rec_rstate *rs,
					    const struct rec_decoded *d)
{
	return (struct rec_event_view){
		.from = rec_query__origin(p, rs, d->tid),
		.seq = d->seq,
		.time_ns = rec_clock__realtime(d->time_ns, p->clock_offset_ns),
		.cs = rec_proc__callsite(p, d->meta),
		.meta = d->meta,
		.level = d->level,
		.nfields = d->nfields,
		.values = d->values,
	};
}

static void show_event(struct rec_output *o, struct rec_proc *p, const struct rec_rstate *rs,
		       const struct rec_decoded *d)
{
	struct rec_event_view v = rec_query__event_view(p, rs, d);

	rec_output__event(o, &v);
}

struct tail_walk {
	struct rec_output *o;
	struct rec_proc *p;
	const struct rec_rstate *rs;
	const struct rec_query *q;
	uint64_t expect; /* next seq if nothing was lost */
	int started;
	size_t skip;  /* events the filters select that come before the last -n */
	size_t count; /* events the filters select (count_visit) */
};

/* Whether q has filters of its own for events (not only for recordings). */
static int filters_events(const struct rec_query *q)
{
	return (q->flags & (REC_Q_HAS_LEVEL | REC_Q_HAS_SINCE)) || q->target[0] || q->nwhere;
}

static int count_visit(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct tail_walk *w = ctx;
	struct rec_decoded d;

	(void)seq;
	if (rec_event__decode(data, len, &d) == 0 && rec_query__event_match(w->q, w->p, &d))
		w->count++;
	return 0;
}

static int tail_visit(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct tail_walk *w = ctx;
	struct rec_decoded d;
	int ok = rec_event__decode(data, len, &d) == 0, selected;

	selected = ok && rec_query__event_match(w->q, w->p, &d);
	/* Before the last -n the filters select: only the seqs are followed. */
	if (selected && w->skip) {
		w->skip--;
		w->expect = seq + 1;
		return 0;
	}
	if (w->started && seq > w->expect)
		rec_output__gap(w->o, w->expect, seq - 1);
	w->started = 1;
	w->expect = seq + 1;
	if (selected)
		show_event(w->o, w->p, w->rs, &d);
	return 0;
}

static int by_exit(const void *a, const void *b)
{
	const struct rec_kept_span *x = *(const struct rec_kept_span *const *)a;
	const struct rec_kept_span *y = *(const struct rec_kept_span *const *)b;

	if (x->exit != y->exit)
		return x->exit < y->exit ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* When recorder-attach attached to p, CLOCK_REALTIME; 0 if not known. */
static int64_t attached(const struct rec_proc *p)
{
	return p->attached_ns ? rec_clock__realtime(p->attached_ns, p->clock_offset_ns) : 0;
}

/*
 * When p is read, CLOCK_REALTIME: now for a live process, its death for one
 * that died (when seen), else the writing of its dump (0: not known). A span
 * still open is shown up to it.
 */
static int64_t read_at(const struct rec_proc *p)
{
	struct timespec now;

	if (p->alive && !clock_gettime(CLOCK_REALTIME, &now))
		return now.tv_sec * 1000000000LL + now.tv_nsec;
	if (p->ended_ns && (p->end == REC_END_EXIT || p->end == REC_END_SIGNAL))
		return rec_clock__realtime(p->ended_ns, p->clock_offset_ns);
	return p->dumped_at_ns;
}

static void show_span(struct rec_output *o, struct rec_proc *p, struct rec_origin from,
		      const struct rec_kept_span *s)
{
	struct rec_span_view v = {
		.from = from,
		.id = s->id,
		.parent = s->parent,
		.cs = rec_proc__callsite(p, s->meta),
		.meta = s->meta,
		.enter_ns = s->enter ? rec_clock__realtime(s->enter, p->clock_offset_ns) : 0,
		.exit_ns = s->exit ? rec_clock__realtime(s->exit, p->clock_offset_ns) : 0,
		.attached_ns = attached(p),
		.read_ns = read_at(p),
		.sched = s->sched.flags ? &s->sched : NULL,
		.clock_offset_ns = p->clock_offset_ns,
	};

	rec_output__span(o, &v);
}

/* The spans of rs that p's threads are in (or died in), outermost first. */
static void open_spans(struct rec_output *o, struct rec_proc *p, const struct rec_rstate *rs)
{
	for (size_t t = 0; t < p->nstacks; t++) {
		const struct rec_thread_stack *ts = &p->stacks[t];
		uint32_t d = ts->depth < REC_MAX_DEPTH ? ts->depth : REC_MAX_DEPTH;

		for (uint32_t i = 0; i < d; i++) {
			const struct rec_frame *f = &ts->frames[i];
			struct rec_kept_span s = {
				.tid = ts->tid,
				.id = f->id,
				.parent = i ? ts->frames[i - 1].id : 0,
				.meta = f->meta,
				.enter = f->enter,
			};

			/* A frame of a dump of version 1 has no id: not a span to show. */
			if (f->recording == rs->key && f->id)
				show_span(o, p, rec_query__origin(p, rs, s.tid), &s);
		}
	}
}

/*
 * The spans of rs (REC_Q_SPANS, REC_Q_CHROME): those kept, by exit, then, if
 * open, those its threads are still in (or died in), outermost first.
 */
static void answer_spans(struct rec_output *o, struct rec_proc *p, const struct rec_rstate *rs,
			 int open)
{
	const struct rec_spans *sp = &rs->spans;
	const struct rec_kept_span **v = sp->n ? malloc(sp->n * sizeof(*v)) : NULL;

	if (v) {
		for (size_t i = 0; i < sp->n; i++)
			v[i] = rec_spans__at(sp, i);
		qsort(v, sp->n, sizeof(*v), by_exit);
		for (size_t i = 0; i < sp->n; i++)
			show_span(o, p, rec_query__origin(p, rs, v[i]->tid), v[i]);
		free(v);
	}
	if (open)
		open_spans(o, p, rs);
}

void rec_query__open_spans(struct rec_output *o, struct rec_proc *p, const struct rec_query *q)
{
	for (struct rec_rstate *rs = p->first; rs; rs = rs->next)
		if (rec_query__match(q, rs))
			open_spans(o, p, rs);
}

void rec_query__follow_event(struct rec_output *o, const struct rec_event_view *v,
			     const struct rec_query *q)
{
	if (rec_query__view_match(q, v))
		rec_output__event(o, v);
}

void rec_query__follow_span(struct rec_output *o, struct rec_proc *p, struct rec_origin from,
			    const struct rec_span_rec *r)
{
	struct rec_kept_span s = rec_spans__of_rec(r);

	/* A follower's span: charged again from the same intervals, still held. */
	rec_offcpu__charge(&p->sched, s.tid, s.enter, s.exit, &s.sched);
	show_span(o, p, from, &s);
}

static int answer_tail(struct rec_output *o, struct rec_proc *p, const struct rec_query *q)
{
	size_t n = q->n > 0 ? (size_t)q->n : 0;

	/* What a dump says of triggers: a snapshot's first, then how it ended, then those pending. */
	if (p->trigger)
		rec_output__trigger(o, p, p->trigger, 0);
	if (!p->alive)
		rec_output__ended(o, p);
	for (size_t i = 0; i < p->ntriggers_pending; i++)
		rec_output__trigger(o, p, &p->triggers_pending[i], 1);
	for (struct rec_rstate *rs = p->first; rs; rs = rs->next) {
		struct tail_walk w = { .o = o, .p = p, .rs = rs, .q = q };

		if (!rec_query__match(q, rs))
			continue;
		rec_output__recording(o, p, rs);
		if (n && filters_events(q)) {
			/* The last n of those the filters select: count them first. */
			rec_spool__tail(rs->spool, 0, count_visit, &w);
			w.skip = w.count > n ? w.count - n : 0;
			rec_spool__tail(rs->spool, 0, tail_visit, &w);
		} else {
			rec_spool__tail(rs->spool, n, tail_visit, &w);
		}
		/* Events numbered after the last one we hold never arrived. */
		if (w.started && rs->produced > w.expect)
			rec_output__gap(o, w.expect, rs->produced - 1);
		/* A timeline is its spans: chrome shows them unasked. */
		/*
		 * A follower gets the open ones once left, or at the end as
		 * open (rec_query__open_spans()): each span once.
		 */
		if (q->flags & (REC_Q_SPANS | REC_Q_CHROME))
			answer_spans(o, p, rs, !(q->flags & REC_Q_FOLLOW) || !p->alive);
	}
	return 0;
}

static int answer_list(struct rec_output *o, struct rec_proc *p, const struct rec_query *q)
{
	o->sched = p->sched.since_ns != 0;
	rec_output__list_header(o);
	for (struct rec_rstate *rs = p->first; rs; rs = rs->next)
		if (rec_query__match(q, rs))
			rec_output__list_row(o, p, rs);
	return 0;
}

/* The spans of recording rs that thread ts is in, innermost first, into s. */
static void stack_of(struct rec_stack_view *s, struct rec_proc *p, const struct rec_rstate *rs,
		     const struct rec_thread_stack *ts)
{
	uint32_t depth = ts->depth < REC_MAX_DEPTH ? ts->depth : REC_MAX_DEPTH;

	*s = (struct rec_stack_view){ .p = p, .rs = rs, .tid = ts->tid };
	/* Ages: now for a live process, at its writing for a dump. */
	s->at_ns = read_at(p);
	s->attached_ns = attached(p);
	for (int i = (int)depth - 1; i >= 0; i--) {
		const struct rec_frame *f = &ts->frames[i];

		if (f->recording != rs->key)
			continue;
		s->frames[s->nframes++] = (struct rec_frame_view){
			.cs = rec_proc__callsite(p, f->meta),
			.meta = f->meta,
			.enter_ns =
				f->enter ? rec_clock__realtime(f->enter, p->clock_offset_ns) : 0,
			/* A frame with an id and no enter was seeded at the attach (version 1: no id). */
			.before_attach = !f->enter && f->id && !(f->flags & REC_FF_UNCERTAIN),
			.uncertain = !!(f->flags & REC_FF_UNCERTAIN),
		};
	}
}

static int answer_stacks(struct rec_output *o, struct rec_proc *p, const struct rec_query *q)
{
	struct rec_stack_view s;

	for (struct rec_rstate *rs = p->first; rs; rs = rs->next) {
		if (!rec_query__match(q, rs))
			continue;
		for (size_t t = 0; t < p->nstacks; t++) {
			const struct rec_thread_stack *ts = &p->stacks[t];
			uint32_t d = ts->depth < REC_MAX_DEPTH ? ts->depth : REC_MAX_DEPTH;
			int in = 0;

			for (uint32_t i = 0; i < d; i++)
				in |= ts->frames[i].recording == rs->key;
			if (!in)
				continue;
			stack_of(&s, p, rs, ts);
			rec_output__stack(o, &s);
		}
	}
	return 0;
}

/*
 * The loss and error counters: per process, its limits and forgotten
 * recordings, then the BPF side's (all processes), and the clients of the
 * recorder-attach that answers, if it does.
 */
static int answer_stats(struct rec_output *o, struct rec_proc *p, const struct rec_query *q,
			const struct rec_output_clients *clients)
{
	struct rec_forgotten *v = NULL;
	ssize_t n = rec_proc__forgotten(p, &v);
	struct rec_stats_view s = {
		.p = p,
		.forgotten = v,
		.nforgotten = n > 0 ? (size_t)n : 0,
		.trigger = p->trigger		  ? p->trigger
			   : p->ntriggers_pending ? &p->triggers_pending[p->ntriggers_pending - 1]
						  : p->live_triggers,
		.clients = clients,
		.verbose = !!(q->flags & REC_Q_VERBOSE),
	};

	rec_output__stats(o, &s);
	free(v);
	return 0;
}

int rec_query__answer_to(struct rec_output *o, struct rec_proc *p, const struct rec_query *q,
			 const struct rec_output_clients *clients,
			 const struct rec_output_kept *kept)
{
	int err;

	o->kept = kept;
	rec_output__begin(o);
	if (q->flags & REC_Q_STATS)
		err = answer_stats(o, p, q, clients);
	else if (q->flags & REC_Q_LIST)
		err = answer_list(o, p, q);
	else if (q->flags & REC_Q_STACKS)
		err = answer_stacks(o, p, q);
	else
		err = answer_tail(o, p, q);
	rec_output__end(o);
	o->kept = NULL;
	return err;
}

int rec_query__answer_live(FILE *out, struct rec_proc *p, const struct rec_query *q,
			   const struct rec_output_clients *clients)
{
	struct rec_output o;

	rec_query__output(&o, out, q);
	return rec_query__answer_to(&o, p, q, clients, NULL);
}

int rec_query__answer(FILE *out, struct rec_proc *p, const struct rec_query *q)
{
	return rec_query__answer_live(out, p, q, NULL);
}
