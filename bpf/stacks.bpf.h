/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * Per-thread span stacks (task storage): seeded from the thread's own chain of
 * spans, pushed and popped by span enters and exits (their probes', or a
 * batch's), each span left written into the ring; the span probes; and the
 * task iterators that dump, seed and verify the stacks of a process.
 */

/*
 * A new span id of task's (NULL: this thread's) stack st: never 0, unique in
 * its process. id: the thread's pid_tgid (or its tid) if the caller has it, else 0.
 */
static __always_inline __u64 new_span_id(struct rec_stack *st, struct task_struct *task, __u64 id)
{
	__u64 tid = id	   ? (__u32)id
		    : task ? (__u32)BPF_CORE_READ(task, pid)
			   : (__u32)bpf_get_current_pid_tgid();

	return tid << 32 | ++st->spans;
}

/*
 * The frames of st just seeded (entered before the attach) by thread tid: ids
 * from here, times unknown. A global function, verified once on its own.
 */
__attribute__((noinline)) int seed_ids(struct rec_stack *st, __u32 tid)
{
	__u32 n;

	if (!st)
		return 0;
	n = st->depth;
	for (int i = 0; i < REC_MAX_DEPTH; i++) {
		if (i >= n)
			break;
		st->frames[i].id = new_span_id(st, NULL, tid);
		st->frames[i].enter = 0;
		st->frames[i].flags = 0;
	}
	return 0;
}

/*
 * The first probe a thread hits after the attach may find it already inside
 * spans. Walk the target's chain of entered spans (struct rec_span.prev), so the
 * stack is right from then on.
 */
static __always_inline void seed_stack_of(struct rec_stack *st, __u64 span,
					  struct task_struct *task)
{
	struct rec_target_span ts;
	__u32 n = 0;

	for (int i = 0; i < REC_MAX_DEPTH; i++) {
		if (!span)
			break;
		/* Another thread's memory (the sleepable iterator), or this thread's. */
		if (task) {
			__u32 magic = 0;

			if (bpf_copy_from_user_task(&ts, sizeof(ts), (const void *)span, task, 0))
				break;
			/* Read through an offset from an ELF file: check that it is a span. */
			if (bpf_copy_from_user_task(&magic, sizeof(magic), (const void *)ts.meta,
						    task, 0) ||
			    magic != REC_CALLSITE_MAGIC)
				break;
		} else if (bpf_probe_read_user(&ts, sizeof(ts), (const void *)span)) {
			break;
		}
		st->frames[i].span = span;
		st->frames[i].meta = ts.meta;
		st->frames[i].recording = ts.recording_key;
		n = i + 1;
		span = ts.prev;
	}
	/* The walk went innermost first; stacks are kept bottom first. */
	for (int i = 0; i < REC_MAX_DEPTH / 2; i++) {
		struct rec_frame tmp;
		__u32 j = n - 1 - i;

		if (i >= n / 2 || j >= REC_MAX_DEPTH)
			break;
		tmp = st->frames[i];
		st->frames[i] = st->frames[j];
		st->frames[j] = tmp;
	}
	st->depth = n;
	seed_ids(st, task ? (__u32)BPF_CORE_READ(task, pid) : (__u32)bpf_get_current_pid_tgid());
}

/*
 * This thread's stack st seeded from its chain of entered spans: a global
 * function, verified once per program rather than at each of the walk's and
 * the probes' calls (its loops read the target at every depth).
 */
__attribute__((noinline)) int seed_stack(struct rec_stack *st, __u64 chain)
{
	if (st)
		seed_stack_of(st, chain, NULL);
	return 0;
}

/*
 * This thread's stack st read again from its chain of spans (chain: its
 * current span), after BPF may have missed some of its enters and exits:
 * records it wrote under another recorder-attach's tracer word, which this
 * one leaves to that one. Every frame is the chain's now, open for certain,
 * its enter time not known (REC_FF_UNCERTAIN); frames the stack held beyond
 * the chain's depth are counted stale. A global function, verified once.
 */
__attribute__((noinline)) int reseed_stack(struct rec_stack *st, __u64 chain)
{
	__u32 old, n;

	if (!st)
		return 0;
	old = st->depth;
	seed_stack_of(st, chain, NULL);
	st->overflow = 0;
	n = st->depth;
	for (int i = 0; i < REC_MAX_DEPTH; i++) {
		if (i >= n)
			break;
		st->frames[i].flags = REC_FF_UNCERTAIN;
	}
	if (old > n)
		count_n(REC_C_STALE_SPANS, old - n);
	count_n(REC_C_UNCERTAIN_SPANS, n);
	return 0;
}

/*
 * task's element of a task-storage map, made if it has none. A thread's first
 * element, of any such map, can be made at the same moment by its own probe and
 * by an iterator on the other CPU: the call that loses fails (-EAGAIN, -EEXIST),
 * and a second one finds what the winner made.
 */
static __always_inline void *task_storage_made(void *map, struct task_struct *task)
{
	void *p = bpf_task_storage_get(map, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!p)
		p = bpf_task_storage_get(map, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	return p;
}

/*
 * The stack of task (NULL: this thread); *seeded says whether it was just read
 * from the target. Only this thread's is seeded here: another's (the
 * collecting iterator) was seeded already, or is not collected.
 */
static __always_inline struct rec_stack *thread_stack_of(struct task_struct *task, __u64 chain,
							 bool *seeded)
{
	struct rec_stack *st;

	*seeded = false;
	st = task_storage_made(&stacks, task ? task : bpf_get_current_task_btf());
	if (!st) {
		count(REC_C_NO_STORAGE);
		return NULL;
	}
	if (!st->seeded && !task) {
		/*
		 * Not before every probe of its process is attached (ready_bits):
		 * a stack only this thread's probes seed stays empty until then.
		 */
		if (!ready_bit(bpf_get_current_pid_tgid() >> 32))
			return NULL;
		st->seeded = 1;
		seed_stack(st, chain);
		*seeded = true;
	}
	return st;
}

static __always_inline struct rec_stack *thread_stack(__u64 chain, bool *seeded)
{
	return thread_stack_of(NULL, chain, seeded);
}

/* stack_remove()'s walks: bpf_loop callbacks, each verified once, not unrolled. */
struct remove_ctx {
	struct rec_stack *st;
	__u64 span;
	__u32 d;  /* the stack's depth */
	__u32 at; /* where span is, + 1; 0 if it is not below the top */
};

/* Frame i (below the top): the innermost of span's so far. */
static long remove_find(__u64 i, void *ctx)
{
	struct remove_ctx *c = ctx;

	if (i >= REC_MAX_DEPTH - 1 || i + 1 >= c->d)
		return 1;
	if (c->st->frames[i].span == c->span)
		c->at = i + 1;
	return 0;
}

/* The j-th frame from the removed one's place: the one above it moves down. */
static long remove_shift(__u64 j, void *ctx)
{
	struct remove_ctx *c = ctx;
	__u64 k = c->at - 1 + j;

	if (k + 1 >= c->d || k >= REC_MAX_DEPTH - 1)
		return 1;
	c->st->frames[k] = c->st->frames[k + 1];
	return 0;
}

/*
 * Exited out of order: removes span from st where it is (its innermost entry
 * below the top), keeping the spans inside it. Returns 0, or -1 if it is not
 * there. A global function, verified once on its own, whose two walks are
 * bpf_loop callbacks: as unrolled loops, where the span was and how far the
 * frames above it move multiplied the states past a million instructions a
 * program, and this one function was three quarters of the verifier's work
 * at an attach.
 */
__attribute__((noinline)) int stack_remove(struct rec_stack *st, __u64 span)
{
	struct remove_ctx c = { .st = st, .span = span };

	if (!st)
		return -1;
	c.d = st->depth;
	if (c.d == 0 || c.d > REC_MAX_DEPTH)
		return -1;
	bpf_loop(REC_MAX_DEPTH - 1, remove_find, &c, 0);
	if (!c.at)
		return -1;
	bpf_loop(REC_MAX_DEPTH - 1, remove_shift, &c, 0);
	st->depth = c.d - 1;
	return 0;
}

/*
 * A span enter of task (NULL: this thread), from its probe or from a batch:
 * span with its callsite meta and recording key; prev is the thread's span
 * before it. id: the thread's pid_tgid if the caller has it, else 0.
 */
static __always_inline void span_enter(struct task_struct *task, __u64 span, __u64 meta, __u64 key,
				       __u64 prev, __u64 now, __u32 tsc, __u64 id)
{
	struct rec_stack *st;
	bool seeded;
	__u32 d;

	st = thread_stack_of(task, prev, &seeded);
	if (!st)
		return;
	d = st->depth;
	if (d >= REC_MAX_DEPTH) {
		st->overflow++;
		count(REC_C_DEPTH_OVERFLOW);
		return;
	}
	st->frames[d].span = span;
	st->frames[d].meta = meta;
	st->frames[d].recording = key;
	st->frames[d].id = new_span_id(st, task, id);
	st->frames[d].enter = now;
	/* REC_HF_TSC or 0, as REC_FF_TSC or 0: no branch. */
	st->frames[d].flags = tsc;
	st->depth = d + 1;
}

/*
 * The span of frame f, left by task (NULL: this thread) at now (the TSC if
 * tsc), into the ring (REC_RT_SPAN). Spans of no recording are not written.
 */
/*
 * Where span is in st below its top (its innermost entry), or REC_MAX_DEPTH:
 * the frame an exit out of order leaves. A global function, verified once.
 */
__attribute__((noinline)) int find_frame(struct rec_stack *st, __u64 span)
{
	__u32 d, at = REC_MAX_DEPTH;

	if (!st)
		return REC_MAX_DEPTH;
	d = st->depth;
	for (int i = 0; i < REC_MAX_DEPTH - 1; i++) {
		if (i + 1 >= d)
			break;
		if (st->frames[i].span == span)
			at = i;
	}
	return at;
}

/*
 * A span of the recording *k that a full ring refused: counted in the
 * recording's counters, tracked or untracked, so that its spans seen = kept
 * + dropped holds in user space (it is in ring_full too). *i: as in
 * tracked_recording_at().
 */
static __always_inline void span_lost(const struct rec_rkey *k, __u32 *i)
{
	struct rec_rval *v = tracked_recording_at(k, i);
	struct rec_untracked *u;
	__u64 one = 1, *n;

	if (v) {
		__sync_fetch_and_add(&v->spans_lost, 1);
		return;
	}
	u = bpf_map_lookup_elem(&untracked, k);
	if (u) {
		__sync_fetch_and_add(&u->spans_lost, 1);
		return;
	}
	/* Neither table holds it: by its key (spans_lost_of), made here if need be. */
	n = bpf_map_lookup_elem(&spans_lost_of, k);
	if (n)
		__sync_fetch_and_add(n, 1);
	else if (bpf_map_update_elem(&spans_lost_of, k, &one, BPF_NOEXIST) == -EEXIST &&
		 (n = bpf_map_lookup_elem(&spans_lost_of, k)))
		__sync_fetch_and_add(n, 1);
}

/*
 * The spans b held that a full ring refused, each counted in its recording.
 * A global function, verified once, with its keys in b, not on the stack: it
 * runs at the bottom of the batch walk's calls, and only when the ring is full.
 */
__attribute__((noinline)) int spans_lost(struct batch_buf *b)
{
	__u32 n;

	if (!b)
		return 0;
	n = b->spans.n;
	b->lost_key.tgid = b->id >> 32;
	b->lost_key.pad = 0;
	for (__u32 i = 0; i < REC_SPANS_MAX && i < n; i++) {
		b->lost_key.key = b->spans.items[i].recording;
		span_lost(&b->lost_key, &b->lost_slot);
	}
	return 0;
}

/*
 * The spans b holds into the ring as one REC_RT_SPANS record; if it has no
 * room, each counts as a full ring and as lost in its recording.
 */
static __always_inline void flush_spans(struct batch_buf *b)
{
	__u32 n = b->nspans;

	if (!n || n > REC_SPANS_MAX)
		return;
	b->nspans = 0;
	b->spans.hdr.type = REC_RT_SPANS;
	b->spans.hdr.size = REC_SPANS_SIZE(n);
	b->spans.hdr.tgid = b->id >> 32;
	b->spans.hdr.tid = (__u32)b->id;
	b->spans.hdr.flags = b->flags;
	b->spans.hdr.time_ns = 0;
	b->spans.n = n;
	if (bpf_ringbuf_output(&events, &b->spans, REC_SPANS_SIZE(n), submit_flags())) {
		count_n(REC_C_RING_FULL, n);
		spans_lost(b);
	}
}

/*
 * The span of frame at of st, left by thread id (its pid_tgid) at now (the
 * TSC if tsc): into the ring (REC_RT_SPAN), or, during batch b's walk, held
 * in b until the batch ends (one REC_RT_SPANS record for up to
 * REC_SPANS_MAX, not a ring record each). Spans of no recording are not
 * written. full: b may hold REC_SPANS_MAX already (then they go first); false
 * if the caller saw that it has room.
 */
static __always_inline int emit_span(struct rec_stack *st, __u32 at, __u64 id, __u64 now, __u32 tsc,
				     struct batch_buf *b, const bool full)
{
	struct rec_span_item *it;
	struct rec_span_rec *r;
	struct rec_frame *f;
	__u64 parent = 0, enter;
	__u32 n;

	if (!st || at >= REC_MAX_DEPTH)
		return 0;
	f = &st->frames[at];
	/* Its parent is the frame below it: the span it was entered in. */
	if (at)
		parent = st->frames[(at - 1) & (REC_MAX_DEPTH - 1)].id;
	if (!f->recording)
		return 0;
	/* Entered on another clock (before the batch path took over): not known. */
	enter = !(f->flags & REC_FF_TSC) == !tsc ? f->enter : 0;
	if (b) {
		if (full && b->nspans >= REC_SPANS_MAX)
			flush_spans(b);
		n = b->nspans & (REC_SPANS_MAX - 1);
		it = &b->spans.items[n];
		it->recording = f->recording;
		it->id = f->id;
		it->parent = parent;
		it->meta = f->meta;
		it->enter = enter;
		it->exit = now;
		b->nspans = n + 1;
		return 0;
	}
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		struct rec_rkey k = { .tgid = id >> 32, .key = f->recording };
		__u32 i;

		count(REC_C_RING_FULL);
		span_lost(&k, &i);
		return 0;
	}
	r->hdr.type = REC_RT_SPAN;
	r->hdr.size = sizeof(*r);
	r->hdr.tgid = id >> 32;
	r->hdr.tid = (__u32)id;
	r->hdr.flags = tsc ? REC_HF_TSC : 0;
	r->hdr.time_ns = now;
	r->recording = f->recording;
	r->id = f->id;
	r->parent = parent;
	r->meta = f->meta;
	r->enter = enter;
	bpf_ringbuf_submit(r, event_submit_flags(st));
	return 0;
}

/*
 * A span exit of task (NULL: this thread) at now (the TSC if tsc); cur is the
 * thread's span after it. b: the batch being walked, NULL for a probe hit.
 */
static __always_inline void span_exit(struct task_struct *task, __u64 span, __u64 cur, __u64 now,
				      __u32 tsc, struct batch_buf *b)
{
	struct rec_stack *st;
	bool seeded;
	__u32 d;

	st = thread_stack_of(task, cur, &seeded);
	if (!st) {
		/*
		 * Before every probe of the process is attached, an exit is of a
		 * span from before the attach too (the thread saw its semaphore
		 * up, and no stack is kept yet): counted, not lost.
		 */
		if (!task && !ready_bit(bpf_get_current_pid_tgid() >> 32))
			count(REC_C_EXIT_BEFORE_ATTACH);
		return;
	}
	/*
	 * The thread's first probe since the attach, an exit. If the span was
	 * entered before the attach on this thread, the chain after its exit is
	 * the span's prev: counted apart from the exits that match nothing (a
	 * span exited on another thread than it was entered on, say). Either way
	 * the stack, seeded from the chain as it is after this exit, is up to date.
	 */
	if (seeded) {
		__u64 prev = 0;

		if (!read_target(&prev, sizeof(prev), span + offsetof(struct rec_target_span, prev),
				 task) &&
		    prev == cur) {
			count(REC_C_EXIT_BEFORE_ATTACH);
			return;
		}
		if (st->depth)
			return;
	}
	/* Enters past the limit were not kept; their exits come first. */
	if (st->overflow) {
		st->overflow--;
		return;
	}
	d = st->depth;
	if (d == 0 || d > REC_MAX_DEPTH) {
		count(REC_C_EXIT_UNMATCHED);
		return;
	}
	if (st->frames[d - 1].span == span) {
		st->depth = d - 1;
		emit_span(st, d - 1, b ? b->id : task_id(task), now, tsc, b, true);
		return;
	}
	/* Written before it goes: its frame, and the one below it, are still there. */
	emit_span(st, find_frame(st, span), b ? b->id : task_id(task), now, tsc, b, true);
	if (stack_remove(st, span))
		count(REC_C_EXIT_UNMATCHED);
	else
		count(REC_C_EXIT_OUT_OF_ORDER);
}

SEC("usdt")
int on_span_enter(struct pt_regs *ctx)
{
	long args[BPF_USDT_MAX_ARG_CNT];

	if (!adopt_process())
		return 0;
	if (read_args(ctx, args, 5))
		return 0;
	span_enter(NULL, args[0], args[1], args[2], args[4], bpf_ktime_get_ns(), 0, 0);
	return 0;
}

SEC("usdt")
int on_span_exit(struct pt_regs *ctx)
{
	long args[BPF_USDT_MAX_ARG_CNT];

	if (!adopt_process())
		return 0;
	if (read_args(ctx, args, 4))
		return 0;
	/* args[3]: the thread's current span after this exit */
	span_exit(NULL, args[0], args[3], bpf_ktime_get_ns(), 0, NULL);
	return 0;
}

/* Which process the stack iterator reports (set by user space before each read). */
__u32 iter_tgid;

/*
 * Threads of iter_tgid inside spans that seed_stacks passed over because they
 * were running (user space zeroes it, runs the iterator, and reads it).
 */
__u32 seed_running;

/* Reports the span stack of every thread of iter_tgid that has one. */
SEC("iter/task")
int dump_stacks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct rec_stack_hdr h;
	struct rec_stack *st;

	if (!task || task->tgid != iter_tgid)
		return 0;
	st = bpf_task_storage_get(&stacks, task, 0, 0);
	if (!st || !st->depth)
		return 0;
	h.tgid = task->tgid;
	h.tid = task->pid;
	h.depth = st->depth;
	h.overflow = st->overflow;
	bpf_seq_write(ctx->meta->seq, &h, sizeof(h));
	bpf_seq_write(ctx->meta->seq, st->frames, sizeof(st->frames));
	return 0;
}

/* Where rec__current is in a thread's TLS, from its fs base; 0 = unknown (set by user space). */
__s64 tls_current_off;

/*
 * Seeds the stack of every thread of iter_tgid that has none yet, from its
 * rec__current (read at fs base + tls_current_off) and the chain of spans
 * behind it. Run once after the attach, so a thread that sleeps inside spans
 * (blocked on a lock, say) shows its stack, and dies with it, without having
 * to hit a probe first.
 */
SEC("iter.s/task")
int seed_stacks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct rec_stack *st;
	__u64 cur = 0;

	if (!task || task->tgid != iter_tgid || !tls_current_off)
		return 0;
	if (bpf_copy_from_user_task(&cur, sizeof(cur),
				    (const void *)(task->thread.fsbase + tls_current_off), task, 0))
		return 0;
	/*
	 * Only threads that are asleep: a running one seeds itself at its next
	 * probe, and writing its stack here could undo a push it makes meanwhile.
	 * One inside spans and not seeded yet is counted: user space tries again.
	 */
	if (task->__state == 0) {
		st = cur ? bpf_task_storage_get(&stacks, task, 0, 0) : NULL;
		if (cur && (!st || !st->seeded))
			__sync_fetch_and_add(&seed_running, 1);
		return 0;
	}
	st = bpf_task_storage_get(&stacks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st || __sync_val_compare_and_swap(&st->seeded, 0, 1) != 0)
		return 0;
	seed_stack_of(st, cur, task);
	return 0;
}

/* A thread's chain of spans as verify_stacks() reads it, innermost first. */
struct chain_read {
	__u64 span[REC_MAX_DEPTH];
	__u64 meta[REC_MAX_DEPTH];
	__u64 recording[REC_MAX_DEPTH];
	__u64 rest; /* the span past the last read: not 0 if the chain is deeper */
	__u32 n;    /* spans read */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct chain_read);
} chain_scratch SEC(".maps");

/* Threads inside spans that verify_stacks() could not check: running, or records pending. */
__u32 verify_skipped;

/*
 * Whether task has records in its batch buffer that BPF has not taken yet:
 * then its chain of spans is ahead of its stack. A buffer that cannot be
 * read counts as pending.
 */
static __always_inline bool batch_pending(struct task_struct *task)
{
	struct rec_tbuf_reg *reg = bpf_task_storage_get(&tbufs, task, 0, 0);
	__u64 gl = 0; /* gen, then len */
	__u32 gen, len, taken;

	if (!reg || !reg->addr)
		return false;
	/* Its stack is set again at its announce: nothing to check before. */
	if (reg->missed)
		return true;
	if (bpf_copy_from_user_task(&gl, sizeof(gl),
				    (const void *)(reg->addr + offsetof(struct rec_tbuf_hdr, gen)),
				    task, 0))
		return true;
	gen = (__u32)gl;
	len = gl >> 32;
	taken = (__u32)(reg->claim >> 32) == gen ? (__u32)reg->claim : 0;
	return len > taken;
}

/*
 * Checks the stack of every thread of iter_tgid that sleeps with no records
 * pending against the thread's own chain of spans (rec__current at fs base +
 * tls_current_off, then prev): the two must agree. Where they part, the
 * stack takes the chain's spans from there on, open for certain and entered
 * at a time not known (REC_FF_UNCERTAIN); what it held that the chain does
 * not is counted stale and dropped. A span BPF missed the exit of is never
 * shown open, and never fires a hung-span rule. A thread that ran while its
 * chain was read (its switch count moved) is left for the next check.
 */
SEC("iter.s/task")
int verify_stacks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct rec_target_span ts;
	struct chain_read *c;
	struct rec_stack *st;
	__u32 zero = 0, n = 0, d, p, flags = REC_FF_UNCERTAIN;
	__u64 cur = 0, sw, tid;

	if (!task || task->tgid != iter_tgid || !tls_current_off)
		return 0;
	/*
	 * Asleep only, before any storage call: a storage call holds a per-CPU
	 * lock that a probe of a thread preempting this sleepable iterator on
	 * its CPU would find taken (its stack then lost, counted no_storage).
	 */
	if (task->__state == 0)
		return 0;
	st = bpf_task_storage_get(&stacks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	c = bpf_map_lookup_elem(&chain_scratch, &zero);
	if (!st || !c)
		return 0;
	c->n = 0;
	sw = task->nvcsw + task->nivcsw;
	if (task->__state == 0 || st->overflow || batch_pending(task))
		goto skip;
	if (bpf_copy_from_user_task(&cur, sizeof(cur),
				    (const void *)(task->thread.fsbase + tls_current_off), task, 0))
		goto skip;
	for (int i = 0; i < REC_MAX_DEPTH; i++) {
		__u32 magic = 0;

		if (!cur)
			break;
		if (bpf_copy_from_user_task(&ts, sizeof(ts), (const void *)cur, task, 0) ||
		    bpf_copy_from_user_task(&magic, sizeof(magic), (const void *)ts.meta, task,
					    0) ||
		    magic != REC_CALLSITE_MAGIC)
			goto skip;
		c->span[i] = cur;
		c->meta[i] = ts.meta;
		c->recording[i] = ts.recording_key;
		c->n = i + 1;
		cur = ts.prev;
	}
	c->rest = cur;
	/*
	 * Read back from the map: whatever depth the walk stopped at, the
	 * verifier goes on from here once, not once per depth.
	 */
	n = c->n;
	/* Deeper than the stack keeps, or it ran meanwhile: not now. */
	if (c->rest || n > REC_MAX_DEPTH || task->__state == 0 || task->nvcsw + task->nivcsw != sw)
		goto skip;
	d = st->depth;
	if (d > REC_MAX_DEPTH)
		return 0;
	/*
	 * Where they part, bottom first (the chain's bottom is its last). The
	 * indexes are masked (REC_MAX_DEPTH is a power of 2): bounds the
	 * verifier sees at once, rather than states it has to follow.
	 */
	for (p = 0; p < REC_MAX_DEPTH; p++)
		if (p >= d || p >= n ||
		    st->frames[p & (REC_MAX_DEPTH - 1)].span !=
			    c->span[(n - 1 - p) & (REC_MAX_DEPTH - 1)])
			break;
	if (p == d && p == n && st->seeded)
		return 0;
	/* Not seeded yet (asleep since the attach or a take-over): read now, not uncertain. */
	if (!st->seeded) {
		if (__sync_val_compare_and_swap(&st->seeded, 0, 1) != 0)
			return 0;
		p = 0;
		flags = 0;
	} else {
		count_n(REC_C_STALE_SPANS, d > p ? d - p : 0);
		count_n(REC_C_UNCERTAIN_SPANS, n > p ? n - p : 0);
	}
	tid = (__u64)task->pid << 32;
	for (int i = 0; i < REC_MAX_DEPTH; i++) {
		__u32 at = i & (REC_MAX_DEPTH - 1), j = (n - 1 - i) & (REC_MAX_DEPTH - 1);
		struct rec_frame *f = &st->frames[at];

		if (i >= n)
			break;
		if (i < p)
			continue;
		f->span = c->span[j];
		f->meta = c->meta[j];
		f->recording = c->recording[j];
		f->id = tid | ++st->spans;
		f->enter = 0;
		f->flags = flags;
	}
	st->depth = n;
	return 0;
skip:
	if (st->depth)
		__sync_fetch_and_add(&verify_skipped, 1);
	return 0;
}
