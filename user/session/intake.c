// SPDX-License-Identifier: MIT
/*
 * The ring's records taken into the models of the traced processes
 * (private.h): events, batches and spans, with the targets' TSC stamps in
 * CLOCK_MONOTONIC, each one held against the trigger rules as it comes.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wire/batch.h"
#include "session/private.h"

/*
 * A time of the target's TSC (the batch path's) in CLOCK_MONOTONIC; 0, a time
 * not known, stays 0.
 */
static uint64_t tsc_ns(struct rec_session *s, uint64_t tsc)
{
	if (!tsc)
		return 0;
	if (!s->clock.ready)
		rec_clock__add(&s->clock, rec_clock__read());
	return rec_clock__ns(&s->clock, tsc);
}

/* A record timed by the TSC (REC_HF_TSC, set on the batch path's only): in CLOCK_MONOTONIC. */
static void tsc_to_mono(struct rec_session *s, struct rec_hdr *h)
{
	h->time_ns = tsc_ns(s, h->time_ns);
	h->flags &= ~(uint32_t)REC_HF_TSC;
}

/* The enter times of n frames of a stack that are the TSC (REC_FF_TSC), in CLOCK_MONOTONIC. */
void intake__frames_to_mono(struct rec_session *s, struct rec_frame *f, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < REC_MAX_DEPTH; i++) {
		if (!(f[i].flags & REC_FF_TSC))
			continue;
		f[i].enter = tsc_ns(s, f[i].enter);
		f[i].flags &= ~(uint32_t)REC_FF_TSC;
	}
}

/* A span (a REC_RT_SPAN record's): its times in CLOCK_MONOTONIC, into its recording. */
static void ingest_span(struct rec_session *s, struct traced *t, struct rec_span_rec *r)
{
	if (r->hdr.flags & REC_HF_TSC) {
		r->enter = tsc_ns(s, r->enter);
		tsc_to_mono(s, &r->hdr);
	}
	/*
	 * A recording the BPF table knows and we do not yet, as for an event
	 * (ingested()): older than the attach (learnt from an event), its
	 * announcement lost, or its new in the batch whose spans go into the
	 * ring before it.
	 */
	if (!rec_proc__find(&t->proc, r->recording))
		rec_bpfstate__recover_recording(s->bs, &t->proc, r->recording);
	if (rec_proc__ingest_span(&t->proc, r) == 0 && rec_clients__following(s->clients))
		rec_clients__follow_span(s->clients, t, &t->proc,
					 rec_proc__find(&t->proc, r->recording), r);
	if (t->inc.span_rules && !t->waiting)
		incidents__check_span(s, t, r);
}

/*
 * The spans of a REC_RT_SPANS record (size bytes), each as the REC_RT_SPAN
 * record it stands for; one whose count disagrees with its size is malformed.
 */
static void ingest_spans(struct rec_session *s, struct traced *t, const void *data, size_t size)
{
	struct rec_spans_rec h;
	struct rec_span_item it;
	struct rec_span_rec r;
	uint32_t i;

	if (size < REC_SPANS_SIZE(1)) {
		t->proc.malformed++;
		return;
	}
	memcpy(&h, data, REC_SPANS_SIZE(0));
	if (h.n < 1 || h.n > REC_SPANS_MAX || size != REC_SPANS_SIZE(h.n)) {
		t->proc.malformed++;
		return;
	}
	for (i = 0; i < h.n; i++) {
		memcpy(&it, (const char *)data + REC_SPANS_SIZE(i), sizeof(it));
		r.hdr = h.hdr;
		r.hdr.type = REC_RT_SPAN;
		r.hdr.size = sizeof(r);
		r.hdr.time_ns = it.exit;
		r.recording = it.recording;
		r.id = it.id;
		r.parent = it.parent;
		r.meta = it.meta;
		r.enter = it.enter;
		ingest_span(s, t, &r);
	}
}

/*
 * After an event of t was ingested with err: the followers get it, or, if its
 * recording's announcement was lost (ring full; -ENOENT), whether the BPF
 * table still knows the recording. Returns 1 if it does and the event should
 * be ingested again.
 */
static int ingested(struct rec_session *s, struct traced *t, int err, const struct rec_decoded *d,
		    const struct rec_rstate *rs, int retried, int following)
{
	if (err == -ENOENT && !retried &&
	    rec_bpfstate__recover_recording(s->bs, &t->proc, d->recording) == 0) {
		t->proc.orphans--;
		return 1;
	}
	if (err == 0 && following)
		rec_clients__follow_event(s->clients, t, &t->proc, rs, d, t->proc.norm_len);
	if (err == 0 && t->inc.event_rules && !t->waiting)
		incidents__check_event(s, t, d);
	return 0;
}

/* An event record from the ring. */
static void ingest_event(struct rec_session *s, struct traced *t, const void *data, size_t size)
{
	struct rec_rstate *rs = NULL;
	struct rec_decoded d;
	int err, retried = 0;

	t->proc.single_events++;
	if (t->inc.event_rules && size >= sizeof(struct rec_event_rec))
		rec_incident__prefetch(&t->inc, ((const struct rec_event_rec *)data)->meta);
	do {
		err = rec_proc__ingest_event(&t->proc, data, size, &d, &rs);
	} while (ingested(s, t, err, &d, rs, retried++, rec_clients__following(s->clients)));
}

/*
 * The events of a REC_RT_BATCH ring record, each taken where it lies in the
 * record (user/wire/batch.c): a malformed record ends the batch, counted.
 */
static void ingest_batch(struct rec_session *s, struct traced *t, const void *data, size_t size)
{
	struct rec_batch_iter it;
	struct rec_event_rec ev;
	struct rec_rstate *rs = NULL;
	struct rec_decoded d;
	const char *strings;
	uint32_t area, at;
	/* No client connects while a record is taken: asked once a batch. */
	int n, err, retried, following = rec_clients__following(s->clients);

	if (rec_batch__begin(&it, data, size)) {
		t->proc.malformed++;
		return;
	}
	t->proc.batches++;
	it.enters = t->proc.alive;
	for (at = it.pos; (n = rec_batch__next(&it, &ev, &strings, &area)) > 0; at = it.pos) {
		if (n == REC_BATCH_ENTER) {
			/*
			 * Its callsite read now, while the process lives: a Rust
			 * program's is on its heap and goes with it, and a span
			 * still open at a SIGKILL is named only if it was read.
			 */
			if (it.enter_meta != t->proc.enter_meta) {
				t->proc.enter_meta = it.enter_meta;
				rec_proc__know_callsite(&t->proc, it.enter_meta);
			}
			continue;
		}
		if (n == REC_BATCH_RECORDING) {
			/* A recording's new, span or free, where the thread wrote it. */
			if (it.recording.hdr.flags & REC_HF_TSC)
				tsc_to_mono(s, &it.recording.hdr);
			t->proc.batched_recordings++;
			rec_bpfstate__take_recording(s->bs, &t->proc, &it.recording);
			continue;
		}
		t->proc.batched_events++;
		if (t->inc.event_rules)
			rec_incident__prefetch(&t->inc, ev.meta);
		retried = 0;
		for (;;) {
			if (ev.hdr.flags & REC_HF_TSC)
				tsc_to_mono(s, &ev.hdr);
			err = rec_proc__ingest_parts(&t->proc, &ev, strings, area, &d, &rs);
			if (!ingested(s, t, err, &d, rs, retried++, following))
				break;
			/* Ingesting rewrote ev: read it from the batch again. */
			it.pos = at;
			rec_batch__next(&it, &ev, &strings, &area);
		}
	}
	if (n < 0)
		t->proc.malformed++;
}

/* The ring's consumer: takes one record into its process's model. Always returns 0. */
int intake__on_record(void *ctx, void *data, size_t size)
{
	struct rec_session *s = ctx;
	struct rec_hdr h;
	struct traced *t;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	t = traced__of(s, h.tgid);
	if (!t && s->nbins && !s->closing) {
		struct rec_hello_rec hello;
		int is_hello = h.type == REC_RT_HELLO && size == sizeof(hello);

		if (is_hello)
			memcpy(&hello, data, sizeof(hello));
		t = adopt__process(s, h.tgid, is_hello ? &hello : NULL);
	}
	if (!t) {
		s->foreign++;
		/* Still marked traced in BPF (a process that could not be adopted): no more. */
		if (h.type == REC_RT_EXIT) {
			rec_bpfstate__untrace(s->bs, h.tgid);
			rec_u64map__del(&s->rejected, (uint64_t)h.tgid + 1);
		}
		return 0;
	}
	if (h.size != size) {
		t->proc.malformed++;
		return 0;
	}
	s->record_now_ns = t->inc.rules ? coarse_mono_ns() : 0;
	if (h.type == REC_RT_EVENT) {
		ingest_event(s, t, data, size);
	} else if (h.type == REC_RT_BATCH) {
		ingest_batch(s, t, data, size);
	} else if (h.type == REC_RT_HELLO && size == sizeof(struct rec_hello_rec)) {
		struct rec_hello_rec hello;

		/* Adopted above; or, adopted before, it exec'd: a file no --binary names? */
		memcpy(&hello, data, sizeof(hello));
		if (t->adopted && !adopt__binary_of_hello(s, &hello))
			t->exec_away = 1;
	} else if (h.type == REC_RT_SPAN && size == sizeof(struct rec_span_rec)) {
		struct rec_span_rec r;

		memcpy(&r, data, sizeof(r));
		ingest_span(s, t, &r);
	} else if (h.type == REC_RT_SPANS) {
		ingest_spans(s, t, data, size);
	} else if (h.type == REC_RT_STACK && size == sizeof(struct rec_stack_rec)) {
		struct rec_stack_rec r;

		memcpy(&r, data, sizeof(r));
		intake__frames_to_mono(s, r.frames, r.depth);
		rec_proc__ingest_stack(&t->proc, &r);
	} else if (h.type == REC_RT_EXIT && size == sizeof(struct rec_exit_rec)) {
		struct rec_exit_rec r;

		memcpy(&r, data, sizeof(r));
		rec_proc__ingest_exit(&t->proc, &r);
	} else if (h.type == REC_RT_TRIGGER && size == sizeof(struct rec_trigger_rec)) {
		struct rec_trigger_rec r;

		memcpy(&r, data, sizeof(r));
		if (t->inc.code_rules && !t->waiting)
			incidents__check_code(s, t, &r);
	} else if (h.type == REC_RT_OFFCPU && size == sizeof(struct rec_offcpu_rec)) {
		struct rec_offcpu_rec r;

		memcpy(&r, data, sizeof(r));
		if (rec_offcpu__add(&t->proc.sched, &r) == -EINVAL)
			t->proc.malformed++;
	} else if (h.type == REC_RT_RECORDING && size == sizeof(struct rec_recording_rec)) {
		struct rec_recording_rec r;

		memcpy(&r, data, sizeof(r));
		t->proc.single_recordings++;
		rec_bpfstate__take_recording(s->bs, &t->proc, &r);
	} else {
		t->proc.malformed++;
	}
	s->record_now_ns = 0;
	return 0;
}
