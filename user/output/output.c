// SPDX-License-Identifier: MIT
/*
 * The backend interface (output.h): each call goes to the backend, unless its
 * format does not show that thing; and the parts of an event that every
 * backend shows alike.
 */
#include <string.h>

#include "model/dump.h"
#include "model/names.h"
#include "output/output.h"

void rec_output__init(struct rec_output *o, FILE *out, const struct rec_output_ops *ops)
{
	o->ops = ops;
	o->out = out;
	o->state = NULL;
	o->salt = 0;
	o->kept = NULL;
	rec_json__init(&o->json, out);
}

void rec_output__begin(struct rec_output *o)
{
	if (o->ops->begin)
		o->ops->begin(o);
}

void rec_output__end(struct rec_output *o)
{
	if (o->ops->end)
		o->ops->end(o);
}

void rec_output__ended(struct rec_output *o, const struct rec_proc *p)
{
	if (o->ops->ended)
		o->ops->ended(o, p);
}

void rec_output__trigger(struct rec_output *o, const struct rec_proc *p,
			 const struct rec_dump_trigger *t, int pending)
{
	if (o->ops->trigger)
		o->ops->trigger(o, p, t, pending);
}

void rec_output__recording(struct rec_output *o, const struct rec_proc *p,
			   const struct rec_rstate *rs)
{
	if (o->ops->recording)
		o->ops->recording(o, p, rs);
}

void rec_output__event(struct rec_output *o, const struct rec_event_view *ev)
{
	if (o->ops->event)
		o->ops->event(o, ev);
}

void rec_output__gap(struct rec_output *o, uint64_t from, uint64_t to)
{
	if (o->ops->gap)
		o->ops->gap(o, from, to);
}

void rec_output__not_sent(struct rec_output *o, const struct rec_proc *p, uint64_t n)
{
	if (o->ops->not_sent)
		o->ops->not_sent(o, p, n);
}

void rec_output__list_header(struct rec_output *o)
{
	if (o->ops->list_header)
		o->ops->list_header(o);
}

void rec_output__list_row(struct rec_output *o, const struct rec_proc *p,
			  const struct rec_rstate *rs)
{
	if (o->ops->list_row)
		o->ops->list_row(o, p, rs);
}

void rec_output__span(struct rec_output *o, const struct rec_span_view *sp)
{
	if (o->ops->span)
		o->ops->span(o, sp);
}

void rec_output__stack(struct rec_output *o, const struct rec_stack_view *s)
{
	if (o->ops->stack)
		o->ops->stack(o, s);
}

void rec_output__stats(struct rec_output *o, const struct rec_stats_view *s)
{
	if (o->ops->stats)
		o->ops->stats(o, s);
}

const char *rec_output__message(const struct rec_event_view *ev, int *field)
{
	uint32_t i;

	*field = -1;
	if (!ev->cs)
		return NULL;
	if (ev->cs->message && ev->cs->message[0])
		return ev->cs->message;
	for (i = 0; i < ev->nfields && i < ev->cs->nfields && i < REC_MAX_FIELDS; i++) {
		const char *name = ev->cs->field_names[i];

		if (ev->values[i].type == REC_TYPE_STR && name && !strcmp(name, "message")) {
			*field = (int)i;
			break;
		}
	}
	return NULL;
}

const char *rec_output__field_name(const struct rec_event_view *ev, uint32_t i, char *buf)
{
	if (ev->cs && i < ev->cs->nfields && i < REC_MAX_FIELDS && ev->cs->field_names[i])
		return ev->cs->field_names[i];
	snprintf(buf, REC_OUTPUT_FIELD_NAME_MAX, "field%u", i);
	return buf;
}

void rec_output__json_value(struct rec_json *w, const struct rec_value *v)
{
	switch (v->type) {
	case REC_TYPE_STR:
		/* The bytes read (the first of a truncated string), else null. */
		if (v->str.status == REC_STR_OK || v->str.status == REC_STR_TRUNCATED)
			rec_json__string(w, v->str.ptr, v->str.len);
		else
			rec_json__null(w);
		break;
	case REC_TYPE_I64:
		rec_json__i64(w, v->i64);
		break;
	case REC_TYPE_U64:
		rec_json__u64(w, v->u64);
		break;
	case REC_TYPE_F64:
		rec_json__f64(w, v->f64);
		break;
	case REC_TYPE_BOOL:
		rec_json__bool(w, v->b);
		break;
	default:
		rec_json__null(w);
	}
}

void rec_output__json_rule_counts(struct rec_json *w, const struct rec_dump_rule_counts *c)
{
	rec_json__begin_object(w);
	rec_json__member_u64(w, "id", c->id);
	rec_json__key(w, "rule");
	rec_json__string(w, c->rule, strnlen(c->rule, sizeof(c->rule) - 1));
	rec_json__member_u64(w, "fired", c->fired);
	rec_json__member_u64(w, "saved", c->saved);
	rec_json__member_u64(w, "cooldown", c->cooldown);
	rec_json__member_u64(w, "capped", c->capped);
	rec_json__member_u64(w, "failed", c->failed);
	rec_json__end_object(w);
}

void rec_output__sched_members(struct rec_json *w, const struct rec_sched_figs *f, int slices)
{
	char buf[24];

	rec_json__member_u64(w, "cpu_ns", f->cpu_ns);
	rec_json__member_u64(w, "blocked_ns", f->blocked_ns);
	rec_json__member_u64(w, "runq_ns", f->runq_ns);
	rec_json__member_u64(w, "switches", f->switches);
	rec_json__key(w, "blocked_by");
	rec_json__begin_object(w);
	for (int i = 0; i < REC_SCHED_TOP && f->top[i].ns; i++)
		rec_json__member_u64(w, rec_names__offcpu_cause(f->top[i].cause, buf, sizeof(buf)),
				     f->top[i].ns);
	if (f->other_ns)
		rec_json__member_u64(w, "other", f->other_ns);
	rec_json__end_object(w);
	if (f->flags & REC_SCHED_PARTIAL)
		rec_json__member_bool(w, "sched_partial", 1);
	if (!slices || !f->nslices)
		return;
	rec_json__key(w, "off_cpu");
	rec_json__begin_array(w);
	for (uint32_t i = 0; i < f->nslices && i < REC_SCHED_SLICES; i++) {
		const struct rec_sched_slice *sl = &f->slices[i];

		rec_json__begin_object(w);
		rec_json__member_u64(w, "off_ns", sl->off);
		rec_json__member_u64(w, "wake_ns", sl->wake);
		rec_json__member_u64(w, "on_ns", sl->on);
		rec_json__member_cstr(w, "cause",
				      rec_names__offcpu_cause(sl->cause, buf, sizeof(buf)));
		rec_json__end_object(w);
	}
	rec_json__end_array(w);
	if (f->slices_omitted)
		rec_json__member_u64(w, "off_cpu_omitted", f->slices_omitted);
}

void rec_output__sched_counts(struct rec_json *w, const struct rec_offcpu *sched)
{
	const struct rec_offcpu_counts *c = &sched->count;

	rec_json__key(w, "sched");
	rec_json__begin_object(w);
	rec_json__member_u64(w, "intervals", c->intervals);
	rec_json__member_u64(w, "lost", c->lost);
	rec_json__member_u64(w, "forgotten", c->forgotten);
	rec_json__member_u64(w, "threads_full", c->threads_full);
	rec_json__member_u64(w, "partial", c->partial);
	rec_json__end_object(w);
}

int rec_output__sched_totals(const struct rec_rstate *rs, struct rec_sched_totals *t)
{
	struct rec_u64map ids = { 0 };
	static char present;
	int err = 0;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < rs->spans.n && !err; i++) {
		const struct rec_kept_span *s = rec_spans__at(&rs->spans, i);

		if (s->id && s->id != UINT64_MAX)
			err = rec_u64map__put(&ids, s->id, &present);
	}
	for (size_t i = 0; i < rs->spans.n && !err; i++) {
		const struct rec_kept_span *s = rec_spans__at(&rs->spans, i);

		if (!s->sched.flags || (s->parent && rec_u64map__get(&ids, s->parent)))
			continue;
		t->spans++;
		t->cpu_ns += s->sched.cpu_ns;
		t->blocked_ns += s->sched.blocked_ns;
		t->runq_ns += s->sched.runq_ns;
	}
	rec_u64map__free(&ids);
	return err;
}
