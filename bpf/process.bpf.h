/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * A process's exec, fork and exit: --binary adopts at an exec and a fork; an
 * exec or an exiting thread hands over its pending batch; an exiting thread
 * reports the stack it dies in, and the last one how the process ended.
 */

/*
 * --binary: a process that execs a traced executable is adopted now, before
 * its first probe (a daemon's parent may never hit one). One traced already
 * that execs another file says hello with it: user space may let it go.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct rec_binary_key bk;

	if (!follow_new)
		return 0;
	if (!bpf_map_lookup_elem(&traced, &tgid)) {
		adopt_process();
		return 0;
	}
	if (exe_of(task, &bk) && !bpf_map_lookup_elem(&binaries, &bk))
		say_hello(task, tgid, BPF_CORE_READ(task, real_parent, tgid), &bk);
	return 0;
}

/* --binary: a process forked from one that runs a traced executable runs it too: adopted now. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = BPF_CORE_READ(child, tgid);

	/* A new thread is no new process. */
	if (!follow_new || (__u32)BPF_CORE_READ(child, pid) != tgid)
		return 0;
	adopt_task(child, tgid, BPF_CORE_READ(parent, tgid));
	return 0;
}

/*
 * exec, past its point of no return (begin_new_exec) and before the old
 * address space goes: the other threads exit after this, each through
 * sched_process_exit, still in the old address space. (fentry on
 * exec_mm_release would be later still, but this kernel has no fentry.)
 */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(on_exec_release, struct task_struct *task, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!bpf_map_lookup_elem(&traced, &tgid))
		return 0;
	rescue_batch(bpf_get_current_task_btf());
	return 0;
}

#define SIGNAL_GROUP_EXIT 0x00000004

/*
 * Every exiting thread of a traced process reports the stack it dies in; the
 * storage is still there, it goes with the task struct. The thread that takes
 * signal->live to zero is the last one: it reports how the process ended.
 * Its records are in the ring before the process's pidfd becomes readable.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_sched_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct signal_struct *sig;
	struct rec_exit_rec *x;
	struct rec_stack *st;

	if (!bpf_map_lookup_elem(&traced, &tgid))
		return 0;
	/* Its pending batch first: its memory is still mapped here (since 6.16). */
	rescue_batch(task);
	st = bpf_task_storage_get(&stacks, task, 0, 0);
	if (st && (st->depth || st->overflow)) {
		struct rec_stack_rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

		if (r) {
			fill_hdr(&r->hdr, REC_RT_STACK, sizeof(*r));
			r->depth = st->depth;
			r->overflow = st->overflow;
			bpf_probe_read_kernel(r->frames, sizeof(r->frames), st->frames);
			bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
		} else {
			count(REC_C_RING_FULL);
		}
	}
	sig = BPF_CORE_READ(task, signal);
	if (BPF_CORE_READ(sig, live.counter) != 0)
		return 0;
	x = bpf_ringbuf_reserve(&events, sizeof(*x), 0);
	if (!x) {
		count(REC_C_RING_FULL);
		return 0;
	}
	fill_hdr(&x->hdr, REC_RT_EXIT, sizeof(*x));
	x->group_exit = !!(BPF_CORE_READ(sig, flags) & SIGNAL_GROUP_EXIT);
	x->status = x->group_exit ? BPF_CORE_READ(sig, group_exit_code)
				  : BPF_CORE_READ(task, exit_code);
	bpf_ringbuf_submit(x, BPF_RB_FORCE_WAKEUP);
	return 0;
}
