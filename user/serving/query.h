/* SPDX-License-Identifier: MIT */
/* What recorder-tail asks for, and answering it from a process model. */
#ifndef REC_QUERY_H
#define REC_QUERY_H

#include <stdint.h>
#include <stdio.h>

#include "incidents/cond.h"
#include "model/proc.h"
#include "output/output.h"

enum rec_query_flags {
	REC_Q_JSON = 1 << 0,
	REC_Q_LIST = 1 << 1,
	REC_Q_STACKS = 1 << 2,
	REC_Q_FOLLOW = 1 << 3,
	REC_Q_HAS_RECORDING = 1 << 4,
	REC_Q_HAS_RECORDER = 1 << 5,
	REC_Q_STATS = 1 << 6,		/* the loss and error counters */
	REC_Q_DUMP = 1 << 7,		/* write a dump now and answer with its path */
	REC_Q_VERBOSE = 1 << 8,		/* with REC_Q_STATS: the internal table sizes too */
	REC_Q_HAS_LEVEL = 1 << 9,	/* only events of level or above */
	REC_Q_HAS_SINCE = 1 << 10,	/* only events at or after since_ns */
	REC_Q_OTLP = 1 << 11,		/* events as OTLP/JSON log records, a line each */
	REC_Q_SPANS = 1 << 12,		/* tails: each recording's spans too, after its events */
	REC_Q_CHROME = 1 << 13,		/* a tail as one Chrome trace-event JSON document */
	REC_Q_TRIGGERS = 1 << 14,	/* the trigger rules and their counts */
	REC_Q_ADD_TRIGGER = 1 << 15,	/* add the trigger rule in rule */
	REC_Q_REMOVE_TRIGGER = 1 << 16, /* remove the trigger rule rule (its text, or its id) */
};

/* The longest trigger rule a request carries, its NUL included. */
#define REC_QUERY_RULE_MAX 640

/* The longest --target pattern. */
#define REC_QUERY_TARGET_MAX 128

/* The most --where conditions a query carries. */
#define REC_QUERY_WHERE_MAX 8

struct rec_query {
	uint32_t flags; /* enum rec_query_flags */
	uint32_t pad;
	int64_t n;	    /* events per recording; <= 0 means all that are kept */
	uint64_t recording; /* with REC_Q_HAS_RECORDING: only this recording */
	uint64_t recorder;  /* with REC_Q_HAS_RECORDER: only this recorder's recordings */
	char subject[REC_SUBJECT_MAX]; /* non-empty: only recordings with this subject */
	uint32_t level;		       /* with REC_Q_HAS_LEVEL: enum rec_level, the lowest shown */
	uint32_t pad2;
	int64_t since_ns; /* with REC_Q_HAS_SINCE: CLOCK_REALTIME, ns since the epoch */
	/* Non-empty: only events whose target is this, or matches it as a glob. */
	char target[REC_QUERY_TARGET_MAX];
	uint64_t otlp_salt;	       /* with REC_Q_OTLP: mixed into the trace and span IDs */
	char rule[REC_QUERY_RULE_MAX]; /* with REC_Q_ADD_TRIGGER or REC_Q_REMOVE_TRIGGER */
	/* --where: only events that satisfy every one of where[0..nwhere) (cond.h). */
	uint32_t nwhere;
	uint32_t pad3;
	struct rec_cond where[REC_QUERY_WHERE_MAX];
};

/*
 * True if the query selects event v by its own filters (--level, --target,
 * --since, --where). An event whose callsite cannot be read has no level,
 * target or field names: a --level, --target or --where leaves it out.
 */
int rec_query__view_match(const struct rec_query *q, const struct rec_event_view *v);
/* The same for event d of process p. */
int rec_query__event_match(const struct rec_query *q, struct rec_proc *p,
			   const struct rec_decoded *d);

/* True if the query selects recording rs. */
int rec_query__match(const struct rec_query *q, const struct rec_rstate *rs);

/*
 * Whether q, a tail, --list or --stacks with a filter (--subject, --recording,
 * --recorder), selects none of p's recordings: then what names the filter
 * ("--subject 'conn#6*'") and it returns 1. A --follow may select recordings
 * yet to come, and --stats has no filter: 0 for them.
 */
int rec_query__selects_nothing(const struct rec_proc *p, const struct rec_query *q, char *what,
			       size_t len);

/* The backend of the format q asks for, writing to out, into o: made once per answer or follower. */
void rec_query__output(struct rec_output *o, FILE *out, const struct rec_query *q);
/* What q asks of a backend made elsewhere (an exporter's): its OTLP salt, --spans. */
void rec_query__fit(struct rec_output *o, const struct rec_query *q);

/* Where an event or span of thread tid in recording rs of p comes from, as views name it. */
struct rec_origin rec_query__origin(const struct rec_proc *p, const struct rec_rstate *rs,
				    uint32_t tid);

/* The view of event d (decoded) of recording rs of p: values and strings are d's. */
struct rec_event_view rec_query__event_view(struct rec_proc *p, const struct rec_rstate *rs,
					    const struct rec_decoded *d);

/*
 * Writes the answer to q for process p to o: the loss and error counters
 * (REC_Q_STATS), the recordings list (REC_Q_LIST), the span stacks
 * (REC_Q_STACKS) or the tails; clients, a recorder-attach's, for its stats
 * (NULL: none); kept, the trigger that kept the recording (--otlp-keep), on
 * each of its records (NULL: none). Returns 0 or a negative errno.
 */
int rec_query__answer_to(struct rec_output *o, struct rec_proc *p, const struct rec_query *q,
			 const struct rec_output_clients *clients,
			 const struct rec_output_kept *kept);
/* The same to out, in the format q asks for (text, JSON lines, OTLP, Chrome). */
int rec_query__answer(FILE *out, struct rec_proc *p, const struct rec_query *q);
/* The same, from a recorder-attach: its stats also show its clients. */
int rec_query__answer_live(FILE *out, struct rec_proc *p, const struct rec_query *q,
			   const struct rec_output_clients *clients);

/*
 * For a follower, after the answer, to its backend o: one more event, as
 * ingesting decoded it, if q's filters select it; one more span (r, a
 * REC_RT_SPAN record, CLOCK_MONOTONIC) from where from says, charged its
 * kernel time from the intervals p holds now; at the end, the spans p's
 * threads are in, or died in, of the recordings q selects.
 */
void rec_query__follow_event(struct rec_output *o, const struct rec_event_view *v,
			     const struct rec_query *q);
void rec_query__follow_span(struct rec_output *o, struct rec_proc *p, struct rec_origin from,
			    const struct rec_span_rec *r);
void rec_query__open_spans(struct rec_output *o, struct rec_proc *p, const struct rec_query *q);

#endif /* REC_QUERY_H */
