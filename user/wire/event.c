/* SPDX-License-Identifier: MIT */
/* Decoding of the event records written by the BPF side (bpf/recorder_abi.h). */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "wire/event.h"

/* This thread's decodes (rec_event__decodes()). */
static __thread uint64_t decodes;

uint64_t rec_event__decodes(void)
{
	return decodes;
}

/* The types' nibbles of the fields, below the level. */
#define REC_FIELD_NIBBLES ((1ULL << REC_TYPES_LEVEL_SHIFT) - 1)

/* Bits of a string value slot that REC_STR_SLOT() may set: offset, length, status. */
#define REC_STR_SLOT_MASK ((1ULL << 40) - 1)

/*
 * Decodes the string slot v; strings is the record's string area of area bytes,
 * or NULL (and area 0) if it has none.
 */
static int decode_str(uint64_t v, const char *strings, uint32_t area, struct rec_value *val)
{
	uint32_t off = REC_STR_SLOT_OFF(v);
	uint32_t len = REC_STR_SLOT_LEN(v);
	uint32_t status = REC_STR_SLOT_STATUS(v);

	/* A record with no string area can still hold strings that were not read. */
	if (v & ~REC_STR_SLOT_MASK)
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
	val->str.ptr = strings ? strings + off : "";
	val->str.len = len;
	val->str.status = (enum rec_str_status)status;
	return 0;
}

/* Decodes field value v of type type into *val; strings as for decode_str(). */
static inline __attribute__((always_inline)) int decode_value(unsigned int type, uint64_t v,
							      const char *strings, uint32_t area,
							      struct rec_value *val)
{
	val->type = (enum rec_field_type)type;
	switch (type) {
	case REC_TYPE_STR:
		return decode_str(v, strings, area, val);
	case REC_TYPE_I64:
		val->i64 = (int64_t)v;
		return 0;
	case REC_TYPE_U64:
		val->u64 = v;
		return 0;
	case REC_TYPE_F64:
		memcpy(&val->f64, &v, sizeof(val->f64));
		return 0;
	case REC_TYPE_BOOL:
		if (v > 1)
			return -EINVAL;
		val->b = v == 1;
		return 0;
	}
	return -EINVAL;
}

/*
 * Checks an event record's fixed part (type, size, no type nibble past the
 * last field) and copies it into *ev; *strings and *area are its string area,
 * NULL and 0 if it has none. Returns 0 or -EINVAL.
 */
static int read_fixed(const void *rec, size_t len, struct rec_event_rec *ev, const char **strings,
		      uint32_t *area)
{
	/* The BPF side writes three sizes; rec_event__normalize() trims to the bytes used. */
	if (!rec || len < sizeof(*ev) || len > REC_EVENT_MAX)
		return -EINVAL;
	/* The record may be unaligned: copy its fixed part before reading it. */
	memcpy(ev, rec, sizeof(*ev));
	/* Above the fields' nibbles, only a runtime level (REC_EVENT_LEVEL): 0 to ERROR. */
	if (ev->hdr.type != REC_RT_EVENT || ev->hdr.size != len ||
	    ev->types >> REC_TYPES_LEVEL_SHIFT > REC_LEVEL_ERROR)
		return -EINVAL;
	*strings = len > sizeof(*ev) ? (const char *)rec + sizeof(*ev) : NULL;
	*area = (uint32_t)(len - sizeof(*ev));
	return 0;
}

/* The fixed part of ev, aligned, into out: no values (nfields 0). */
static inline void head_of(const struct rec_event_rec *ev, struct rec_decoded *out)
{
	out->level = (enum rec_level)(ev->types >> REC_TYPES_LEVEL_SHIFT);
	out->tgid = ev->hdr.tgid;
	out->tid = ev->hdr.tid;
	out->time_ns = ev->hdr.time_ns;
	out->recording = ev->recording;
	out->seq = ev->seq;
	out->meta = ev->meta;
	out->nfields = 0;
}

void rec_event__head(const void *rec, struct rec_decoded *out)
{
	struct rec_event_rec ev;

	/* Only what the head reads: the values stay where they are. */
	memcpy(&ev, rec, offsetof(struct rec_event_rec, values));
	head_of(&ev, out);
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

	decodes++;
	memset(out, 0, sizeof(*out));
	if (read_fixed(rec, len, &ev, &strings, &area))
		return -EINVAL;

	for (i = 0; i < REC_MAX_FIELDS; i++) {
		unsigned int type = (ev.types >> (4 * i)) & 0xf;

		if (type == REC_TYPE_NONE) {
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

	head_of(&ev, out);
	out->nfields = nfields;
	return 0;

invalid:
	memset(out, 0, sizeof(*out));
	return -EINVAL;
}

ssize_t rec_event__normalize_parts(struct rec_event_rec *ev, const char *strings, uint32_t area,
				   rec_literal_fn lit, void *ctx, void *out, struct rec_decoded *d)
{
	char *dst = (char *)out + sizeof(*ev);
	uint32_t i, used = 0;

	decodes++;

	/* Above the fields' nibbles, only a runtime level (REC_EVENT_LEVEL): 0 to ERROR. */
	if (ev->types >> REC_TYPES_LEVEL_SHIFT > REC_LEVEL_ERROR)
		return -EINVAL;
	for (i = 0; i < REC_MAX_FIELDS; i++) {
		unsigned int type = (ev->types >> (4 * i)) & 0xf;
		/* Decoded where it is wanted: a copy of it would stall on the store just made. */
		struct rec_value tmp, *v = d ? &d->values[i] : &tmp;
		uint32_t status;

		/* The fields end at the first 0: no nibble after it may be set. */
		if (type == REC_TYPE_NONE) {
			if (ev->types & REC_FIELD_NIBBLES & ~((1ULL << (4 * i)) - 1))
				return -EINVAL;
			break;
		}
		if (type == REC_TYPE_STR_LIT) {
			memset(v, 0, sizeof(*v));
			v->type = REC_TYPE_STR;
			v->str.status = REC_STR_NULL;
			if (ev->values[i] && lit(ctx, ev->values[i], v) != 0) {
				v->str.len = 0;
				v->str.status = REC_STR_FAULT;
			}
			ev->types ^= (uint64_t)(REC_TYPE_STR_LIT ^ REC_TYPE_STR) << (4 * i);
		} else if (decode_value(type, ev->values[i], strings, area, v) != 0) {
			return -EINVAL;
		}
		if (type != REC_TYPE_STR && type != REC_TYPE_STR_LIT)
			continue;
		status = v->str.status;
		if (v->str.len > REC_STR_MAX - 1)
			return -EINVAL;
		if (status == REC_STR_OK || status == REC_STR_TRUNCATED) {
			/* Literals can add more than the BPF side's area holds: same rule as there. */
			if (used + v->str.len + 1 > REC_STR_AREA)
				status = REC_STR_NOSPACE;
		}
		if (status != REC_STR_OK && status != REC_STR_TRUNCATED) {
			ev->values[i] = REC_STR_SLOT(0, 0, status);
			v->str.ptr = "";
			v->str.len = 0;
			v->str.status = (enum rec_str_status)status;
			continue;
		}
		memcpy(dst + used, v->str.ptr, v->str.len);
		dst[used + v->str.len] = '\0';
		ev->values[i] = REC_STR_SLOT(used, v->str.len, status);
		/* Now the string in out: the view's, as decoding out would give it. */
		v->str.ptr = dst + used;
		used += v->str.len + 1;
	}
	ev->hdr.size = (uint16_t)(sizeof(*ev) + used);
	memcpy(out, ev, sizeof(*ev));
	if (d) {
		head_of(ev, d);
		d->nfields = i;
	}
	return (ssize_t)(sizeof(*ev) + used);
}

/*
 * Rewrites the event record rec (len bytes, as the BPF side wrote it) into out:
 * string literals (REC_TYPE_STR_LIT) become strings with the bytes lit() finds at
 * their address, and the string area shrinks to the bytes its strings use. The
 * result is what spools and dumps keep. out must hold REC_EVENT_MAX bytes.
 * Returns the new length, or -EINVAL if rec is malformed.
 */
ssize_t rec_event__normalize(const void *rec, size_t len, rec_literal_fn lit, void *ctx, void *out,
			     struct rec_decoded *d)
{
	struct rec_event_rec ev;
	const char *strings = NULL;
	uint32_t area = 0;

	if (read_fixed(rec, len, &ev, &strings, &area)) {
		decodes++;
		return -EINVAL;
	}
	return rec_event__normalize_parts(&ev, strings, area, lit, ctx, out, d);
}
