/* SPDX-License-Identifier: MIT */
/*
 * What the loader knows of one traced process: its recordings, each with a
 * spool of its last cap events, the callsites seen, and the span stacks of its
 * threads. Nothing here talks to BPF, so a model can also come from a dump.
 */
#ifndef REC_MODEL_H
#define REC_MODEL_H

#include <stdint.h>
#include <sys/types.h>

#include "../bpf/recorder.h"
#include "callsite.h"
#include "event.h"
#include "procmaps.h"
#include "spool.h"
#include "u64map.h"

/* Caps above this are clamped (a hostile target could ask for 2^63). */
#define REC_CAP_MAX (1u << 20)
/* Retired recordings kept per process for their tails; older ones are freed. */
#define REC_RETIRED_KEEP 64
/* Bytes of one spool slot: the largest event record. */
#define REC_EVENT_REC_MAX (sizeof(struct rec_event_rec) + REC_STR_AREA)

struct rec_rstate {
	uint64_t key;
	uint64_t recorder;
	uint64_t cap;
	char subject[REC_SUBJECT_MAX];
	int retired;
	uint64_t produced;	/* events numbered by the BPF side */
	uint64_t dropped;	/* of those, lost when the ring buffer was full */
	uint64_t received;	/* delivered to us ("kept"): produced = received + dropped */
	uint64_t stale;		/* delivered after newer events had pushed them out */
	struct rec_spool *spool;
	struct rec_rstate *next;	/* creation order */
};

struct rec_thread_stack {
	uint32_t tid;
	uint32_t depth;
	uint32_t overflow;
	struct rec_frame frames[REC_MAX_DEPTH];
};

enum rec_end {
	REC_END_RUNNING = 0,	/* still running (a dump asked for while alive) */
	REC_END_EXIT = 1,	/* exited with status end_code */
	REC_END_SIGNAL = 2,	/* killed by signal end_code */
	REC_END_UNKNOWN = 3,	/* gone, but how was not seen */
};

struct rec_proc {
	pid_t pid;
	pid_t ns_pid;			/* pid inside its namespace, 0 if the same */
	uid_t uid;			/* its owner: who owns /proc/PID at the attach (its effective
					 * uid; root for a process that is not dumpable), or
					 * (uid_t)-1 if unknown (read from a dump) */
	int alive;
	enum rec_end end;
	int end_code;			/* exit status or signal number */
	int end_core;			/* the signal dumped core */
	int64_t clock_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	struct rec_maps maps;		/* for callsite reads once the process is gone */
	struct rec_u64map callsites;	/* address -> struct rec_callsite * */
	struct rec_u64map literals;	/* address -> struct rec_literal *, see rec_proc__literal */
	unsigned char norm[REC_EVENT_MAX];	/* the last event ingested, normalized */
	char literal_buf[REC_STR_MAX];	/* a literal read past the cache's limit */
	struct rec_u64map recordings;	/* key -> struct rec_rstate * */
	struct rec_rstate *first, *last;
	uint64_t malformed;		/* records that failed validation */
	uint64_t orphans;		/* events of recordings we know nothing of */
	struct rec_thread_stack *stacks;	/* last snapshot, see rec_proc__set_stacks */
	size_t nstacks;
	struct rec_thread_stack *death;	/* stacks threads were in as they exited */
	size_t ndeath;
	uint64_t counters[REC_C_MAX];	/* the BPF side's error counters (all processes) */
	uint64_t bpf_recordings;	/* entries of this process in the BPF recordings table */
};

/* Initializes p for pid and snapshots its maps. Returns 0 or a negative errno. */
int rec_proc__init(struct rec_proc *p, pid_t pid);
/*
 * The string literal at addr in the target, read once from its memory (or, once
 * it is gone, from the file mapped there) and cached; up to REC_STR_MAX - 1
 * bytes. Returns 0 and sets v->str, or -EFAULT if it cannot be read.
 */
int rec_proc__literal(struct rec_proc *p, uint64_t addr, struct rec_value *v);
void rec_proc__fini(struct rec_proc *p);

/* Raises rs's produced and dropped counts to these, if they are higher. */
void rec_rstate__update_counts(struct rec_rstate *rs, uint64_t produced, uint64_t dropped);

/* The recording for key, or NULL. */
struct rec_rstate *rec_proc__find(struct rec_proc *p, uint64_t key);
/* The recording for key, created with cap (clamped to 2..REC_CAP_MAX) if new. */
struct rec_rstate *rec_proc__get(struct rec_proc *p, uint64_t key, uint64_t recorder,
				 uint64_t cap);

/*
 * Takes one event record, as the BPF side wrote it, and keeps it normalized
 * (rec_event__normalize: literals read, string area trimmed). On success fills
 * *d (string values point into p, valid until the next call)
 * and *rsp, and returns 0. Returns -EINVAL for a malformed record, -ENOENT for an
 * unknown recording (both counted), -ESTALE if it fell out of the spool window.
 */
int rec_proc__ingest_event(struct rec_proc *p, const void *data, size_t len,
			   struct rec_decoded *d, struct rec_rstate **rsp);
/* Takes one recording record (announcement, subject, retirement). */
int rec_proc__ingest_recording(struct rec_proc *p, const struct rec_recording_rec *r);

/*
 * The callsite at addr, read from the live process or, once it is gone, from the
 * file that was mapped there. NULL if it cannot be read or parsed (remembered).
 */
const struct rec_callsite *rec_proc__callsite(struct rec_proc *p, uint64_t addr);

/* Takes the stack a thread exited in. Returns 0, -EINVAL or -ENOMEM. */
int rec_proc__ingest_stack(struct rec_proc *p, const struct rec_stack_rec *r);
/* Takes how the process ended (a wait status). */
void rec_proc__ingest_exit(struct rec_proc *p, const struct rec_exit_rec *r);
/* The process is gone: its stacks become the ones its threads died in. */
void rec_proc__died(struct rec_proc *p);
/* "exited with status 7", "killed by SIGKILL (core dumped)", "running", ... */
const char *rec_proc__describe_end(const struct rec_proc *p, char *buf, size_t len);

/*
 * Learns the recording of the span at address span in the live target from its
 * memory (struct rec_span, then struct rec_recording): for a thread that has
 * been inside it since before the attach and has emitted nothing since.
 * Returns 0, -EFAULT if it cannot be read, or -ENOENT if it is not a live
 * recording.
 */
int rec_proc__learn_recording(struct rec_proc *p, uint64_t span);

/* Replaces the stack snapshot (takes ownership of v). */
void rec_proc__set_stacks(struct rec_proc *p, struct rec_thread_stack *v, size_t n);

#endif /* REC_MODEL_H */
