/* SPDX-License-Identifier: MIT */
/*
 * What the loader knows of one traced process, the model: its recordings
 * (rstate.h), the callsites and string literals read, the span stacks of its
 * threads, and the use of its limits. Nothing here talks to BPF or reaches for
 * the process: it reads the target's memory only through the reader it is
 * given, so a model can also come from a dump.
 */
#ifndef REC_PROC_H
#define REC_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recorder_abi.h"
#include "wire/callsite.h"
#include "wire/event.h"
#include "model/rstate.h"
#include "model/offcpu.h"
#include "base/u64map.h"

struct rec_dump_trigger;
struct rec_dump_rule_counts;

/* Where a read of the target may look (struct rec_reader). */
enum rec_read_from {
	REC_READ_LIVE = 1 << 0, /* the process's memory: only while it lives */
	REC_READ_FILE = 1 << 1, /* the file mapped at the address, which has the bytes it loaded */
};

/* Makes something of the n bytes read at an address into out; 0 if they were what it wanted. */
typedef int (*rec_take_fn)(const char *buf, size_t n, void *out);

/*
 * How a model reads its target's memory (target/target.h makes one). read()
 * reads up to len bytes at addr into buf and hands what it got to take, from
 * each place that from allows, the live process first. Returns 0 once take
 * accepted a read, -EFAULT if no place gave it what it wanted.
 */
struct rec_reader {
	int (*read)(void *ctx, uint64_t addr, char *buf, size_t len, unsigned int from,
		    rec_take_fn take, void *out);
	void *ctx;
};

/*
 * Every table, cache and list that a target can make grow has a limit, and a
 * counter of what did not fit (docs/guide/limits.md). These are the defaults of
 * recorder-attach's options.
 */
#define REC_DEFAULT_MAX_RECORDINGS 65536 /* BPF recordings table, all processes */
/* A process may hold max_recordings / this of the table by default: a quarter. */
#define REC_DEFAULT_PER_PROCESS_SHARE 4
#define REC_DEFAULT_KEEP_RETIRED 64		 /* retired recordings kept per process */
#define REC_DEFAULT_MAX_CALLSITES 65536		 /* callsites cached per process */
#define REC_DEFAULT_MAX_LITERALS 65536		 /* string literals cached per process */
#define REC_DEFAULT_MAX_DEAD_STACKS 4096	 /* stacks of exited threads kept per process */
#define REC_DEFAULT_MAX_FORGOTTEN_RECORDERS 1024 /* recorders tallied one by one */
/* The most stacks a dump holds, and so the most dead-thread stacks kept (dump.h). */
#define REC_MAX_DEAD_STACKS_LIMIT 65536

/* The limits of one session (0 = none: a model read from a dump). */
struct rec_limits {
	uint64_t max_recordings;	     /* entries of the BPF recordings table */
	uint64_t max_recordings_per_process; /* entries of one process in it */
	uint64_t keep_retired;
	uint64_t max_callsites;
	uint64_t max_literals;
	uint64_t max_dead_stacks;
	uint64_t max_forgotten_recorders;
	uint64_t span_cap; /* spans kept per recording (0: no limit, a model read from a dump) */
	/* Events every recording keeps at least / at most, whatever its program asked (0: none). */
	uint64_t min_cap;
	uint64_t max_cap;
};

#define REC_LIMITS_DEFAULT                                                                         \
	{                                                                                          \
		.max_recordings = REC_DEFAULT_MAX_RECORDINGS,                                      \
		.max_recordings_per_process =                                                      \
			REC_DEFAULT_MAX_RECORDINGS / REC_DEFAULT_PER_PROCESS_SHARE,                \
		.keep_retired = REC_DEFAULT_KEEP_RETIRED,                                          \
		.max_callsites = REC_DEFAULT_MAX_CALLSITES,                                        \
		.max_literals = REC_DEFAULT_MAX_LITERALS,                                          \
		.max_dead_stacks = REC_DEFAULT_MAX_DEAD_STACKS,                                    \
		.max_forgotten_recorders = REC_DEFAULT_MAX_FORGOTTEN_RECORDERS,                    \
		.span_cap = REC_DEFAULT_SPAN_CAP,                                                  \
	}

/* What --stats shows for each limit, and a dump keeps ("limits"). */
enum rec_limit {
	REC_L_RECORDINGS,      /* BPF recordings table: used is all processes' entries */
	REC_L_PROC_RECORDINGS, /* this process's entries, its quota */
	REC_L_RETIRED,	       /* retired recordings kept */
	REC_L_CALLSITES,       /* callsite cache */
	REC_L_LITERALS,	       /* string literal cache */
	REC_L_DEAD_STACKS,     /* stacks of exited threads */
	REC_L_MAX,
};

struct rec_limit_use {
	uint64_t limit; /* 0: none */
	uint64_t used;
	/*
	 * What did not fit: recordings of this process refused an entry
	 * (RECORDINGS, PROC_RECORDINGS), retired recordings forgotten, reads past
	 * a full cache (served uncached), stacks not kept.
	 */
	uint64_t over;
	uint64_t events; /* events of what did not fit, all lost (or forgotten) */
};

/* The events of the recordings of one recorder that were forgotten to make room. */
struct rec_forgotten {
	uint64_t recorder; /* 0: recorders past max_forgotten_recorders, together */
	uint64_t recordings;
	uint64_t seen;
	uint64_t kept;
	uint64_t dropped;
};

struct rec_thread_stack {
	uint32_t tid;
	uint32_t depth;
	uint32_t overflow;
	struct rec_frame frames[REC_MAX_DEPTH];
};

enum rec_end {
	REC_END_RUNNING = 0, /* still running (a dump asked for while alive) */
	REC_END_EXIT = 1,    /* exited with status end_code */
	REC_END_SIGNAL = 2,  /* killed by signal end_code */
	REC_END_UNKNOWN = 3, /* gone, but how was not seen */
};

struct rec_proc {
	pid_t pid;
	pid_t ns_pid; /* pid inside its namespace, 0 if the same */
	uid_t uid;    /* its owner: who owns /proc/PID at the attach (its effective
					 * uid; root for a process that is not dumpable), or
					 * (uid_t)-1 if unknown (read from a dump) */
	int alive;
	enum rec_end end;
	int end_code;		 /* exit status or signal number */
	int end_core;		 /* the signal dumped core */
	uint64_t ended_ns;	 /* CLOCK_MONOTONIC when its last thread exited; 0: not seen */
	int64_t clock_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	/*
	 * CLOCK_MONOTONIC when recorder-attach attached to it (0: not known, a
	 * dump that predates it): spans entered before it have no enter time.
	 */
	uint64_t attached_ns;
	int64_t dumped_at_ns;	  /* CLOCK_REALTIME when the dump it was read from was written; 0 */
	struct rec_reader reader; /* its memory; .read is NULL for a model read from a dump */
	struct rec_u64map callsites; /* address -> struct rec_callsite * */
	struct rec_u64map literals;  /* address -> struct rec_literal *, see rec_proc__literal */
	unsigned char norm[REC_EVENT_MAX]; /* the last event ingested, normalized, */
	size_t norm_len;		   /* of this many bytes */
	char literal_buf[REC_STR_MAX];	   /* a literal read past the cache's limit */
	struct rec_u64map recordings;	   /* key -> struct rec_rstate * */
	struct rec_rstate *first, *last;
	struct rec_rstate *retired_first, *retired_last;
	size_t nretired;    /* retired recordings held */
	uint64_t malformed; /* records that failed validation */
	uint64_t orphans;   /* events of recordings we know nothing of */
	/* Fields events had past their callsite's 8th, not carried (a callsite's nfields "8+M"). */
	uint64_t fields_left_out;
	uint64_t left_meta; /* the callsite left_per is of */
	uint32_t left_per;  /* its fields left out an event */
	uint64_t
		span_orphans; /* spans of recordings we know nothing of, entered after the attach */
	/*
	 * Spans of recordings we know nothing of that were entered before the
	 * attach: their recordings are older than it and were not learned yet.
	 * What an attach mid-flight expects to see, not an anomaly.
	 */
	uint64_t spans_before_attach;
	struct rec_offcpu sched; /* its threads' time off the CPU (--sched), and its counts */
	/* How events came, live only: in batch records (and how many), or one a record. */
	uint64_t batches, batched_events, single_events;
	/* How recordings' records (new, subject, free) came, live only: in batches, or one a record. */
	uint64_t batched_recordings, single_recordings;
	struct rec_thread_stack *stacks; /* last snapshot, see rec_proc__set_stacks */
	size_t nstacks;
	/*
	 * Stacks threads were in as they exited: a ring of the last
	 * max_dead_stacks, the oldest at death_next once it is full.
	 */
	struct rec_thread_stack *death;
	size_t ndeath, death_cap, death_next;
	uint64_t counters[REC_C_MAX]; /* the BPF side's error counters (all processes) */
	uint64_t bpf_recordings;      /* entries of this process in the BPF recordings table */
	struct rec_limits limits;     /* set by the session after rec_proc__init() */
	struct rec_limit_use use[REC_L_MAX];  /* see rec_proc__limits() */
	struct rec_u64map forgotten;	      /* recorder -> struct rec_forgotten * */
	struct rec_forgotten forgotten_other; /* past max_forgotten_recorders */
	struct rec_callsite *callsite_buf;    /* a callsite read past the cache's limit */
	/*
	 * The last recording found, and the last callsite address found in the
	 * cache: a batch's events mostly have the same (NULL and 0: none).
	 */
	struct rec_rstate *hot;
	uint64_t hot_meta;
	uint64_t enter_meta;	 /* the callsite of the last span enter read from a batch */
	uint64_t ring_full_seen; /* ring_full when its recordings were last looked for in BPF */
	uint64_t recovered_ns;	 /* when (CLOCK_MONOTONIC) */
	uint64_t dump_omitted_recordings; /* left out of a dump read back: too many */
	uint64_t dump_omitted_stacks;
	/*
	 * What a dump read back says of triggers (dump.h): the trigger a snapshot
	 * was written for, and those that fired as the process exited; the rows
	 * of their counts all live in trigger_counts. NULL and 0 if it says
	 * nothing, as for a live process. Freed by rec_proc__fini().
	 */
	struct rec_dump_trigger *trigger;
	struct rec_dump_trigger *triggers_pending;
	size_t ntriggers_pending;
	struct rec_dump_rule_counts *trigger_counts;
	int dump_one_recording; /* a dump of one recording ("scope": "recording") */
	/*
	 * A live process's trigger rules and their counts now, for --stats (rule_id
	 * 0: no rule fired it); set and owned by the session, NULL if it has none.
	 */
	const struct rec_dump_trigger *live_triggers;
};

/*
 * Initializes p for the live process pid, with the default limits, reading its
 * memory through reader (NULL: it cannot be read). The caller sets ns_pid and
 * uid if it knows them.
 */
void rec_proc__init(struct rec_proc *p, pid_t pid, const struct rec_reader *reader);
/*
 * The string literal at addr in the target, read once through p's reader (from
 * its memory, or, once it is gone, from the file mapped there) and cached; up
 * to REC_STR_MAX - 1 bytes. Returns 0 and sets v->str, or -EFAULT if it cannot
 * be read.
 */
int rec_proc__literal(struct rec_proc *p, uint64_t addr, struct rec_value *v);
void rec_proc__fini(struct rec_proc *p);

/*
 * dst: a copy of what a dump of src's recording key (rec_dump__write_opts(),
 * opts.only_recording) reads of src, for that dump to be written from dst on
 * another thread while src goes on taking events: the recording, its events
 * and spans, every thread's stack, the callsites they name (read from src now),
 * and src's counts, limits and tallies. dst reads nothing of the target and
 * has no limits. Returns 0, -ENOENT if src holds no such recording, or
 * -ENOMEM; dst is to be freed with rec_proc__fini() whatever it returns.
 */
int rec_proc__copy_recording(struct rec_proc *dst, struct rec_proc *src, uint64_t key);

/* The spans of every recording p holds: seen = kept + aged + lost (spans.h). */
struct rec_span_totals {
	uint64_t seen;
	uint64_t kept;
	uint64_t aged;
	uint64_t lost;
};
struct rec_span_totals rec_proc__span_totals(const struct rec_proc *p);

/* The recording for key, or NULL. */
struct rec_rstate *rec_proc__find(struct rec_proc *p, uint64_t key);

/*
 * A snapshot that waited for rs (its pinned count, which keeps a retired
 * recording from being forgotten) is written: the retired ones past
 * limits.keep_retired may go now.
 */
void rec_proc__unpin(struct rec_proc *p, struct rec_rstate *rs);
/*
 * The recording for key, created if new with cap (the program's, kept as its
 * asked_cap), clamped to 2..REC_CAP_MAX, then raised to limits.min_cap and
 * lowered to limits.max_cap where they are set (rec_proc__effective_cap()).
 */
struct rec_rstate *rec_proc__get(struct rec_proc *p, uint64_t key, uint64_t recorder, uint64_t cap);
/* The cap a recording whose program asked for cap keeps under limits l. */
uint64_t rec_proc__effective_cap(const struct rec_limits *l, uint64_t cap);

/*
 * Takes one event record, as the BPF side wrote it, and keeps it normalized
 * (rec_event__normalize: literals read, string area trimmed). On success fills
 * *d, the event decoded once, its values too (strings pointing into p->norm,
 * valid until the next event), and *rsp, and returns 0. Returns -EINVAL for a
 * malformed record, -ENOENT for an
 * unknown recording (both counted), -ESTALE if it fell out of the spool window.
 * A malformed event of a known recording counts there as invalid; one of an
 * unknown recording is an orphan (-ENOENT, d->recording set) until its
 * recording is known.
 */
int rec_proc__ingest_event(struct rec_proc *p, const void *data, size_t len, struct rec_decoded *d,
			   struct rec_rstate **rsp);
/*
 * The same for an event record given in parts (a batch's, user/wire/batch.c): its
 * fixed part *ev (rewritten) and its string area, area bytes at strings.
 */
int rec_proc__ingest_parts(struct rec_proc *p, struct rec_event_rec *ev, const char *strings,
			   uint32_t area, struct rec_decoded *d, struct rec_rstate **rsp);
/* Takes one recording record (announcement, subject, retirement). */
int rec_proc__ingest_recording(struct rec_proc *p, const struct rec_recording_rec *r);

/*
 * The callsite at addr, read through p's reader: from the live process or, once
 * it is gone, from the file that was mapped there. NULL if it cannot be read or
 * parsed (remembered).
 * Cached up to limits.max_callsites addresses; past that it is read again at
 * each call (counted) and valid only until the next call.
 */
const struct rec_callsite *rec_proc__callsite(struct rec_proc *p, uint64_t addr);
/* Reads the callsite at addr into the cache now, if it is not there (hot_meta left alone). */
void rec_proc__know_callsite(struct rec_proc *p, uint64_t addr);
/* The callsite at addr if it is cached, else NULL (nothing is read). */
const struct rec_callsite *rec_proc__cached_callsite(const struct rec_proc *p, uint64_t addr);
/*
 * Caches a copy of cs for addr (compactly: the blob's bytes used, not
 * REC_CALLSITE_MAX), within limits.max_callsites. Returns 0, -EEXIST if addr is
 * cached already, -ENOSPC past the limit, or -ENOMEM.
 */
int rec_proc__add_callsite(struct rec_proc *p, uint64_t addr, const struct rec_callsite *cs);

/*
 * Counts recordings (retired ones of recorder, forgotten to make room) with
 * their events in p's tally (at most limits.max_forgotten_recorders recorders get
 * their own; the others share recorder 0).
 */
void rec_proc__forget(struct rec_proc *p, uint64_t recorder, uint64_t recordings, uint64_t seen,
		      uint64_t kept, uint64_t dropped);
/* Every recorder's tally, by recorder key; the caller frees *v. Returns the count or -ENOMEM. */
ssize_t rec_proc__forgotten(const struct rec_proc *p, struct rec_forgotten **v);

/* Brings p->use up to date with what p holds now (the BPF side's rows are bpfstate.h's). */
void rec_proc__limits(struct rec_proc *p);

/* Takes the stack a thread exited in. Returns 0, -EINVAL or -ENOMEM. */
int rec_proc__ingest_stack(struct rec_proc *p, const struct rec_stack_rec *r);
/*
 * Takes a span a thread left (its times in CLOCK_MONOTONIC already) into its
 * recording's spans. Returns 0, -EINVAL (malformed) or -ENOENT (an unknown
 * recording: counted in spans_before_attach if the span was entered before
 * the attach, its enter not known or before attached_ns; else in span_orphans).
 */
int rec_proc__ingest_span(struct rec_proc *p, const struct rec_span_rec *r);
/* Takes how the process ended (a wait status). */
void rec_proc__ingest_exit(struct rec_proc *p, const struct rec_exit_rec *r);
/* The process is gone: its stacks become the ones its threads died in. */
void rec_proc__died(struct rec_proc *p);

/*
 * Learns the recording of the span at address span in the live target from its
 * memory, read live through p's reader (struct rec_span, then struct
 * rec_recording): for a thread that has been inside it since before the attach
 * and has emitted nothing since.
 * Returns 0, -EFAULT if it cannot be read, or -ENOENT if it is not a live
 * recording.
 */
int rec_proc__learn_recording(struct rec_proc *p, uint64_t span);

/* Replaces the stack snapshot (takes ownership of v). */
void rec_proc__set_stacks(struct rec_proc *p, struct rec_thread_stack *v, size_t n);

#endif /* REC_PROC_H */
