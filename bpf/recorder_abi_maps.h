/* SPDX-License-Identifier: MIT */
/*
 * The BPF maps as user space reads and writes them: their sizes, keys and
 * values, and the counters' indexes. Part of bpf/recorder_abi.h.
 */
#ifndef RECORDER_ABI_MAPS_H
#define RECORDER_ABI_MAPS_H

#include "recorder_abi_ring.h"

/*
 * Distinct USDT argument layouts one session holds (libbpf's
 * BPF_USDT_MAX_SPEC_CNT, raised: big programs have many; see bpf/recorder.bpf.c).
 */
#define REC_USDT_MAX_SPECS 16384
/* Executables one session follows with --binary. */
#define REC_MAX_BINARIES 8

/*
 * Values of the BPF binaries map: an executable --binary traces, and one whose
 * links are all attached (its processes are ready as they are adopted).
 */
#define REC_BINARY_ADDED 1
#define REC_BINARY_READY 2

/* Key of the BPF binaries map: the executables --binary traces. */
struct rec_binary_key {
	__u64 ino;
	__u64 dev; /* kernel encoding: major << 20 | minor */
};

/* Key of the BPF recordings table: recording keys are unique per process. */
struct rec_rkey {
	__u32 tgid;
	__u32 pad;
	__u64 key;
};

/* Value of the BPF recordings table. */
struct rec_rval {
	__u64 recorder;
	__u64 cap;
	__u64 seq;
	__u64 dropped;
	__u64 spans_lost; /* spans of it refused by a full ring (its threads left them) */
	__u32 state;
	__u32 slot; /* 0: the counters are these; n: those of rslots[n - 1] */
	/*
	 * Whose batch will say it was freed: 0 its own probe (at once), a tid
	 * (REC_BK_REC_NEW came in that thread's batch), or REC_OWNER_UNKNOWN
	 * (learnt from an event of a batch). Another thread's events of it are
	 * taken only while the target's struct still holds its key: the free may
	 * be pending in the owner's batch.
	 */
	__u32 owner;
	__u32 pad;
};
#define REC_OWNER_UNKNOWN 0xffffffffu

/*
 * Value of the BPF traced table: a traced process's use of the recordings
 * table. Its entries there, the quota's count, are created less those user
 * space has deleted (the BPF released table: only user space writes it).
 */
struct rec_pstat {
	__u64 created;
	__u64 over_quota;	 /* recordings refused at the quota, listed untracked */
	__u64 over_quota_events; /* events of recordings refused at the quota */
	__u64 table_full;	 /* recordings refused for want of room, listed untracked */
	__u64 table_full_events; /* events of recordings refused for want of room */
};

/*
 * Value of the BPF untracked table (same key as the recordings table): a live
 * recording that was refused an entry, and how many of its events were counted
 * since. Deleted when it is retired (its retirement record carries the count),
 * or by user space once its process is gone.
 */
struct rec_untracked {
	__u64 recorder;
	__u64 cap;
	__u64 seen;	  /* events of it since it was refused (all of them lost) */
	__u64 spans_lost; /* spans of it refused by a full ring */
	__u32 reason;	  /* enum rec_untracked_reason */
	__u32 pad;
};

/*
 * The BPF rslots array: a recording's counters where an event finds them
 * without a hash lookup, at the slot its key's low bits name (keys count up
 * per process). A recording whose slot is taken keeps its counters in the
 * recordings table. k.tgid 0 is a free slot; k.key is set only once the
 * recordings table points at the slot.
 */
#define REC_RSLOTS 4096
struct rec_rslot {
	struct rec_rkey k;
	struct rec_rval v;
};

/* Per-thread span stack (task-local storage). */
struct rec_stack {
	__u32 depth;	/* valid frames, bottom first */
	__u32 overflow; /* enters beyond REC_MAX_DEPTH not yet exited */
	__u32 seeded;	/* the chain of spans entered before attach was read */
	__u32 events;	/* events this thread emitted: paces the ring-fill check */
	__u32 spans;	/* span ids given out on this thread (the low half of the next) */
	__u32 pad;
	struct rec_frame frames[REC_MAX_DEPTH];
};

/* Global counters of things that went wrong (per-CPU array, summed by user space). */
enum rec_counter {
	REC_C_RING_FULL = 0,	 /* records lost because the ring buffer was full */
	REC_C_STR_FAULT,	 /* string fields that could not be read */
	REC_C_DEPTH_OVERFLOW,	 /* enters beyond REC_MAX_DEPTH */
	REC_C_EXIT_UNMATCHED,	 /* exits of spans not entered on that thread */
	REC_C_EXIT_OUT_OF_ORDER, /* exits of spans that were not the innermost */
	REC_C_RETIRED_EVENTS,	 /* events in spans of retired recordings, ignored */
	REC_C_UNKNOWN_RECORDING, /* events whose recording could not be verified */
	REC_C_NO_STORAGE,	 /* thread storage could not be created */
	REC_C_BAD_ARG,		 /* probe arguments that could not be read */
	REC_C_UNTRACKED_EVENTS,	 /* events of recordings refused a table entry */
	REC_C_OVER_QUOTA,	 /* refusals: the process had its quota of recordings */
	REC_C_TABLE_FULL,	 /* refusals: the recordings table was full */
	REC_C_BATCH_BAD,   /* batches (or their tails) refused: a malformed header or record */
	REC_C_BATCH_FAULT, /* batches that could not be read from the target's memory */
	/*
	 * Exits of spans entered before the attach, the first probe of their
	 * thread since: expected of an attach mid-flight, not unmatched.
	 */
	REC_C_EXIT_BEFORE_ATTACH,
	/*
	 * Spans a thread's stack held that its own chain of spans no longer
	 * had when the two were compared (a stack checked while the thread
	 * slept, or one read again from the chain after records were missed):
	 * dropped, not shown open.
	 */
	REC_C_STALE_SPANS,
	/* Spans read again from a thread's chain, their enter time not known (REC_FF_UNCERTAIN). */
	REC_C_UNCERTAIN_SPANS,
	/*
	 * Batches flushed under another recorder-attach's tracer word (a dead
	 * one's, after a restart, before this one's word was written): left
	 * to it, their events not seen here.
	 */
	REC_C_BATCH_FOREIGN,
	/*
	 * Collections of a sleeping thread's batch stopped because the thread
	 * woke while it was walked (its own flush would walk its later records
	 * at once), or at an event whose recording it freed meanwhile: the rest
	 * left to the next take, in order. Not a loss.
	 */
	REC_C_BATCH_DEFERRED,
	/*
	 * Batches a thread flushed while the collecting iterator walked its
	 * earlier records: queued for the iterator to walk after them, in
	 * order, rather than walked into the same stack at the same time.
	 */
	REC_C_BATCH_QUEUED,
	REC_C_MAX,
};

#endif /* RECORDER_ABI_MAPS_H */
