/* SPDX-License-Identifier: MIT */
/*
 * The probe ABI as the BPF programs (bpf/recorder.bpf.c) and user space (user/)
 * see it, in one place: the limits and enums of include/recorder.h's probes
 * (docs/probe-abi.md), mirrors of its target-side structs, and the records BPF
 * writes to user space. Records have fixed-width fields only, no pointers, and
 * are 8-byte aligned; user space validates every type, size and length before
 * reading one. tests/header/abi.c checks every constant and layout that
 * include/recorder.h also defines against it, at compile time.
 */
#ifndef RECORDER_ABI_H
#define RECORDER_ABI_H

#ifdef __BPF__
/* vmlinux.h provides __u8..__u64 */
#else
#include <linux/types.h>
#endif

/* Fields an event carries at most (include/recorder.h: REC_MAX_FIELDS). */
#define REC_MAX_FIELDS 8
/* struct rec_recording's magic in the target (include/recorder.h), while it lives. */
#define REC_RECORDING_MAGIC 0x31474e4944524352ULL
/* "RCS1", the first bytes of every callsite metadata blob (docs/probe-abi.md). */
#define REC_CALLSITE_MAGIC 0x31534352U
/* The longest callsite metadata blob read from a target. */
#define REC_CALLSITE_MAX 2048

/* Event and span levels (include/recorder.h: REC__LEVEL_*). */
enum rec_level {
	REC_LEVEL_TRACE = 0,
	REC_LEVEL_DEBUG = 1,
	REC_LEVEL_INFO = 2,
	REC_LEVEL_WARN = 3,
	REC_LEVEL_ERROR = 4,
	/*
	 * In a callsite only: each event of the site carries its level, in bits
	 * REC_TYPES_LEVEL_SHIFT.. of the event's types (REC_EVENT_LEVEL).
	 */
	REC_LEVEL_RUNTIME = 7,
};
/* Where an event of a REC_LEVEL_RUNTIME callsite has its level: 4 bits of types. */
#define REC_TYPES_LEVEL_SHIFT 32

/*
 * Distinct USDT argument layouts one session holds (libbpf's
 * BPF_USDT_MAX_SPEC_CNT, raised: big programs have many; see bpf/recorder.bpf.c).
 */
#define REC_USDT_MAX_SPECS 16384
/* Executables one session follows with --binary. */
#define REC_MAX_BINARIES 8

/*
 * Mirrors of the target's struct rec_recording (its fixed part; the subject
 * string follows at REC_TARGET_SUBJECT_OFF) and struct rec_span
 * (include/recorder.h), as the BPF side and recorder-attach read them from the
 * target's memory.
 */
struct rec_target_recording {
	__u64 magic;
	__u64 key;
	__u64 recorder_key;
	__u64 cap;
};
#define REC_TARGET_SUBJECT_OFF 32

struct rec_target_span {
	__u64 meta;
	__u64 recording_key;
	__u64 recording;
	__u64 parent;
	__u64 prev;
	__u64 entered;
};
#define REC_SUBJECT_MAX 64
/* Deepest per-thread span stack the BPF side keeps; deeper enters are counted. */
#define REC_MAX_DEPTH 32
/* A string field is read with at most this many bytes, NUL included. */
#define REC_STR_MAX 256
/*
 * Bytes for all string fields of one event; strings are packed in order. An
 * event with exactly one string field has a smaller area, REC_STR_MAX bytes:
 * event records are sizeof(struct rec_event_rec) plus 0, REC_STR_MAX or
 * REC_STR_AREA bytes.
 */
#define REC_STR_AREA 768

/* Field types, 4 bits each in the event probe's types argument (include/recorder.h: REC__TYPE_*). */
enum rec_field_type {
	REC_TYPE_NONE = 0,
	REC_TYPE_STR = 1,
	REC_TYPE_I64 = 2,
	REC_TYPE_U64 = 3,
	REC_TYPE_F64 = 4,
	REC_TYPE_BOOL = 5,
	/*
	 * A string literal (include/recorder.h knows at compile time): its bytes
	 * are in the target's read-only image for as long as the image is mapped,
	 * so the BPF side passes the address and user space reads the bytes once
	 * per address. It turns a literal into a REC_TYPE_STR field at ingest;
	 * records that reach a spool, a dump or a reader never hold this type.
	 */
	REC_TYPE_STR_LIT = 6,
};

/* How a string field was read (bits 32..39 of its value slot). */
enum rec_str_status {
	REC_STR_OK = 0,
	REC_STR_TRUNCATED = 1, /* longer than REC_STR_MAX - 1 bytes */
	REC_STR_FAULT = 2,     /* the target's memory could not be read */
	REC_STR_NULL = 3,      /* the target passed NULL */
	REC_STR_NOSPACE = 4,   /* the event's string area was full */
};

/* A string field's value slot: offset into strings[], length without NUL, status. */
#define REC_STR_SLOT(off, len, st) ((__u64)(off) | ((__u64)(len) << 16) | ((__u64)(st) << 32))
#define REC_STR_SLOT_OFF(v) ((__u32)((v)&0xffff))
#define REC_STR_SLOT_LEN(v) ((__u32)(((v) >> 16) & 0xffff))
#define REC_STR_SLOT_STATUS(v) ((__u32)(((v) >> 32) & 0xff))

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
 * The batch path (docs/probe-abi.md, "Batches"). While recorder-attach has
 * armed the "batch" probe, each thread of the target appends events and span
 * enters and exits to its own buffer of REC_TBUF_SIZE bytes: this header,
 * then records (struct rec_brec) up to len. The buffer is announced once with
 * REC_BATCH_OPEN and handed over with REC_BATCH_FLUSH when full; then the
 * thread sets len to 0 and only after that counts gen up. The BPF side trusts
 * none of it: every length and kind is checked, and a batch that fails a check
 * is counted (REC_C_BATCH_BAD) and ends there.
 */
#define REC_TBUF_SIZE 16384
#define REC_TBUF_MAGIC 0x3146554254434552ULL /* "RECTBUF1" */
#define REC_TBUF_HDR 64
#define REC_TBUF_DATA (REC_TBUF_SIZE - REC_TBUF_HDR)

/* The batch probe's first argument; the second is the buffer's address. */
enum rec_batch_op {
	REC_BATCH_FLUSH = 1, /* the buffer is full: take its records */
	REC_BATCH_OPEN = 2,  /* a new buffer for this thread */
};

/* How the records of a buffer are timed. */
enum rec_batch_clock {
	REC_BCLOCK_MONO = 1, /* CLOCK_MONOTONIC nanoseconds */
	REC_BCLOCK_TSC = 2,  /* rdtsc: the clocksource is tsc */
};

/*
 * The tracer word of an image's attach block (include/recorder.h): what
 * recorder-attach writes once every probe of the image is attached. Bits 2 to
 * 31 are a number of the recorder-attach's own, never 0.
 */
#define REC_TRACER_ON 1u
#define REC_TRACER_BATCH 2u
/*
 * The marker after the "attached" semaphore of an image that has the word.
 * REC_ATTACH_MARKER_REC: the image also writes its recordings' lives into its
 * batches (REC_BK_REC_NEW, _SPAN, _FREE), so that a request's recording costs
 * no kernel entry of its own; only a recorder-attach that reads those records
 * writes its tracer word.
 */
#define REC_ATTACH_MARKER 0x5242
#define REC_ATTACH_MARKER_REC 0x5243

struct rec_tbuf_hdr {
	__u64 magic;
	__u32 gen;   /* flushes so far */
	__u32 len;   /* bytes of records after the header */
	__u32 clock; /* enum rec_batch_clock */
	__u32 tid;
	__u32 tracer; /* the tracer word of the recorder-attach it was announced to */
	__u32 pad0;
	__u64 pad[4];
};

enum rec_brec_kind {
	REC_BK_EVENT = 1,
	REC_BK_ENTER = 2,
	REC_BK_EXIT = 3,
	REC_BK_REC_NEW = 4,  /* rec_recording_new(): struct rec_brec_rec */
	REC_BK_REC_SPAN = 5, /* rec_recording_span(): struct rec_brec_rec, then the subject */
	REC_BK_REC_FREE = 6, /* rec_recording_free(): struct rec_brec_rec */
};

/* The head of every record in a batch; size is a multiple of 8. */
struct rec_brec {
	__u16 kind;	/* enum rec_brec_kind */
	__u16 size;	/* bytes of the whole record */
	__u16 strbytes; /* event: bytes of its string area, at most REC_STR_AREA */
	__u8 nvals;	/* event: values that follow, at most REC_MAX_FIELDS */
	__u8 pad;	/* the target writes 0; in a REC_RT_BATCH record, REC_BREC_TAKEN */
	__u64 time;
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
 * A recording's new, span or free in a batch (images with
 * REC_ATTACH_MARKER_REC), the recording probes' arguments: the target fills
 * key, recorder, cap and recording (the struct's address), and for
 * REC_BK_REC_SPAN the REC_SUBJECT_MAX bytes of its subject after the record.
 * In a REC_RT_BATCH record the BPF side fills the rest as the
 * struct rec_recording_rec that probe would have sent: the counts, state
 * (enum rec_recording_state) and untracked (0 or enum rec_untracked_reason).
 */
struct rec_brec_rec {
	struct rec_brec h;
	__u64 key;
	__u64 recorder;
	__u64 cap;
	__u64 recording;
	__u64 seq;
	__u64 dropped;
	__u64 spans_lost;
	__u32 state;
	__u32 untracked;
};
#define REC_BREC_REC_SIZE(kind)                                                                    \
	(sizeof(struct rec_brec_rec) + ((kind) == REC_BK_REC_SPAN ? REC_SUBJECT_MAX : 0))

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
 * An event: the event probe's arguments and the span's recording pointer (the
 * span may be gone by the time the batch is read; the recording lives until
 * it is freed, which hands the thread's batch over first), then nvals values
 * and the string area (strings copied by the target, each value slot a
 * REC_STR_SLOT into it).
 */
struct rec_brec_event {
	struct rec_brec h;
	__u64 meta;
	__u64 types;
	__u64 key;
	__u64 span;
	__u64 recording;
	__u64 values[];
};

/* The size of a batch's event record with nvals values and strbytes of strings. */
#define REC_BREC_EVENT_SIZE(nvals, strbytes)                                                       \
	(sizeof(struct rec_brec_event) + 8 * (nvals) + (((strbytes) + 7) & ~7U))

/* The span_enter probe's arguments but the recording pointer. */
struct rec_brec_enter {
	struct rec_brec h;
	__u64 span;
	__u64 meta;
	__u64 key;
	__u64 prev;
};

/* The span_exit probe's arguments: the span and the thread's current span after. */
struct rec_brec_exit {
	struct rec_brec h;
	__u64 span;
	__u64 cur;
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
#define REC_SPANS_MAX 256

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

#endif /* RECORDER_ABI_H */
