/* SPDX-License-Identifier: MIT */
/*
 * The REC_RT_BATCH ring record (bpf/recorder_abi.h, struct rec_batch_rec): the
 * records of one thread's batch as the BPF side took them. Each event it
 * numbered is handed out as the REC_RT_EVENT record a probe hit would have
 * written, in parts so that nothing is copied twice, and each recording's
 * new, span or free it took as the REC_RT_RECORDING record its probe would
 * have written: the records of both paths are ingested alike, in the order
 * the thread wrote them.
 */
#ifndef REC_BATCH_H
#define REC_BATCH_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "recorder_abi.h"

struct rec_batch_iter {
	const unsigned char *data; /* the batch's records */
	uint32_t pos, end;
	struct rec_hdr hdr; /* the ring record's header */
	struct rec_recording_rec
		recording;   /* what next() gave out last, with REC_BATCH_RECORDING */
	bool enters;	     /* set after begin: next() gives out span enters too */
	uint64_t enter_meta; /* the callsite of the enter next() gave out last */
};

/* What rec_batch__next() gave out. */
enum rec_batch_item {
	REC_BATCH_EVENT = 1,	 /* an event, in parts */
	REC_BATCH_RECORDING = 2, /* a recording's record, in it->recording */
	REC_BATCH_ENTER = 3, /* a span enter (with it->enters), its callsite in it->enter_meta */
};

/* Starts on the ring record rec of len bytes; -EINVAL if its header or bounds are wrong. */
int rec_batch__begin(struct rec_batch_iter *it, const void *rec, size_t len);

/*
 * The next numbered event, in parts (what rec_event__normalize_parts() takes):
 * *ev, the REC_RT_EVENT record's fixed part a probe hit would have written,
 * and its string area, *area bytes at *strings inside the batch (NULL and 0 for
 * none); or the next recording's record the BPF side took, in it->recording
 * (its subject, of a REC_BK_REC_SPAN, NUL-terminated within REC_SUBJECT_MAX);
 * or, if it->enters, the next span enter's callsite, in it->enter_meta.
 * Returns REC_BATCH_EVENT, REC_BATCH_RECORDING, REC_BATCH_ENTER, 0 at the
 * end, or -EINVAL if a record is malformed (the rest of the batch is not read).
 */
int rec_batch__next(struct rec_batch_iter *it, struct rec_event_rec *ev, const char **strings,
		    uint32_t *area);

#endif /* REC_BATCH_H */
