// SPDX-License-Identifier: MIT
/*
 * The OTLP backend (output.h): each event as one OpenTelemetry log record in
 * the OTLP/JSON encoding, a line each; recorder-tail --otlp wraps them into
 * export requests (otlp.h). 64-bit integers are decimal strings, IDs lower-case
 * hex, severities integers, as OTLP/JSON has them. A recording is one trace:
 * its traceId and spanId come from the recording key and the run's salt. A
 * follower too slow for some events gets a line {"not_sent":N}; the rest of
 * the answers (lists, stacks, stats) are not OTLP and write nothing here.
 *
 * Spans are OTLP spans, a line each, which begin {"traceId": (log records
 * begin {"timeUnixNano":), so that the exporter sends them to /v1/traces: the
 * recording's traceId; spanId and parentSpanId from the process's span IDs
 * and the salt; the span callsite's name; kind INTERNAL (1); thread.id,
 * code.filepath, code.lineno, recorder.target, recorder.subject and
 * recorder.recording. A span still open (exit 0) ends when it was read (now
 * for a live process; for a dump, when it was written: the snapshot's time, or
 * the death for a black box), with recorder.open true; a span entered before the attach (enter 0) starts where
 * it ends (a zero-length span at its exit, or at the read if open too), with
 * recorder.enter_unknown true. A span with no known parent is a root.
 * With --sched a span left has its kernel time (docs/kernel-time.md):
 * recorder.cpu_ns, recorder.blocked_ns, recorder.runq_ns, recorder.switches,
 * recorder.blocked.CAUSE (ns, a system call's name, fault, kernel or other)
 * and recorder.sched_partial true if some intervals were lost.
 *
 * Each log record and span of a recording kept by --otlp-keep says which
 * trigger kept it: recorder.trigger.rule, recorder.trigger.signature_id (12
 * hex digits) and recorder.trigger.signature (trigger.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "model/names.h"
#include "output/output.h"
#include "base/text.h"

/* OTLP SeverityNumber of each level: TRACE 1, DEBUG 5, INFO 9, WARN 13, ERROR 17. */
static int severity(int level)
{
	return level >= REC_LEVEL_TRACE && level <= REC_LEVEL_ERROR ? 1 + 4 * level : 0;
}

/* A 64-bit mix (splitmix64's finalizer): IDs that look random, from key and salt. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void rec_output_otlp__ids(uint64_t key, uint64_t salt, char trace_id[33], char span_id[17])
{
	uint64_t hi = mix(key ^ salt), lo = mix(hi ^ 0x9e3779b97f4a7c15ULL), sp = mix(lo ^ key);

	/* An all-zero ID is invalid in OTLP. */
	snprintf(trace_id, 33, "%016" PRIx64 "%016" PRIx64, hi, lo ? lo : 1);
	snprintf(span_id, 17, "%016" PRIx64, sp ? sp : 1);
}

static void key_open(struct rec_json *w, const char *key)
{
	rec_json__begin_object(w);
	rec_json__member_cstr(w, "key", key);
	rec_json__key(w, "value");
	rec_json__begin_object(w);
}

static void key_close(struct rec_json *w)
{
	rec_json__end_object(w);
	rec_json__end_object(w);
}

static void attr_str(struct rec_json *w, const char *key, const char *s)
{
	key_open(w, key);
	rec_json__member_cstr(w, "stringValue", s);
	key_close(w);
}

static void attr_int(struct rec_json *w, const char *key, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	key_open(w, key);
	rec_json__member_cstr(w, "intValue", buf);
	key_close(w);
}

/* A field as an attribute value: a string that was not read is an empty value. */
static void attr_value(struct rec_json *w, const char *key, const struct rec_value *v)
{
	char buf[32];

	key_open(w, key);
	switch (v->type) {
	case REC_TYPE_STR:
		if (v->str.status == REC_STR_OK || v->str.status == REC_STR_TRUNCATED) {
			rec_json__key(w, "stringValue");
			rec_json__string(w, v->str.ptr, v->str.len);
		}
		break;
	case REC_TYPE_I64:
		snprintf(buf, sizeof(buf), "%" PRId64, v->i64);
		rec_json__member_cstr(w, "intValue", buf);
		break;
	case REC_TYPE_U64:
		/* Above INT64_MAX, an OTLP int cannot hold it: a string. */
		snprintf(buf, sizeof(buf), "%" PRIu64, v->u64);
		rec_json__member_cstr(w, v->u64 > INT64_MAX ? "stringValue" : "intValue", buf);
		break;
	case REC_TYPE_F64:
		if (isfinite(v->f64)) {
			rec_json__key(w, "doubleValue");
			rec_json__f64(w, v->f64);
		} else {
			rec_json__key(w, "stringValue");
			rec_json__f64(w, v->f64);
		}
		break;
	case REC_TYPE_BOOL:
		rec_json__member_bool(w, "boolValue", v->b);
		break;
	default:
		break;
	}
	key_close(w);
}

/* The trigger that kept the recording (--otlp-keep), if one did. */
static void attr_kept(struct rec_json *w, const struct rec_output_kept *k)
{
	char id[24];

	if (!k)
		return;
	attr_str(w, "recorder.trigger.rule", k->rule);
	snprintf(id, sizeof(id), "%012" PRIx64, k->sig_id);
	attr_str(w, "recorder.trigger.signature_id", id);
	attr_str(w, "recorder.trigger.signature", k->sig_text);
}

static void otlp_event(struct rec_output *o, const struct rec_event_view *ev)
{
	char name_buf[REC_OUTPUT_FIELD_NAME_MAX], buf[REC_TEXT_CALLSITE_MAX], t[24], tid[33],
		sid[17], key[24];
	const struct rec_callsite *cs = ev->cs;
	struct rec_json *w = &o->json;
	int level = rec_output__level(ev), msg_field;
	const char *msg = rec_output__message(ev, &msg_field);

	rec_output_otlp__ids(ev->from.recording, o->salt, tid, sid);
	snprintf(t, sizeof(t), "%" PRId64, ev->time_ns);
	rec_json__begin_object(w);
	rec_json__member_cstr(w, "timeUnixNano", t);
	rec_json__member_cstr(w, "observedTimeUnixNano", t);
	rec_json__member_i64(w, "severityNumber", severity(level));
	rec_json__member_cstr(w, "severityText",
			      level >= 0 ? rec_names__level((enum rec_level)level) : "?");
	rec_json__key(w, "body");
	rec_json__begin_object(w);
	rec_json__key(w, "stringValue");
	if (!cs)
		rec_json__cstr(w, rec_text__callsite(ev->meta, buf));
	else if (msg_field >= 0 && (ev->values[msg_field].str.status == REC_STR_OK ||
				    ev->values[msg_field].str.status == REC_STR_TRUNCATED))
		rec_json__string(w, ev->values[msg_field].str.ptr, ev->values[msg_field].str.len);
	else
		rec_json__cstr(w, msg_field >= 0 ? "" : msg);
	rec_json__end_object(w);
	rec_json__key(w, "attributes");
	rec_json__begin_array(w);
	for (uint32_t i = 0; i < ev->nfields; i++)
		if ((int)i != msg_field)
			attr_value(w, rec_output__field_name(ev, i, name_buf), &ev->values[i]);
	attr_str(w, "recorder.subject", ev->from.subject);
	snprintf(key, sizeof(key), "0x%" PRIx64, ev->from.recording);
	attr_str(w, "recorder.recording", key);
	attr_int(w, "recorder.seq", (int64_t)ev->seq);
	attr_str(w, "recorder.target", cs ? cs->target : "?");
	attr_str(w, "code.filepath", cs ? cs->file : "?");
	attr_int(w, "code.lineno", cs ? (int64_t)cs->line : 0);
	attr_int(w, "thread.id", ev->from.tid);
	attr_kept(w, o->kept);
	rec_json__end_array(w);
	rec_json__member_cstr(w, "traceId", tid);
	rec_json__member_cstr(w, "spanId", sid);
	rec_json__end_object(w);
	rec_json__newline(w);
}

/* The OTLP span ID of span id (a process's) under salt: never the recording's, never 0. */
static void span_id(uint64_t id, uint64_t salt, char out[17])
{
	uint64_t v = mix(mix(id ^ salt) ^ 0x5370616e5370616eULL);

	snprintf(out, 17, "%016" PRIx64, v ? v : 2);
}

static void attr_bool(struct rec_json *w, const char *key)
{
	key_open(w, key);
	rec_json__member_bool(w, "boolValue", 1);
	key_close(w);
}

/* A span's kernel time (--sched) as attributes. */
static void sched_attrs(struct rec_json *w, const struct rec_sched_figs *f)
{
	char key[64], buf[24];

	attr_int(w, "recorder.cpu_ns", (int64_t)f->cpu_ns);
	attr_int(w, "recorder.blocked_ns", (int64_t)f->blocked_ns);
	attr_int(w, "recorder.runq_ns", (int64_t)f->runq_ns);
	attr_int(w, "recorder.switches", f->switches);
	for (int i = 0; i < REC_SCHED_TOP && f->top[i].ns; i++) {
		snprintf(key, sizeof(key), "recorder.blocked.%s",
			 rec_names__offcpu_cause(f->top[i].cause, buf, sizeof(buf)));
		attr_int(w, key, (int64_t)f->top[i].ns);
	}
	if (f->other_ns)
		attr_int(w, "recorder.blocked.other", (int64_t)f->other_ns);
	if (f->flags & REC_SCHED_PARTIAL)
		attr_bool(w, "recorder.sched_partial");
}

void rec_output_otlp__span(struct rec_output *o, const struct rec_span_view *sp, int64_t read_ns)
{
	char buf[REC_TEXT_CALLSITE_MAX], tid[33], sid[17], key[24], t[24];
	const struct rec_callsite *cs = sp->cs;
	struct rec_json *w = &o->json;
	/* Open: it ends when it was read. Entered before the attach: it starts at its end. */
	int64_t end = sp->exit_ns ? sp->exit_ns : read_ns;
	int64_t start = sp->enter_ns ? sp->enter_ns : end;

	rec_output_otlp__ids(sp->from.recording, o->salt, tid, sid);
	rec_json__begin_object(w);
	rec_json__member_cstr(w, "traceId", tid);
	span_id(sp->id, o->salt, sid);
	rec_json__member_cstr(w, "spanId", sid);
	if (sp->parent) {
		span_id(sp->parent, o->salt, sid);
		rec_json__member_cstr(w, "parentSpanId", sid);
	}
	rec_json__member_cstr(w, "name", cs ? cs->name : rec_text__callsite(sp->meta, buf));
	rec_json__member_i64(w, "kind", 1); /* SPAN_KIND_INTERNAL */
	snprintf(t, sizeof(t), "%" PRId64, start);
	rec_json__member_cstr(w, "startTimeUnixNano", t);
	snprintf(t, sizeof(t), "%" PRId64, end);
	rec_json__member_cstr(w, "endTimeUnixNano", t);
	rec_json__key(w, "attributes");
	rec_json__begin_array(w);
	attr_int(w, "thread.id", sp->from.tid);
	attr_str(w, "code.filepath", cs ? cs->file : "?");
	attr_int(w, "code.lineno", cs ? (int64_t)cs->line : 0);
	attr_str(w, "recorder.target", cs ? cs->target : "?");
	attr_str(w, "recorder.subject", sp->from.subject);
	snprintf(key, sizeof(key), "0x%" PRIx64, sp->from.recording);
	attr_str(w, "recorder.recording", key);
	if (!sp->exit_ns)
		attr_bool(w, "recorder.open");
	if (!sp->enter_ns)
		attr_bool(w, "recorder.enter_unknown");
	if (sp->sched && sp->exit_ns && sp->enter_ns)
		sched_attrs(w, sp->sched);
	attr_kept(w, o->kept);
	rec_json__end_array(w);
	rec_json__end_object(w);
	rec_json__newline(w);
}

/* An open span ends when it was read: now live, the snapshot's (or death's) time in a dump. */
static void otlp_span(struct rec_output *o, const struct rec_span_view *sp)
{
	struct timespec now;

	if (sp->read_ns) {
		rec_output_otlp__span(o, sp, sp->read_ns);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	rec_output_otlp__span(o, sp, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
}

static void otlp_not_sent(struct rec_output *o, const struct rec_proc *p, uint64_t n)
{
	(void)p;
	rec_json__begin_object(&o->json);
	rec_json__member_u64(&o->json, "not_sent", n);
	rec_json__end_object(&o->json);
	rec_json__newline(&o->json);
}

static void otlp_none(struct rec_output *o)
{
	(void)o;
}

static void otlp_no_proc(struct rec_output *o, const struct rec_proc *p)
{
	(void)o;
	(void)p;
}

static void otlp_no_rs(struct rec_output *o, const struct rec_proc *p, const struct rec_rstate *rs)
{
	(void)o;
	(void)p;
	(void)rs;
}

static void otlp_no_gap(struct rec_output *o, uint64_t from, uint64_t to)
{
	(void)o;
	(void)from;
	(void)to;
}

static void otlp_no_stack(struct rec_output *o, const struct rec_stack_view *s)
{
	(void)o;
	(void)s;
}

static void otlp_no_stats(struct rec_output *o, const struct rec_stats_view *s)
{
	(void)o;
	(void)s;
}

const struct rec_output_ops rec_output_otlp__ops = {
	.begin = otlp_none,
	.end = otlp_none,
	.ended = otlp_no_proc,
	.recording = otlp_no_rs,
	.event = otlp_event,
	.span = otlp_span,
	.gap = otlp_no_gap,
	.not_sent = otlp_not_sent,
	.list_header = otlp_none,
	.list_row = otlp_no_rs,
	.stack = otlp_no_stack,
	.stats = otlp_no_stats,
};
