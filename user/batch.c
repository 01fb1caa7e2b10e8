// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "batch.h"

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
	return 0;
}

/* The event record at e (size bytes, checked against its counts) as a REC_RT_EVENT. */
static int to_event(const struct rec_batch_iter *it, const struct rec_brec_event *e, uint32_t size,
		    void *out)
{
	const unsigned char *p = (const unsigned char *)e;
	struct rec_event_rec ev;
	uint32_t nvals = e->h.nvals, strbytes = e->h.strbytes, area, i;

	if (nvals > REC_MAX_FIELDS || strbytes > REC_STR_AREA ||
	    size != REC_BREC_EVENT_SIZE(nvals, strbytes))
		return -EINVAL;
	/* The area the BPF side would have given the same event (emit_event). */
	area = strbytes == 0 ? 0 : strbytes <= REC_STR_MAX ? REC_STR_MAX : REC_STR_AREA;
	memset(&ev, 0, sizeof(ev));
	ev.hdr = it->hdr;
	ev.hdr.type = REC_RT_EVENT;
	ev.hdr.size = (uint16_t)(sizeof(ev) + area);
	ev.hdr.time_ns = e->h.time;
	ev.recording = e->key;
	ev.seq = e->span; /* the seq, in a numbered event */
	ev.meta = e->meta;
	ev.types = e->types;
	for (i = 0; i < nvals; i++)
		memcpy(&ev.values[i], p + sizeof(*e) + 8 * i, 8);
	memcpy(out, &ev, sizeof(ev));
	if (area) {
		memset((char *)out + sizeof(ev), 0, area);
		memcpy((char *)out + sizeof(ev), p + sizeof(*e) + 8 * nvals, strbytes);
	}
	return (int)(sizeof(ev) + area);
}

int rec_batch__next(struct rec_batch_iter *it, void *out)
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
			/* Copied aligned: the record's words are read in place. */
			uint64_t copy[(sizeof(struct rec_brec_event) + 8 * REC_MAX_FIELDS +
				       REC_STR_AREA) /
				      8];

			if (size < sizeof(struct rec_brec_event) || size > sizeof(copy))
				return -EINVAL;
			memcpy(copy, it->data + it->pos, size);
			it->pos += size;
			return to_event(it, (const struct rec_brec_event *)copy, size, out);
		}
		if (h.kind != REC_BK_EVENT && h.kind != REC_BK_ENTER && h.kind != REC_BK_EXIT)
			return -EINVAL;
		it->pos += size;
	}
	return 0;
}
