/* SPDX-License-Identifier: MIT */
/*
 * The records BPF writes to user space, into the ring buffer (and the stack
 * iterator's): the header every record starts with, the record types, and
 * each record's layout. Part of bpf/recorder_abi.h.
 */
#ifndef RECORDER_ABI_RING_H
#define RECORDER_ABI_RING_H

#include "recorder_abi_probe.h"

enum rec_record_type {
	REC_RT_EVENT = 1,
	REC_RT_RECORDING = 2,
	REC_RT_STACK = 3, /* a thread's span stack as it exits */
	REC_RT_EXIT = 4,  /* the last thread of a traced process exited */
	/*
	 * --binary: a process of a traced executable was adopted (its exec, its
	 * fork, or its first probe), or one traced exec'd another file (that
	 * file's ids)
	 */
	REC_RT_HELLO = 5,
	REC_RT_BATCH = 6, /* the events of a thread's batch, as one record (struct rec_batch_rec) */
	REC_RT_SPAN = 7,  /* a thread left a span (struct rec_span_rec) */
	REC_RT_SPANS = 8, /* the spans a thread left in one batch (struct rec_spans_rec) */
	REC_RT_TRIGGER = 9, /* the program called rec_trigger() (struct rec_trigger_rec) */
	/* A traced thread's time off the CPU, once it runs again (struct rec_offcpu_rec). */
	REC_RT_OFFCPU = 24,
};

struct rec_hdr {
	__u16 type; /* enum rec_record_type */
	__u16 size; /* bytes in the whole record */
	__u32 tgid;
	__u32 tid;
	__u32 flags;   /* enum rec_hdr_flag */
	__u64 time_ns; /* CLOCK_MONOTONIC, or the TSC with REC_HF_TSC */
};

enum rec_hdr_flag {
	/* time_ns is the target's rdtsc, from the batch path: user space converts it. */
	REC_HF_TSC = 1,
};

/*
 * In a REC_RT_BATCH record, an event the BPF side numbered: its recording is
 * tracked and its span slot holds its seq. Any other event of the record was
 * counted where it was refused (untracked, retired, unknown) and is skipped.
 * A recording's record (struct rec_brec_rec) so marked is one the recording
 * probe would have sent, filled in.
 */
#define REC_BREC_TAKEN 1

/*
 * The events of one batch as taken (from a flush, a dying or exec'ing thread,
 * or a collecting read), copied into the ring as one record: the header (the
 * thread, REC_HF_TSC if the times are the TSC), then the batch's records of
 * bytes [start, end) (records before start were taken earlier). Span records
 * are there too (already applied to the stacks), to be skipped.
 */
struct rec_batch_rec {
	struct rec_hdr hdr;
	__u32 start;
	__u32 end;
	/* __u8 data[end]: the batch's records from its first byte */
};

/*
 * --binary: a process running one of the traced executables hit its first
 * probe. It may be gone by the time user space reads this (a forked child that
 * ran a few sites and exited), so it says what /proc can no longer tell.
 */
struct rec_hello_rec {
	struct rec_hdr hdr;
	__u32 ppid; /* its parent's tgid when it said hello */
	__u32 pad;
	__u64 exe_ino;	  /* the executable's inode and device (kernel encoding, */
	__u64 exe_dev;	  /* major << 20 | minor), as in the binaries map */
	__u64 start_code; /* mm->start_code: where its executable segment is loaded */
};

struct rec_event_rec {
	struct rec_hdr hdr;
	__u64 recording;	      /* recording key */
	__u64 seq;		      /* per-recording sequence number, from 0 */
	__u64 meta;		      /* address of the callsite metadata in the target */
	__u64 types;		      /* 4 bits per field, enum rec_field_type, 0 ends */
	__u64 values[REC_MAX_FIELDS]; /* raw value, or REC_STR_SLOT for strings */
	char strings[];		      /* REC_STR_AREA bytes when any field is a string */
};

enum rec_recording_state {
	REC_RS_LIVE = 1,    /* announced, or found live by its first event */
	REC_RS_RETIRED = 2, /* freed by the target */
};

/*
 * Why a recording was refused an entry in the recordings table, and so is
 * untracked: its events are only counted (struct rec_untracked), never delivered.
 */
enum rec_untracked_reason {
	REC_UT_OVER_QUOTA = 1, /* its process had max_per_process entries */
	REC_UT_TABLE_FULL = 2, /* the table had no room */
};

/* Announces a recording, a new subject for it, or its retirement. */
struct rec_recording_rec {
	struct rec_hdr hdr;
	__u64 key;
	__u64 recorder;
	__u64 cap;
	__u64 seq;	  /* events numbered so far */
	__u64 dropped;	  /* of those, lost because the ring buffer was full (or all, untracked) */
	__u64 spans_lost; /* spans of it that its threads left and a full ring refused */
	__u32 state;	  /* enum rec_recording_state */
	__u32 has_subject;
	__u32 untracked; /* 0, or enum rec_untracked_reason */
	__u32 pad;
	char subject[REC_SUBJECT_MAX];
};

/* Deepest per-thread span stack the BPF side keeps; deeper enters are counted. */
#define REC_MAX_DEPTH 32
struct rec_frame {
	__u64 span;	 /* address of struct rec_span in the target */
	__u64 meta;	 /* its callsite metadata */
	__u64 recording; /* its recording key, 0 = none */
	__u64 id;	 /* the span's id: tid << 32 | the thread's enters so far; never 0 */
	__u64 enter;	 /* when it was entered (CLOCK_MONOTONIC, or the TSC with
			  * REC_FF_TSC); 0 = not known (entered before the attach) */
	__u32 flags;	 /* enum rec_frame_flag */
	__u32 pad;
};

enum rec_frame_flag {
	/* enter is the target's rdtsc (the batch path): user space converts it. */
	REC_FF_TSC = 1,
	/*
	 * Read from the thread's own chain of spans after BPF may have missed
	 * some of its enters and exits (records written under another
	 * recorder-attach, a stack that no longer matched the chain): open for
	 * certain, entered at a time not known (enter 0). Never a hung span.
	 */
	REC_FF_UNCERTAIN = 2,
};

/*
 * A thread left a span (docs/probe-abi.md, "Spans"): the header (the thread,
 * time_ns the exit, REC_HF_TSC if it and enter are the TSC), then the span.
 * It takes no event seq. enter is 0 if it is not known, or was taken on
 * another clock than the exit.
 */
struct rec_span_rec {
	struct rec_hdr hdr;
	__u64 recording; /* recording key */
	__u64 id;
	__u64 parent;
	__u64 meta; /* its callsite metadata */
	__u64 enter;
};

/* One span of a REC_RT_SPANS record: a REC_RT_SPAN record's body, and its exit time. */
struct rec_span_item {
	__u64 recording; /* recording key */
	__u64 id;
	__u64 parent;
	__u64 meta; /* its callsite metadata */
	__u64 enter;
	__u64 exit;
};

/* The most spans one REC_RT_SPANS record holds (a power of two). */
#define REC_SPANS_MAX 1024

/*
 * The spans a thread left in one batch (the batch path), as one record rather
 * than a record each: the header (the thread; REC_HF_TSC if the times are
 * the TSC; time_ns 0), then n spans, each as in REC_RT_SPAN. Its size is
 * REC_SPANS_SIZE(n).
 */
struct rec_spans_rec {
	struct rec_hdr hdr;
	__u32 n; /* 1 to REC_SPANS_MAX */
	__u32 pad;
	struct rec_span_item items[REC_SPANS_MAX];
};

#define REC_SPANS_SIZE(n) (sizeof(struct rec_hdr) + 8 + (n) * sizeof(struct rec_span_item))

/* The stack a thread was in when it exited: what it was doing when it died. */
struct rec_stack_rec {
	struct rec_hdr hdr;
	__u32 depth;
	__u32 overflow;
	struct rec_frame frames[REC_MAX_DEPTH];
};

/* The most bytes of a rec_trigger() reason, its NUL included. */
#define REC_TRIGGER_REASON_MAX 128

/* The program called rec_trigger(rec, reason). */
struct rec_trigger_rec {
	struct rec_hdr hdr;
	__u64 recording;  /* its key; 0: none */
	__s32 reason_len; /* bytes read, NUL included; < 0: none or unreadable */
	__u32 pad;
	char reason[REC_TRIGGER_REASON_MAX];
};

/*
 * Why a traced thread left the CPU (rec_offcpu_rec.cause): a system call
 * number (>= 0), or one of these.
 */
enum rec_offcpu_cause {
	REC_OFF_RUNQ = -1,   /* preempted: runnable all along */
	REC_OFF_KERNEL = -2, /* asleep, in neither a system call nor a fault */
	REC_OFF_FAULT = -3,  /* asleep in a page fault (a major one: it waited on I/O or a lock) */
};

/*
 * One interval a traced thread spent off the CPU (kernel scheduler, tp_btf
 * sched_switch; the wakeup from its sched_info), written when it runs again: hdr.time_ns is
 * when it ran again. From off_ns to wake_ns it slept (blocked, in cause), from
 * wake_ns to hdr.time_ns it waited to run; wake_ns == off_ns if it was
 * preempted. All CLOCK_MONOTONIC.
 */
struct rec_offcpu_rec {
	struct rec_hdr hdr;
	__u64 off_ns;
	__u64 wake_ns;
	__s32 cause; /* a system call number, or enum rec_offcpu_cause */
	/* Intervals of this thread before this one that the full ring refused. */
	__u32 lost;
};

/* How a traced process ended: a wait status, as from waitpid(). */
struct rec_exit_rec {
	struct rec_hdr hdr;
	__s32 status;	  /* exit code << 8, or the signal (| 0x80 if it dumped core) */
	__u32 group_exit; /* the whole group was told to exit (exit_group, fatal signal) */
};

/* What the stack iterator writes per thread: this header, then REC_MAX_DEPTH frames. */
struct rec_stack_hdr {
	__u32 tgid;
	__u32 tid;
	__u32 depth;
	__u32 overflow;
};

#endif /* RECORDER_ABI_RING_H */
