/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * The maps of bpf/recorder.bpf.c, but the two that one concern keeps to itself
 * (chain_scratch in stacks.bpf.h, sched_threads in sched.bpf.h); the bits of
 * traced and ready processes; and the layouts of values only BPF reads: a
 * thread's batch buffer as registered, the batch scratch, the walk queue.
 * Included first by bpf/recorder.bpf.c, after its configuration.
 */

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

/*
 * The spans a full ring refused of recordings that neither table holds: made
 * before the attach, and no event of theirs seen yet (user space knows them
 * from a thread's stack). Counted by key; user space adds them to the
 * recording's lost spans once the ring has been full.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct rec_rkey);
	__type(value, __u64);
} spans_lost_of SEC(".maps");

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
 * for the probe and the exit hooks (batch_scratch, an array of as many as
 * user space sets: a per-CPU map's value holds at most 32 KiB); one for the
 * collecting iterator, which sleeps and which user space runs once at a time.
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
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* the possible CPUs, set by user space */
	__type(key, __u32);
	__type(value, struct batch_buf);
} batch_scratch SEC(".maps");

/* This CPU's batch scratch: a probe's program runs on one CPU from start to end. */
static __always_inline struct batch_buf *cpu_scratch(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&batch_scratch, &cpu);
}

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
