/* SPDX-License-Identifier: MIT */
/* Decoding of the event records written by the BPF side (bpf/recorder.h). */
#include <errno.h>
#include <string.h>

#include "event.h"

/* Bits of a string value slot that REC_STR_SLOT() may set: offset, length, status. */
#define REC_STR_SLOT_MASK ((1ULL << 40) - 1)

/*
 * Decodes the string slot v; strings is the record's string area of area bytes,
 * or NULL if it has none.
 */
static int decode_str(uint64_t v, const char *strings, uint32_t area, struct rec_value *val)
{
	uint32_t off = REC_STR_SLOT_OFF(v);
	uint32_t len = REC_STR_SLOT_LEN(v);
	uint32_t status = REC_STR_SLOT_STATUS(v);

	if (!strings || (v & ~REC_STR_SLOT_MASK))
		return -EINVAL;
	if (off + len > area)
		return -EINVAL;
	switch (status) {
	case REC_STR_OK:
	case REC_STR_TRUNCATED:
		if (len > REC_STR_MAX - 1)
			return -EINVAL;
		break;
	case REC_STR_FAULT:
	case REC_STR_NULL:
	case REC_STR_NOSPACE:
		if (len != 0)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	val->str.ptr = strings + off;
	val->str.len = len;
	val->str.status = (enum rec_str_status)status;
	return 0;
}

/* Decodes field value v of type type into *val; strings as for decode_str(). */
static int decode_value(unsigned int type, uint64_t v, const char *strings, uint32_t area,
			struct rec_value *val)
{
	val->type = (enum rec_field_type)type;
	switch (type) {
	case REC_FT_STR:
		return decode_str(v, strings, area, val);
	case REC_FT_I64:
		val->i64 = (int64_t)v;
		return 0;
	case REC_FT_U64:
		val->u64 = v;
		return 0;
	case REC_FT_F64:
		memcpy(&val->f64, &v, sizeof(val->f64));
		return 0;
	case REC_FT_BOOL:
		if (v > 1)
			return -EINVAL;
		val->b = v == 1;
		return 0;
	}
	return -EINVAL;
}

/*
 * Decodes an event record of len bytes. Never trusts it: checks the header type
 * and size, every type nibble (fields end at the first 0; a non-zero nibble after
 * it, or an unknown type, is an error), and that every string lies inside the
 * record's string area. String values point into rec. Returns 0 or -EINVAL; on
 * error *out is zeroed.
 */
int rec_event__decode(const void *rec, size_t len, struct rec_decoded *out)
{
	struct rec_event_rec ev;
	const char *strings = NULL;
	uint32_t i, nfields = 0, area = 0;
	bool ended = false;
	int err;

	memset(out, 0, sizeof(*out));
	if (!rec)
		return -EINVAL;
	if (len == sizeof(ev) + REC_STR_AREA || len == sizeof(ev) + REC_STR_MAX) {
		strings = (const char *)rec + sizeof(ev);
		area = len - sizeof(ev);
	} else if (len != sizeof(ev)) {
		return -EINVAL;
	}
	/* The record may be unaligned: copy its fixed part before reading it. */
	memcpy(&ev, rec, sizeof(ev));
	if (ev.hdr.type != REC_RT_EVENT || ev.hdr.size != len)
		return -EINVAL;
	if (ev.types >> (4 * REC_MAX_FIELDS))
		return -EINVAL;

	for (i = 0; i < REC_MAX_FIELDS; i++) {
		unsigned int type = (ev.types >> (4 * i)) & 0xf;

		if (type == REC_FT_NONE) {
			ended = true;
			continue;
		}
		if (ended)
			goto invalid;
		err = decode_value(type, ev.values[i], strings, area, &out->values[i]);
		if (err)
			goto invalid;
		nfields++;
	}

	out->tgid = ev.hdr.tgid;
	out->tid = ev.hdr.tid;
	out->time_ns = ev.hdr.time_ns;
	out->recording = ev.recording;
	out->seq = ev.seq;
	out->meta = ev.meta;
	out->nfields = nfields;
	return 0;

invalid:
	memset(out, 0, sizeof(*out));
	return -EINVAL;
}
