/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * What every probe handler shares: the probe's arguments, read by its site's
 * argument spec; the counters of what went wrong; the ring's wakeup flags and
 * the records' headers; reads of the target's memory. And uprobe_cost, the
 * probe that does nothing.
 */

/*
 * One general-purpose register of the probed thread, by its offset in struct
 * pt_regs (how the argument spec names it; x86-64's layout, the same in the
 * UAPI header user/usdt_multi.c reads). Each case is one load at a constant
 * context offset, which the verifier allows where a computed offset is not.
 * That saves a helper call and a copy of every register per probe hit. The
 * loads are asm so that clang cannot merge the cases into one computed load.
 */
#define REG_CASE(off)                                                                              \
	case off:                                                                                  \
		asm volatile("%0 = *(u64 *)(%1 + " #off ")" : "=r"(*val) : "r"(ctx));              \
		return 0
static __always_inline int reg_at(struct pt_regs *ctx, __u32 off, __u64 *val)
{
	switch (off) {
		REG_CASE(0);   /* r15 */
		REG_CASE(8);   /* r14 */
		REG_CASE(16);  /* r13 */
		REG_CASE(24);  /* r12 */
		REG_CASE(32);  /* bp */
		REG_CASE(40);  /* bx */
		REG_CASE(48);  /* r11 */
		REG_CASE(56);  /* r10 */
		REG_CASE(64);  /* r9 */
		REG_CASE(72);  /* r8 */
		REG_CASE(80);  /* ax */
		REG_CASE(88);  /* cx */
		REG_CASE(96);  /* dx */
		REG_CASE(104); /* si */
		REG_CASE(112); /* di */
		REG_CASE(152); /* sp */
	}
	return -EINVAL;
}

/* The argument spec of the site that fired: its BPF cookie (see user/usdt_multi.c). */
static __always_inline struct __bpf_usdt_spec *site_spec(struct pt_regs *ctx)
{
	__u32 id = bpf_get_attach_cookie(ctx);

	return bpf_map_lookup_elem(&__bpf_usdt_specs, &id);
}

/* Argument i (< spec->arg_cnt) of the probe hit, into *v. Returns 0 or a negative errno. */
static __always_inline int read_arg(struct pt_regs *ctx, struct __bpf_usdt_spec *spec, __u32 i,
				    long *v)
{
	struct __bpf_usdt_arg_spec *a;
	__u64 val;

	if (i >= BPF_USDT_MAX_ARG_CNT)
		return -EINVAL;
	a = &spec->args[i];
	if (a->arg_type == BPF_USDT_ARG_CONST) {
		val = a->val_off;
	} else if (reg_at(ctx, (__u32)a->reg_off, &val)) {
		return -EINVAL;
	} else if (a->arg_type != BPF_USDT_ARG_REG &&
		   bpf_probe_read_user(&val, sizeof(val), (void *)(val + a->val_off))) {
		return -EFAULT;
	}
	val <<= a->arg_bitshift;
	if (a->arg_signed)
		val = ((long)val) >> a->arg_bitshift;
	else
		val >>= a->arg_bitshift;
	*v = val;
	return 0;
}

/* Adds n to counter c. */
static __always_inline void count_n(enum rec_counter c, __u64 n)
{
	__u32 k = c;
	__u64 *v = bpf_map_lookup_elem(&counters, &k);

	if (v)
		__sync_fetch_and_add(v, n);
}

static __always_inline void count(enum rec_counter c)
{
	count_n(c, 1);
}

/*
 * The first n arguments of the probe hit whose site has spec (NULL if it has
 * none). Returns 0, or counts REC_C_BAD_ARG and returns -EINVAL if the site has
 * fewer or one cannot be read.
 */
static __always_inline int read_spec_args(struct pt_regs *ctx, struct __bpf_usdt_spec *spec,
					  long *v, const int n)
{
	if (!spec || spec->arg_cnt < n)
		goto bad;
	for (int i = 0; i < n; i++)
		if (read_arg(ctx, spec, i, &v[i]))
			goto bad;
	return 0;
bad:
	count(REC_C_BAD_ARG);
	return -EINVAL;
}

/* The same with the site's spec looked up once, where bpf_usdt_arg() does it per argument. */
static __always_inline int read_args(struct pt_regs *ctx, long *v, const int n)
{
	return read_spec_args(ctx, site_spec(ctx), v, n);
}

/* No wakeup per record: the consumer drains on a timer unless the ring fills up. */
static __always_inline __u64 submit_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/*
 * The same for events, checked on every EVENT_CHECK_EVERY-th event of a thread:
 * the query reads the consumer's position, a cache line that the consumer on
 * another CPU keeps writing, and costs as much as the rest of the record. The
 * consumer drains every drain-ms anyway; the check only shortens the wait when
 * a burst fills the ring faster (wakeup_bytes is a quarter of the ring, so the
 * 15 events that may pass unchecked cannot fill the rest).
 */
#define EVENT_CHECK_EVERY 16
static __always_inline __u64 event_submit_flags(struct rec_stack *st)
{
	if (st && (st->events++ % EVENT_CHECK_EVERY) != 0)
		return BPF_RB_NO_WAKEUP;
	return submit_flags();
}

/* id is bpf_get_current_pid_tgid(), when the caller has it already. */
static __always_inline void fill_hdr_id(struct rec_hdr *h, __u16 type, __u16 size, __u64 id)
{
	h->type = type;
	h->size = size;
	h->tgid = id >> 32;
	h->tid = (__u32)id;
	h->flags = 0;
	h->time_ns = bpf_ktime_get_ns();
}

static __always_inline void fill_hdr(struct rec_hdr *h, __u16 type, __u16 size)
{
	fill_hdr_id(h, type, size, bpf_get_current_pid_tgid());
}

/* bpf_get_current_pid_tgid() of task, or of the current task if task is NULL. */
static __always_inline __u64 task_id(struct task_struct *task)
{
	if (!task)
		return bpf_get_current_pid_tgid();
	return (__u64)BPF_CORE_READ(task, tgid) << 32 | (__u32)BPF_CORE_READ(task, pid);
}

/*
 * Reads the target's memory: task's (a sleepable program reading another
 * task), or the current task's if task is NULL. Callers pass NULL as a
 * constant where they run in a probe, so that only the helper it may call is
 * in the program.
 */
static __always_inline long read_target(void *dst, __u32 len, __u64 src, struct task_struct *task)
{
	if (task)
		return bpf_copy_from_user_task(dst, len, (const void *)src, task, 0);
	return bpf_probe_read_user(dst, len, (const void *)src);
}

/*
 * Does nothing: recorder-attach -v and --machine time a hit of it on a nop of
 * their own (user/machine.c), what a probe site costs on this machine.
 */
SEC("usdt")
int uprobe_cost(struct pt_regs *ctx)
{
	return 0;
}
