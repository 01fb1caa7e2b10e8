/* SPDX-License-Identifier: MIT */
/*
 * Kernel time per span (issue 26): what the scheduler did to each thread of a
 * traced process, as the intervals it spent off the CPU (REC_RT_OFFCPU
 * records), and what of it falls in a span. A span's time is cpu + blocked +
 * runq: blocked is the time it slept (split by the system call it slept in),
 * runq the time it was runnable without a CPU, cpu the rest. Every figure is
 * inclusive of the span's children. Each thread keeps its last intervals, at
 * most REC_SCHED_THREAD_CAP; a span older than those it still holds, or that
 * overlaps intervals the ring lost, is marked partial. Pure logic, no I/O.
 */
#ifndef REC_OFFCPU_H
#define REC_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

#include "recorder_abi.h"
#include "base/u64map.h"

/* Blocked time is split by the REC_SCHED_TOP causes that took most, the rest is "other". */
#define REC_SCHED_TOP 4
/* The longest intervals off the CPU a span keeps, for the Chrome trace and the dump. */
#define REC_SCHED_SLICES 8
/* The intervals kept per thread: the newest; a thread's history grows to this by doubling. */
#define REC_SCHED_THREAD_CAP 8192
/* The threads of one process whose intervals are kept; the rest are counted. */
#define REC_SCHED_MAX_THREADS 16384

enum rec_sched_flag {
	REC_SCHED_KNOWN = 1 << 0,   /* the figures were measured (--sched, a closed span) */
	REC_SCHED_PARTIAL = 1 << 1, /* some intervals in the span were lost or forgotten */
};

/* Blocked time in one cause: a system call number, or enum rec_offcpu_cause. */
struct rec_sched_cause {
	int32_t cause;
	uint32_t pad;
	uint64_t ns;
};

/* One interval off the CPU inside a span: asleep from off to wake, runnable to on. */
struct rec_sched_slice {
	uint64_t off, wake, on; /* CLOCK_MONOTONIC ns */
	int32_t cause;		/* a system call number, or enum rec_offcpu_cause */
	uint32_t pad;
};

/* The kernel time of one span. */
struct rec_sched_figs {
	uint32_t flags;	   /* enum rec_sched_flag; 0: nothing known */
	uint32_t switches; /* times the thread left the CPU in the span */
	uint64_t cpu_ns;
	uint64_t blocked_ns;
	uint64_t runq_ns;
	/* blocked_ns by cause, the most first; an entry with ns 0 is unused */
	struct rec_sched_cause top[REC_SCHED_TOP];
	uint64_t other_ns; /* blocked in causes past the top ones */
	/* Its longest intervals off the CPU (cut to the span), by off; nslices <= REC_SCHED_SLICES. */
	uint32_t nslices;
	uint32_t slices_omitted; /* the shorter ones past those */
	struct rec_sched_slice slices[REC_SCHED_SLICES];
};

/* What did not fit, for --stats and the dump. */
struct rec_offcpu_counts {
	uint64_t intervals;    /* REC_RT_OFFCPU records taken */
	uint64_t lost;	       /* intervals the full ring refused (their threads said so) */
	uint64_t forgotten;    /* intervals pushed out of a thread's history */
	uint64_t threads_full; /* intervals of threads past REC_SCHED_MAX_THREADS */
	uint64_t partial;      /* spans whose figures are partial */
};

/* A process's threads and their intervals. Zeroed is empty, and off (since_ns 0). */
struct rec_offcpu {
	uint64_t since_ns;	   /* CLOCK_MONOTONIC when the hooks were attached; 0: not on */
	struct rec_u64map threads; /* tid + 1 -> struct rec_sched_thread * */
	struct rec_offcpu_counts count;
};

/* Charges from now on (mono: CLOCK_MONOTONIC ns when the hooks were attached). */
void rec_offcpu__start(struct rec_offcpu *s, uint64_t mono);
/* Takes one off-CPU interval. Returns 0, -EINVAL if it is malformed, or -ENOMEM. */
int rec_offcpu__add(struct rec_offcpu *s, const struct rec_offcpu_rec *r);
/*
 * The kernel time of the span thread tid was in from enter to exit (both
 * CLOCK_MONOTONIC, enter <= exit) into f; f->flags is 0 if sched is off or
 * enter is not known. It counts nothing: the caller counts partial spans.
 */
void rec_offcpu__charge(const struct rec_offcpu *s, uint32_t tid, uint64_t enter, uint64_t exit,
			struct rec_sched_figs *f);
void rec_offcpu__free(struct rec_offcpu *s);

#endif /* REC_OFFCPU_H */
