// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "wire/batch.h"

int rec_batch__begin(struct rec_batch_iter *it, const void *rec, size_t len)
{
	struct rec_batch_rec b;

	if (len < sizeof(b))
		return -EINVAL;
	memcpy(&b, rec, sizeof(b));
	if (b.hdr.type != REC_RT_BATCH || b.hdr.size != len || b.start > b.end ||
	    b.end > REC_TBUF_DATA || b.end != len - sizeof(b))
		return -EINVAL;
	it->data = (const unsigned char *)rec + sizeof(b);
	it->pos = b.start;
	it->end = b.end;
	it->hdr = b.hdr;
	it->enters = false;
	it->enter_meta = 0;
	return 0;
}

/*
 * The event record at p (size bytes, checked against its counts) in parts: its
 * fixed part as the REC_RT_EVENT a probe hit would have written, and its string
 * area, the strbytes the target wrote, where they are.
 */
static int to_event(const struct rec_batch_iter *it, const unsigned char *p, uint32_t size,
		    struct rec_event_rec *ev, const char **strings, uint32_t *area)
{
	struct rec_brec_event e;
	uint32_t nvals, strbytes;

	if (size < sizeof(e))
		return -EINVAL;
	memcpy(&e, p, sizeof(e));
	nvals = e.h.nvals;
	strbytes = e.h.strbytes;
	if (nvals > REC_MAX_FIELDS || strbytes > REC_STR_AREA ||
	    size != REC_BREC_EVENT_SIZE(nvals, strbytes))
		return -EINVAL;
	ev->hdr = it->hdr;
	ev->hdr.type = REC_RT_EVENT;
	ev->hdr.size = (uint16_t)(sizeof(*ev) + strbytes);
	ev->hdr.time_ns = e.h.time;
	ev->recording = e.key;
	ev->seq = e.span; /* the seq, in a numbered event */
	ev->meta = e.meta;
	ev->types = e.types;
	memcpy(ev->values, p + sizeof(e), 8 * nvals);
	memset(ev->values + nvals, 0, 8 * (REC_MAX_FIELDS - nvals));
	*strings = strbytes ? (const char *)p + sizeof(e) + 8 * nvals : NULL;
	*area = strbytes;
	return 1;
}

/*
 * The recording's record at p (size bytes, checked against its kind) as the
 * REC_RT_RECORDING record its probe would have written, into it->recording.
 */
static int to_recording(struct rec_batch_iter *it, const unsigned char *p, uint32_t size)
{
	struct rec_recording_rec *r = &it->recording;
	struct rec_brec_rec b;

	/* Copied before it is read: a record of the ring is not 8-byte aligned. */
	if (size < sizeof(b))
		return -EINVAL;
	memcpy(&b, p, sizeof(b));
	if (size != REC_BREC_REC_SIZE(b.h.kind))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->hdr = it->hdr;
	r->hdr.type = REC_RT_RECORDING;
	r->hdr.size = sizeof(*r);
	r->hdr.time_ns = b.h.time;
	r->key = b.key;
	r->recorder = b.recorder;
	r->cap = b.cap;
	r->seq = b.seq;
	r->dropped = b.dropped;
	r->spans_lost = b.spans_lost;
	r->state = b.state;
	r->untracked = b.untracked;
	if (b.h.kind == REC_BK_REC_SPAN) {
		memcpy(r->subject, p + sizeof(b), REC_SUBJECT_MAX);
		r->subject[REC_SUBJECT_MAX - 1] = '\0';
		r->has_subject = 1;
	}
	return REC_BATCH_RECORDING;
}

static int is_recording_kind(uint16_t kind)
{
	return kind == REC_BK_REC_NEW || kind == REC_BK_REC_SPAN || kind == REC_BK_REC_FREE;
}

int rec_batch__next(struct rec_batch_iter *it, struct rec_event_rec *ev, const char **strings,
		    uint32_t *area)
{
	while (it->pos < it->end) {
		struct rec_brec h;
		uint32_t size;

		if (it->end - it->pos < sizeof(h))
			return -EINVAL;
		memcpy(&h, it->data + it->pos, sizeof(h));
		size = h.size;
		if (size < sizeof(h) || (size & 7) || size > it->end - it->pos)
			return -EINVAL;
		if (h.kind == REC_BK_EVENT && h.pad == REC_BREC_TAKEN) {
			const unsigned char *p = it->data + it->pos;

			it->pos += size;
			return to_event(it, p, size, ev, strings, area);
		}
		if (is_recording_kind(h.kind) && h.pad == REC_BREC_TAKEN) {
			const unsigned char *p = it->data + it->pos;

			it->pos += size;
			return to_recording(it, p, size);
		}
		if (h.kind != REC_BK_EVENT && h.kind != REC_BK_ENTER && h.kind != REC_BK_EXIT &&
		    !is_recording_kind(h.kind))
			return -EINVAL;
		if (h.kind == REC_BK_ENTER && it->enters) {
			struct rec_brec_enter e;

			if (size != sizeof(e))
				return -EINVAL;
			memcpy(&e, it->data + it->pos, sizeof(e));
			it->pos += size;
			it->enter_meta = e.meta;
			return REC_BATCH_ENTER;
		}
		it->pos += size;
	}
	return 0;
}
