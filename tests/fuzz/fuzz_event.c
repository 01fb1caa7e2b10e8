// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the event decoder and normalizer (user/wire/event.c). The
 * input is one event record, as the ring buffer hands it over: any bytes, any
 * length. Checked beyond memory safety:
 *  - a record rec_event__decode() accepts has its strings inside it, and a
 *    refused one leaves *out zeroed;
 *  - rec_event__normalize() accepts every record rec_event__decode() accepts,
 *    its output is accepted by rec_event__decode() with the same values, and
 *    normalizing that output again changes nothing.
 * String literals are read by a fake reader that takes their bytes from the
 * input itself: address bits 0..15 are an offset into it, bits 16..24 a length,
 * bit 63 makes the read fail. Each literal is an exact-size copy, freed at the
 * next read, so that reading past it or keeping it is an ASan report.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/event.h"
#include "fuzz.h"

struct literals {
	const uint8_t *data;
	size_t size;
	char *last; /* the bytes of the last literal read */
};

static int fake_literal(void *ctx, uint64_t addr, struct rec_value *v)
{
	struct literals *l = ctx;
	size_t off = addr & 0xffff, len = (addr >> 16) & 0x1ff;

	free(l->last);
	l->last = NULL;
	if ((addr >> 63) || off > l->size)
		return -EFAULT;
	if (len > l->size - off)
		len = l->size - off;
	v->str.status = REC_STR_OK;
	if (len > REC_STR_MAX - 1) {
		len = REC_STR_MAX - 1;
		v->str.status = REC_STR_TRUNCATED;
	}
	l->last = malloc(len ? len : 1);
	if (!l->last)
		return -ENOMEM;
	memcpy(l->last, l->data + off, len);
	v->str.ptr = l->last;
	v->str.len = (uint32_t)len;
	return 0;
}

static bool is_zero(const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

/* The checks every decoded record passes; rec is its len bytes. */
static void check_decoded(const struct rec_decoded *d, const void *rec, size_t len)
{
	const char *area = (const char *)rec + sizeof(struct rec_event_rec);
	const char *end = (const char *)rec + len;

	FUZZ_CHECK(d->nfields <= REC_MAX_FIELDS, "nfields %u", d->nfields);
	for (uint32_t i = 0; i < d->nfields; i++) {
		const struct rec_value *v = &d->values[i];

		FUZZ_CHECK(v->type >= REC_TYPE_STR && v->type <= REC_TYPE_BOOL, "field %u type %d",
			   i, v->type);
		if (v->type != REC_TYPE_STR)
			continue;
		FUZZ_CHECK(v->str.len <= REC_STR_MAX - 1, "field %u len %u", i, v->str.len);
		if (v->str.len == 0)
			continue;
		FUZZ_CHECK(v->str.ptr >= area && v->str.ptr + v->str.len <= end,
			   "field %u: string of %u bytes outside the record's string area", i,
			   v->str.len);
		fuzz__touch(v->str.ptr, v->str.len);
	}
	for (uint32_t i = d->nfields; i < REC_MAX_FIELDS; i++)
		FUZZ_CHECK(is_zero(&d->values[i], sizeof(d->values[i])), "field %u past nfields",
			   i);
}

/* True if the normalized value n says what the raw value r said. */
static bool same_value(const struct rec_value *r, const struct rec_value *n)
{
	if (r->type != n->type)
		return false;
	switch (r->type) {
	case REC_TYPE_STR:
		/* Strings that overlapped in the raw area may no longer all fit. */
		if (n->str.status == REC_STR_NOSPACE)
			return r->str.status == REC_STR_OK || r->str.status == REC_STR_TRUNCATED ||
			       r->str.status == REC_STR_NOSPACE;
		return r->str.status == n->str.status && r->str.len == n->str.len &&
		       memcmp(r->str.ptr, n->str.ptr, r->str.len) == 0;
	case REC_TYPE_I64:
		return r->i64 == n->i64;
	case REC_TYPE_U64:
		return r->u64 == n->u64;
	case REC_TYPE_F64:
		return memcmp(&r->f64, &n->f64, sizeof(r->f64)) == 0;
	case REC_TYPE_BOOL:
		return r->b == n->b;
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rec_decoded raw, norm, given;
	struct literals lit = { .data = data, .size = size };
	unsigned char *out, *again;
	bool raw_ok;
	ssize_t n, n2;
	int rc;

	rc = rec_event__decode(data, size, &raw);
	raw_ok = rc == 0;
	if (rc) {
		FUZZ_CHECK(rc == -EINVAL, "decode returned %d", rc);
		FUZZ_CHECK(is_zero(&raw, sizeof(raw)), "a refused record left *out set");
	} else {
		check_decoded(&raw, data, size);
	}

	/* Exact sizes: a write past REC_EVENT_MAX is an ASan report. */
	out = malloc(REC_EVENT_MAX);
	again = malloc(REC_EVENT_MAX);
	if (!out || !again)
		abort();
	n = rec_event__normalize(data, size, fake_literal, &lit, out, &given);
	free(lit.last);
	lit.last = NULL;
	FUZZ_CHECK(!raw_ok || n >= 0, "normalize refused a record decode accepts (%zd)", n);
	if (n < 0) {
		FUZZ_CHECK(n == -EINVAL, "normalize returned %zd", n);
		goto out;
	}
	FUZZ_CHECK((size_t)n >= sizeof(struct rec_event_rec) && (size_t)n <= REC_EVENT_MAX,
		   "normalized length %zd", n);
	rc = rec_event__decode(out, (size_t)n, &norm);
	FUZZ_CHECK(rc == 0, "decode refused a normalized record (%d)", rc);
	check_decoded(&norm, out, (size_t)n);
	/* What normalizing decoded is what decoding its output gives: no need to decode again. */
	FUZZ_CHECK(given.tgid == norm.tgid && given.tid == norm.tid &&
			   given.time_ns == norm.time_ns && given.recording == norm.recording &&
			   given.seq == norm.seq && given.meta == norm.meta &&
			   given.level == norm.level && given.nfields == norm.nfields,
		   "normalizing decoded another header than decoding its output");
	for (uint32_t i = 0; i < norm.nfields; i++)
		FUZZ_CHECK(same_value(&given.values[i], &norm.values[i]) &&
				   (given.values[i].type != REC_TYPE_STR ||
				    given.values[i].str.ptr == norm.values[i].str.ptr ||
				    !norm.values[i].str.len),
			   "field %u as normalizing decoded it differs from its output's", i);
	if (raw_ok) {
		/* A record without literals: normalizing keeps every value. */
		FUZZ_CHECK(raw.tgid == norm.tgid && raw.tid == norm.tid &&
				   raw.time_ns == norm.time_ns && raw.recording == norm.recording &&
				   raw.seq == norm.seq && raw.meta == norm.meta,
			   "the header changed");
		FUZZ_CHECK(raw.nfields == norm.nfields, "%u fields became %u", raw.nfields,
			   norm.nfields);
		for (uint32_t i = 0; i < raw.nfields; i++)
			FUZZ_CHECK(same_value(&raw.values[i], &norm.values[i]),
				   "field %u changed in normalizing", i);
	}

	n2 = rec_event__normalize(out, (size_t)n, fake_literal, &lit, again, NULL);
	free(lit.last);
	FUZZ_CHECK(n2 == n && memcmp(out, again, (size_t)n) == 0,
		   "normalizing a normalized record changed it (%zd -> %zd bytes)", n, n2);
out:
	free(out);
	free(again);
	return 0;
}
