/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * Which processes are traced: with --binary, a process that runs a traced
 * executable is adopted, and said hello for, at its first probe (every probe
 * handler asks adopt_process() first), at rec_is_attached(), or at its exec
 * or fork (process.bpf.h).
 */

/*
 * Tells user space that process tgid (task, one of its threads) runs the
 * executable bk, with what it needs to adopt it even if the process is gone by
 * then: its parent ppid and where its executable is loaded. Wakes it at once.
 */
static __always_inline void say_hello(struct task_struct *task, __u32 tgid, __u32 ppid,
				      const struct rec_binary_key *bk)
{
	struct rec_hello_rec *h = bpf_ringbuf_reserve(&events, sizeof(*h), 0);

	if (!h) {
		count(REC_C_RING_FULL);
		return;
	}
	fill_hdr_id(&h->hdr, REC_RT_HELLO, sizeof(*h),
		    (__u64)tgid << 32 | (__u32)BPF_CORE_READ(task, pid));
	h->ppid = ppid;
	h->pad = 0;
	h->exe_ino = bk->ino;
	h->exe_dev = bk->dev;
	h->start_code = BPF_CORE_READ(task, mm, start_code);
	bpf_ringbuf_submit(h, BPF_RB_FORCE_WAKEUP);
}

/* The executable task runs, as the binaries map keys it; false if it has none. */
static __always_inline bool exe_of(struct task_struct *task, struct rec_binary_key *bk)
{
	struct file *exe = BPF_CORE_READ(task, mm, exe_file);

	if (!exe)
		return false;
	bk->ino = BPF_CORE_READ(exe, f_inode, i_ino);
	bk->dev = BPF_CORE_READ(exe, f_inode, i_sb, s_dev);
	return true;
}

/*
 * --binary: whether process tgid (task, one of its threads) is traced. One
 * that runs a traced executable and is not traced yet is marked traced (so its
 * exit is reported) and said hello for; any other process is ignored.
 */
static __always_inline bool adopt_task(struct task_struct *task, __u32 tgid, __u32 ppid)
{
	struct rec_pstat zero = {};
	struct rec_binary_key bk;
	__u8 *bin;

	if (bpf_map_lookup_elem(&traced, &tgid))
		return true;
	if (!exe_of(task, &bk))
		return false;
	bin = bpf_map_lookup_elem(&binaries, &bk);
	if (!bin)
		return false;
	/* Lost a race with another thread of it: that one says hello. */
	if (bpf_map_update_elem(&traced, &tgid, &zero, BPF_NOEXIST))
		return true;
	if (tgid < TRACED_BITS_PIDS)
		__sync_fetch_and_or(&traced_bits[tgid / 64], 1ull << (tgid % 64));
	if (*bin == REC_BINARY_READY)
		set_ready_bit(tgid);
	say_hello(task, tgid, ppid, &bk);
	return true;
}

/*
 * Whether this process is traced. With --binary, probes are attached for every
 * process that maps the executable or its libraries: a process that runs a
 * traced executable is adopted at its exec, its fork or (started before the
 * attach, or while its hello was lost) its first probe; any other is ignored.
 */
static __always_inline bool adopt_process(void)
{
	struct task_struct *task;

	/* A constant: without --binary the verifier drops the rest. */
	if (!follow_new)
		return true;
	task = bpf_get_current_task_btf();
	return adopt_task(task, bpf_get_current_pid_tgid() >> 32,
			  BPF_CORE_READ(task, real_parent, tgid));
}

/* rec_is_attached() hits this once everything else is attached; with --binary it adopts. */
SEC("usdt")
int on_attached(struct pt_regs *ctx)
{
	adopt_process();
	return 0;
}
