/* SPDX-License-Identifier: MIT */
/*
 * What the target writes, the probe ABI (docs/probe-abi.md): the limits and
 * enums of include/recorder.h's probes and their arguments, mirrors of the
 * target's structs that BPF and recorder-attach read from its memory, and the
 * batch buffers a thread of the target fills. Part of bpf/recorder_abi.h;
 * tests/header/abi.c checks it against include/recorder.h.
 */
#ifndef RECORDER_ABI_PROBE_H
#define RECORDER_ABI_PROBE_H

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

/*
 * The batch path (docs/probe-abi.md, "Batches"). While recorder-attach has
 * armed the "batch" probe, each thread of the target appends events and span
 * enters and exits to its own buffer of REC_TBUF_SIZE bytes (an image of
 * marker REC_ATTACH_MARKER_REC, REC_TBUF_SIZE_REC): this header, then records
 * (struct rec_brec) up to len. The buffer is announced once with
 * REC_BATCH_OPEN and handed over with REC_BATCH_FLUSH when full; then the
 * thread sets len to 0 and only after that counts gen up. The BPF side trusts
 * none of it: every length and kind is checked, and a batch that fails a check
 * is counted (REC_C_BATCH_BAD) and ends there.
 */
#define REC_TBUF_SIZE 65536
/* The buffer of an image of marker REC_ATTACH_MARKER_REC: at most this, as any other. */
#define REC_TBUF_SIZE_REC 16384
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
/*
 * REC_ATTACH_MARKER_BIG: as REC_ATTACH_MARKER_REC, and the image's batch
 * buffers are REC_TBUF_SIZE bytes, four times REC_TBUF_SIZE_REC (a trap per
 * 700 events rather than 170): only a recorder-attach whose BPF side takes
 * such a batch writes its tracer word.
 */
#define REC_ATTACH_MARKER_BIG 0x5244

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

#endif /* RECORDER_ABI_PROBE_H */
