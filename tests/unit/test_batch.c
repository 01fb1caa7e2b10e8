// SPDX-License-Identifier: MIT
/* The REC_RT_BATCH ring record (user/wire/batch.c): numbered events out as REC_RT_EVENT records, in parts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wire/batch.h"

struct ring_rec {
	struct rec_batch_rec b;
	unsigned char data[REC_TBUF_DATA];
};

/* Appends a record of kind with nvals values and the string area str (strbytes). */
static uint32_t put(struct ring_rec *r, uint16_t kind, uint8_t pad, uint64_t seq, uint8_t nvals,
		    const uint64_t *vals, const char *str, uint16_t strbytes)
{
	unsigned char *p = r->data + r->b.end;
	uint32_t size;

	if (kind == REC_BK_EVENT) {
		struct rec_brec_event e = { 0 };

		size = sizeof(e) + 8 * nvals + ((strbytes + 7u) & ~7u);
		e.h.kind = kind;
		e.h.size = (uint16_t)size;
		e.h.nvals = nvals;
		e.h.strbytes = strbytes;
		e.h.pad = pad;
		e.h.time = 1000 + r->b.end;
		e.meta = 0x4000;
		e.types = REC_TYPE_I64 | (uint64_t)REC_TYPE_STR << 4;
		e.key = 77;
		e.span = seq;
		e.recording = 0x5000;
		memset(p, 0, size);
		memcpy(p, &e, sizeof(e));
		if (nvals)
			memcpy(p + sizeof(e), vals, 8u * nvals);
		if (strbytes)
			memcpy(p + sizeof(e) + 8u * nvals, str, strbytes);
	} else if (kind == REC_BK_ENTER) {
		struct rec_brec_enter e = { 0 };

		size = sizeof(e);
		e.h.kind = kind;
		e.h.size = (uint16_t)size;
		e.meta = 0x6000 + seq;
		memcpy(p, &e, sizeof(e));
	} else {
		struct rec_brec_exit x = { 0 };

		size = sizeof(x);
		x.h.kind = kind;
		x.h.size = (uint16_t)size;
		memcpy(p, &x, sizeof(x));
	}
	r->b.end += size;
	r->b.hdr.size = (uint16_t)(sizeof(r->b) + r->b.end);
	return size;
}

static void init(struct ring_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->b.hdr.type = REC_RT_BATCH;
	r->b.hdr.tgid = 10;
	r->b.hdr.tid = 11;
	r->b.hdr.flags = REC_HF_TSC;
	r->b.hdr.size = sizeof(r->b);
}

static void test_numbered_events_come_out_as_event_records(void **state)
{
	uint64_t vals[2] = { 42, REC_STR_SLOT(0, 5, 0) };
	struct rec_event_rec ev;
	struct rec_batch_iter it;
	struct ring_rec r;
	const char *strings;
	uint32_t area, at;

	(void)state;
	init(&r);
	put(&r, REC_BK_EXIT, 0, 0, 0, NULL, NULL, 0);
	at = r.b.end;
	put(&r, REC_BK_EVENT, REC_BREC_TAKEN, 3, 2, vals, "hello", 6);
	/* Refused by the BPF side (counted there): skipped. */
	put(&r, REC_BK_EVENT, 0, 9, 2, vals, "hello", 6);
	put(&r, REC_BK_EVENT, REC_BREC_TAKEN, 4, 1, vals, NULL, 0);
	assert_int_equal(rec_batch__begin(&it, &r, r.b.hdr.size), 0);

	memset(&ev, 0xff, sizeof(ev));
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), 1);
	assert_int_equal(ev.hdr.type, REC_RT_EVENT);
	/* The string area is the bytes the target wrote: "hello" and its NUL. */
	assert_int_equal(ev.hdr.size, sizeof(ev) + 6);
	assert_int_equal(ev.hdr.tgid, 10);
	assert_int_equal(ev.hdr.tid, 11);
	assert_int_equal(ev.hdr.flags, REC_HF_TSC);
	assert_int_equal(ev.hdr.time_ns, 1000 + sizeof(struct rec_brec_exit));
	assert_int_equal(ev.recording, 77);
	assert_int_equal(ev.seq, 3);
	assert_int_equal(ev.meta, 0x4000);
	assert_int_equal(ev.values[0], 42);
	assert_int_equal(ev.values[1], vals[1]);
	assert_int_equal(ev.values[2], 0);
	assert_int_equal(ev.values[REC_MAX_FIELDS - 1], 0);
	/* In place, in the batch. */
	assert_int_equal(area, 6);
	assert_ptr_equal(strings, (const char *)r.data + at + sizeof(struct rec_brec_event) + 16);
	assert_memory_equal(strings, "hello", 6);

	memset(&ev, 0xff, sizeof(ev));
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), 1);
	assert_int_equal(ev.hdr.size, sizeof(ev));
	assert_int_equal(ev.seq, 4);
	assert_int_equal(ev.values[1], 0);
	assert_null(strings);
	assert_int_equal(area, 0);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), 0);
}

/* Span enters come out (their callsites) only when asked for, in order with the events. */
static void test_enters_come_out_when_asked(void **state)
{
	uint64_t vals[1] = { 1 };
	struct rec_event_rec ev;
	const char *strings;
	uint32_t area;
	struct rec_batch_iter it;
	struct ring_rec r;

	(void)state;
	init(&r);
	put(&r, REC_BK_ENTER, 0, 1, 0, NULL, NULL, 0);
	put(&r, REC_BK_EVENT, REC_BREC_TAKEN, 5, 1, vals, NULL, 0);
	put(&r, REC_BK_ENTER, 0, 2, 0, NULL, NULL, 0);
	put(&r, REC_BK_EXIT, 0, 0, 0, NULL, NULL, 0);
	assert_int_equal(rec_batch__begin(&it, &r, r.b.hdr.size), 0);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), REC_BATCH_EVENT);
	assert_int_equal(ev.seq, 5);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), 0);

	assert_int_equal(rec_batch__begin(&it, &r, r.b.hdr.size), 0);
	it.enters = true;
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), REC_BATCH_ENTER);
	assert_int_equal(it.enter_meta, 0x6001);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), REC_BATCH_EVENT);
	assert_int_equal(ev.seq, 5);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), REC_BATCH_ENTER);
	assert_int_equal(it.enter_meta, 0x6002);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), 0);
}

static void test_start_skips_records_taken_before(void **state)
{
	uint64_t vals[1] = { 1 };
	struct rec_event_rec ev;
	const char *strings;
	uint32_t area;
	struct rec_batch_iter it;
	struct ring_rec r;
	uint32_t first;

	(void)state;
	init(&r);
	first = put(&r, REC_BK_EVENT, REC_BREC_TAKEN, 0, 1, vals, NULL, 0);
	put(&r, REC_BK_EVENT, REC_BREC_TAKEN, 1, 1, vals, NULL, 0);
	r.b.start = first;
	assert_int_equal(rec_batch__begin(&it, &r, r.b.hdr.size), 0);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), 1);
	assert_int_equal(ev.seq, 1);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), 0);
}

static void test_bad_headers_are_refused(void **state)
{
	struct rec_batch_iter it;
	struct ring_rec r;

	(void)state;
	init(&r);
	put(&r, REC_BK_EXIT, 0, 0, 0, NULL, NULL, 0);
	assert_int_equal(rec_batch__begin(&it, &r, sizeof(r.b) - 1), -EINVAL);
	/* size disagrees with end */
	assert_int_equal(rec_batch__begin(&it, &r, r.b.hdr.size + 8), -EINVAL);
	r.b.start = r.b.end + 8;
	assert_int_equal(rec_batch__begin(&it, &r, r.b.hdr.size), -EINVAL);
	r.b.start = 0;
	r.b.hdr.type = REC_RT_EVENT;
	assert_int_equal(rec_batch__begin(&it, &r, r.b.hdr.size), -EINVAL);
}

static void test_malformed_records_stop_the_batch(void **state)
{
	uint64_t vals[1] = { 1 };
	struct rec_event_rec ev;
	const char *strings;
	uint32_t area;
	struct rec_brec_event *e;
	struct rec_batch_iter it;
	struct ring_rec r;

	(void)state;
	/* A size that runs past the end. */
	init(&r);
	put(&r, REC_BK_EVENT, REC_BREC_TAKEN, 0, 1, vals, NULL, 0);
	e = (struct rec_brec_event *)(void *)r.data;
	e->h.size += 8;
	assert_int_equal(rec_batch__begin(&it, &r, r.b.hdr.size), 0);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), -EINVAL);
	/* nvals that disagree with the size. */
	init(&r);
	put(&r, REC_BK_EVENT, REC_BREC_TAKEN, 0, 1, vals, NULL, 0);
	e = (struct rec_brec_event *)(void *)r.data;
	e->h.nvals = 9;
	assert_int_equal(rec_batch__begin(&it, &r, r.b.hdr.size), 0);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), -EINVAL);
	/* An unknown kind; a size of 0 (which would loop). */
	init(&r);
	put(&r, REC_BK_EXIT, 0, 0, 0, NULL, NULL, 0);
	((struct rec_brec *)(void *)r.data)->kind = 9;
	assert_int_equal(rec_batch__begin(&it, &r, r.b.hdr.size), 0);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), -EINVAL);
	((struct rec_brec *)(void *)r.data)->kind = REC_BK_EXIT;
	((struct rec_brec *)(void *)r.data)->size = 0;
	assert_int_equal(rec_batch__begin(&it, &r, r.b.hdr.size), 0);
	assert_int_equal(rec_batch__next(&it, &ev, &strings, &area), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbered_events_come_out_as_event_records),
		cmocka_unit_test(test_start_skips_records_taken_before),
		cmocka_unit_test(test_enters_come_out_when_asked),
		cmocka_unit_test(test_bad_headers_are_refused),
		cmocka_unit_test(test_malformed_records_stop_the_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
