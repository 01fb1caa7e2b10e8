// SPDX-License-Identifier: MIT
/*
 * The Chrome trace-event backend (output.h): one JSON document per tail,
 * {"traceEvents":[...]}, that ui.perfetto.dev, chrome://tracing and
 * speedscope open. A document cannot be streamed in the order a tail walks
 * (recording by recording), so each event and span is written as JSON at once
 * (the views do not outlive the call) into a buffer, and end sorts and writes
 * them all.
 *
 * What it writes:
 *   - "M" metadata first: process_name per pid ("pid N"), thread_name per
 *     (pid, tid): the subject of the recording when the thread was seen in one
 *     recording only, else "tid N (several recordings)".
 *   - An event is a thread-scoped instant ("ph":"i","s":"t") named by its
 *     message (else its callsite's name), "cat" its target, its fields and
 *     where it came from (subject, recording, seq, level, file, line) in "args".
 *   - A span is a "B" slice at its enter and an "E" at its exit. One still
 *     open (exit 0) ends when it was read (struct rec_span_view's read_ns:
 *     now for a live process, the snapshot's time for a snapshot, the death
 *     for a black box), or, if that is not known, at the last time of the
 *     document; it is named "NAME (open)" (B and E alike: viewers pair them
 *     by name), args.open true. Viewers drop a B with no E: the span a
 *     snapshot was taken for would not be drawn. One entered before the
 *     attach (its enter not known) begins at the attach, args.enter "before
 *     the attach". If the attach's time is not known either (a dump that
 *     predates it), one that was left is an instant at its exit, and one
 *     still open has no time to be shown at: it is counted in
 *     "recorder_spans_open_untimed" beside "traceEvents".
 *   - Timestamps ("ts") are microseconds since the epoch with three decimals
 *     (nanoseconds): 1764820000123456.789.
 *   - With --sched, a span's longest intervals off the CPU (struct
 *     rec_sched_slice) are slices inside it, "cat" "sched", named by cause:
 *     "blocked: futex" from off to wake, then "runq" to on (preempted: runq
 *     only), args.off_cpu true. The same interval kept by a span and by its
 *     parent is drawn once, inside the child.
 * Per (pid, tid) the slices nest: spans are ordered by enter, the longer
 * first at the same enter, so a parent's B comes before its children's, and
 * an E comes before a B at the same time. A span that would end after the span
 * it sits in (not possible for scoped spans of one thread; a damaged input) is
 * cut at that span's end, args.clipped true. An instant at the time of a B is
 * after it, one at the time of an E before it: inside the slice.
 *
 * What could not be held (out of memory) is counted: "recorder_not_shown"
 * beside "traceEvents" says how many events and spans are missing
 * ("recorder_error" if none could be). A follower gets no document: the
 * events sent after a tail (--follow) are not shown.
 */
#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "output/output.h"
#include "base/text.h"

enum item_kind {
	ITEM_INSTANT, /* an event, or a span whose enter is not known */
	ITEM_SPAN,    /* a span with a known enter: a B and an E */
};

/* One event or span of the document, as JSON in the buffer. */
struct item {
	uint32_t pid, tid;
	enum item_kind kind;
	int clipped;
	int off_cpu;   /* a slice of time off the CPU (--sched) */
	int32_t cause; /* its cause (REC_OFF_RUNQ for a runq slice) */
	int64_t ts;    /* an instant's time; a span's enter */
	int64_t exit;  /* a span's exit; one still open: when it was read (0: not known yet) */
	uint64_t id;
	size_t index;		   /* in the order the calls came */
	size_t off, len;	   /* the instant or the B object */
	size_t name_off, name_len; /* a span's name, a JSON string (its E is named too) */
};

/* A (pid, tid) seen: its name comes from the recordings it was seen in. */
struct thread {
	uint32_t pid, tid;
	uint64_t recording;
	int several;
	char subject[REC_SUBJECT_MAX];
};

struct chrome {
	FILE *mem; /* the items' JSON */
	char *buf;
	size_t size;
	struct rec_json w;
	struct item *items;
	size_t n, cap;
	struct thread *threads;
	size_t nthreads, threads_cap;
	size_t last_thread; /* the thread seen last: the next item is mostly of it too */
	uint64_t not_shown;
	uint64_t untimed; /* spans open whose enter is not known: no time to show them at */
};

static void chrome_begin(struct rec_output *o)
{
	struct chrome *c = calloc(1, sizeof(*c));

	if (c) {
		c->mem = open_memstream(&c->buf, &c->size);
		if (!c->mem) {
			free(c);
			c = NULL;
		}
	}
	if (c)
		rec_json__init(&c->w, c->mem);
	o->state = c;
}

/* The thread of from (pid, tid), seen now in its recording; 0, or -1 out of memory. */
static int see_thread(struct chrome *c, const struct rec_origin *from)
{
	struct thread *t;

	for (size_t n = 0; n < c->nthreads; n++) {
		size_t i = (c->last_thread + n) % c->nthreads;

		t = &c->threads[i];
		if (t->pid == from->pid && t->tid == from->tid) {
			t->several |= t->recording != from->recording;
			c->last_thread = i;
			return 0;
		}
	}
	if (c->nthreads == c->threads_cap) {
		size_t cap = c->threads_cap ? 2 * c->threads_cap : 16;
		void *v = realloc(c->threads, cap * sizeof(*c->threads));

		if (!v)
			return -1;
		c->threads = v;
		c->threads_cap = cap;
	}
	c->last_thread = c->nthreads;
	t = &c->threads[c->nthreads++];
	*t = (struct thread){ .pid = from->pid, .tid = from->tid, .recording = from->recording };
	snprintf(t->subject, sizeof(t->subject), "%s", from->subject ? from->subject : "");
	return 0;
}

/* A new item at the end of the buffer, or NULL (counted) out of memory. */
static struct item *new_item(struct chrome *c, const struct rec_origin *from)
{
	struct item *it;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		void *v = realloc(c->items, cap * sizeof(*c->items));

		if (!v)
			goto fail;
		c->items = v;
		c->cap = cap;
	}
	if (see_thread(c, from))
		goto fail;
	it = &c->items[c->n];
	*it = (struct item){ .pid = from->pid, .tid = from->tid, .index = c->n };
	c->n++;
	return it;
fail:
	c->not_shown++;
	return NULL;
}

/* Where the next byte written to the buffer goes. */
static size_t mem_at(struct chrome *c)
{
	long at = ftell(c->mem);

	return at < 0 ? 0 : (size_t)at;
}

/* The members every trace event has: ph, ts, pid, tid. */
static void common(struct rec_json *w, const char *ph, int64_t ts, uint32_t pid, uint32_t tid)
{
	rec_json__member_cstr(w, "ph", ph);
	rec_json__key(w, "ts");
	rec_json__micros(w, ts);
	rec_json__member_u64(w, "pid", pid);
	rec_json__member_u64(w, "tid", tid);
}

static void chrome_event(struct rec_output *o, const struct rec_event_view *ev)
{
	char name_buf[REC_OUTPUT_FIELD_NAME_MAX], buf[REC_TEXT_CALLSITE_MAX];
	const struct rec_callsite *cs = ev->cs;
	struct chrome *c = o->state;
	struct rec_json *w;
	struct item *it;
	const char *msg;
	int msg_field;

	/* Only a tail has a document (begin): nothing to add to after it. */
	if (!c || !(it = new_item(c, &ev->from)))
		return;
	w = &c->w;
	it->kind = ITEM_INSTANT;
	it->ts = ev->time_ns;
	it->off = mem_at(c);
	msg = rec_output__message(ev, &msg_field);
	rec_json__begin_object(w);
	rec_json__key(w, "name");
	if (!cs)
		rec_json__cstr(w, rec_text__callsite(ev->meta, buf));
	else if (msg_field >= 0 && ev->values[msg_field].str.status == REC_STR_OK)
		rec_json__string(w, ev->values[msg_field].str.ptr, ev->values[msg_field].str.len);
	else if (msg && *msg)
		rec_json__cstr(w, msg);
	else
		rec_json__cstr(w, cs->name);
	rec_json__member_cstr(w, "cat", cs ? cs->target : "?");
	common(w, "i", ev->time_ns, ev->from.pid, ev->from.tid);
	rec_json__member_cstr(w, "s", "t");
	rec_json__key(w, "args");
	rec_json__begin_object(w);
	rec_json__member_cstr(w, "subject", ev->from.subject);
	rec_json__member_hex(w, "recording", ev->from.recording);
	rec_json__member_hex(w, "recorder", ev->from.recorder);
	rec_json__member_u64(w, "seq", ev->seq);
	if (ev->from.ns_pid)
		rec_json__member_u64(w, "ns_pid", ev->from.ns_pid);
	rec_json__member_cstr(w, "level",
			      cs ? rec_names__level((enum rec_level)rec_output__level(ev)) : "?");
	rec_json__member_cstr(w, "callsite", cs ? cs->name : "?");
	rec_json__member_cstr(w, "file", cs ? cs->file : "?");
	rec_json__member_u64(w, "line", cs ? cs->line : 0);
	for (uint32_t i = 0; i < ev->nfields; i++) {
		rec_json__key(w, rec_output__field_name(ev, i, name_buf));
		rec_output__json_value(w, &ev->values[i]);
	}
	rec_json__end_object(w);
	rec_json__end_object(w);
	it->len = mem_at(c) - it->off;
}

/* What a span is named by, in buf: its callsite's name, and " (open)" if it is still open. */
static const char *span_name(const struct rec_span_view *sp, char *buf, size_t len)
{
	char addr[REC_TEXT_CALLSITE_MAX];
	const char *name = sp->cs ? sp->cs->name : rec_text__callsite(sp->meta, addr);

	snprintf(buf, len, "%s%s", name, sp->exit_ns ? "" : " (open)");
	return buf;
}

/* A span's name, "cat" and the args that say where it came from; the object stays open. */
static void span_head(struct rec_json *w, const struct rec_span_view *sp, const char *ph,
		      int64_t ts)
{
	char buf[REC_CALLSITE_MAX + 8];

	rec_json__begin_object(w);
	rec_json__member_cstr(w, "name", span_name(sp, buf, sizeof(buf)));
	rec_json__member_cstr(w, "cat", sp->cs ? sp->cs->target : "?");
	common(w, ph, ts, sp->from.pid, sp->from.tid);
	if (ph[0] == 'i')
		rec_json__member_cstr(w, "s", "t");
	rec_json__key(w, "args");
	rec_json__begin_object(w);
	rec_json__member_cstr(w, "subject", sp->from.subject);
	rec_json__member_hex(w, "recording", sp->from.recording);
	rec_json__member_hex(w, "recorder", sp->from.recorder);
	rec_json__member_hex(w, "span", sp->id);
	if (sp->parent)
		rec_json__member_hex(w, "parent", sp->parent);
	if (sp->from.ns_pid)
		rec_json__member_u64(w, "ns_pid", sp->from.ns_pid);
	rec_json__member_cstr(w, "file", sp->cs ? sp->cs->file : "?");
	rec_json__member_u64(w, "line", sp->cs ? sp->cs->line : 0);
}

/* A slice of time sp's thread spent off the CPU, from..to (CLOCK_REALTIME), in sp. */
static void off_cpu_slice(struct chrome *c, const struct rec_span_view *sp, int64_t from,
			  int64_t to, int32_t cause)
{
	char name[48], buf[24];
	struct rec_json *w = &c->w;
	struct item *it;

	if (to <= from || !(it = new_item(c, &sp->from)))
		return;
	if (cause == REC_OFF_RUNQ)
		snprintf(name, sizeof(name), "runq");
	else
		snprintf(name, sizeof(name), "blocked: %s",
			 rec_names__offcpu_cause(cause, buf, sizeof(buf)));
	it->kind = ITEM_SPAN;
	it->off_cpu = 1;
	it->cause = cause;
	it->ts = from;
	it->exit = to;
	it->off = mem_at(c);
	rec_json__begin_object(w);
	rec_json__member_cstr(w, "name", name);
	rec_json__member_cstr(w, "cat", "sched");
	common(w, "B", from, sp->from.pid, sp->from.tid);
	rec_json__key(w, "args");
	rec_json__begin_object(w);
	rec_json__member_bool(w, "off_cpu", true);
	rec_json__member_hex(w, "span", sp->id);
	rec_json__end_object(w);
	rec_json__end_object(w);
	it->len = mem_at(c) - it->off;
	rec_json__init(w, c->mem);
	it->name_off = mem_at(c);
	rec_json__cstr(w, name);
	it->name_len = mem_at(c) - it->name_off;
	rec_json__init(w, c->mem);
}

/* The slices of sp's longest intervals off the CPU (--sched), inside it. */
static void off_cpu_slices(struct chrome *c, const struct rec_span_view *sp)
{
	const struct rec_sched_figs *f = sp->sched;
	int64_t d = sp->clock_offset_ns;

	for (uint32_t i = 0; i < f->nslices && i < REC_SCHED_SLICES; i++) {
		const struct rec_sched_slice *sl = &f->slices[i];
		int32_t cause = sl->cause == REC_OFF_RUNQ ? REC_OFF_KERNEL : sl->cause;

		off_cpu_slice(c, sp, (int64_t)sl->off + d, (int64_t)sl->wake + d, cause);
		off_cpu_slice(c, sp, (int64_t)sl->wake + d, (int64_t)sl->on + d, REC_OFF_RUNQ);
	}
}

static void chrome_span(struct rec_output *o, const struct rec_span_view *sp)
{
	char buf[REC_CALLSITE_MAX + 8];
	struct chrome *c = o->state;
	/* Entered before the attach: shown from the attach, when that is known. */
	int64_t enter = sp->enter_ns ? sp->enter_ns : sp->attached_ns;
	struct rec_json *w;
	struct item *it;

	if (enter && sp->exit_ns && enter > sp->exit_ns)
		enter = sp->exit_ns;
	if (c && !enter && !sp->exit_ns) {
		c->untimed++;
		return;
	}
	if (!c || !(it = new_item(c, &sp->from)))
		return;
	w = &c->w;
	it->id = sp->id;
	it->off = mem_at(c);
	if (!enter) {
		/* Entered before an attach whose time is not known (an older dump). */
		it->kind = ITEM_INSTANT;
		it->ts = sp->exit_ns;
		span_head(w, sp, "i", sp->exit_ns);
		rec_json__member_cstr(w, "enter", "before the attach");
		rec_json__end_object(w);
		rec_json__end_object(w);
		it->len = mem_at(c) - it->off;
		return;
	}
	it->kind = ITEM_SPAN;
	it->ts = enter;
	/* Open: drawn up to when it was read, else to the document's end (chrome_end). */
	it->exit = sp->exit_ns ? sp->exit_ns : sp->read_ns ? sp->read_ns : 0;
	if (it->exit && it->exit < enter)
		it->exit = enter;
	span_head(w, sp, "B", enter);
	if (!sp->enter_ns)
		rec_json__member_cstr(w, "enter", "before the attach");
	if (!sp->exit_ns)
		rec_json__member_bool(w, "open", true);
	rec_json__end_object(w);
	rec_json__end_object(w);
	it->len = mem_at(c) - it->off;
	/* Viewers (speedscope) match an E to its B by name. */
	rec_json__init(w, c->mem);
	it->name_off = mem_at(c);
	rec_json__cstr(w, span_name(sp, buf, sizeof(buf)));
	it->name_len = mem_at(c) - it->name_off;
	rec_json__init(w, c->mem);
	if (sp->sched && sp->exit_ns)
		off_cpu_slices(c, sp);
}

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* By thread, then: instants by time, stably; spans by enter, the longer first, then by id. */
static int by_thread_time(const void *a, const void *b)
{
	const struct item *x = *(const struct item *const *)a, *y = *(const struct item *const *)b;
	int r;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	r = cmp_i64(x->ts, y->ts);
	if (!r && x->kind == ITEM_SPAN) {
		r = -cmp_i64(x->exit, y->exit);
		if (!r)
			r = x->id < y->id ? -1 : x->id > y->id;
	}
	return r ? r : (x->index < y->index ? -1 : x->index > y->index);
}

/* A span's E, at its exit; args.clipped if it was cut (an E's args join its B's). */
static void write_end(struct rec_json *w, const char *buf, const struct item *sp)
{
	rec_json__begin_object(w);
	rec_json__key(w, "name");
	rec_json__value(w, buf + sp->name_off, sp->name_len);
	common(w, "E", sp->exit, sp->pid, sp->tid);
	if (sp->clipped) {
		rec_json__key(w, "args");
		rec_json__begin_object(w);
		rec_json__member_bool(w, "clipped", true);
		rec_json__end_object(w);
	}
	rec_json__end_object(w);
	rec_json__newline(w);
}

/* One item, a line each. */
static void write_item(struct rec_json *w, const char *buf, const struct item *it)
{
	rec_json__value(w, buf + it->off, it->len);
	rec_json__newline(w);
}

/*
 * The items of one thread, items[0..n) (instants first, by time, then spans
 * by enter), in an order that nests, with stack room for all its spans: the
 * spans open, innermost last.
 */
static void write_thread(struct rec_json *w, const char *buf, struct item **items, size_t n,
			 struct item **stack)
{
	size_t spans = 0, i = 0, depth = 0;

	while (spans < n && items[spans]->kind == ITEM_INSTANT)
		spans++;
	for (size_t s = spans; s <= n; s++) {
		struct item *sp = s < n ? items[s] : NULL;

		/* Close the spans that end before this one starts (all, after the last). */
		while (depth) {
			struct item *top = stack[depth - 1];

			if (sp &&
			    !(top->exit < sp->ts || (top->exit == sp->ts && sp->exit > top->exit)))
				break;
			/* The instants up to its exit are inside it. */
			for (; i < spans && items[i]->ts <= top->exit; i++)
				write_item(w, buf, items[i]);
			write_end(w, buf, top);
			depth--;
		}
		if (!sp)
			break;
		/* The instants before it starts are outside it. */
		for (; i < spans && items[i]->ts < sp->ts; i++)
			write_item(w, buf, items[i]);
		if (depth && sp->exit > stack[depth - 1]->exit) {
			/* It would end after the span it starts in: cut at that one's end. */
			sp->exit = stack[depth - 1]->exit;
			sp->clipped = 1;
		}
		write_item(w, buf, sp);
		stack[depth++] = sp;
	}
	for (; i < spans; i++)
		write_item(w, buf, items[i]);
}

/*
 * Leaves out of order[0..n) (sorted) an off-CPU slice that is the same as
 * the one before it on its thread (kept by a span and by its parent alike).
 * Returns how many are left.
 */
static size_t drop_twins(struct item **order, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct item *x = order[i], *y = k ? order[k - 1] : NULL;

		if (y && x->off_cpu && y->off_cpu && x->pid == y->pid && x->tid == y->tid &&
		    x->ts == y->ts && x->exit == y->exit && x->cause == y->cause)
			continue;
		order[k++] = order[i];
	}
	return k;
}

static void write_metadata(struct rec_json *w, const char *name, uint32_t pid, uint32_t tid,
			   const char *value)
{
	rec_json__begin_object(w);
	rec_json__member_cstr(w, "name", name);
	rec_json__member_cstr(w, "ph", "M");
	rec_json__member_u64(w, "pid", pid);
	rec_json__member_u64(w, "tid", tid);
	rec_json__key(w, "args");
	rec_json__begin_object(w);
	rec_json__member_cstr(w, "name", value);
	rec_json__end_object(w);
	rec_json__end_object(w);
	rec_json__newline(w);
}

static int by_pid_tid(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void chrome_free(struct chrome *c)
{
	if (c->mem)
		fclose(c->mem);
	free(c->buf);
	free(c->items);
	free(c->threads);
	free(c);
}

/*
 * The spans still open whose reading time is not known end at the last time
 * of the document (at their enter if that is later): drawn, not dropped.
 */
static void ends_of_open_spans(struct chrome *c)
{
	int64_t last = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct item *it = &c->items[i];

		if (it->ts > last)
			last = it->ts;
		if (it->kind == ITEM_SPAN && it->exit > last)
			last = it->exit;
	}
	for (size_t i = 0; i < c->n; i++) {
		struct item *it = &c->items[i];

		if (it->kind == ITEM_SPAN && !it->exit)
			it->exit = last > it->ts ? last : it->ts;
	}
}

static void chrome_end(struct rec_output *o)
{
	struct rec_json *w = &o->json;
	struct chrome *c = o->state;
	struct item **order = NULL, **stack = NULL;
	char name[REC_SUBJECT_MAX + 64];
	size_t n;

	rec_json__begin_object(w);
	rec_json__key(w, "traceEvents");
	rec_json__begin_array(w);
	rec_json__newline(w);
	if (!c)
		goto done;
	o->state = NULL;
	if (fflush(c->mem) == 0 && c->n) {
		order = malloc(c->n * sizeof(*order));
		stack = malloc(c->n * sizeof(*stack));
	}
	if (c->n && (!order || !stack)) {
		c->not_shown += c->n;
		c->n = 0;
	}
	if (c->nthreads)
		qsort(c->threads, c->nthreads, sizeof(*c->threads), by_pid_tid);
	for (size_t i = 0; i < c->nthreads; i++) {
		const struct thread *t = &c->threads[i];

		if (!i || t->pid != t[-1].pid) {
			snprintf(name, sizeof(name), "pid %u", t->pid);
			write_metadata(w, "process_name", t->pid, t->pid, name);
		}
		if (t->several)
			snprintf(name, sizeof(name), "tid %u (several recordings)", t->tid);
		else
			snprintf(name, sizeof(name), "%s", t->subject);
		write_metadata(w, "thread_name", t->pid, t->tid, name);
	}
	ends_of_open_spans(c);
	for (size_t i = 0; i < c->n; i++)
		order[i] = &c->items[i];
	if (c->n)
		qsort(order, c->n, sizeof(*order), by_thread_time);
	n = drop_twins(order, c->n);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1;
		     j < n && order[j]->pid == order[i]->pid && order[j]->tid == order[i]->tid; j++)
			;
		write_thread(w, c->buf, order + i, j - i, stack);
	}
done:
	rec_json__end_array(w);
	/* Out of memory: what is missing is said, not hidden. */
	if (!c)
		rec_json__member_cstr(w, "recorder_error", "out of memory: nothing could be held");
	else if (c->not_shown)
		rec_json__member_u64(w, "recorder_not_shown", c->not_shown);
	if (c && c->untimed)
		rec_json__member_u64(w, "recorder_spans_open_untimed", c->untimed);
	rec_json__end_object(w);
	rec_json__newline(w);
	free(order);
	free(stack);
	if (c)
		chrome_free(c);
}

const struct rec_output_ops rec_output_chrome__ops = {
	.begin = chrome_begin,
	.end = chrome_end,
	.event = chrome_event,
	.span = chrome_span,
};
