/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * The event probe (the per-event path): an event's values, and the strings
 * it copies, into one ring record; and the program's own trigger probe
 * (rec_trigger()).
 */

static __always_inline __u64 read_str(struct rec_event_rec *e, __u32 *offp, __u64 ptr,
				      const __u32 area)
{
	__u32 off = *offp;
	__u32 status = REC_STR_OK;
	char next = 0;
	long n;

	if (!ptr)
		return REC_STR_SLOT(0, 0, REC_STR_NULL);
	if (off > area - REC_STR_MAX)
		return REC_STR_SLOT(0, 0, REC_STR_NOSPACE);
	n = bpf_probe_read_user_str(&e->strings[off], REC_STR_MAX, (const void *)ptr);
	if (n <= 0) {
		count(REC_C_STR_FAULT);
		return REC_STR_SLOT(0, 0, REC_STR_FAULT);
	}
	/* A full read is only a truncation if the string goes on. */
	if (n == REC_STR_MAX &&
	    (bpf_probe_read_user(&next, 1, (const void *)(ptr + REC_STR_MAX - 1)) || next))
		status = REC_STR_TRUNCATED;
	*offp = off + n;
	return REC_STR_SLOT(off, n - 1, status);
}

/*
 * Three record sizes, each a constant for the verifier: no strings, one string
 * (the common case: a formatted message), or room for several.
 */
static __always_inline int emit_event(const long *args, struct rec_rval *v, __u64 key, __u64 meta,
				      __u64 types, struct rec_stack *st, __u64 id, const __u32 area)
{
	const __u32 size = sizeof(struct rec_event_rec) + area;
	struct rec_event_rec *e;
	__u32 off = 0;
	__u64 seq;

	seq = __sync_fetch_and_add(&v->seq, 1);
	e = bpf_ringbuf_reserve(&events, size, 0);
	if (!e) {
		__sync_fetch_and_add(&v->dropped, 1);
		count(REC_C_RING_FULL);
		return 0;
	}
	fill_hdr_id(&e->hdr, REC_RT_EVENT, size, id);
	e->recording = key;
	e->seq = seq;
	e->meta = meta;
	e->types = types;
	for (int i = 0; i < REC_MAX_FIELDS; i++) {
		__u32 t = (types >> (4 * i)) & 0xf;
		long val = args[4 + i];

		e->values[i] = 0;
		if (!t)
			continue;
		if (area && t == REC_TYPE_STR)
			e->values[i] = read_str(e, &off, val, area);
		else
			e->values[i] = val;
	}
	bpf_ringbuf_submit(e, event_submit_flags(st));
	return 0;
}

SEC("usdt")
int on_event(struct pt_regs *ctx)
{
	long args[BPF_USDT_MAX_ARG_CNT] = {};
	struct __bpf_usdt_spec *spec;
	__u32 nstr = 0;
	long meta, types, key, span;
	struct rec_stack *st;
	struct rec_rval *v;
	bool seeded;
	__u64 id;

	if (!adopt_process())
		return 0;
	/* The four fixed arguments, then only as many values as there are fields. */
	spec = site_spec(ctx);
	if (read_spec_args(ctx, spec, args, 4))
		return 0;
	meta = args[0];
	types = args[1];
	key = args[2];
	span = args[3];
	/*
	 * Only the values of fields that are there. Each iteration ends in one
	 * verifier state (val unknown either way, no break): the verifier explores
	 * every path, and states it cannot merge multiply the work of the rest of
	 * the program, which is what the load (and so the attach) time is made of.
	 */
	for (int i = 0; i < REC_MAX_FIELDS; i++) {
		__u32 t = (types >> (4 * i)) & 0xf;
		long val = 0;

		if (t && 4 + i < spec->arg_cnt && read_arg(ctx, spec, 4 + i, &val)) {
			count(REC_C_BAD_ARG);
			return 0;
		}
		barrier_var(val);
		args[4 + i] = val;
	}
	id = bpf_get_current_pid_tgid();
	v = find_recording(id >> 32, key, 0, span, true);
	/* Its free may be pending in its owner's batch (struct rec_rval): rare here. */
	if (v && v->owner && v->owner != (__u32)id && !span_recording_alive(key, span)) {
		count(REC_C_RETIRED_EVENTS);
		return 0;
	}
	if (!v)
		return 0;
	/* A thread that was inside spans at attach time gets its stack now. */
	st = thread_stack(span, &seeded);
	/*
	 * Which record size: none, one or several copied strings (a literal,
	 * REC_TYPE_STR_LIT, is passed by address like a number). Counted here, last,
	 * and only up to 2, for the same reason as above.
	 */
	for (int i = 0; i < REC_MAX_FIELDS; i++)
		if (((types >> (4 * i)) & 0xf) == REC_TYPE_STR && nstr < 2)
			nstr++;
	if (nstr > 1)
		return emit_event(args, v, key, meta, types, st, id, REC_STR_AREA);
	if (nstr == 1)
		return emit_event(args, v, key, meta, types, st, id, REC_STR_MAX);
	return emit_event(args, v, key, meta, types, st, id, 0);
}

/* rec_trigger(): the program's own trigger, for user space's "code" rules. */
SEC("usdt")
int on_trigger(struct pt_regs *ctx)
{
	struct rec_trigger_rec *r;
	long a[3];

	if (!adopt_process())
		return 0;
	if (read_args(ctx, a, 3))
		return 0;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(REC_C_RING_FULL);
		return 0;
	}
	fill_hdr(&r->hdr, REC_RT_TRIGGER, sizeof(*r));
	r->recording = a[0];
	r->pad = 0;
	r->reason[0] = 0;
	r->reason_len =
		a[2] ? bpf_probe_read_user_str(r->reason, sizeof(r->reason), (const void *)a[2])
		     : -1;
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}
