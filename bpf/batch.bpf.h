/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * The batch path (docs/probe-abi.md, "Batches"): the events and span enters
 * and exits a thread writes to its own buffer, taken at its flush, as it dies
 * or execs (process.bpf.h), or by the collecting iterator while it sleeps;
 * walked record by record as their probes would have taken them, and copied
 * into the ring as one record.
 */

/* One batch being taken: what the bpf_loop callback needs. */
struct batch_ctx {
	struct task_struct *task; /* whose buffer, when not the current task's */
	struct batch_buf *buf;	  /* the batch and where the loop is */
	struct rec_stack *st;	  /* this thread's stack, if seeded already: the fast path's */
};

/* The values a recording's probe would have sent, into its batch record r. */
static __always_inline void fill_brec_rec(struct rec_brec_rec *r, const struct rec_rval *v,
					  __u32 untracked)
{
	r->recorder = v->recorder;
	r->cap = v->cap;
	r->seq = v->seq;
	r->dropped = v->dropped;
	r->spans_lost = v->spans_lost;
	r->state = v->state;
	r->untracked = untracked;
}

/*
 * A recording's new, span or free in a batch (struct rec_brec_rec r): what
 * on_recording_new, _span or _free does, with what it would have sent written
 * into r. Returns true if it would have sent one.
 */
static __always_inline bool batch_recording(struct batch_buf *b, struct rec_brec_rec *r)
{
	__u32 tgid, reason = 0;
	struct rec_rval *nv, *v;
	struct rec_untracked *u;
	struct rec_rkey k;
	int err;

	tgid = b->id >> 32;
	nv = &b->room.nv;
	__builtin_memset(nv, 0, sizeof(*nv));
	switch (r->h.kind) {
	case REC_BK_REC_NEW:
		if (r->cap < 2)
			return false;
		nv->recorder = r->recorder;
		nv->cap = r->cap;
		nv->state = REC_RS_LIVE;
		/* Its free comes in this thread's batches too. */
		nv->owner = (__u32)b->id;
		err = create_recording(tgid, r->key, nv);
		if (err == -EEXIST) {
			/* Learnt first from another thread's event: whose it is is known now. */
			v = tracked_recording(tgid, r->key);
			if (v && v->owner == REC_OWNER_UNKNOWN)
				v->owner = (__u32)b->id;
			return false;
		}
		if (err > 0) {
			if (!list_refused(tgid, r->key, nv, err, 0))
				return false;
			reason = err;
		} else if (err) {
			return false;
		}
		fill_brec_rec(r, nv, reason);
		return true;
	case REC_BK_REC_SPAN:
		/*
		 * Known from its new (this thread's, earlier) or an event: one
		 * learnt from neither is told by its next event's (lazily), with
		 * no subject.
		 */
		v = tracked_recording(tgid, r->key);
		if (v && v->state == REC_RS_LIVE) {
			fill_brec_rec(r, v, 0);
			return true;
		}
		/* Untracked: its subject still names it in the list. */
		k.tgid = tgid;
		k.pad = 0;
		k.key = r->key;
		u = bpf_map_lookup_elem(&untracked, &k);
		if (!u)
			return false;
		untracked_values(nv, u, REC_RS_LIVE);
		fill_brec_rec(r, nv, u->reason);
		return true;
	case REC_BK_REC_FREE:
		/*
		 * Not remembered in retired (a hash insert, a third of the walk's
		 * time for a request): its entry, retired, refuses the stragglers
		 * until user space deletes it, and after that an event of it reads
		 * the target's struct, finds it freed, and remembers it then.
		 */
		if (!retire_recording(tgid, r->key, nv, &reason, false))
			return false;
		fill_brec_rec(r, nv, reason);
		return true;
	}
	return false;
}

/* One record of a batch, taken as its probe would have been. Returns 1 to stop. */
static __always_inline long batch_step(struct batch_buf *b, struct task_struct *task)
{
	struct rec_brec *h;
	__u64 *w;
	__u32 off, size, nvals, strbytes;
	struct rec_rval *v;
	bool seeded;
	__u8 *p;

	if (!b)
		return 1;
	off = b->off;
	if (off >= b->end || off >= REC_TBUF_DATA)
		return 1;
	/*
	 * The collecting iterator's walk of a thread that woke meanwhile stops
	 * here: the thread's own flush, which may come at any moment, would walk
	 * its later records into the same stack while this walk still applies
	 * earlier ones (exits out of order, a span entered after its exit, a
	 * phantom). The rest goes back to the thread (take_batch()).
	 */
	if (task && b->defer == DEFER_MAY && thread_ran(task, b)) {
		b->defer = DEFER_STOPPED;
		return 1;
	}
	/* Read in place: buf has room past any offset below REC_TBUF_DATA. */
	p = &b->data[off];
	h = (struct rec_brec *)p;
	w = (__u64 *)(p + sizeof(*h));
	size = h->size;
	if (size < sizeof(*h) || (size & 7) || size > b->end - off)
		goto bad;
	switch (h->kind) {
	case REC_BK_ENTER:
		if (size != sizeof(struct rec_brec_enter))
			goto bad;
		if (!b->drop && off >= b->spans_from)
			span_enter(task, w[0], w[1], w[2], w[3], h->time, b->flags & REC_HF_TSC,
				   b->id);
		break;
	case REC_BK_EXIT:
		if (size != sizeof(struct rec_brec_exit))
			goto bad;
		if (!b->drop && off >= b->spans_from)
			span_exit(task, w[0], w[1], h->time, b->flags & REC_HF_TSC, b);
		break;
	case REC_BK_EVENT:
		nvals = h->nvals;
		strbytes = h->strbytes;
		if (nvals > REC_MAX_FIELDS || strbytes > REC_STR_AREA ||
		    size != REC_BREC_EVENT_SIZE(nvals, strbytes))
			goto bad;
		if (b->drop) {
			/* Numbered, then refused by the ring: dropped, as a probe's would be. */
			if (h->pad == REC_BREC_TAKEN) {
				v = tracked_recording(b->id >> 32, w[2]);
				if (v)
					__sync_fetch_and_add(&v->dropped, 1);
				count(REC_C_RING_FULL);
			}
			break;
		}
		h->pad = 0;
		v = find_recording_of(task, b->id >> 32, w[2], w[4], 0, true, b, &b->room);
		/* Stopped at it (DEFER_STOPPED): b->off stays, the next take starts there. */
		if (!v && b->defer == DEFER_STOPPED)
			return 1;
		if (!v)
			break;
		/* Its free may be pending in its owner's batch: once a batch, ask the target. */
		if (v->owner && v->owner != (__u32)b->id && b->alive_key != w[2]) {
			if (!recording_alive_in(&b->room.tr, task, w[2], w[4])) {
				count(REC_C_RETIRED_EVENTS);
				break;
			}
			b->alive_key = w[2];
		}
		/*
		 * Its stack seeded from the event's span if nothing seeded it yet:
		 * once per batch is enough (the per-event path's event count only
		 * paces its ring check).
		 */
		if (!b->seen) {
			thread_stack_of(task, w[3], &seeded);
			b->seen = 1;
		}
		/* The span slot carries the seq: user space reads it from there. */
		w[3] = __sync_fetch_and_add(&v->seq, 1);
		h->pad = REC_BREC_TAKEN;
		b->taken++;
		break;
	case REC_BK_REC_NEW:
	case REC_BK_REC_SPAN:
	case REC_BK_REC_FREE:
		/* For the loop's callback to call batch_step_rec(): the chain has no room here. */
		return 3;
	default:
		goto bad;
	}
	b->off = off + size;
	return 0;
bad:
	b->bad = 1;
	return 1;
}

/*
 * The recording's record at b->off (batch_step() returned 3 for it): checked,
 * applied (batch_recording()), marked and passed. Returns 0, or 1 to stop. A
 * global function called from the loop's callback itself: under
 * batch_step_slow() the call chain would have no stack to spare.
 */
__attribute__((noinline)) int batch_step_rec(struct batch_buf *b)
{
	struct rec_brec *h;
	__u32 off, size;

	if (!b)
		return 1;
	off = b->off;
	if (off >= b->end || off >= REC_TBUF_DATA)
		return 1;
	h = (struct rec_brec *)&b->data[off];
	size = h->size;
	if ((h->kind != REC_BK_REC_NEW && h->kind != REC_BK_REC_SPAN &&
	     h->kind != REC_BK_REC_FREE) ||
	    size != REC_BREC_REC_SIZE(h->kind) || size > b->end - off) {
		b->bad = 1;
		return 1;
	}
	h->pad = 0;
	/* In the ring's second walk its effect stays; refresh tells user space. */
	if (!b->drop && batch_recording(b, (struct rec_brec_rec *)h)) {
		h->pad = REC_BREC_TAKEN;
		b->taken++;
	}
	b->off = off + size;
	return 0;
}

/*
 * A record of this thread's batch that batch_step_fast() left: verified once
 * on its own (a global function), so that the loop that calls it stays small.
 */
__attribute__((noinline)) int batch_step_slow(struct batch_buf *b)
{
	return batch_step(b, NULL);
}

/*
 * The usual record of this thread's batch, with its stack st (seeded, or
 * NULL): an event of a recording in its key's slot, numbered; a span enter
 * below the depth limit; or the exit of the span on top, into the batch's
 * spans. What span_enter() and span_exit() do in these cases, without their
 * lookups and calls: a span pair costs the walk a third of what it did.
 * Returns 0 when done, 1 to stop, 2 when the record needs batch_step_slow()
 * (which checks it all again).
 */
static __always_inline int batch_step_fast(struct batch_buf *b, struct rec_stack *st)
{
	struct rec_frame *f;
	struct rec_brec *h;
	struct rec_rval *v;
	__u32 off, size, d;
	__u64 *w;

	off = b->off;
	if (off >= b->end || off >= REC_TBUF_DATA)
		return 1;
	if (b->drop)
		return 2;
	h = (struct rec_brec *)&b->data[off];
	w = (__u64 *)(h + 1);
	size = h->size;
	if (size > b->end - off)
		return 2;
	switch (h->kind) {
	case REC_BK_EVENT:
		if (!b->seen || h->nvals > REC_MAX_FIELDS || h->strbytes > REC_STR_AREA ||
		    size != REC_BREC_EVENT_SIZE(h->nvals, h->strbytes))
			return 2;
		v = slot_of(b->id >> 32, w[2]);
		if (!v || v->state != REC_RS_LIVE ||
		    (v->owner && v->owner != (__u32)b->id && b->alive_key != w[2]))
			return 2;
		/* As batch_step: the span slot carries the seq. */
		w[3] = __sync_fetch_and_add(&v->seq, 1);
		h->pad = REC_BREC_TAKEN;
		b->taken++;
		break;
	case REC_BK_ENTER:
		if (!st || size != sizeof(struct rec_brec_enter))
			return 2;
		d = st->depth;
		if (d >= REC_MAX_DEPTH)
			return 2;
		f = &st->frames[d];
		f->span = w[0];
		f->meta = w[1];
		f->recording = w[2];
		f->id = new_span_id(st, NULL, b->id);
		f->enter = h->time;
		/* REC_HF_TSC or 0, as REC_FF_TSC or 0: no branch. */
		f->flags = b->flags & REC_HF_TSC;
		st->depth = d + 1;
		break;
	case REC_BK_EXIT:
		if (!st || size != sizeof(struct rec_brec_exit) || st->overflow ||
		    b->nspans >= REC_SPANS_MAX)
			return 2;
		d = st->depth;
		if (d == 0 || d > REC_MAX_DEPTH || st->frames[d - 1].span != w[0])
			return 2;
		st->depth = d - 1;
		emit_span(st, d - 1, b->id, h->time, b->flags & REC_HF_TSC, b, false);
		break;
	default:
		return 2;
	}
	b->off = off + size;
	return 0;
}

/*
 * Records per bpf_loop callback: the callback is an indirect call, which the
 * kernel's mitigations (retpolines) make cost more than a usual record.
 */
#define BATCH_PER_CALL 16

static long batch_step_current(__u64 i, void *ctx)
{
	struct batch_buf *b = ((struct batch_ctx *)ctx)->buf;
	struct rec_stack *st = ((struct batch_ctx *)ctx)->st;
	int r;

	for (int k = 0; k < BATCH_PER_CALL; k++) {
		r = batch_step_fast(b, st);
		if (r == 2)
			r = batch_step_slow(b);
		if (r == 3)
			r = batch_step_rec(b);
		if (r)
			return 1;
	}
	return 0;
}

static long batch_step_task(__u64 i, void *ctx)
{
	struct batch_ctx *c = ctx;
	long r = batch_step(c->buf, c->task);

	if (r == 3)
		r = batch_step_rec(c->buf);
	return r ? 1 : 0;
}

static __always_inline void walk_batch(struct batch_ctx *c, const bool other)
{
	const __u32 most = REC_TBUF_DATA / sizeof(struct rec_brec_exit) + 1;

	if (other)
		bpf_loop(most, batch_step_task, c, 0);
	else
		bpf_loop(most / BATCH_PER_CALL + 1, batch_step_current, c, 0);
}

/*
 * The walked records of buf into the ring as one REC_RT_BATCH record (the
 * events numbered, the rest skipped by user space). Non-zero if the ring
 * had no room.
 */
static __always_inline long output_batch(struct batch_buf *buf, __u32 start)
{
	__u32 end = buf->off;

	if (end > REC_TBUF_DATA)
		return 0;
	fill_hdr_id(&buf->rec.hdr, REC_RT_BATCH, sizeof(buf->rec) + end, buf->id);
	buf->rec.hdr.flags = buf->flags;
	buf->rec.start = start;
	buf->rec.end = end;
	return bpf_ringbuf_output(&events, &buf->rec, sizeof(buf->rec) + end, submit_flags());
}

/*
 * The head of struct rec_tbuf_hdr, all take_batch() reads of it: the whole
 * header on the stack would leave the walk's call chain too little.
 */
struct tbuf_head {
	__u64 magic;
	__u32 gen;
	__u32 len;
	__u32 clock;
	__u32 tid;
};
_Static_assert(__builtin_offsetof(struct rec_tbuf_hdr, clock) ==
		       __builtin_offsetof(struct tbuf_head, clock),
	       "struct tbuf_head is the head of struct rec_tbuf_hdr");

/*
 * This thread's records at src, n bytes, into buf->data: for a flush whose
 * claim the collecting iterator moved back meanwhile (batch_deferred). A
 * global function: take_batch()'s frame has no stack to spare. Returns 0, or
 * -1 (counted) if they could not be read.
 */
__attribute__((noinline)) int copy_own_batch(struct batch_buf *buf, __u64 src, __u32 n)
{
	if (!buf || n > REC_TBUF_DATA)
		return -1;
	if (bpf_probe_read_user(buf->data, n, (const void *)src)) {
		count(REC_C_BATCH_FAULT);
		return -1;
	}
	return 0;
}

/*
 * This thread's batch, set up in buf to be walked, into the walk queue for
 * the collecting iterator to walk after the records it walks now (take_batch()).
 * A global function: take_batch()'s frame has no stack to spare. Returns 0,
 * or -1 if the queue holds another batch already.
 */
__attribute__((noinline)) int queue_batch(struct batch_buf *buf)
{
	struct walk_queue *q;
	__u32 zero = 0, end;

	q = bpf_map_lookup_elem(&walk_queued, &zero);
	if (!buf || !q)
		return -1;
	end = buf->end;
	if (end > REC_TBUF_DATA || !(__u32)buf->id ||
	    __sync_val_compare_and_swap(&q->tid, 0, (__u32)buf->id) != 0)
		return -1;
	if (bpf_probe_read_kernel(q->data, end, buf->data)) {
		q->tid = 0;
		return -1;
	}
	q->skip = buf->off;
	q->end = end;
	q->flags = buf->flags;
	q->spans_from = buf->spans_from;
	q->id = buf->id;
	return 0;
}

/* The walk queue freed: its batch was walked, or not queued after all. */
__attribute__((noinline)) int unqueue_batch(void)
{
	struct walk_queue *q;
	__u32 zero = 0;

	q = bpf_map_lookup_elem(&walk_queued, &zero);
	if (q)
		q->tid = 0;
	return 0;
}

/*
 * buf set up for a walk of its records from skip to end, of thread id, timed
 * as flags says, their spans left out below from.
 */
static __always_inline void begin_walk(struct batch_buf *buf, __u64 id, __u32 skip, __u32 end,
				       __u32 flags, __u32 from)
{
	buf->id = id;
	buf->off = skip;
	buf->end = end;
	buf->flags = flags;
	buf->bad = 0;
	buf->taken = 0;
	buf->drop = 0;
	/* Spans left out: no stack is looked up, nor seeded from a record's (old) chain. */
	buf->spans_from = from;
	buf->seen = from != 0;
	buf->alive_key = 0;
	buf->nspans = 0;
}

/*
 * The walked records of buf (from skip) sent, its spans with them; if the
 * ring has no room, walked again up to where the walk stopped, counting.
 */
static __always_inline void send_walked(struct batch_ctx *c, struct batch_buf *buf, __u32 skip,
					const bool other)
{
	if (buf->bad)
		count(REC_C_BATCH_BAD);
	flush_spans(buf);
	if (buf->taken && output_batch(buf, skip)) {
		buf->end = buf->off;
		buf->off = skip;
		buf->drop = 1;
		walk_batch(c, other);
	}
}

static long queued_yet(__u64 i, void *ctx)
{
	struct rec_tbuf_reg *reg = *(struct rec_tbuf_reg **)ctx;

	return !reg || *(volatile __u32 *)&reg->walking != WALK_ON;
}

/*
 * The thread's flush claimed the rest of its records while the collecting
 * iterator walked the earlier ones, and queues them (queue_batch()): waited
 * for, a few microseconds while it copies, so that the iterator's walk can
 * look for a recording's free there (freed_later_in_queue()). Not for long:
 * a flush that walks them itself (the queue was taken) never queues them.
 */
static __always_inline void wait_queued(struct rec_tbuf_reg *reg)
{
	bpf_loop(1 << 16, queued_yet, &reg, 0);
}

/*
 * Takes the records of the buffer registered in reg that nobody took yet: a
 * flush, a dying or exec'ing thread (task NULL: the current one, other false),
 * or the collecting iterator (other: task's, a thread asleep). The records are
 * copied first and claimed after (reg->claim, compare and swap): a claim that
 * succeeds proves the copy was of a buffer not yet handed over and emptied.
 * Returns the buffer's generation, or -1 if it could not be read.
 */
static __always_inline long take_batch(struct task_struct *task, struct rec_tbuf_reg *reg,
				       struct batch_buf *buf, __u64 id, const bool other,
				       const bool fast_spans)
{
	struct batch_ctx c = {};
	struct tbuf_head h;
	__u32 start, len, n, skip = 0, from = 0;
	__u64 old, claim;

	/* Before the length is read: thread_ran() compares with it. */
	if (other)
		buf->switches = switches_of(task);
	buf->defer = other ? DEFER_MAY : DEFER_NEVER;
	if (read_target(&h, sizeof(h), reg->addr, task)) {
		count(REC_C_BATCH_FAULT);
		return -1;
	}
	if (h.magic != REC_TBUF_MAGIC) {
		count(REC_C_BATCH_BAD);
		return -1;
	}
	/* Refused whole; the thread empties it all the same, and counts gen up. */
	if (h.len > REC_TBUF_DATA || (h.len & 7) ||
	    (h.clock != REC_BCLOCK_MONO && h.clock != REC_BCLOCK_TSC)) {
		count(REC_C_BATCH_BAD);
		return h.gen;
	}
	len = h.len;
	old = reg->claim;
	if ((old >> 32) != h.gen) {
		/* Handed over already (the thread empties it next), or a new one. */
		if (other)
			return h.gen;
		old = (__u64)h.gen << 32;
		reg->claim = old;
	}
	start = (__u32)old;
	if (start >= len) {
		if (start > len)
			count(REC_C_BATCH_BAD);
		return h.gen;
	}
	n = len - start;
	if (n > REC_TBUF_DATA)
		return h.gen;
	if (read_target(buf->data, n, reg->addr + REC_TBUF_HDR + start, task)) {
		count(REC_C_BATCH_FAULT);
		return h.gen;
	}
	claim = (__u64)h.gen << 32 | len;
	for (int t = 0; t < 3; t++) {
		__u32 got;

		if (__sync_val_compare_and_swap(&reg->claim, old, claim) == old)
			goto take;
		/* The iterator took some meanwhile: the rest are ours. */
		if (other)
			return h.gen;
		old = reg->claim;
		got = (__u32)old;
		if ((old >> 32) != h.gen || got > len) {
			count(REC_C_BATCH_BAD);
			return h.gen;
		}
		if (got < start) {
			/* Or gave some back (batch_deferred): those are ours too, copied now. */
			if (copy_own_batch(buf, reg->addr + REC_TBUF_HDR + got, len - got))
				return h.gen;
			n = len - got;
			start = got;
			skip = 0;
			continue;
		}
		skip = got - start;
	}
	return h.gen;
take:
	c.task = task;
	c.buf = buf;
	/*
	 * The fast path's stack: one seeded already (else the slow path seeds
	 * it). Only for a flush: a dying or exec'ing thread's last batch takes
	 * the slow path, and its program is verified without the fast one's.
	 */
	/* Records whose spans are left out: all (missed), or those before its announce. */
	if (reg->missed)
		from = REC_TBUF_DATA + 1;
	else if ((reg->spans_from >> 32) == h.gen && (__u32)reg->spans_from > start)
		from = (__u32)reg->spans_from - start;
	if (fast_spans && !from) {
		c.st = bpf_task_storage_get(&stacks, bpf_get_current_task_btf(), 0, 0);
		if (c.st && !c.st->seeded)
			c.st = NULL;
	}
	begin_walk(buf, id, skip, n, h.clock == REC_BCLOCK_TSC ? REC_HF_TSC : 0, from);
	/*
	 * The collecting iterator walks this thread's earlier records into its
	 * stack now: these wait for it in the walk queue, to be walked after
	 * them, in order. Not if it is done meanwhile, or the queue is taken.
	 */
	if (!other && reg->walking == WALK_ON && !queue_batch(buf)) {
		if (__sync_val_compare_and_swap(&reg->walking, WALK_ON, WALK_QUEUED) == WALK_ON) {
			count(REC_C_BATCH_QUEUED);
			return h.gen;
		}
		unqueue_batch();
	}
	walk_batch(&c, other);
	/*
	 * Stopped because the thread ran meanwhile (at a record, or at an event
	 * whose recording it may have freed since): the claim goes back there,
	 * for the next take (the thread's flush, or the next collect) to walk the
	 * rest in order. The thread claimed the rest meanwhile: the walk goes on.
	 */
	if (other && buf->defer == DEFER_STOPPED) {
		if (buf->off <= n &&
		    __sync_val_compare_and_swap(&reg->claim, claim,
						(__u64)h.gen << 32 | (start + buf->off)) == claim) {
			count(REC_C_BATCH_DEFERRED);
		} else {
			buf->defer = DEFER_NEVER;
			wait_queued(reg);
			walk_batch(&c, other);
		}
	}
	send_walked(&c, buf, skip, other);
	return h.gen;
}

/*
 * The batch probe: a thread announces its buffer (REC_BATCH_OPEN, with its
 * span chain, read now while it is live) or hands it over full
 * (REC_BATCH_FLUSH).
 */
SEC("usdt")
int on_batch(struct pt_regs *ctx)
{
	struct __bpf_usdt_spec *spec;
	struct rec_tbuf_reg *reg;
	struct batch_buf *buf;
	bool seeded, skipped;
	struct rec_stack *st;
	/* The probe's op and buffer; for an open, then the header's tracer, and gen and len. */
	long a[3];
	long gen;

	if (!adopt_process())
		return 0;
	spec = site_spec(ctx);
	if (read_spec_args(ctx, spec, a, 2))
		return 0;
	reg = task_storage_made(&tbufs, bpf_get_current_task_btf());
	if (!reg) {
		count(REC_C_NO_STORAGE);
		return 0;
	}
	if (a[0] == REC_BATCH_OPEN) {
		/*
		 * A buffer announced again to this recorder-attach holds, of its
		 * current generation, the records written under the one it was
		 * announced to before (its tracer word, still in the header while
		 * this probe runs): that one took them, or went without them, and
		 * they are not this one's to take again. A new buffer (tracer 0)
		 * holds none. Only gen, len and tracer are read: the stack has no
		 * room for the header.
		 */
		a[0] = 0;
		a[2] = 0;
		read_target(&a[2], sizeof(__u64), a[1] + offsetof(struct rec_tbuf_hdr, gen), NULL);
		read_target(&a[0], sizeof(__u32), a[1] + offsetof(struct rec_tbuf_hdr, tracer),
			    NULL);
		skipped = reg->missed;
		/*
		 * Unless this recorder-attach knew the buffer already, and took part
		 * of this generation while another one's word was written (it waited
		 * for the process, and takes it over now): what it took, and only
		 * that, stays taken, and what follows up to here is taken later
		 * with its spans left out (spans_from), as the stack is read from
		 * the chain now.
		 */
		if (reg->addr != (__u64)a[1] || (__u32)(reg->claim >> 32) != (__u32)a[2]) {
			reg->claim = (__u64)(__u32)a[2] << 32 | (a[0] ? (__u64)a[2] >> 32 : 0);
			if (a[0] && (__u64)a[2] >> 32)
				skipped = true;
		} else if (reg->missed) {
			reg->spans_from = (__u64)(__u32)a[2] << 32 | (__u64)a[2] >> 32;
		}
		reg->missed = 0;
		reg->addr = a[1];
		if (spec->arg_cnt >= 3 && !read_arg(ctx, spec, 2, &a[2])) {
			st = thread_stack(a[2], &seeded);
			/*
			 * Records left to another recorder-attach, or taken without
			 * their spans, may hold enters and exits this stack never
			 * saw: it is read again from the chain, which is the
			 * thread's own now.
			 */
			if (st && skipped && !seeded)
				reseed_stack(st, a[2]);
		}
		return 0;
	}
	if (a[0] != REC_BATCH_FLUSH || !a[1]) {
		count(REC_C_BATCH_BAD);
		return 0;
	}
	if (!reg->addr) {
		/*
		 * Announced before this attach, to the recorder-attach this one
		 * waits for: known from its first flush. Announced to another (a
		 * dead one, whose tracer word the process still has after a
		 * restart): its records are that one's, and left, counted.
		 */
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;

		reg->missed = 1;
		if (!bpf_map_lookup_elem(&waiting, &tgid)) {
			count(REC_C_BATCH_FOREIGN);
			return 0;
		}
		/* Its events are taken; its stack waits for its announce (missed). */
		reg->addr = a[1];
		reg->claim = 0;
	} else if (reg->addr != a[1]) {
		/* A thread keeps one buffer for life: a flush of another address is forged. */
		count(REC_C_BATCH_BAD);
		return 0;
	}
	buf = cpu_scratch();
	if (!buf)
		return 0;
	gen = take_batch(NULL, reg, buf, bpf_get_current_pid_tgid(), false, true);
	/* The thread empties the buffer and counts its generation up once this returns. */
	if (gen >= 0)
		reg->claim = (__u64)(gen + 1) << 32;
	return 0;
}

/*
 * The records a thread still has pending as it dies or execs: read while its
 * memory is still mapped (the current task is the one going).
 */
static __always_inline void rescue_batch(struct task_struct *task)
{
	struct rec_tbuf_reg *reg = bpf_task_storage_get(&tbufs, task, 0, 0);
	struct batch_buf *buf;

	if (!reg || !reg->addr)
		return;
	buf = cpu_scratch();
	if (buf)
		take_batch(NULL, reg, buf, bpf_get_current_pid_tgid(), false, false);
	reg->addr = 0;
	reg->claim = 0;
}

/*
 * The batch task flushed while this iterator walked its earlier records
 * (WALK_QUEUED): walked now, after them, and sent as a flush's would be.
 */
static __always_inline void walk_queued_batch(struct task_struct *task, struct batch_buf *buf)
{
	struct batch_ctx c = {};
	struct walk_queue *q;
	__u32 zero = 0, end, skip;

	q = bpf_map_lookup_elem(&walk_queued, &zero);
	if (!q || q->tid != (__u32)BPF_CORE_READ(task, pid))
		return;
	end = q->end;
	skip = q->skip;
	if (end > REC_TBUF_DATA || skip > end || bpf_probe_read_kernel(buf->data, end, q->data))
		return;
	c.task = task;
	c.buf = buf;
	begin_walk(buf, q->id, skip, end, q->flags, q->spans_from);
	/* Taken already: none of it goes back. */
	buf->defer = DEFER_NEVER;
	walk_batch(&c, true);
	send_walked(&c, buf, skip, true);
}

/*
 * Takes what the sleeping threads of iter_tgid have pending in their buffers,
 * so that a read sees every event already emitted. A running thread is left
 * alone: it hands its buffer over itself.
 */
SEC("iter.s/task")
int collect_batches(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct rec_tbuf_reg *reg;
	struct batch_buf *buf;
	struct rec_stack *st;
	__u32 zero = 0;

	if (!task || task->tgid != iter_tgid || task->__state == 0)
		return 0;
	reg = bpf_task_storage_get(&tbufs, task, 0, 0);
	if (!reg || !reg->addr)
		return 0;
	/* Its stack is known (from its buffer's announcement, or seed_stacks), or wait. */
	st = bpf_task_storage_get(&stacks, task, 0, 0);
	if (!st || !st->seeded)
		return 0;
	buf = bpf_map_lookup_elem(&iter_scratch, &zero);
	if (!buf)
		return 0;
	/* A flush meanwhile queues its batch rather than walk it into the same stack. */
	if (__sync_val_compare_and_swap(&reg->walking, WALK_IDLE, WALK_ON) != WALK_IDLE)
		return 0;
	take_batch(task, reg, buf, task_id(task), true, false);
	if (__sync_val_compare_and_swap(&reg->walking, WALK_ON, WALK_IDLE) != WALK_ON) {
		walk_queued_batch(task, buf);
		unqueue_batch();
		reg->walking = WALK_IDLE;
	}
	return 0;
}
