/* SPDX-License-Identifier: MIT */
/*
 * One recording as the loader knows it: its key, recorder, cap and subject,
 * whether it is retired or untracked, the counts of its events, and the spool
 * of its last cap events. A process model (proc.h) holds its recordings.
 */
#ifndef REC_RSTATE_H
#define REC_RSTATE_H

#include <stdint.h>

#include "recorder_abi.h"
#include "wire/event.h"
#include "base/spool.h"
#include "model/spans.h"

/* Caps above this are clamped (a hostile target could ask for 2^63). */
#define REC_CAP_MAX (1u << 20)
/* Bytes of one spool slot: the largest event record. */
#define REC_EVENT_REC_MAX REC_EVENT_MAX

struct rec_rstate {
	uint64_t key;
	uint64_t recorder;
	uint64_t cap;	    /* events kept: the cap asked, clamped and within --min-cap/--max-cap */
	uint64_t asked_cap; /* the cap the program asked for (rec_recording_new) */
	char subject[REC_SUBJECT_MAX];
	int retired;
	int untracked;	   /* 0, or why it has no BPF table entry: enum rec_untracked_reason */
	uint64_t produced; /* events numbered by the BPF side */
	uint64_t dropped;  /* of those, lost when the ring buffer was full (or untracked) */
	uint64_t invalid;  /* of those, delivered but refused by validation */
	uint64_t received; /* delivered and valid ("kept"): see rec_rstate__dropped() */
	uint64_t stale;	   /* delivered after newer events had pushed them out */
	struct rec_spool *spool;
	struct rec_spans spans;		 /* its last spans (issue 13), capped by limits.span_cap */
	struct rec_rstate *next, *prev;	 /* creation order, in its process */
	struct rec_rstate *retired_next; /* retirement order, in its process */
	unsigned int pinned;		 /* snapshots waiting for it: it is not forgotten */
};

/* The events of rs that were seen and not kept: seen = kept + dropped, exactly. */
static inline uint64_t rec_rstate__dropped(const struct rec_rstate *rs)
{
	return rs->dropped + rs->invalid;
}

/*
 * A new recording, linked to nothing, whose spool holds spool_cap events of
 * REC_EVENT_REC_MAX bytes. NULL if out of memory.
 */
struct rec_rstate *rec_rstate__new(uint64_t key, uint64_t recorder, uint64_t cap,
				   uint64_t spool_cap);
void rec_rstate__free(struct rec_rstate *rs);

/*
 * Raises rs's produced and dropped counts, and its count of spans a full ring
 * refused, to these (the BPF side's), if they are higher.
 */
void rec_rstate__update_counts(struct rec_rstate *rs, uint64_t produced, uint64_t dropped,
			       uint64_t spans_lost);

#endif /* REC_RSTATE_H */
