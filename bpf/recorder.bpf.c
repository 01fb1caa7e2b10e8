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

/* --binary: the executables whose processes are adopted (set by user space). */
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

static __always_inline void count(enum rec_counter c)
{
	__u32 k = c;
	__u64 *v = bpf_map_lookup_elem(&counters, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
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

/*
 * Whether this process is traced. With --binary, probes are attached for every
 * process that maps the executable or its libraries: the first probe of a
 * process that runs a traced executable marks it traced (so its exit is
 * reported) and wakes user space at once with what it needs to adopt it, even
 * if the process is gone by then; any other process is ignored.
 */
static __always_inline bool adopt_process(void)
{
	struct rec_pstat zero = {};
	struct task_struct *task;
	struct rec_binary_key bk;
	struct rec_hello_rec *h;
	struct file *exe;
	__u32 tgid;

	/* A constant: without --binary the verifier drops the rest. */
	if (!follow_new)
		return true;
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (bpf_map_lookup_elem(&traced, &tgid))
		return true;
	task = bpf_get_current_task_btf();
	exe = BPF_CORE_READ(task, mm, exe_file);
	bk.ino = BPF_CORE_READ(exe, f_inode, i_ino);
	bk.dev = BPF_CORE_READ(exe, f_inode, i_sb, s_dev);
	if (!exe || !bpf_map_lookup_elem(&binaries, &bk))
		return false;
	/* Lost a race with another thread of it: that one says hello. */
	if (bpf_map_update_elem(&traced, &tgid, &zero, BPF_NOEXIST))
		return true;
	h = bpf_ringbuf_reserve(&events, sizeof(*h), 0);
	if (!h) {
		count(REC_C_RING_FULL);
		return true;
	}
	fill_hdr(&h->hdr, REC_RT_HELLO, sizeof(*h));
	h->ppid = BPF_CORE_READ(task, real_parent, tgid);
	h->pad = 0;
	h->exe_ino = bk.ino;
	h->exe_dev = bk.dev;
	h->start_code = BPF_CORE_READ(task, mm, start_code);
	bpf_ringbuf_submit(h, BPF_RB_FORCE_WAKEUP);
	return true;
}

/*
 * subject is a user pointer to a C string, or 0 when there is none to report;
 * untracked is why the recording has no entry (enum rec_untracked_reason), or 0.
 */
static __always_inline void emit_recording(__u64 key, const struct rec_rval *v, __u64 subject,
					   __u32 untracked)
{
	struct rec_recording_rec *r;

	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(REC_C_RING_FULL);
		return;
	}
	fill_hdr(&r->hdr, REC_RT_RECORDING, sizeof(*r));
	r->key = key;
	r->recorder = v->recorder;
	r->cap = v->cap;
	r->seq = v->seq;
	r->dropped = v->dropped;
	r->state = v->state;
	r->untracked = untracked;
	r->pad = 0;
	r->has_subject = 0;
	r->subject[0] = '\0';
	if (subject &&
	    bpf_probe_read_user_str(r->subject, sizeof(r->subject), (const void *)subject) > 0)
		r->has_subject = 1;
	bpf_ringbuf_submit(r, submit_flags());
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
static __always_inline void refuse_recording(__u32 tgid, __u64 key, const struct rec_rval *nv,
					     __u32 reason, __u64 subject, __u64 events)
{
	struct rec_rkey k = { .tgid = tgid, .key = key };
	struct rec_untracked u = {
		.recorder = nv->recorder,
		.cap = nv->cap,
		.seen = events,
		.reason = reason,
	};
	struct rec_rval a = { .recorder = nv->recorder,
			      .cap = nv->cap,
			      .seq = events,
			      .dropped = events,
			      .state = REC_RS_LIVE };
	bool listed = bpf_map_update_elem(&untracked, &k, &u, BPF_NOEXIST) == 0;

	count(reason == REC_UT_OVER_QUOTA ? REC_C_OVER_QUOTA : REC_C_TABLE_FULL);
	if (events)
		count(REC_C_UNTRACKED_EVENTS);
	count_refused(tgid, reason, listed, events);
	if (listed)
		emit_recording(key, &a, subject, reason);
}

/* The counters of table entry v: its own, or its slot's. NULL if the slot is not its. */
static __always_inline struct rec_rval *counters_of(__u32 tgid, struct rec_rval *v)
{
	struct rec_rslot *sl;
	__u32 i;

	if (!v->slot)
		return v;
	i = v->slot - 1;
	sl = bpf_map_lookup_elem(&rslots, &i);
	if (!sl || sl->k.tgid != tgid)
		return NULL;
	return &sl->v;
}

/*
 * The live recording for key in this process. A recording created before the
 * attach is found here by reading the target's struct rec_recording once: it is
 * live only if its magic is set and its key matches the span's. NULL if there
 * is none to record to; for an event (event true) of an untracked recording,
 * the event is counted.
 */
static __always_inline struct rec_rval *find_recording(__u32 tgid, __u64 key, __u64 recp,
						       __u64 span, const bool event)
{
	struct rec_rkey k = { .tgid = tgid, .key = key };
	__u32 i = key & (REC_RSLOTS - 1);
	struct rec_target_recording tr;
	struct rec_rval nv = {}, *v;
	struct rec_untracked *u;
	struct rec_rslot *sl;
	__u8 one = 1;
	int err;

	/* The fast path: the key's slot holds it. */
	sl = bpf_map_lookup_elem(&rslots, &i);
	if (sl && sl->k.key == key && sl->k.tgid == tgid) {
		v = &sl->v;
		goto found;
	}
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
	    bpf_probe_read_user(&recp, sizeof(recp),
				(const void *)(span + offsetof(struct rec_target_span, recording))))
		recp = 0;
	/* A failed read may be transient (page out); try again on the next event. */
	if (!recp || bpf_probe_read_user(&tr, sizeof(tr), (const void *)recp)) {
		count(REC_C_UNKNOWN_RECORDING);
		return NULL;
	}
	if (tr.magic != REC_RECORDING_MAGIC || tr.key != key || tr.cap < 2) {
		bpf_map_update_elem(&retired, &k, &one, BPF_ANY);
		count(REC_C_RETIRED_EVENTS);
		return NULL;
	}
	nv.recorder = tr.recorder_key;
	nv.cap = tr.cap;
	nv.state = REC_RS_LIVE;
	err = create_recording(tgid, key, &nv);
	if (err == 0) {
		emit_recording(key, &nv, recp + REC_TARGET_SUBJECT_OFF, 0);
	} else if (err > 0) {
		refuse_recording(tgid, key, &nv, err, recp + REC_TARGET_SUBJECT_OFF, event);
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
		refuse_recording(tgid, key, &v, err, 0, 0);
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
		struct rec_rval a = { .recorder = u->recorder,
				      .cap = u->cap,
				      .seq = u->seen,
				      .dropped = u->seen,
				      .state = REC_RS_LIVE };

		emit_recording(key, &a, subject, u->reason);
	}
	return 0;
}

SEC("usdt")
int on_recording_free(struct pt_regs *ctx)
{
	struct rec_rkey k = { .tgid = bpf_get_current_pid_tgid() >> 32 };
	struct rec_untracked *u;
	struct rec_rval *v;
	__u8 one = 1;
	long a[2];

	if (!adopt_process())
		return 0;
	if (read_args(ctx, a, 2))
		return 0;
	k.key = a[0];
	bpf_map_update_elem(&retired, &k, &one, BPF_ANY);
	v = bpf_map_lookup_elem(&recordings, &k);
	if (!v) {
		u = bpf_map_lookup_elem(&untracked, &k);
		if (u) {
			struct rec_rval r = { .recorder = u->recorder,
					      .cap = u->cap,
					      .seq = u->seen,
					      .dropped = u->seen,
					      .state = REC_RS_RETIRED };

			/*
			 * Its final count goes with the record, and its place in
			 * the untracked table is free at once: no slot to hand
			 * over, and its later events find it in retired.
			 */
			emit_recording(k.key, &r, 0, u->reason);
			bpf_map_delete_elem(&untracked, &k);
		}
		return 0;
	}
	v = counters_of(k.tgid, v);
	if (!v)
		return 0;
	/* User space deletes the entry once it has read the final counters. */
	v->state = REC_RS_RETIRED;
	emit_recording(k.key, v, 0, 0);
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

static __always_inline struct rec_stack *thread_stack(__u64 chain, bool *seeded);

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
}

static __always_inline void seed_stack(struct rec_stack *st, __u64 span)
{
	seed_stack_of(st, span, NULL);
}

/* This thread's stack; *seeded says whether it was just read from the target. */
static __always_inline struct rec_stack *thread_stack(__u64 chain, bool *seeded)
{
	struct rec_stack *st;

	*seeded = false;
	st = bpf_task_storage_get(&stacks, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count(REC_C_NO_STORAGE);
		return NULL;
	}
	if (!st->seeded) {
		st->seeded = 1;
		seed_stack(st, chain);
		*seeded = true;
	}
	return st;
}

SEC("usdt")
int on_span_enter(struct pt_regs *ctx)
{
	long args[BPF_USDT_MAX_ARG_CNT];
	__u64 span, meta, key, prev;
	struct rec_stack *st;
	bool seeded;
	__u32 d;

	if (!adopt_process())
		return 0;
	if (read_args(ctx, args, 5))
		return 0;
	span = args[0];
	meta = args[1];
	key = args[2];
	prev = args[4];
	st = thread_stack(prev, &seeded);
	if (!st)
		return 0;
	d = st->depth;
	if (d >= REC_MAX_DEPTH) {
		st->overflow++;
		count(REC_C_DEPTH_OVERFLOW);
		return 0;
	}
	st->frames[d].span = span;
	st->frames[d].meta = meta;
	st->frames[d].recording = key;
	st->depth = d + 1;
	return 0;
}

SEC("usdt")
int on_span_exit(struct pt_regs *ctx)
{
	long args[BPF_USDT_MAX_ARG_CNT];
	struct rec_stack *st;
	__u64 span;
	bool seeded;
	__u32 d;

	if (!adopt_process())
		return 0;
	if (read_args(ctx, args, 4))
		return 0;
	span = args[0];
	/* args[3]: the thread's current span after this exit */
	st = thread_stack(args[3], &seeded);
	if (!st)
		return 0;
	/* Seeded from the chain as it is after this exit: already up to date. */
	if (seeded && st->depth)
		return 0;
	/* Enters past the limit were not kept; their exits come first. */
	if (st->overflow) {
		st->overflow--;
		return 0;
	}
	d = st->depth;
	if (d == 0 || d > REC_MAX_DEPTH) {
		count(REC_C_EXIT_UNMATCHED);
		return 0;
	}
	if (st->frames[d - 1].span == span) {
		st->depth = d - 1;
		return 0;
	}
	/* Exited out of order: remove it where it is, keep the spans inside it. */
	for (int i = REC_MAX_DEPTH - 2; i >= 0; i--) {
		if (i >= d - 1 || st->frames[i].span != span)
			continue;
		for (int j = i; j < REC_MAX_DEPTH - 1; j++) {
			if (j >= d - 1)
				break;
			st->frames[j] = st->frames[j + 1];
		}
		st->depth = d - 1;
		count(REC_C_EXIT_OUT_OF_ORDER);
		return 0;
	}
	count(REC_C_EXIT_UNMATCHED);
	return 0;
}

/* rec_is_attached() hits this once everything else is attached; with --binary it adopts. */
SEC("usdt")
int on_attached(struct pt_regs *ctx)
{
	adopt_process();
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

	/*
	 * Only threads that are asleep: a running one seeds itself at its next
	 * probe, and writing its stack here could undo a push it makes meanwhile.
	 */
	if (!task || task->tgid != iter_tgid || !tls_current_off || task->__state == 0)
		return 0;
	if (bpf_copy_from_user_task(&cur, sizeof(cur),
				    (const void *)(task->thread.fsbase + tls_current_off), task, 0))
		return 0;
	st = bpf_task_storage_get(&stacks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st || __sync_val_compare_and_swap(&st->seeded, 0, 1) != 0)
		return 0;
	seed_stack_of(st, cur, task);
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
	st = bpf_task_storage_get(&stacks, task, 0, 0);
	if (st && (st->depth || st->overflow)) {
		struct rec_stack_rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

		if (r) {
			fill_hdr(&r->hdr, REC_RT_STACK, sizeof(*r));
			r->depth = st->depth;
			r->overflow = st->overflow;
			__builtin_memcpy(r->frames, st->frames, sizeof(r->frames));
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
