/* SPDX-License-Identifier: MIT */
/*
 * The last spans of one recording (issue 13): a ring of at most cap spans that
 * threads left, oldest first, and their accounting. Every span that arrives is
 * seen; it is kept until cap newer ones push it out, then aged out: that is the
 * cap at work, not a loss. A span that a full ring refused (or that memory
 * could not hold) is seen and lost: seen = kept + aged + lost, always.
 * Spans never take an event seq.
 */
#ifndef REC_SPANS_H
#define REC_SPANS_H

#include <stddef.h>
#include <stdint.h>

#include "recorder_abi.h"
#include "model/offcpu.h"

/* recorder-attach --span-cap: spans kept per recording unless told otherwise. */
#define REC_DEFAULT_SPAN_CAP 256
/* The largest --span-cap. */
#define REC_SPAN_CAP_MAX (1u << 20)

/* One span a thread left (or, from a dump, one it was still in). */
struct rec_kept_span {
	uint32_t tid;
	uint32_t pad;
	uint64_t id;
	uint64_t parent;	     /* 0: none known */
	uint64_t meta;		     /* its callsite's address */
	uint64_t enter;		     /* CLOCK_MONOTONIC ns; 0: not known */
	uint64_t exit;		     /* CLOCK_MONOTONIC ns; 0: still open */
	struct rec_sched_figs sched; /* its kernel time; flags 0: not known */
};

/* The span a REC_RT_SPAN record (its times in CLOCK_MONOTONIC) stands for. */
static inline struct rec_kept_span rec_spans__of_rec(const struct rec_span_rec *r)
{
	return (struct rec_kept_span){
		.tid = r->hdr.tid,
		.id = r->id,
		.parent = r->parent,
		.meta = r->meta,
		.enter = r->enter,
		.exit = r->hdr.time_ns,
	};
}

struct rec_spans {
	struct rec_kept_span *v;
	size_t n;     /* kept */
	size_t alloc; /* room in v */
	size_t next;  /* once n is the cap: where the oldest is */
	uint64_t seen;
	uint64_t aged;	    /* pushed out by newer ones (the cap, --span-cap) */
	uint64_t lost;	    /* never kept: refused by a full ring, or out of memory */
	uint64_t ring_lost; /* of those, refused by a full ring (its BPF count, taken so far) */
};

/*
 * Takes span s into sp, which keeps at most cap (0: no limit, for a model read
 * from a dump); past it the oldest goes, counted aged. Returns 0, or -ENOMEM
 * (s is counted seen and lost).
 */
int rec_spans__add(struct rec_spans *sp, uint64_t cap, const struct rec_kept_span *s);
/*
 * Raises sp's count of spans a full ring refused to ring_lost (the BPF side's
 * count for the recording, which only grows). They never arrived: each is
 * counted seen and lost.
 */
void rec_spans__lost(struct rec_spans *sp, uint64_t ring_lost);
/* The i-th kept span, oldest first (i < sp->n). */
const struct rec_kept_span *rec_spans__at(const struct rec_spans *sp, size_t i);
void rec_spans__free(struct rec_spans *sp);

#endif /* REC_SPANS_H */
