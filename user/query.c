// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/names.h"
#include "query.h"
#include "render.h"

int rec_query__match(const struct rec_query *q, const struct rec_rstate *rs)
{
	if ((q->flags & REC_Q_HAS_RECORDING) && rs->key != q->recording)
		return 0;
	if ((q->flags & REC_Q_HAS_RECORDER) && rs->recorder != q->recorder)
		return 0;
	if (q->subject[0] && strcmp(q->subject, rs->subject) != 0)
		return 0;
	return 1;
}

int64_t rec_query__realtime(uint64_t mono_ns, int64_t offset_ns)
{
	int64_t t;

	/* Both may come from a hostile dump: saturate instead of overflowing. */
	if (mono_ns > INT64_MAX) {
		/* Only a negative offset brings it back; the sum is then in [0, 2^64). */
		uint64_t sum = mono_ns + (uint64_t)offset_ns;

		return offset_ns >= 0 || sum > INT64_MAX ? INT64_MAX : (int64_t)sum;
	}
	if (__builtin_add_overflow((int64_t)mono_ns, offset_ns, &t))
		return offset_ns > 0 ? INT64_MAX : INT64_MIN;
	return t;
}

void rec_query__event(FILE *out, struct rec_proc *p, const struct rec_rstate *rs,
		      const struct rec_decoded *d, const struct rec_query *q)
{
	struct rec_event_view v = {
		.pid = p->pid,
		.ns_pid = p->ns_pid,
		.tid = d->tid,
		.recording = rs->key,
		.recorder = rs->recorder,
		.subject = rs->subject,
		.seq = d->seq,
		.time_ns = rec_query__realtime(d->time_ns, p->clock_offset_ns),
		.cs = rec_proc__callsite(p, d->meta),
		.meta = d->meta,
		.nfields = d->nfields,
		.values = d->values,
	};

	if (q->flags & REC_Q_JSON)
		rec_render__json(out, &v);
	else
		rec_render__glog(out, &v);
}

struct tail_walk {
	FILE *out;
	struct rec_proc *p;
	const struct rec_rstate *rs;
	const struct rec_query *q;
	uint64_t expect;	/* next seq if nothing was lost */
	int started;
};

static void gap_line(struct tail_walk *w, uint64_t from, uint64_t to)
{
	if (w->q->flags & REC_Q_JSON)
		return;
	fprintf(w->out, "-- %" PRIu64 " event%s lost (seq %" PRIu64 "..%" PRIu64 ") --\n",
		to - from + 1, to == from ? "" : "s", from, to);
}

static int tail_visit(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct tail_walk *w = ctx;
	struct rec_decoded d;

	if (w->started && seq > w->expect)
		gap_line(w, w->expect, seq - 1);
	w->started = 1;
	w->expect = seq + 1;
	if (rec_event__decode(data, len, &d) != 0)
		return 0;
	rec_query__event(w->out, w->p, w->rs, &d, w->q);
	return 0;
}

/* Writes s, which came from the target, escaped; padded with spaces to width columns. */
static void put_target_text(FILE *out, const char *s, size_t width)
{
	for (size_t n = rec_text__escape(out, s, strlen(s)); n < width; n++)
		fputc(' ', out);
}

static void recording_header(FILE *out, const struct rec_proc *p, const struct rec_rstate *rs)
{
	char kbuf[20];

	char ns[32] = "";

	if (p->ns_pid)
		snprintf(ns, sizeof(ns), " (ns pid %d)", (int)p->ns_pid);
	fprintf(out, "==> pid %d%s recording %s <", (int)p->pid, ns,
		rec_key__format(rs->key, kbuf));
	put_target_text(out, rs->subject, 0);
	fprintf(out, "> cap %" PRIu64 ", seen %" PRIu64 ", kept %" PRIu64 ", dropped %" PRIu64
		"%s <==\n", rs->cap, rs->produced, rs->received, rec_rstate__dropped(rs),
		rs->retired ? ", retired" : "");
}

static int answer_tail(FILE *out, struct rec_proc *p, const struct rec_query *q)
{
	size_t n = q->n > 0 ? (size_t)q->n : 0;
	char how[64];

	if (!p->alive && !(q->flags & REC_Q_JSON))
		fprintf(out, "==> pid %d %s <==\n", (int)p->pid,
			rec_names__end(p->end, p->end_code, p->end_core, how, sizeof(how)));

	for (struct rec_rstate *rs = p->first; rs; rs = rs->next) {
		struct tail_walk w = { .out = out, .p = p, .rs = rs, .q = q };

		if (!rec_query__match(q, rs))
			continue;
		if (!(q->flags & REC_Q_JSON))
			recording_header(out, p, rs);
		rec_spool__tail(rs->spool, n, tail_visit, &w);
		/* Events numbered after the last one we hold never arrived. */
		if (w.started && rs->produced > w.expect)
			gap_line(&w, w.expect, rs->produced - 1);
	}
	return 0;
}

static int answer_list(FILE *out, struct rec_proc *p, const struct rec_query *q)
{
	char kbuf[20], rbuf[20];

	if (!(q->flags & REC_Q_JSON))
		fprintf(out, "%-8s %-20s %-20s %-16s %8s %10s %10s %10s %8s %s\n", "PID",
			"RECORDING", "RECORDER", "SUBJECT", "CAP", "SEEN", "KEPT", "DROPPED", "TAIL",
			"STATE");
	for (struct rec_rstate *rs = p->first; rs; rs = rs->next) {
		const char *state = rec_names__recording_state(rs->retired, rs->untracked);

		if (!rec_query__match(q, rs))
			continue;
		rec_key__format(rs->key, kbuf);
		rec_key__format(rs->recorder, rbuf);
		if (q->flags & REC_Q_JSON) {
			fprintf(out, "{\"pid\":%d,\"recording\":\"%s\",\"recorder\":\"%s\",\"subject\":",
				(int)p->pid, kbuf, rbuf);
			rec_json__string(out, rs->subject, strlen(rs->subject));
			fprintf(out, ",\"cap\":%" PRIu64 ",\"seen\":%" PRIu64 ",\"kept\":%" PRIu64
				",\"dropped\":%" PRIu64 ",\"invalid\":%" PRIu64
				",\"tail\":%zu,\"state\":\"%s\"",
				rs->cap, rs->produced, rs->received, rec_rstate__dropped(rs),
				rs->invalid, rec_spool__count(rs->spool), state);
			if (rs->untracked)
				fprintf(out, ",\"untracked\":\"%s\"",
					rec_names__untracked(rs->untracked));
			fputs("}\n", out);
		} else {
			fprintf(out, "%-8d %-20s %-20s ", (int)p->pid, kbuf, rbuf);
			put_target_text(out, rs->subject[0] ? rs->subject : "-", 16);
			fprintf(out, " %8" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
				" %8zu %s\n", rs->cap, rs->produced, rs->received,
				rec_rstate__dropped(rs), rec_spool__count(rs->spool), state);
		}
	}
	return 0;
}

static void frame_json(FILE *out, const struct rec_callsite *cs, uint64_t meta)
{
	char buf[32];

	if (!cs) {
		snprintf(buf, sizeof(buf), "<callsite 0x%" PRIx64 ">", meta);
		fputs("{\"name\":", out);
		rec_json__string(out, buf, strlen(buf));
		fputc('}', out);
		return;
	}
	fputs("{\"name\":", out);
	rec_json__string(out, cs->name, strlen(cs->name));
	fputs(",\"target\":", out);
	rec_json__string(out, cs->target, strlen(cs->target));
	fputs(",\"file\":", out);
	rec_json__string(out, cs->file, strlen(cs->file));
	fprintf(out, ",\"line\":%u}", cs->line);
}

/* One stack: the frames of recording rs on thread ts, leaf first. */
static void stack_of(FILE *out, struct rec_proc *p, const struct rec_rstate *rs,
		     const struct rec_thread_stack *ts, const struct rec_query *q)
{
	char kbuf[20];
	int first = 1;

	rec_key__format(rs->key, kbuf);
	if (q->flags & REC_Q_JSON) {
		fprintf(out, "{\"pid\":%d,\"tid\":%u,\"recording\":\"%s\",\"subject\":",
			(int)p->pid, ts->tid, kbuf);
		rec_json__string(out, rs->subject, strlen(rs->subject));
		fputs(",\"stack\":[", out);
	} else {
		fprintf(out, "pid %d tid %u recording %s <", (int)p->pid, ts->tid, kbuf);
		put_target_text(out, rs->subject, 0);
		fputs(">:\n", out);
	}
	for (int i = (int)ts->depth - 1; i >= 0; i--) {
		const struct rec_frame *f = &ts->frames[i];
		const struct rec_callsite *cs;

		if (f->recording != rs->key)
			continue;
		cs = rec_proc__callsite(p, f->meta);
		if (q->flags & REC_Q_JSON) {
			if (!first)
				fputc(',', out);
			frame_json(out, cs, f->meta);
		} else if (cs) {
			fputs("    ", out);
			put_target_text(out, cs->name, 0);
			if (cs->line) {
				fputs(" (", out);
				put_target_text(out, rec_path__base(cs->file), 0);
				fprintf(out, ":%u)", cs->line);
			}
			fputc('\n', out);
		} else {
			fprintf(out, "    <callsite 0x%" PRIx64 ">\n", (uint64_t)f->meta);
		}
		first = 0;
	}
	if (q->flags & REC_Q_JSON)
		fputs("]}\n", out);
}

static int answer_stacks(FILE *out, struct rec_proc *p, const struct rec_query *q)
{
	for (struct rec_rstate *rs = p->first; rs; rs = rs->next) {
		if (!rec_query__match(q, rs))
			continue;
		for (size_t t = 0; t < p->nstacks; t++) {
			const struct rec_thread_stack *ts = &p->stacks[t];
			uint32_t d = ts->depth < REC_MAX_DEPTH ? ts->depth : REC_MAX_DEPTH;
			int in = 0;

			for (uint32_t i = 0; i < d; i++)
				in |= ts->frames[i].recording == rs->key;
			if (in)
				stack_of(out, p, rs, ts, q);
		}
	}
	return 0;
}

static void stats_limits(FILE *out, const struct rec_proc *p, int json)
{
	if (!json)
		fprintf(out, "limits (OVER: what did not fit; EVENTS: the events of those):\n"
			"    %-24s %10s %10s %10s %12s\n", "LIMIT", "MAX", "USED", "OVER",
			"EVENTS");
	for (int l = 0; l < REC_L_MAX; l++) {
		const struct rec_limit_use *u = &p->use[l];

		if (json) {
			fprintf(out, "%s\"%s\":{\"limit\":%" PRIu64 ",\"used\":%" PRIu64
				",\"over\":%" PRIu64 ",\"events\":%" PRIu64 "}", l ? "," : "",
				rec_names__limit(l), u->limit, u->used, u->over, u->events);
			continue;
		}
		fprintf(out, "    %-24s ", rec_names__limit(l));
		if (u->limit)
			fprintf(out, "%10" PRIu64, u->limit);
		else
			fprintf(out, "%10s", "-");
		fprintf(out, " %10" PRIu64 " %10" PRIu64 " %12" PRIu64 "\n", u->used, u->over,
			u->events);
	}
}

static void stats_forgotten(FILE *out, const struct rec_proc *p, int json)
{
	struct rec_forgotten *v = NULL;
	ssize_t n = rec_proc__forgotten(p, &v);
	char kbuf[20];

	if (!json)
		fputs("recordings forgotten to make room, per recorder:\n", out);
	for (ssize_t i = 0; i < n; i++) {
		if (json)
			fprintf(out, "%s{\"recorder\":\"%s\",\"recordings\":%" PRIu64
				",\"seen\":%" PRIu64 ",\"kept\":%" PRIu64 ",\"dropped\":%" PRIu64
				"}", i ? "," : "", rec_key__format(v[i].recorder, kbuf),
				v[i].recordings, v[i].seen, v[i].kept, v[i].dropped);
		else
			fprintf(out, "    %-8s %-20s recordings %" PRIu64 ", seen %" PRIu64
				", kept %" PRIu64 ", dropped %" PRIu64 "\n",
				v[i].recorder ? "recorder" : "others",
				rec_key__format(v[i].recorder, kbuf),
				v[i].recordings, v[i].seen, v[i].kept, v[i].dropped);
	}
	if (!json && n <= 0)
		fputs("    none\n", out);
	free(v);
}

/*
 * The loss and error counters: per process, its limits, then the BPF side's
 * (all processes).
 */
static int answer_stats(FILE *out, struct rec_proc *p, const struct rec_query *q)
{
	char how[64];
	int json = q->flags & REC_Q_JSON;

	rec_names__end(p->end, p->end_code, p->end_core, how, sizeof(how));
	if (json)
		fprintf(out, "{\"pid\":%d,\"state\":\"%s\",\"malformed\":%" PRIu64
			",\"orphans\":%" PRIu64 ",\"bpf_recordings\":%" PRIu64,
			(int)p->pid, how, p->malformed, p->orphans, p->bpf_recordings);
	else
		fprintf(out, "pid %d: %s\nmalformed records: %" PRIu64 "\norphan events: %" PRIu64
			"\nentries in the BPF recordings table: %" PRIu64 "\n", (int)p->pid, how,
			p->malformed, p->orphans, p->bpf_recordings);
	if (p->dump_omitted_recordings || p->dump_omitted_stacks) {
		if (json)
			fprintf(out, ",\"recordings_omitted\":%" PRIu64
				",\"stacks_omitted\":%" PRIu64, p->dump_omitted_recordings,
				p->dump_omitted_stacks);
		else
			fprintf(out, "left out of the dump: %" PRIu64 " recordings, %" PRIu64
				" stacks\n", p->dump_omitted_recordings, p->dump_omitted_stacks);
	}
	if (json)
		fputs(",\"limits\":{", out);
	stats_limits(out, p, json);
	if (json)
		fputs("},\"forgotten\":[", out);
	stats_forgotten(out, p, json);
	if (json)
		fputs("],\"counters\":{", out);
	else
		fputs("BPF counters (all traced processes):\n", out);
	for (int c = 0; c < REC_C_MAX; c++) {
		if (json)
			fprintf(out, "%s\"%s\":%" PRIu64, c ? "," : "", rec_names__counter(c),
				p->counters[c]);
		else
			fprintf(out, "    %-20s %" PRIu64 "\n", rec_names__counter(c), p->counters[c]);
	}
	if (json)
		fputs("}}\n", out);
	return 0;
}

int rec_query__answer(FILE *out, struct rec_proc *p, const struct rec_query *q)
{
	if (q->flags & REC_Q_STATS)
		return answer_stats(out, p, q);
	if (q->flags & REC_Q_LIST)
		return answer_list(out, p, q);
	if (q->flags & REC_Q_STACKS)
		return answer_stacks(out, p, q);
	return answer_tail(out, p, q);
}
