/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * Off-CPU time (--sched): the scheduler's hooks, and the intervals a traced
 * thread spends off the CPU.
 */

/*
 * Kernel time per span (issue 26). The scheduler hook runs on every context
 * switch of the machine: it leaves at once for threads that are not traced
 * (their processes' bits in traced_bits). For a traced thread it writes each
 * interval it spent off the CPU into the ring when it runs again (when it was
 * woken from the kernel's run-queue accounting, see sched_woken: no hook on
 * every wakeup of the machine); user space charges the intervals
 * to the thread's spans by time (user/offcpu.c), on both event paths alike.
 * The state is a hash by thread id, not task storage: a task-storage lookup
 * from these hooks fails while the switched task was preempted inside another
 * program's task-storage call (the probe handlers'), and would lose intervals.
 */
enum sched_pending {
	SCHED_NONE = 0,
	SCHED_BLOCKED = 1, /* asleep since off_ns */
	SCHED_RUNQ = 2,	   /* runnable since off_ns (preempted) */
};

struct sched_task {
	__u64 off_ns;
	__u64 off_clock; /* its run queue's clock then (0: not known), for sched_woken() */
	__u64 run_delay; /* the kernel's sched_info.run_delay when it left the CPU */
	__s32 cause;
	__u32 pending; /* enum sched_pending */
	__u32 lost;    /* intervals the full ring refused since the last one written */
	__u32 written; /* intervals written: the ring's fill is checked every EVENT_CHECK_EVERY-th */
};

/* Threads of traced processes, by thread id; one that finds it full counts no_storage. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct sched_task);
} sched_threads SEC(".maps");

/*
 * Why prev, asleep (in state), left the CPU: the system call it is in, read
 * from its user registers (orig_ax). An exception's or an interrupt's entry
 * sets orig_ax to -1 (the error code moved out); an interrupt's handler never
 * sleeps, so a thread asleep under one from user mode is in an exception: a
 * page fault that waits (on the disk, or a lock), unless it is stopped (a
 * signal, a debugger's trap), which is kernel.
 */
#define SCHED_STOPPED 0x0c /* __TASK_STOPPED | __TASK_TRACED */

static __always_inline __s32 sched_cause(struct task_struct *prev, unsigned int state)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
	long ax;

	if (!regs)
		return REC_OFF_KERNEL;
	/* Loads, not helper calls: this runs on every switch of a traced thread. */
	ax = regs->orig_ax;
	if (ax >= 0)
		return ax < 0x7fffffff ? (__s32)ax : REC_OFF_KERNEL;
	if (ax == -1 && (regs->cs & 3) == 3 && !(state & SCHED_STOPPED))
		return REC_OFF_FAULT;
	return REC_OFF_KERNEL;
}

/* prev, a thread of a traced process, leaves the CPU now, in state (0: runnable, preempted). */
static __always_inline void sched_off(struct task_struct *prev, unsigned int state, __u64 now)
{
	__u32 tid = prev->pid;
	struct sched_task *st = bpf_map_lookup_elem(&sched_threads, &tid);

	if (!st) {
		struct sched_task zero = {};

		if (bpf_map_update_elem(&sched_threads, &tid, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&sched_threads, &tid)) {
			count(REC_C_NO_STORAGE);
			return;
		}
		st = bpf_map_lookup_elem(&sched_threads, &tid);
		if (!st)
			return;
	}
	st->off_ns = now;
	st->off_clock = 0;
	if (bpf_core_field_exists(struct cfs_rq, rq))
		st->off_clock = prev->se.cfs_rq->rq->clock;
	st->run_delay = prev->sched_info.run_delay;
	if (!state) {
		st->pending = SCHED_RUNQ;
		st->cause = REC_OFF_RUNQ;
	} else {
		st->pending = SCHED_BLOCKED;
		st->cause = sched_cause(prev, state);
	}
}

/*
 * When next, asleep since st->off_ns, was woken, from the kernel's run-queue
 * accounting (CONFIG_SCHED_INFO), so that no hook runs on every wakeup of the
 * machine: sched_info.last_queued is when it was put on a run queue, in the
 * run queue's clock, and sched_info.run_delay grows by the waits it ended
 * (moved to another CPU) since it left. The run queue's clock is carried over
 * into this one by the pair (off_ns, off_clock) read as it left the CPU: the
 * clock as it is now can be stale (a wakeup that preempts the running task
 * skips the next update, so a wait of a few microseconds would read as none).
 * Without the run queue's clock (no CONFIG_FAIR_GROUP_SCHED): only the waits
 * it ended.
 */
static __always_inline __u64 sched_woken(struct task_struct *next, struct sched_task *st, __u64 now)
{
	__u64 queued = next->sched_info.last_queued, wake = now;
	__u64 waited = next->sched_info.run_delay - st->run_delay;

	if (queued && st->off_clock && queued >= st->off_clock)
		wake = st->off_ns + (queued - st->off_clock);
	if (wake > now)
		wake = now;
	wake = wake - st->off_ns > waited ? wake - waited : st->off_ns;
	return wake < st->off_ns ? st->off_ns : wake;
}

/* next, a thread of a traced process, runs again now: its interval off the CPU into the ring. */
static __always_inline void sched_on(struct task_struct *next, __u64 now)
{
	__u32 tid = next->pid;
	struct sched_task *st = bpf_map_lookup_elem(&sched_threads, &tid);
	struct rec_offcpu_rec *r;

	if (!st || st->pending == SCHED_NONE)
		return;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		st->lost++;
		st->pending = SCHED_NONE;
		count(REC_C_RING_FULL);
		return;
	}
	fill_hdr_id(&r->hdr, REC_RT_OFFCPU, sizeof(*r), (__u64)next->tgid << 32 | tid);
	r->hdr.time_ns = now;
	r->off_ns = st->off_ns;
	r->wake_ns = st->pending == SCHED_RUNQ ? st->off_ns : sched_woken(next, st, now);
	r->cause = st->cause;
	r->lost = st->lost;
	st->lost = 0;
	st->pending = SCHED_NONE;
	/* As for events: the fill check reads a cache line the consumer keeps writing. */
	bpf_ringbuf_submit(r,
			   st->written++ % EVENT_CHECK_EVERY ? BPF_RB_NO_WAKEUP : submit_flags());
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	bool prev_traced = traced_bit(prev->tgid), next_traced = traced_bit(next->tgid);
	__u64 now;

	if (!prev_traced && !next_traced)
		return 0;
	now = bpf_ktime_get_ns();
	if (prev_traced)
		sched_off(prev, preempt ? 0 : prev_state, now);
	if (next_traced)
		sched_on(next, now);
	return 0;
}

/* A thread that exits leaves sched_threads (a lookup that misses for any other). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_sched_thread_exit, struct task_struct *task)
{
	__u32 tid = task->pid;

	bpf_map_delete_elem(&sched_threads, &tid);
	return 0;
}
