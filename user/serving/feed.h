/* SPDX-License-Identifier: MIT */
/*
 * What the ring brings, on its way to the followers (clients.h): each event
 * or span made once, at intake, into what its view needs. An event comes as
 * ingesting decoded it, and is never decoded again; its recording's origin
 * and its callsite are looked up once. Its values, strings and subject are
 * copied into the item, so that a follower that renders it later shows it
 * the same even if its recording is gone by then. An item is shared by every
 * follower that selected it, and freed by the last one to let it go.
 */
#ifndef REC_FEED_H
#define REC_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/proc.h"
#include "output/output.h"

struct rec_feed_item {
	uint32_t refs;
	uint32_t len; /* the record's bytes: what it counts against a follower's buffer */
	bool is_span;
	char subject[REC_SUBJECT_MAX];
	struct rec_event_view ev;    /* an event: subject, values and strings point into the item */
	struct rec_origin span_from; /* a span: where it comes from (subject: the item's) */
	struct rec_span_rec span;    /* a span, CLOCK_MONOTONIC, as it came */
	struct rec_value values[];   /* an event's values, then its strings */
};

/*
 * The item of event d (as rec_proc__ingest_event() decoded it; len, its
 * record's bytes) of recording rs of p, with one reference; NULL if out of
 * memory.
 */
struct rec_feed_item *rec_feed__event(struct rec_proc *p, const struct rec_rstate *rs,
				      const struct rec_decoded *d, size_t len);
/* The item of span r of recording rs of p, with one reference; NULL if out of memory. */
struct rec_feed_item *rec_feed__span(const struct rec_proc *p, const struct rec_rstate *rs,
				     const struct rec_span_rec *r);

/* One more reference to it. */
static inline struct rec_feed_item *rec_feed__hold(struct rec_feed_item *it)
{
	it->refs++;
	return it;
}

/* Lets one reference go: the last frees it. */
void rec_feed__put(struct rec_feed_item *it);

#endif /* REC_FEED_H */
