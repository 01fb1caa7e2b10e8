/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * The recordings table: a recording's entry, made at its new or, for one made
 * before the attach, at its first event (find_recording_of(), on both event
 * paths); its counters, in its slot of rslots or in the table; the refused
 * ones (untracked) and their counts; its retirement at its free; and the
 * recording probes (new, span, free).
 */

/*
 * subject is a user pointer to a C string, or 0 when there is none to report;
 * untracked is why the recording has no entry (enum rec_untracked_reason), or 0.
 */
static __always_inline void emit_recording_of(struct task_struct *task, __u64 key,
					      const struct rec_rval *v, __u64 subject,
					      __u32 untracked)
{
	struct rec_recording_rec *r;

	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(REC_C_RING_FULL);
		return;
	}
	fill_hdr_id(&r->hdr, REC_RT_RECORDING, sizeof(*r), task_id(task));
	r->key = key;
	r->recorder = v->recorder;
	r->cap = v->cap;
	r->seq = v->seq;
	r->dropped = v->dropped;
	r->spans_lost = v->spans_lost;
	r->state = v->state;
	r->untracked = untracked;
	r->pad = 0;
	r->has_subject = 0;
	r->subject[0] = '\0';
	if (task) {
		/* No string copy from another task: the subject's array is read whole. */
		if (subject && !read_target(r->subject, sizeof(r->subject), subject, task)) {
			r->subject[sizeof(r->subject) - 1] = '\0';
			r->has_subject = 1;
		} else {
			r->subject[0] = '\0';
		}
	} else if (subject && bpf_probe_read_user_str(r->subject, sizeof(r->subject),
						      (const void *)subject) > 0) {
		r->has_subject = 1;
	}
	bpf_ringbuf_submit(r, submit_flags());
}

static __always_inline void emit_recording(__u64 key, const struct rec_rval *v, __u64 subject,
					   __u32 untracked)
{
	emit_recording_of(NULL, key, v, subject, untracked);
}

/*
 * Adds {tgid, key} to the recordings table with the values in *nv, its
 * counters in the key's slot of rslots if that slot is free. The slot is
 * claimed and filled before the table entry appears, and published for the
 * fast path only after, so no event ever counts in two places. The process
 * must be traced and below its quota of entries. Returns 0 if this call added
 * the entry (the caller announces it), -EEXIST if it was there already, or else
 * why it was refused (enum rec_untracked_reason, a positive number).
 */
static __always_inline int create_recording(__u32 tgid, __u64 key, struct rec_rval *nv)
{
	struct rec_rkey k = { .tgid = tgid, .key = key };
	__u32 i = key & (REC_RSLOTS - 1);
	struct rec_rslot *sl = bpf_map_lookup_elem(&rslots, &i);
	struct rec_pstat *ps = bpf_map_lookup_elem(&traced, &tgid);
	__u64 *rel = bpf_map_lookup_elem(&released, &tgid);
	int err;

	/* Not traced (the traced table is full): nobody would ever forget its entries. */
	if (!ps)
		return REC_UT_TABLE_FULL;
	/*
	 * Counted first, so that two CPUs cannot both take the last place. An
	 * entry counts until user space deletes it, retired or not: a process
	 * that churns recordings faster than they are read cannot take more.
	 */
	if (__sync_fetch_and_add(&ps->created, 1) - (rel ? *rel : 0) >= max_per_process) {
		__sync_fetch_and_sub(&ps->created, 1);
		return REC_UT_OVER_QUOTA;
	}
	nv->slot = 0;
	if (sl && __sync_val_compare_and_swap(&sl->k.tgid, 0, tgid) == 0) {
		sl->v = *nv;
		sl->v.slot = i + 1;
		nv->slot = i + 1;
	} else {
		sl = NULL;
	}
	err = bpf_map_update_elem(&recordings, &k, nv, BPF_NOEXIST);
	if (err) {
		__sync_fetch_and_sub(&ps->created, 1);
		if (sl) {
			/* Nobody saw this slot; give it back. */
			__builtin_memset(&sl->v, 0, sizeof(sl->v));
			__sync_lock_test_and_set(&sl->k.tgid, 0);
		}
		/* Lost a race to add it, or no room left (-E2BIG, -ENOMEM). */
		return err == -EEXIST ? -EEXIST : REC_UT_TABLE_FULL;
	}
	if (sl)
		__sync_lock_test_and_set(&sl->k.key, key);
	return 0;
}

/* Its process's count for a recording that was refused (reason), with events of it. */
static __always_inline void count_refused(__u32 tgid, __u32 reason, bool recording, __u64 events)
{
	struct rec_pstat *ps = bpf_map_lookup_elem(&traced, &tgid);

	if (!ps)
		return;
	if (reason == REC_UT_OVER_QUOTA) {
		if (recording)
			__sync_fetch_and_add(&ps->over_quota, 1);
		__sync_fetch_and_add(&ps->over_quota_events, events);
	} else {
		if (recording)
			__sync_fetch_and_add(&ps->table_full, 1);
		__sync_fetch_and_add(&ps->table_full_events, events);
	}
}

/* An event of the untracked recording u: counted, and lost. */
static __always_inline void count_untracked_event(__u32 tgid, struct rec_untracked *u)
{
	__sync_fetch_and_add(&u->seen, 1);
	count(REC_C_UNTRACKED_EVENTS);
	count_refused(tgid, u->reason, false, 1);
}

/*
 * The recording {tgid, key} of nv was refused an entry for reason: list it as
 * untracked (once, announced with its subject if subject is not 0) and count
 * it, with events (0 or 1) of its events. A recording that cannot be listed
 * either (the untracked table is full) is counted again at its next event.
 */
static __always_inline bool list_refused(__u32 tgid, __u64 key, const struct rec_rval *nv,
					 __u32 reason, __u64 events)
{
	struct rec_rkey k = { .tgid = tgid, .key = key };
	struct rec_untracked u = {
		.recorder = nv->recorder,
		.cap = nv->cap,
		.seen = events,
		.reason = reason,
	};
	bool listed = bpf_map_update_elem(&untracked, &k, &u, BPF_NOEXIST) == 0;

	count(reason == REC_UT_OVER_QUOTA ? REC_C_OVER_QUOTA : REC_C_TABLE_FULL);
	if (events)
		count(REC_C_UNTRACKED_EVENTS);
	count_refused(tgid, reason, listed, events);
	return listed;
}

static __always_inline void refuse_recording(struct task_struct *task, __u32 tgid, __u64 key,
					     const struct rec_rval *nv, __u32 reason, __u64 subject,
					     __u64 events)
{
	struct rec_rval a = { .recorder = nv->recorder,
			      .cap = nv->cap,
			      .seq = events,
			      .dropped = events,
			      .state = REC_RS_LIVE };

	if (list_refused(tgid, key, nv, reason, events))
		emit_recording_of(task, key, &a, subject, reason);
}

/*
 * The slot lookups take the slot index through i, the caller's: its stack,
 * or map memory where the stack is short (spans_lost()).
 */

/* The counters in key's slot of rslots, if the slot holds key: the usual lookup. */
static __always_inline struct rec_rval *slot_at(__u32 tgid, __u64 key, __u32 *i)
{
	struct rec_rslot *sl;

	*i = key & (REC_RSLOTS - 1);
	sl = bpf_map_lookup_elem(&rslots, i);
	if (sl && sl->k.key == key && sl->k.tgid == tgid)
		return &sl->v;
	return NULL;
}

static __always_inline struct rec_rval *slot_of(__u32 tgid, __u64 key)
{
	__u32 i;

	return slot_at(tgid, key, &i);
}

/* The counters of table entry v: its own, or its slot's. NULL if the slot is not its. */
static __always_inline struct rec_rval *counters_at(__u32 tgid, struct rec_rval *v, __u32 *i)
{
	struct rec_rslot *sl;

	if (!v->slot)
		return v;
	*i = v->slot - 1;
	sl = bpf_map_lookup_elem(&rslots, i);
	if (!sl || sl->k.tgid != tgid)
		return NULL;
	return &sl->v;
}

static __always_inline struct rec_rval *counters_of(__u32 tgid, struct rec_rval *v)
{
	__u32 i;

	return counters_at(tgid, v, &i);
}

/* As tracked_recording(), for the key *k; *i as in slot_at(). */
static __always_inline struct rec_rval *tracked_recording_at(const struct rec_rkey *k, __u32 *i)
{
	struct rec_rval *v = slot_at(k->tgid, k->key, i);

	if (v)
		return v;
	v = bpf_map_lookup_elem(&recordings, k);
	return v ? counters_at(k->tgid, v, i) : NULL;
}

/*
 * A tracked recording's counters, the ones find_recording_of() numbered
 * from, if it has them; counts nothing.
 */
static __always_inline struct rec_rval *tracked_recording(__u32 tgid, __u64 key)
{
	struct rec_rkey k = { .tgid = tgid, .key = key };
	__u32 i;

	return tracked_recording_at(&k, &i);
}

/*
 * One record of a look ahead for b->ahead_key's free, at b->ahead_off of
 * data (end bytes of records, with room for a whole record past any offset
 * below REC_TBUF_DATA - sizeof(struct rec_brec_rec)). Returns 1 to stop.
 */
static __always_inline long free_ahead_in(struct batch_buf *b, __u8 *data, __u32 end)
{
	struct rec_brec_rec *r;
	__u32 off, size;

	off = b->ahead_off;
	/* No free starts past this: the record is whole in data. */
	if (off >= end || off > REC_TBUF_DATA - sizeof(*r))
		return 1;
	r = (struct rec_brec_rec *)&data[off];
	size = r->h.size;
	if (size < sizeof(r->h) || (size & 7) || size > end - off)
		return 1;
	if (r->h.kind == REC_BK_REC_FREE && size == REC_BREC_REC_SIZE(REC_BK_REC_FREE) &&
	    r->key == b->ahead_key) {
		b->ahead_recorder = r->recorder;
		b->ahead_cap = r->cap;
		b->ahead_found = r->cap >= 2;
		return 1;
	}
	b->ahead_off = off + size;
	return 0;
}

/* One record of freed_later_in_batch()'s look ahead. Returns 1 to stop. */
static long free_ahead_step(__u64 i, void *ctx)
{
	struct batch_buf *b = *(struct batch_buf **)ctx;

	return b ? free_ahead_in(b, b->data, b->end) : 1;
}

/*
 * Whether the rest of batch b, after the record at b->off, frees the
 * recording key: then the record at b->off was written while it was live.
 * Fills b->ahead_recorder and b->ahead_cap from the free. Only for a
 * recording that no table knows and whose struct the target has freed by
 * now: one in flight at the attach, made before it and freed after it. A
 * global function, verified once.
 */
__attribute__((noinline)) int freed_later_in_batch(struct batch_buf *b, __u64 key)
{
	__u32 off;

	if (!b)
		return 0;
	off = b->off;
	if (off >= REC_TBUF_DATA)
		return 0;
	b->ahead_off = off + ((struct rec_brec *)&b->data[off])->size;
	b->ahead_key = key;
	b->ahead_found = 0;
	/* The loop's context is on the stack: a pointer to the batch. */
	bpf_loop(REC_TBUF_DATA / sizeof(struct rec_brec_exit), free_ahead_step, &b, 0);
	return b->ahead_found;
}

/* freed_later_in_queue()'s loop: the batch whose look ahead it goes on with, and the queue. */
struct ahead_queue {
	struct batch_buf *b;
	struct walk_queue *q;
};

/* One record of the walk queue in freed_later_in_queue()'s look ahead. Returns 1 to stop. */
static long free_queued_step(__u64 i, void *ctx)
{
	struct ahead_queue *c = ctx;
	struct batch_buf *b = c->b;
	struct walk_queue *q = c->q;

	return b && q ? free_ahead_in(b, q->data, q->end) : 1;
}

/*
 * As freed_later_in_batch(), in the records that follow batch b in the walk
 * queue: the thread's flush took them while the collecting iterator walked b,
 * and queued them for it (take_batch() waited for that). Only the iterator's,
 * with the queue its thread's.
 */
__attribute__((noinline)) int freed_later_in_queue(struct batch_buf *b, __u64 key)
{
	struct ahead_queue c = {};
	__u32 zero = 0;

	if (!b)
		return 0;
	c.b = b;
	c.q = bpf_map_lookup_elem(&walk_queued, &zero);
	if (!c.q || c.q->tid != (__u32)b->id)
		return 0;
	b->ahead_off = c.q->skip;
	b->ahead_key = key;
	b->ahead_found = 0;
	bpf_loop(REC_TBUF_DATA / sizeof(struct rec_brec_exit), free_queued_step, &c, 0);
	return b->ahead_found;
}

/* task's context switches, voluntary and not: it ran meanwhile if they changed. */
static __always_inline __u64 switches_of(struct task_struct *task)
{
	return BPF_CORE_READ(task, nvcsw) + BPF_CORE_READ(task, nivcsw);
}

/*
 * Whether task, whose batch b the collecting iterator takes, has run (or is
 * running, or is about to) since its buffer's length was read. A thread
 * writes its buffer only while it runs, and one that ran since is running
 * still, or has been switched out since.
 */
static __always_inline bool thread_ran(struct task_struct *task, struct batch_buf *b)
{
	return BPF_CORE_READ(task, __state) == 0 || switches_of(task) != b->switches;
}

/*
 * The live recording for key in this process. A recording created before the
 * attach is found here by reading the target's struct rec_recording once: it is
 * live only if its magic is set and its key matches the span's. NULL if there
 * is none to record to; for an event (event true) of an untracked recording,
 * the event is counted.
 */
static __always_inline struct rec_rval *find_recording_of(struct task_struct *task, __u32 tgid,
							  __u64 key, __u64 recp, __u64 span,
							  const bool event, struct batch_buf *b,
							  struct find_room *room)
{
	struct rec_rkey k = { .tgid = tgid, .key = key };
	struct rec_target_recording *tr = &room->tr;
	struct rec_rval *nv = &room->nv, *v;
	struct rec_untracked *u;
	__u64 subject;
	__u8 one = 1;
	int err;

	/* The fast path: the key's slot holds it. */
	v = slot_of(tgid, key);
	if (v)
		goto found;
	v = bpf_map_lookup_elem(&recordings, &k);
	if (v)
		goto table;
	if (bpf_map_lookup_elem(&retired, &k)) {
		count(REC_C_RETIRED_EVENTS);
		return NULL;
	}
	u = bpf_map_lookup_elem(&untracked, &k);
	if (u) {
		if (event)
			count_untracked_event(tgid, u);
		return NULL;
	}
	/* Events pass their span, not the recording: one more read, once per recording. */
	if (!recp && span &&
	    read_target(&recp, sizeof(recp), span + offsetof(struct rec_target_span, recording),
			task))
		recp = 0;
	/* A failed read may be transient (page out); try again on the next event. */
	if (!recp || read_target(tr, sizeof(*tr), recp, task)) {
		count(REC_C_UNKNOWN_RECORDING);
		return NULL;
	}
	subject = recp + REC_TARGET_SUBJECT_OFF;
	if (tr->magic != REC_RECORDING_MAGIC || tr->key != key || tr->cap < 2) {
		/*
		 * Freed by now; if by this thread after this event, its free is
		 * later in this batch (made before the attach, it had no new
		 * here): it was live when the event was written, and its free
		 * retires it where it lies. Its struct is freed memory: no subject
		 * is read from it (user space has it from the seeded stack).
		 */
		if (!b ||
		    (!freed_later_in_batch(b, key) && !(task && freed_later_in_queue(b, key)))) {
			/*
			 * The collecting iterator's, of a thread that has run
			 * since its length was read: it may have freed the
			 * recording after this event, past that length. The walk
			 * stops here, and leaves the rest to the next take.
			 */
			if (task && b && b->defer == DEFER_MAY && thread_ran(task, b)) {
				b->defer = DEFER_STOPPED;
				return NULL;
			}
			bpf_map_update_elem(&retired, &k, &one, BPF_ANY);
			count(REC_C_RETIRED_EVENTS);
			return NULL;
		}
		__builtin_memset(nv, 0, sizeof(*nv));
		nv->recorder = b->ahead_recorder;
		nv->cap = b->ahead_cap;
		nv->owner = (__u32)b->id;
		subject = 0;
	} else {
		__builtin_memset(nv, 0, sizeof(*nv));
		nv->recorder = tr->recorder_key;
		nv->cap = tr->cap;
		/* Learnt from a batch: its free may come in another thread's batch. */
		nv->owner = b ? REC_OWNER_UNKNOWN : 0;
	}
	nv->state = REC_RS_LIVE;
	err = create_recording(tgid, key, nv);
	if (err == 0) {
		emit_recording_of(task, key, nv, subject, 0);
	} else if (err > 0) {
		refuse_recording(task, tgid, key, nv, err, subject, event);
		return NULL;
	}
	v = bpf_map_lookup_elem(&recordings, &k);
	if (!v)
		return NULL;
table:
	v = counters_of(tgid, v);
	if (!v)
		return NULL;
found:
	if (v->state != REC_RS_LIVE) {
		count(REC_C_RETIRED_EVENTS);
		return NULL;
	}
	return v;
}

static __always_inline struct rec_rval *find_recording(__u32 tgid, __u64 key, __u64 recp,
						       __u64 span, const bool event)
{
	struct find_room room;

	return find_recording_of(NULL, tgid, key, recp, span, event, NULL, &room);
}

/*
 * Whether the target's struct rec_recording at recp still holds key: false
 * once the program has freed it (its magic is cleared first). A read that
 * fails says nothing: true.
 */
static __always_inline bool recording_alive_in(struct rec_target_recording *tr,
					       struct task_struct *task, __u64 key, __u64 recp)
{
	if (!recp || read_target(tr, sizeof(*tr), recp, task))
		return true;
	return tr->magic == REC_RECORDING_MAGIC && tr->key == key;
}

static __always_inline bool recording_alive(struct task_struct *task, __u64 key, __u64 recp)
{
	struct rec_target_recording tr;

	return recording_alive_in(&tr, task, key, recp);
}

/* As recording_alive(), for the recording of this thread's span at span. */
static __always_inline bool span_recording_alive(__u64 key, __u64 span)
{
	__u64 recp = 0;

	if (!span || read_target(&recp, sizeof(recp),
				 span + offsetof(struct rec_target_span, recording), NULL))
		return true;
	return recording_alive(NULL, key, recp);
}

/* What the recording probes send of an entry: its values, with state. */
static __always_inline void recording_values(struct rec_rval *out, const struct rec_rval *v,
					     __u32 state)
{
	out->recorder = v->recorder;
	out->cap = v->cap;
	out->seq = v->seq;
	out->dropped = v->dropped;
	out->spans_lost = v->spans_lost;
	out->state = state;
}

/* The same for an untracked recording: every event of it seen was dropped. */
static __always_inline void untracked_values(struct rec_rval *out, const struct rec_untracked *u,
					     __u32 state)
{
	out->recorder = u->recorder;
	out->cap = u->cap;
	out->seq = u->seen;
	out->dropped = u->seen;
	out->spans_lost = u->spans_lost;
	out->state = state;
}

/* The recording probes are rare: the same argument reader as the hot ones, for one ABI. */
SEC("usdt")
int on_recording_new(struct pt_regs *ctx)
{
	struct rec_rval v = { .state = REC_RS_LIVE };
	__u64 key, cap;
	__u32 tgid;
	long a[4];
	int err;

	if (!adopt_process())
		return 0;
	if (read_args(ctx, a, 4))
		return 0;
	key = a[0];
	v.recorder = a[1];
	v.cap = cap = a[2];
	if (cap < 2)
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	err = create_recording(tgid, key, &v);
	if (err == 0)
		emit_recording(key, &v, 0, 0);
	else if (err > 0)
		refuse_recording(NULL, tgid, key, &v, err, 0, 0);
	return 0;
}

SEC("usdt")
int on_recording_span(struct pt_regs *ctx)
{
	__u64 key, recp, subject;
	struct rec_untracked *u;
	struct rec_rkey k = {};
	struct rec_rval *v;
	long a[4];

	if (!adopt_process())
		return 0;
	if (read_args(ctx, a, 4))
		return 0;
	key = a[0];
	recp = a[1];
	subject = a[2];

	k.tgid = bpf_get_current_pid_tgid() >> 32;
	k.key = key;
	v = find_recording(k.tgid, key, recp, 0, false);
	if (v) {
		emit_recording(key, v, subject, 0);
		return 0;
	}
	/* Untracked: its subject still names it in the list. */
	u = bpf_map_lookup_elem(&untracked, &k);
	if (u) {
		struct rec_rval a = {};

		untracked_values(&a, u, REC_RS_LIVE);
		emit_recording(key, &a, subject, u->reason);
	}
	return 0;
}

/*
 * A recording freed ({tgid, key}): its later events are ignored (remember: its
 * key goes into retired at once, as the probe's does). Returns true,
 * with the record to send in *out and *reason (0, or why it was untracked), if
 * BPF knew it: user space then forgets its entry once it has read it.
 */
static __always_inline bool retire_recording(__u32 tgid, __u64 key, struct rec_rval *out,
					     __u32 *reason, const bool remember)
{
	struct rec_rkey k = { .tgid = tgid, .key = key };
	struct rec_untracked *u;
	struct rec_rval *v;
	__u8 one = 1;

	if (remember)
		bpf_map_update_elem(&retired, &k, &one, BPF_ANY);
	v = bpf_map_lookup_elem(&recordings, &k);
	if (!v) {
		u = bpf_map_lookup_elem(&untracked, &k);
		if (!u)
			return false;
		/*
		 * Its final count goes with the record, and its place in the
		 * untracked table is free at once: no slot to hand over, and its
		 * later events find it in retired.
		 */
		untracked_values(out, u, REC_RS_RETIRED);
		*reason = u->reason;
		bpf_map_delete_elem(&untracked, &k);
		return true;
	}
	v = counters_of(tgid, v);
	if (!v)
		return false;
	/* User space deletes the entry once it has read the final counters. */
	v->state = REC_RS_RETIRED;
	recording_values(out, v, REC_RS_RETIRED);
	*reason = 0;
	return true;
}

SEC("usdt")
int on_recording_free(struct pt_regs *ctx)
{
	struct rec_rval out = {};
	__u32 reason = 0;
	long a[2];

	if (!adopt_process())
		return 0;
	if (read_args(ctx, a, 2))
		return 0;
	if (retire_recording(bpf_get_current_pid_tgid() >> 32, a[0], &out, &reason, true))
		emit_recording(a[0], &out, 0, reason);
	return 0;
}
