/* SPDX-License-Identifier: MIT */
/*
 * The REC_RT_BATCH ring record (bpf/recorder_abi.h, struct rec_batch_rec): the
 * records of one thread's batch as the BPF side took them. Each event it
 * numbered is handed out as the REC_RT_EVENT record a probe hit would have
 * written, in parts so that nothing is copied twice, and the events of both
 * paths are ingested alike.
 */
#ifndef REC_BATCH_H
#define REC_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "recorder_abi.h"

struct rec_batch_iter {
	const unsigned char *data; /* the batch's records */
	uint32_t pos, end;
	struct rec_hdr hdr; /* the ring record's header */
};

/* Starts on the ring record rec of len bytes; -EINVAL if its header or bounds are wrong. */
int rec_batch__begin(struct rec_batch_iter *it, const void *rec, size_t len);

/*
 * The next numbered event, in parts (what rec_event__normalize_parts() takes):
 * *ev, the REC_RT_EVENT record's fixed part a probe hit would have written,
 * and its string area, *area bytes at *strings inside the batch (NULL and 0 for
 * none). Returns 1, 0 at the end, or -EINVAL if a record is malformed (the rest
 * of the batch is not read).
 */
int rec_batch__next(struct rec_batch_iter *it, struct rec_event_rec *ev, const char **strings,
		    uint32_t *area);

#endif /* REC_BATCH_H */
