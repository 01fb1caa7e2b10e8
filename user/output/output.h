/* SPDX-License-Identifier: MIT */
/*
 * The output backends: one per format that recorder-tail shows (text, JSON
 * lines, Chrome trace events). query.c selects and walks; it hands each thing it found to the
 * backend through the calls below, and the backend alone decides how it
 * looks. Adding a format means adding one backend: a file output_<name>.c that
 * defines a struct rec_output_ops, declared below, which query.c picks for the
 * query that asks for it.
 *
 * What a query emits, in order:
 *	tail:	trigger (of a snapshot), ended (a process that is gone), trigger
 *		per trigger pending (of a black box), then per recording: recording,
 *		its events with a gap where events were lost, then its spans
 *		(by exit, the open ones last)
 *	follow:	the tail, then more events, and not_sent when a reader was too
 *		slow to be sent some
 *	list:	list_header, then list_row per recording
 *	stacks:	stack per thread and recording it is in
 *	stats:	stats
 * begin and end come once around each answer (not around the events sent
 * to a follower after it).
 */
#ifndef REC_OUTPUT_H
#define REC_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "model/proc.h"
#include "base/json.h"

struct rec_dump_trigger; /* dump.h */
struct rec_dump_rule_counts;

/* Where an event or a span came from: its process, thread and recording. */
struct rec_origin {
	uint32_t pid;
	uint32_t ns_pid; /* pid in the target's namespace, 0 = same */
	uint32_t tid;
	uint64_t recording;
	uint64_t recorder;
	const char *subject;
};

/* Everything needed to show one event. */
struct rec_event_view {
	struct rec_origin from;
	uint64_t seq;
	int64_t time_ns;	       /* CLOCK_REALTIME, nanoseconds since the epoch */
	const struct rec_callsite *cs; /* NULL if the callsite could not be read */
	uint64_t meta;		       /* callsite address, shown when cs is NULL */
	enum rec_level level;	       /* its own level, for a REC_LEVEL_RUNTIME callsite */
	uint32_t nfields;
	const struct rec_value *values;
};

/* The level of ev: its callsite's, or its own (REC_EVENT_LEVEL); -1 if unknown. */
static inline int rec_output__level(const struct rec_event_view *ev)
{
	if (!ev->cs)
		return -1;
	return ev->cs->level == REC_LEVEL_RUNTIME ? (int)ev->level : (int)ev->cs->level;
}

/*
 * One span of a recording: a REC_SPAN scope a thread entered, and left unless
 * it is still open. Each recording keeps its last spans beside its events
 * (they never take an event seq).
 */
struct rec_span_view {
	struct rec_origin from;
	uint64_t id;		       /* unique within the process, never 0 */
	uint64_t parent;	       /* the id of the span it was entered in; 0: none known */
	const struct rec_callsite *cs; /* its span callsite; NULL if it could not be read */
	uint64_t meta;		       /* callsite address, shown when cs is NULL */
	int64_t enter_ns; /* CLOCK_REALTIME; 0: not known (entered before the attach) */
	int64_t exit_ns;  /* CLOCK_REALTIME; 0: still open */
	/* CLOCK_REALTIME when recorder-attach attached (0: not known, an older dump). */
	int64_t attached_ns;
	/* CLOCK_REALTIME when it was read: now live, the dump's writing for a dump (0: not known). */
	int64_t read_ns;
	const struct rec_sched_figs *sched; /* its kernel time (--sched); NULL: not known */
	int64_t clock_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC: the sched slices' times */
};

/*
 * One span a thread is in: its callsite, NULL if it could not be read (then
 * its address), and when it was entered.
 */
struct rec_frame_view {
	const struct rec_callsite *cs;
	uint64_t meta;
	int64_t enter_ns;  /* CLOCK_REALTIME; 0: not known */
	int before_attach; /* its enter is not known because it came before the attach */
	/* Open for certain, entered at a moment BPF missed (REC_FF_UNCERTAIN): its age not known. */
	int uncertain;
};

/* The spans of one recording that one thread is in, innermost first. */
struct rec_stack_view {
	const struct rec_proc *p;
	const struct rec_rstate *rs;
	uint32_t tid;
	uint32_t nframes;
	/*
	 * CLOCK_REALTIME: when the frames' ages are measured (now for a live
	 * process, when the dump was written for a dump; 0: not known), and when
	 * recorder-attach attached (0: not known).
	 */
	int64_t at_ns;
	int64_t attached_ns;
	struct rec_frame_view frames[REC_MAX_DEPTH];
};

/* How long frame f of s has been open at s->at_ns, in ns; -1 if not known. */
static inline int64_t rec_output__frame_age(const struct rec_stack_view *s,
					    const struct rec_frame_view *f)
{
	int64_t from = f->enter_ns ? f->enter_ns : f->before_attach ? s->attached_ns : 0;

	if (!from || !s->at_ns)
		return -1;
	return s->at_ns > from ? s->at_ns - from : 0;
}

/* The control-socket clients of a recorder-attach (all traced processes), for --stats. */
struct rec_output_clients {
	uint64_t connected;
	uint64_t max_clients;
	uint64_t accepted;
	uint64_t denied;
	uint64_t refused;
	uint64_t timed_out;
	uint64_t not_sent; /* events a follower was too slow to be sent */
	/* The traced process's libraries loaded after the attach whose probes failed to attach. */
	uint64_t libraries_failed;
	uint64_t libraries_retrying;
	uint64_t libraries_attached_later;
	uint64_t libraries_given_up;
	/* Black boxes removed by the retention (--keep-dumps, --max-dump-bytes). */
	uint64_t dumps_removed;
	uint64_t dumps_removed_bytes;
	/* The process's snapshots that could not be written (a full disk, say). */
	uint64_t snapshots_failed;
	/* Snapshots removed by the retention (--keep-snapshots, --max-snapshot-bytes). */
	uint64_t snapshots_removed;
	uint64_t snapshots_removed_bytes;
	/* Snapshots removed for a black box to fit in the dump directory. */
	uint64_t snapshots_made_room;
	uint64_t snapshots_made_room_bytes;
	/* Who traces the process: that recorder-attach, and its --binary file (NULL: -p). */
	pid_t attach_pid;
	const char *binary;
};

/* The loss and error counters of one process (--stats). */
struct rec_stats_view {
	const struct rec_proc *p;	       /* its own counters, limits, and the BPF side's */
	const struct rec_forgotten *forgotten; /* recordings forgotten, per recorder */
	size_t nforgotten;
	/*
	 * A dump's trigger whose counts of every rule are shown: a snapshot's,
	 * else the last pending of a black box; NULL: none.
	 */
	const struct rec_dump_trigger *trigger;
	const struct rec_output_clients *clients; /* NULL: not asked of a recorder-attach */
	int verbose; /* the internal table sizes too (text; JSON always has them) */
};

struct rec_output;

/*
 * A backend. Each call writes one thing; a NULL call means this format does
 * not show that thing (JSON lines has no gap lines, say).
 */
struct rec_output_ops {
	void (*begin)(struct rec_output *o);
	void (*end)(struct rec_output *o);
	/* The process is gone (p->end says how); before its recordings. */
	void (*ended)(struct rec_output *o, const struct rec_proc *p);
	/*
	 * A trigger a dump of p names: the one its snapshot was written for
	 * (pending 0), first; or one that fired while p exited (pending 1), after
	 * ended. What came from the target (subject, what) is the backend's to
	 * escape.
	 */
	void (*trigger)(struct rec_output *o, const struct rec_proc *p,
			const struct rec_dump_trigger *t, int pending);
	/* Recording rs of p, before its events. */
	void (*recording)(struct rec_output *o, const struct rec_proc *p,
			  const struct rec_rstate *rs);
	void (*event)(struct rec_output *o, const struct rec_event_view *ev);
	/* A span of the recording last given by recording (a NULL call: not shown). */
	void (*span)(struct rec_output *o, const struct rec_span_view *sp);
	/* Events from..to (seqs, inclusive) of the recording were lost. */
	void (*gap)(struct rec_output *o, uint64_t from, uint64_t to);
	/* n events of p were not sent to this follower: it read too slowly. */
	void (*not_sent)(struct rec_output *o, const struct rec_proc *p, uint64_t n);
	void (*list_header)(struct rec_output *o);
	void (*list_row)(struct rec_output *o, const struct rec_proc *p,
			 const struct rec_rstate *rs);
	void (*stack)(struct rec_output *o, const struct rec_stack_view *s);
	void (*stats)(struct rec_output *o, const struct rec_stats_view *s);
};

/* The trigger that kept a recording (--otlp-keep): its rule and signature (trigger.h). */
struct rec_output_kept {
	const char *rule;
	uint64_t sig_id;
	const char *sig_text;
};

/* One answer being written: the backend, where to, and its JSON writer if it writes JSON. */
struct rec_output {
	const struct rec_output_ops *ops;
	void *state; /* the backend's own, from begin to end (chrome: what it holds until end) */
	FILE *out;
	struct rec_json json;
	uint64_t salt; /* OTLP: mixed into the trace and span IDs (rec_query.otlp_salt) */
	int spans;     /* --spans: list rows show the span counts too */
	int sched;     /* the process has kernel time per span: list rows show its totals */
	/* OTLP: the trigger that kept the recording, on each of its records; NULL: none. */
	const struct rec_output_kept *kept;
};

/* Starts writing to out with the backend ops. */
void rec_output__init(struct rec_output *o, FILE *out, const struct rec_output_ops *ops);

void rec_output__begin(struct rec_output *o);
void rec_output__end(struct rec_output *o);
void rec_output__ended(struct rec_output *o, const struct rec_proc *p);
void rec_output__trigger(struct rec_output *o, const struct rec_proc *p,
			 const struct rec_dump_trigger *t, int pending);
void rec_output__recording(struct rec_output *o, const struct rec_proc *p,
			   const struct rec_rstate *rs);
void rec_output__event(struct rec_output *o, const struct rec_event_view *ev);
void rec_output__span(struct rec_output *o, const struct rec_span_view *sp);
void rec_output__gap(struct rec_output *o, uint64_t from, uint64_t to);
void rec_output__not_sent(struct rec_output *o, const struct rec_proc *p, uint64_t n);
void rec_output__list_header(struct rec_output *o);
void rec_output__list_row(struct rec_output *o, const struct rec_proc *p,
			  const struct rec_rstate *rs);
void rec_output__stack(struct rec_output *o, const struct rec_stack_view *s);
void rec_output__stats(struct rec_output *o, const struct rec_stats_view *s);

/* The backends. */
extern const struct rec_output_ops rec_output_text__ops;  /* output_text.c: glog lines, tables */
extern const struct rec_output_ops rec_output_jsonl__ops; /* output_jsonl.c: JSON lines */
extern const struct rec_output_ops rec_output_otlp__ops;  /* output_otlp.c: OTLP log records */
/* output_chrome.c: one Chrome trace-event JSON document ({"traceEvents":[...]}) per tail */
extern const struct rec_output_ops rec_output_chrome__ops;

/*
 * A span's kernel time as members of the JSON object w is in: cpu_ns,
 * blocked_ns, runq_ns, switches, blocked_by (an object, cause name -> ns, the
 * most first, "other" last if any), and sched_partial: true if some intervals
 * were lost; with slices (the dump) also off_cpu, its longest intervals off
 * the CPU ({off_ns, wake_ns, on_ns, cause}, CLOCK_MONOTONIC, by off_ns), and
 * off_cpu_omitted, the shorter ones left out, if any. The JSON lines backend
 * and the dump write the same.
 */
void rec_output__sched_members(struct rec_json *w, const struct rec_sched_figs *f, int slices);
/* A recording's kernel time (--list): the sums over its outermost spans kept. */
struct rec_sched_totals {
	uint64_t spans; /* outermost spans kept with kernel time */
	uint64_t cpu_ns, blocked_ns, runq_ns;
};
/*
 * The totals of rs's spans that no other kept span of it holds (figures
 * include children, so a child is not counted twice). Returns 0 or -ENOMEM.
 */
int rec_output__sched_totals(const struct rec_rstate *rs, struct rec_sched_totals *t);
/*
 * The counts of the kernel time per span (offcpu.h) as a member "sched" of
 * the JSON object w is in: intervals, lost, forgotten, threads_full, partial.
 * --stats --json and the dump write the same.
 */
void rec_output__sched_counts(struct rec_json *w, const struct rec_offcpu *sched);
/* The OTLP trace ID (32 hex digits) and span ID (16) of recording key under salt. */
void rec_output_otlp__ids(uint64_t key, uint64_t salt, char trace_id[33], char span_id[17]);
/* The OTLP backend's span call, with the time it was read (ends an open span). */
void rec_output_otlp__span(struct rec_output *o, const struct rec_span_view *sp, int64_t read_ns);

/* Room for the name rec_output__field_name() makes: "field4294967295". */
#define REC_OUTPUT_FIELD_NAME_MAX 16

/*
 * The parts of an event every backend shows alike: its message (the
 * callsite's if non-empty; else the string field named "message", whose index
 * goes to *field, and NULL; else NULL and *field -1), and the name of field i
 * (its callsite's, or "field<i>" into buf, REC_OUTPUT_FIELD_NAME_MAX bytes).
 */
const char *rec_output__message(const struct rec_event_view *ev, int *field);
const char *rec_output__field_name(const struct rec_event_view *ev, uint32_t i, char *buf);

/*
 * A field's value as JSON: a string field's bytes (the first 255 of a
 * truncated one) or null when none were read; numbers and booleans as such
 * (rec_json__f64 for f64).
 */
void rec_output__json_value(struct rec_json *w, const struct rec_value *v);

/* One trigger rule's counts as a JSON object (a dump's and --stats --json's). */
void rec_output__json_rule_counts(struct rec_json *w, const struct rec_dump_rule_counts *c);

#endif /* REC_OUTPUT_H */
