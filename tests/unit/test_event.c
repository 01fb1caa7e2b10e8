/* SPDX-License-Identifier: MIT */
/* Unit tests of event record decoding (user/wire/event.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "wire/event.h"

#define REC_SMALL sizeof(struct rec_event_rec)
#define REC_BIG (sizeof(struct rec_event_rec) + REC_STR_AREA)
/* An event with exactly one string field. */
#define REC_ONE (sizeof(struct rec_event_rec) + REC_STR_MAX)

/* Room for the biggest record plus an offset to make it unaligned. */
static union {
	uint64_t align;
	unsigned char bytes[REC_BIG + 16];
} store;

static struct rec_decoded out;

#define T(type, i) ((uint64_t)(type) << (4 * (i)))

/* Writes a record at store.bytes + shift and returns its address; size is its hdr.size. */
static unsigned char *build(size_t shift, size_t size, uint64_t types, const uint64_t *values,
			    size_t nvalues)
{
	struct rec_event_rec rec;
	unsigned char *p = store.bytes + shift;

	memset(store.bytes, 0xa5, sizeof(store.bytes));
	memset(&rec, 0, sizeof(rec));
	rec.hdr.type = REC_RT_EVENT;
	rec.hdr.size = (__u16)size;
	rec.hdr.tgid = 4242;
	rec.hdr.tid = 4243;
	rec.hdr.flags = 0;
	rec.hdr.time_ns = 123456789012ULL;
	rec.recording = 0x80000001ULL;
	rec.seq = 7;
	rec.meta = 0x401000;
	rec.types = types;
	if (nvalues)
		memcpy(rec.values, values, nvalues * sizeof(values[0]));
	memcpy(p, &rec, sizeof(rec));
	return p;
}

/* The string area of a record built at p. */
static char *strings_of(unsigned char *p)
{
	return (char *)p + sizeof(struct rec_event_rec);
}

static uint64_t f64_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static void assert_invalid(const void *rec, size_t len)
{
	memset(&out, 0x5a, sizeof(out));
	assert_int_equal(rec_event__decode(rec, len, &out), -EINVAL);
	assert_int_equal(out.nfields, 0);
	assert_int_equal(out.seq, 0);
}

static void test_no_fields(void **state)
{
	unsigned char *p = build(0, REC_SMALL, 0, NULL, 0);

	(void)state;
	assert_int_equal(rec_event__decode(p, REC_SMALL, &out), 0);
	assert_int_equal(out.tgid, 4242);
	assert_int_equal(out.tid, 4243);
	assert_int_equal(out.time_ns, 123456789012ULL);
	assert_int_equal(out.recording, 0x80000001ULL);
	assert_int_equal(out.seq, 7);
	assert_int_equal(out.meta, 0x401000);
	assert_int_equal(out.nfields, 0);
}

static void test_scalar_types(void **state)
{
	const uint64_t values[] = { (uint64_t)-7LL, UINT64_MAX, f64_bits(1.5), 1, 0 };
	unsigned char *p = build(0, REC_SMALL,
				 T(REC_TYPE_I64, 0) | T(REC_TYPE_U64, 1) | T(REC_TYPE_F64, 2) |
					 T(REC_TYPE_BOOL, 3) | T(REC_TYPE_BOOL, 4),
				 values, 5);

	(void)state;
	assert_int_equal(rec_event__decode(p, REC_SMALL, &out), 0);
	assert_int_equal(out.nfields, 5);
	assert_int_equal(out.values[0].type, REC_TYPE_I64);
	assert_true(out.values[0].i64 == -7);
	assert_int_equal(out.values[1].type, REC_TYPE_U64);
	assert_true(out.values[1].u64 == UINT64_MAX);
	assert_int_equal(out.values[2].type, REC_TYPE_F64);
	assert_true(out.values[2].f64 == 1.5);
	assert_int_equal(out.values[3].type, REC_TYPE_BOOL);
	assert_true(out.values[3].b);
	assert_int_equal(out.values[4].type, REC_TYPE_BOOL);
	assert_false(out.values[4].b);
	assert_int_equal(out.values[5].type, REC_TYPE_NONE);
}

static void test_f64_special(void **state)
{
	const uint64_t values[] = { f64_bits(NAN), f64_bits(-INFINITY), f64_bits(-0.0) };
	unsigned char *p =
		build(0, REC_SMALL, T(REC_TYPE_F64, 0) | T(REC_TYPE_F64, 1) | T(REC_TYPE_F64, 2),
		      values, 3);

	(void)state;
	assert_int_equal(rec_event__decode(p, REC_SMALL, &out), 0);
	assert_true(isnan(out.values[0].f64));
	assert_true(isinf(out.values[1].f64) && out.values[1].f64 < 0);
	assert_true(out.values[2].f64 == 0 && signbit(out.values[2].f64));
}

static void test_strings_ok(void **state)
{
	const uint64_t values[] = {
		REC_STR_SLOT(0, 5, REC_STR_OK),
		42,
		REC_STR_SLOT(5, 6, REC_STR_OK),
		REC_STR_SLOT(11, 0, REC_STR_OK),
	};
	unsigned char *p = build(0, REC_BIG,
				 T(REC_TYPE_STR, 0) | T(REC_TYPE_I64, 1) | T(REC_TYPE_STR, 2) |
					 T(REC_TYPE_STR, 3),
				 values, 4);

	(void)state;
	memcpy(strings_of(p), "helloworld!", 11);
	assert_int_equal(rec_event__decode(p, REC_BIG, &out), 0);
	assert_int_equal(out.nfields, 4);
	assert_int_equal(out.values[0].type, REC_TYPE_STR);
	assert_int_equal(out.values[0].str.status, REC_STR_OK);
	assert_int_equal(out.values[0].str.len, 5);
	assert_memory_equal(out.values[0].str.ptr, "hello", 5);
	/* Strings point into the record itself. */
	assert_ptr_equal(out.values[0].str.ptr, strings_of(p));
	assert_int_equal(out.values[1].i64, 42);
	assert_int_equal(out.values[2].str.len, 6);
	assert_memory_equal(out.values[2].str.ptr, "world!", 6);
	assert_int_equal(out.values[3].str.len, 0);
}

static void assert_bad_string(size_t size, uint64_t v);

/* The one-string size: its area is REC_STR_MAX bytes, and strings must stay in it. */
static void test_one_string_record(void **state)
{
	const uint64_t ok = REC_STR_SLOT(0, REC_STR_MAX - 1, REC_STR_TRUNCATED);
	unsigned char *p = build(0, REC_ONE, T(REC_TYPE_STR, 0) | T(REC_TYPE_BOOL, 1),
				 (const uint64_t[]){ ok, 1 }, 2);

	(void)state;
	memset(strings_of(p), 'x', REC_STR_MAX - 1);
	assert_int_equal(rec_event__decode(p, REC_ONE, &out), 0);
	assert_int_equal(out.values[0].str.len, REC_STR_MAX - 1);
	assert_int_equal(out.values[0].str.status, REC_STR_TRUNCATED);
	assert_true(out.values[1].b);
	assert_bad_string(REC_ONE, REC_STR_SLOT(2, REC_STR_MAX - 1, REC_STR_OK));
	assert_bad_string(REC_ONE, REC_STR_SLOT(REC_STR_MAX + 1, 0, REC_STR_NULL));
	/* A trimmed record (rec_event__normalize) has any area size up to REC_STR_AREA. */
	p = build(0, REC_SMALL + 6, T(REC_TYPE_STR, 0), (const uint64_t[]){ REC_STR_SLOT(0, 5, 0) },
		  1);
	memcpy(strings_of(p), "hello", 6);
	assert_int_equal(rec_event__decode(p, REC_SMALL + 6, &out), 0);
	assert_memory_equal(out.values[0].str.ptr, "hello", 5);
	/* ... but its strings must still end inside it. */
	p = build(0, REC_SMALL + 5, T(REC_TYPE_STR, 0), (const uint64_t[]){ REC_STR_SLOT(0, 6, 0) },
		  1);
	assert_invalid(p, REC_SMALL + 5);
}

static void test_string_statuses(void **state)
{
	const uint64_t values[] = {
		REC_STR_SLOT(0, REC_STR_MAX - 1, REC_STR_TRUNCATED),
		REC_STR_SLOT(REC_STR_MAX - 1, 0, REC_STR_FAULT),
		REC_STR_SLOT(REC_STR_MAX - 1, 0, REC_STR_NULL),
		REC_STR_SLOT(REC_STR_MAX - 1, 0, REC_STR_NOSPACE),
		REC_STR_SLOT(REC_STR_AREA - 3, 3, REC_STR_OK),
		REC_STR_SLOT(REC_STR_AREA, 0, REC_STR_NOSPACE),
	};
	unsigned char *p =
		build(0, REC_BIG,
		      T(REC_TYPE_STR, 0) | T(REC_TYPE_STR, 1) | T(REC_TYPE_STR, 2) |
			      T(REC_TYPE_STR, 3) | T(REC_TYPE_STR, 4) | T(REC_TYPE_STR, 5),
		      values, 6);

	(void)state;
	memset(strings_of(p), 'x', REC_STR_MAX - 1);
	memcpy(strings_of(p) + REC_STR_AREA - 3, "end", 3);
	assert_int_equal(rec_event__decode(p, REC_BIG, &out), 0);
	assert_int_equal(out.nfields, 6);
	assert_int_equal(out.values[0].str.status, REC_STR_TRUNCATED);
	assert_int_equal(out.values[0].str.len, REC_STR_MAX - 1);
	assert_int_equal(out.values[1].str.status, REC_STR_FAULT);
	assert_int_equal(out.values[1].str.len, 0);
	assert_int_equal(out.values[2].str.status, REC_STR_NULL);
	assert_int_equal(out.values[3].str.status, REC_STR_NOSPACE);
	assert_int_equal(out.values[4].str.status, REC_STR_OK);
	assert_memory_equal(out.values[4].str.ptr, "end", 3);
	assert_int_equal(out.values[5].str.status, REC_STR_NOSPACE);
}

static void test_eight_fields_unaligned(void **state)
{
	const uint64_t values[] = {
		REC_STR_SLOT(0, 2, REC_STR_OK), 1, 2, f64_bits(2.25), 0, (uint64_t)-1LL, 3, 1
	};
	unsigned char *p =
		build(3, REC_BIG,
		      T(REC_TYPE_STR, 0) | T(REC_TYPE_I64, 1) | T(REC_TYPE_U64, 2) |
			      T(REC_TYPE_F64, 3) | T(REC_TYPE_BOOL, 4) | T(REC_TYPE_I64, 5) |
			      T(REC_TYPE_U64, 6) | T(REC_TYPE_BOOL, 7),
		      values, 8);

	(void)state;
	memcpy(strings_of(p), "hi", 2);
	assert_int_equal(rec_event__decode(p, REC_BIG, &out), 0);
	assert_int_equal(out.nfields, 8);
	assert_memory_equal(out.values[0].str.ptr, "hi", 2);
	assert_true(out.values[3].f64 == 2.25);
	assert_true(out.values[5].i64 == -1);
	assert_true(out.values[7].b);
	assert_int_equal(out.seq, 7);
}

/* A string area with no string field in it is allowed. */
static void test_area_without_strings(void **state)
{
	const uint64_t values[] = { 9 };
	unsigned char *p = build(0, REC_BIG, T(REC_TYPE_U64, 0), values, 1);

	(void)state;
	assert_int_equal(rec_event__decode(p, REC_BIG, &out), 0);
	assert_int_equal(out.nfields, 1);
	assert_int_equal(out.values[0].u64, 9);
}

static void test_wrong_size(void **state)
{
	unsigned char *p;

	(void)state;
	assert_invalid(NULL, REC_SMALL);
	p = build(0, REC_SMALL, 0, NULL, 0);
	assert_invalid(p, 0);
	assert_invalid(p, sizeof(struct rec_hdr));
	assert_invalid(p, REC_SMALL - 1);
	assert_invalid(p, REC_SMALL + 1);
	assert_invalid(p, REC_BIG);
	p = build(0, REC_SMALL + 8, 0, NULL, 0);
	assert_int_equal(rec_event__decode(p, REC_SMALL + 8, &out), 0);
	assert_invalid(p, REC_SMALL);
	p = build(0, REC_BIG + 1, 0, NULL, 0);
	assert_invalid(p, REC_BIG + 1);
	p = build(0, REC_BIG, 0, NULL, 0);
	assert_invalid(p, REC_SMALL);
	assert_invalid(p, REC_BIG - 1);
	assert_invalid(p, REC_BIG + 1);
	assert_int_equal(rec_event__decode(p, REC_BIG, &out), 0);
}

static void test_wrong_type(void **state)
{
	unsigned char *p = build(0, REC_SMALL, 0, NULL, 0);
	__u16 type;

	(void)state;
	type = REC_RT_RECORDING;
	memcpy(p + offsetof(struct rec_hdr, type), &type, sizeof(type));
	assert_invalid(p, REC_SMALL);
	type = 0;
	memcpy(p + offsetof(struct rec_hdr, type), &type, sizeof(type));
	assert_invalid(p, REC_SMALL);
	type = 0x101;
	memcpy(p + offsetof(struct rec_hdr, type), &type, sizeof(type));
	assert_invalid(p, REC_SMALL);
}

static void test_bad_nibbles(void **state)
{
	const uint64_t values[REC_MAX_FIELDS] = { 0 };
	unsigned char *p;

	(void)state;
	p = build(0, REC_SMALL, T(6, 0), values, 8);
	assert_invalid(p, REC_SMALL);
	p = build(0, REC_SMALL, T(REC_TYPE_I64, 0) | T(15, 1), values, 8);
	assert_invalid(p, REC_SMALL);
	/* A field after the end. */
	p = build(0, REC_SMALL, T(REC_TYPE_I64, 1), values, 8);
	assert_invalid(p, REC_SMALL);
	p = build(0, REC_SMALL, T(REC_TYPE_I64, 0) | T(REC_TYPE_I64, 7), values, 8);
	assert_invalid(p, REC_SMALL);
	/* Bits beyond the eighth field. */
	/* Above the 8 nibbles, only a runtime level of 0 to ERROR (4). */
	p = build(0, REC_SMALL, T(REC_TYPE_I64, 0) | (uint64_t)5 << REC_TYPES_LEVEL_SHIFT, values,
		  8);
	assert_invalid(p, REC_SMALL);
	p = build(0, REC_SMALL, T(REC_TYPE_I64, 0) | (uint64_t)1 << 36, values, 8);
	assert_invalid(p, REC_SMALL);
	p = build(0, REC_SMALL,
		  T(REC_TYPE_I64, 0) | (uint64_t)REC_LEVEL_WARN << REC_TYPES_LEVEL_SHIFT, values,
		  8);
	assert_int_equal(rec_event__decode(p, REC_SMALL, &out), 0);
	assert_int_equal(out.level, REC_LEVEL_WARN);
	assert_int_equal(out.nfields, 1);
	p = build(0, REC_SMALL, T(REC_TYPE_I64, 0) | (1ULL << 63), values, 8);
	assert_invalid(p, REC_SMALL);
}

static void test_bad_bool(void **state)
{
	const uint64_t two[] = { 2 }, high[] = { 1ULL << 32 | 1 };
	unsigned char *p;

	(void)state;
	p = build(0, REC_SMALL, T(REC_TYPE_BOOL, 0), two, 1);
	assert_invalid(p, REC_SMALL);
	p = build(0, REC_SMALL, T(REC_TYPE_BOOL, 0), high, 1);
	assert_invalid(p, REC_SMALL);
}

/* Builds a record with one string field of slot v and checks that it is refused. */
static void assert_bad_string(size_t size, uint64_t v)
{
	unsigned char *p = build(0, size, T(REC_TYPE_STR, 0), &v, 1);

	assert_invalid(p, size);
}

static void test_bad_strings(void **state)
{
	(void)state;
	/* No string area: only a string that was not read fits (see test_normalize_*). */
	assert_bad_string(REC_SMALL, REC_STR_SLOT(0, 1, REC_STR_OK));
	assert_bad_string(REC_SMALL, REC_STR_SLOT(1, 0, REC_STR_NULL));
	/* Outside the string area. */
	assert_bad_string(REC_BIG, REC_STR_SLOT(REC_STR_AREA - 9, 10, REC_STR_OK));
	assert_bad_string(REC_BIG, REC_STR_SLOT(REC_STR_AREA, 1, REC_STR_OK));
	assert_bad_string(REC_BIG, REC_STR_SLOT(0xffff, 0xffff, REC_STR_OK));
	assert_bad_string(REC_BIG, REC_STR_SLOT(REC_STR_AREA + 1, 0, REC_STR_FAULT));
	/* Longer than a string can be read. */
	assert_bad_string(REC_BIG, REC_STR_SLOT(0, REC_STR_MAX, REC_STR_OK));
	assert_bad_string(REC_BIG, REC_STR_SLOT(0, REC_STR_MAX, REC_STR_TRUNCATED));
	/* Unknown status. */
	assert_bad_string(REC_BIG, REC_STR_SLOT(0, 1, 5));
	assert_bad_string(REC_BIG, REC_STR_SLOT(0, 1, 0xff));
	/* A length with a status that has no text. */
	assert_bad_string(REC_BIG, REC_STR_SLOT(0, 3, REC_STR_FAULT));
	assert_bad_string(REC_BIG, REC_STR_SLOT(0, 1, REC_STR_NULL));
	assert_bad_string(REC_BIG, REC_STR_SLOT(0, 4, REC_STR_NOSPACE));
	/* Bits REC_STR_SLOT never sets. */
	assert_bad_string(REC_BIG, REC_STR_SLOT(0, 1, REC_STR_OK) | (1ULL << 40));
	assert_bad_string(REC_BIG, REC_STR_SLOT(0, 1, REC_STR_OK) | (1ULL << 63));
}

/* A bad field after good ones still fails the whole record. */
static void test_bad_late_field(void **state)
{
	const uint64_t values[] = { 1, 2, REC_STR_SLOT(0, 1, 9) };
	uint64_t types = T(REC_TYPE_I64, 0) | T(REC_TYPE_BOOL, 1) | T(REC_TYPE_STR, 2);
	unsigned char *p = build(0, REC_BIG, types, values, 3);

	(void)state;
	assert_invalid(p, REC_BIG);
}

/* A literal resolver over a fixed table; counts its calls. */
static int lit_calls;
static int lit(void *ctx, uint64_t addr, struct rec_value *v)
{
	static char long_lit[REC_STR_MAX];

	(void)ctx;
	lit_calls++;
	if (addr == 0x1000) {
		v->str.ptr = "literal";
		v->str.len = 7;
		v->str.status = REC_STR_OK;
		return 0;
	}
	if (addr == 0x2000) {
		memset(long_lit, 'L', sizeof(long_lit));
		v->str.ptr = long_lit;
		v->str.len = REC_STR_MAX - 1;
		v->str.status = REC_STR_TRUNCATED;
		return 0;
	}
	return -EFAULT;
}

static unsigned char norm[REC_EVENT_MAX];

static void test_normalize_literals(void **state)
{
	/* i64, a copied string, a literal, a NULL literal, an unreadable literal. */
	const uint64_t values[] = { (uint64_t)-5, REC_STR_SLOT(0, 2, REC_STR_OK), 0x1000, 0,
				    0x3000 };
	unsigned char *p = build(0, REC_ONE,
				 T(REC_TYPE_I64, 0) | T(REC_TYPE_STR, 1) | T(REC_TYPE_STR_LIT, 2) |
					 T(REC_TYPE_STR_LIT, 3) | T(REC_TYPE_STR_LIT, 4),
				 values, 5);
	ssize_t n;

	(void)state;
	memcpy(strings_of(p), "ab", 3);
	/* Raw literals are for ingest only: a reader refuses them. */
	assert_invalid(p, REC_ONE);
	lit_calls = 0;
	n = rec_event__normalize(p, REC_ONE, lit, NULL, norm, NULL);
	assert_int_equal(n, REC_SMALL + 3 + 8);
	assert_int_equal(lit_calls, 2);
	assert_int_equal(rec_event__decode(norm, (size_t)n, &out), 0);
	assert_int_equal(out.nfields, 5);
	assert_int_equal(out.values[0].i64, -5);
	assert_int_equal(out.values[1].str.len, 2);
	assert_memory_equal(out.values[1].str.ptr, "ab", 2);
	assert_int_equal(out.values[2].type, REC_TYPE_STR);
	assert_int_equal(out.values[2].str.len, 7);
	assert_memory_equal(out.values[2].str.ptr, "literal", 7);
	assert_int_equal(out.values[3].str.status, REC_STR_NULL);
	assert_int_equal(out.values[4].str.status, REC_STR_FAULT);
	assert_int_equal(out.seq, 7);
	assert_int_equal(out.tgid, 4242);
}

static void test_normalize_trims_and_bounds(void **state)
{
	uint64_t values[REC_MAX_FIELDS];
	uint64_t types = 0;
	unsigned char *p;
	ssize_t n;
	int i;

	(void)state;
	/* The BPF side's 888-byte record with one 3-byte string shrinks to 124 bytes. */
	p = build(0, REC_BIG, T(REC_TYPE_STR, 0), (const uint64_t[]){ REC_STR_SLOT(0, 3, 0) }, 1);
	memcpy(strings_of(p), "abc", 4);
	n = rec_event__normalize(p, REC_BIG, lit, NULL, norm, NULL);
	assert_int_equal(n, REC_SMALL + 4);
	assert_int_equal(rec_event__decode(norm, (size_t)n, &out), 0);
	assert_memory_equal(out.values[0].str.ptr, "abc", 4);
	/* Eight 255-byte literals: the first three fit the area, the rest are NOSPACE. */
	for (i = 0; i < REC_MAX_FIELDS; i++) {
		values[i] = 0x2000;
		types |= T(REC_TYPE_STR_LIT, i);
	}
	p = build(0, REC_SMALL, types, values, REC_MAX_FIELDS);
	n = rec_event__normalize(p, REC_SMALL, lit, NULL, norm, NULL);
	assert_int_equal(n, REC_SMALL + 3 * REC_STR_MAX);
	assert_int_equal(rec_event__decode(norm, (size_t)n, &out), 0);
	for (i = 0; i < REC_MAX_FIELDS; i++)
		assert_int_equal(out.values[i].str.status,
				 i < 3 ? REC_STR_TRUNCATED : REC_STR_NOSPACE);
	/* Only unread strings (a NULL literal, an unreadable one): no area at all. */
	p = build(0, REC_SMALL, T(REC_TYPE_STR_LIT, 0) | T(REC_TYPE_STR_LIT, 1),
		  (const uint64_t[]){ 0, 0x3000 }, 2);
	n = rec_event__normalize(p, REC_SMALL, lit, NULL, norm, NULL);
	assert_int_equal(n, REC_SMALL);
	assert_int_equal(rec_event__decode(norm, (size_t)n, &out), 0);
	assert_int_equal(out.values[0].str.status, REC_STR_NULL);
	assert_int_equal(out.values[1].str.status, REC_STR_FAULT);
	/* Malformed input stays malformed. */
	assert_int_equal(rec_event__normalize(NULL, REC_SMALL, lit, NULL, norm, NULL), -EINVAL);
	assert_int_equal(rec_event__normalize(p, REC_SMALL - 1, lit, NULL, norm, NULL), -EINVAL);
	assert_int_equal(rec_event__normalize(p, REC_SMALL + 8, lit, NULL, norm, NULL), -EINVAL);
	p = build(0, REC_SMALL, T(REC_TYPE_STR, 0), (const uint64_t[]){ REC_STR_SLOT(0, 1, 0) }, 1);
	assert_int_equal(rec_event__normalize(p, REC_SMALL, lit, NULL, norm, NULL), -EINVAL);
	p = build(0, REC_SMALL, T(7, 0), (const uint64_t[]){ 0 }, 1);
	assert_int_equal(rec_event__normalize(p, REC_SMALL, lit, NULL, norm, NULL), -EINVAL);
	p = build(0, REC_SMALL, T(REC_TYPE_STR_LIT, 1), (const uint64_t[]){ 0, 0x1000 }, 2);
	assert_int_equal(rec_event__normalize(p, REC_SMALL, lit, NULL, norm, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_fields),
		cmocka_unit_test(test_scalar_types),
		cmocka_unit_test(test_f64_special),
		cmocka_unit_test(test_strings_ok),
		cmocka_unit_test(test_one_string_record),
		cmocka_unit_test(test_string_statuses),
		cmocka_unit_test(test_eight_fields_unaligned),
		cmocka_unit_test(test_area_without_strings),
		cmocka_unit_test(test_wrong_size),
		cmocka_unit_test(test_wrong_type),
		cmocka_unit_test(test_bad_nibbles),
		cmocka_unit_test(test_bad_bool),
		cmocka_unit_test(test_bad_strings),
		cmocka_unit_test(test_bad_late_field),
		cmocka_unit_test(test_normalize_literals),
		cmocka_unit_test(test_normalize_trims_and_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
