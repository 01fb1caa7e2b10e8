// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * The kernel half of recorder: USDT handlers for the probes of
 * include/recorder.h (docs/probe-abi.md), per-thread span stacks, the table of
 * live recordings, and the ring buffer that carries events to user space.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/*
 * Big programs have many distinct argument specs (registers and immediates vary
 * per site); libbpf's default is 256. User space shrinks the IP map, unused with
 * cookies, to one entry.
 */
#include "recorder_abi.h"
#define BPF_USDT_MAX_SPEC_CNT REC_USDT_MAX_SPECS
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Wake the consumer only once this many bytes wait in the ring (set before load). */
const volatile __u64 wakeup_bytes = 1 << 20;

/*
 * --binary: probes fire in processes nobody named (the executable's, and its
 * libraries' for every process that maps them); adopt each process that runs
 * a traced executable on its first probe, and ignore the others.
 */
const volatile bool follow_new = false;

/* Entries one process may hold in the recordings table (set before load). */
const volatile __u64 max_per_process = 16384;

/* Which process the stack iterator reports (set by user space before each read). */
__u32 iter_tgid;

/*
 * Threads of iter_tgid inside spans that seed_stacks passed over because they
 * were running (user space zeroes it, runs the iterator, and reads it).
 */
__u32 seed_running;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* Shared by every traced process; user space sets its size before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct rec_rkey);
	__type(value, struct rec_rval);
} recordings SEC(".maps");

/*
 * Recordings refused an entry in recordings (struct rec_untracked), as many as
 * the table has entries (set before load): their events are counted here, so
 * that none is lost without a count. Usually empty, so not preallocated.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct rec_rkey);
	__type(value, struct rec_untracked);
} untracked SEC(".maps");

/* See struct rec_rslot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, REC_RSLOTS);
	__type(key, __u32);
	__type(value, struct rec_rslot);
} rslots SEC(".maps");

/* Recordings known to be freed: their events are dropped without a user read. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct rec_rkey);
	__type(value, __u8);
} retired SEC(".maps");

/*
 * --binary: the executables whose processes are adopted (set by user space),
 * each REC_BINARY_ADDED, then REC_BINARY_READY once every link of it is
 * attached: a process adopted from then on is ready at once. Each its own: a
 * second --binary is attached after the first is ready.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, REC_MAX_BINARIES);
	__type(key, struct rec_binary_key);
	__type(value, __u8);
} binaries SEC(".maps");

/*
 * Processes being traced (tgid): only their exits are reported, and only they
 * get entries in recordings, within their quota (struct rec_pstat).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct rec_pstat);
} traced SEC(".maps");

/*
 * The same as a bit a process id (tgid), for the scheduler hooks, which run on
 * every context switch of the machine: a load and a test, no hashing. Set
 * wherever traced gains a process (adopt_task, rec_bpfstate__trace), cleared
 * where it loses one (rec_bpfstate__untrace); both sides update it atomically.
 * A bit set a moment after its process left traced costs a lookup, no more.
 */
#define TRACED_BITS_PIDS (1u << 22) /* PID_MAX_LIMIT on 64-bit: 512 KiB */
__u64 traced_bits[TRACED_BITS_PIDS / 64];

static __always_inline bool traced_bit(__u32 tgid)
{
	return tgid < TRACED_BITS_PIDS && (traced_bits[tgid / 64] >> (tgid % 64) & 1);
}

/*
 * Processes (tgid) whose probes are all attached: only theirs keep span
 * stacks. Links are attached one probe name after another, so for a moment
 * span_enter may be attached and span_exit not yet: a span entered and left
 * then would stay on the stack for ever (a phantom, open since the attach).
 * Until its bit is set, a thread's probes touch no stack; its first probe
 * after reads the stack from the thread's own chain of spans, which is exact.
 * Set by user space once a process's links are attached (-p), and by
 * adopt_task() once its executable is (--binary, binaries); cleared with
 * traced_bits.
 */
__u64 ready_bits[TRACED_BITS_PIDS / 64];

static __always_inline void set_ready_bit(__u32 tgid)
{
	__u32 w = tgid / 64;

	barrier_var(w);
	if (w < TRACED_BITS_PIDS / 64)
		__sync_fetch_and_or(&ready_bits[w], 1ull << (tgid % 64));
}

static __always_inline bool ready_bit(__u32 tgid)
{
	__u32 w = tgid / 64;

	/* The bound where the verifier sees it: a hoisted test it would not. */
	barrier_var(w);
	if (w >= TRACED_BITS_PIDS / 64)
		return false;
	return ready_bits[w] >> (tgid % 64) & 1;
}

/*
 * Entries of a process (tgid) in recordings that user space has deleted. Only
 * user space writes it, so that it needs no atomic update from there.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} released SEC(".maps");

/* Task-local, so a thread's stack is freed with the thread. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct rec_stack);
} stacks SEC(".maps");

/*
 * The batch path: each thread's buffer in the target (its address, from the
 * batch probe) and how much of its current generation BPF has taken.
 */
struct rec_tbuf_reg {
	__u64 addr;
	__u64 claim; /* gen << 32 | bytes of records taken */
	/*
	 * Records of it were left to another recorder-attach (flushed under a
	 * tracer word not this one's): its stack is read again from its chain
	 * when it announces the buffer to this one.
	 */
	__u32 missed;
	/*
	 * Of generation gen << 32 (the high half), the records below the offset
	 * in the low half were written before its announce to this one, which
	 * read its stack from its chain then: taken, their spans left out.
	 */
	__u32 walking; /* WALK_*: the collecting iterator walks its records */
	__u64 spans_from;
};

/*
 * rec_tbuf_reg.walking: idle; the collecting iterator walks the thread's
 * records into its stack; and the thread flushed meanwhile, its batch queued
 * (walk_queue) for the iterator to walk after its own, in order.
 */
#define WALK_IDLE 0
#define WALK_ON 1
#define WALK_QUEUED 2

/*
 * Processes (tgid) this recorder-attach waits for while another one holds
 * them (a hand-over): their buffers, announced to that one, are taken here
 * too. Any other buffer this one was not told of is another's (a dead one's,
 * whose tracer word the process still has): left.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} waiting SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct rec_tbuf_reg);
} tbufs SEC(".maps");

/*
 * Where a batch is copied before it is read: a buffer's records, and room
 * past them so that every bounded read of a record stays inside. One per CPU
 * for the probe and the exit hooks; one for the collecting iterator, which
 * sleeps and which user space runs once at a time.
 */
#define BATCH_SLACK 1024
/* batch_buf.defer: the iterator's walk may stop at such an event, stopped there, or may not. */
#define DEFER_MAY 0
#define DEFER_STOPPED 1
#define DEFER_NEVER 2

/*
 * find_recording_of()'s room for what it reads and creates: on a probe's
 * stack, or in a batch's scratch (the walk's call chain has no stack to spare).
 */
struct find_room {
	struct rec_rval nv;
	struct rec_target_recording tr;
};

struct batch_buf {
	/*
	 * Where the bpf_loop callback is, kept here rather than on the stack:
	 * the verifier follows values on the stack, and would walk the loop
	 * once for every offset it can see.
	 */
	__u64 id;    /* the thread's bpf_get_current_pid_tgid() */
	__u32 off;   /* the next record in data */
	__u32 end;   /* bytes of records in data */
	__u32 flags; /* of each event's header: REC_HF_TSC or 0 */
	__u32 bad;
	__u32 taken; /* marked REC_BREC_TAKEN: events numbered, recordings' records filled */
	__u32 drop;  /* the ring refused the record: the second walk counts them dropped */
	__u32 seen;  /* the thread's stack was looked up (and so seeded) in this batch */
	/*
	 * The collecting iterator's: the thread's context switches (voluntary
	 * and not) before its buffer's length was read, and whether the walk
	 * stopped at an event whose free the thread may have written past
	 * that length since (DEFER_*; thread_ran()).
	 */
	__u64 switches;
	__u32 defer;
	/*
	 * Records of data below this offset leave the stack alone: of a buffer
	 * whose earlier records this one never took (rec_tbuf_reg missed), all
	 * of them; of one announced since, those written before the announce,
	 * which read the stack from the thread's chain (rec_tbuf_reg spans_from).
	 */
	__u32 spans_from;
	/* A recording of another thread's found alive in the target in this batch (rec_rval.owner). */
	__u64 alive_key;
	/* freed_later_in_batch(): where it looks, what it looks for, and what it found. */
	__u32 ahead_off;
	__u32 ahead_found;
	__u64 ahead_key;
	__u64 ahead_recorder;
	__u64 ahead_cap;
	/* find_recording_of()'s and batch_recording()'s room: the walk has no stack to spare. */
	struct find_room room;
	__u32 nspans; /* spans left in this batch, held in spans until it ends */
	/* spans_lost()'s lookups take their keys here: the walk has no stack to spare. */
	__u32 lost_slot;
	struct rec_rkey lost_key;
	struct rec_spans_rec spans;
	/* The ring record: rec, then data, output as one. */
	struct rec_batch_rec rec;
	__u8 data[REC_TBUF_DATA + BATCH_SLACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct batch_buf);
} batch_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct batch_buf);
} iter_scratch SEC(".maps");

/*
 * A batch a thread flushed while the collecting iterator walked its earlier
 * records (rec_tbuf_reg.walking): copied here by the flush, walked by the
 * iterator after its own. One iterator runs at a time, so one slot.
 */
struct walk_queue {
	__u32 tid; /* whose; 0: free */
	__u32 skip;
	__u32 end;
	__u32 flags;
	__u32 spans_from;
	__u32 pad;
	__u64 id;
	__u8 data[REC_TBUF_DATA];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_queue);
} walk_queued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, REC_C_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

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

/* One record of freed_later_in_batch()'s look ahead. Returns 1 to stop. */
static long free_ahead_step(__u64 i, void *ctx)
{
	struct batch_buf *b = *(struct batch_buf **)ctx;
	struct rec_brec_rec *r;
	__u32 off, size;

	if (!b)
		return 1;
	off = b->ahead_off;
	if (off >= b->end || off >= REC_TBUF_DATA)
		return 1;
	/* Read in place: data has room for a whole record past any offset below REC_TBUF_DATA. */
	r = (struct rec_brec_rec *)&b->data[off];
	size = r->h.size;
	if (size < sizeof(r->h) || (size & 7) || size > b->end - off)
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
		if (!b || !freed_later_in_batch(b, key)) {
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

static __always_inline struct rec_stack *thread_stack_of(struct task_struct *task, __u64 chain,
							 bool *seeded);

static __always_inline struct rec_stack *thread_stack(__u64 chain, bool *seeded)
{
	return thread_stack_of(NULL, chain, seeded);
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

	if (v) {
		__sync_fetch_and_add(&v->spans_lost, 1);
		return;
	}
	u = bpf_map_lookup_elem(&untracked, k);
	if (u)
		__sync_fetch_and_add(&u->spans_lost, 1);
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

/* ---- the batch path (docs/probe-abi.md, "Batches") ---- */

/* One batch being taken: what the bpf_loop callback needs. */
struct batch_ctx {
	struct task_struct *task; /* whose buffer, when not the current task's */
	struct batch_buf *buf;	  /* the batch and where the loop is */
	struct rec_stack *st;	  /* this thread's stack, if seeded already: the fast path's */
};

/* One record of a batch, taken as its probe would have been. Returns 1 to stop. */
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
	__u32 zero = 0;
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
	buf = bpf_map_lookup_elem(&batch_scratch, &zero);
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
	__u32 zero = 0;

	if (!reg || !reg->addr)
		return;
	buf = bpf_map_lookup_elem(&batch_scratch, &zero);
	if (buf)
		take_batch(NULL, reg, buf, bpf_get_current_pid_tgid(), false, false);
	reg->addr = 0;
	reg->claim = 0;
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

/* rec_is_attached() hits this once everything else is attached; with --binary it adopts. */
SEC("usdt")
int on_attached(struct pt_regs *ctx)
{
	adopt_process();
	return 0;
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

#define SIGNAL_GROUP_EXIT 0x00000004

/*
 * Every exiting thread of a traced process reports the stack it dies in; the
 * storage is still there, it goes with the task struct. The thread that takes
 * signal->live to zero is the last one: it reports how the process ended.
 * Its records are in the ring before the process's pidfd becomes readable.
 */
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
