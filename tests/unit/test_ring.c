/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the ring-buffer consumer (user/kernel/ring.c) on memory laid out as a
 * BPF ring buffer: 8-byte record headers (length with the busy and discard
 * bits, page offset), records padded to 8 bytes, the data area mapped twice
 * back to back (a memfd mapped at two adjacent addresses) so that a record
 * that wraps reads contiguously, as the kernel maps it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernel/ring.h"

#define SIZE 4096

struct fake_ring {
	unsigned long consumer_pos, producer_pos;
	unsigned char *data; /* SIZE bytes, then the same SIZE bytes again */
	int fd;
};

struct seen {
	int n;
	size_t sizes[64];
	unsigned char first[64];
	int stop_at;	       /* return 1 from this call on (-1: never) */
	struct rec_ring *ring; /* to try a nested consume */
	int64_t nested;
};

static int record_seen(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;

	if (s->ring)
		s->nested = rec_ring__consume(s->ring);
	if (s->n < 64) {
		s->sizes[s->n] = size;
		s->first[s->n] = size ? *(unsigned char *)data : 0;
	}
	s->n++;
	return s->stop_at >= 0 && s->n > s->stop_at;
}

static int setup(void **state)
{
	struct fake_ring *f = calloc(1, sizeof(*f));
	unsigned char *p;

	assert_non_null(f);
	f->fd = memfd_create("ring", MFD_CLOEXEC);
	assert_true(f->fd >= 0);
	assert_int_equal(ftruncate(f->fd, SIZE), 0);
	p = mmap(NULL, 2 * SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_true(mmap(p, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f->fd, 0) == p);
	assert_true(mmap(p + SIZE, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f->fd,
			 0) == p + SIZE);
	f->data = p;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake_ring *f = *state;

	munmap(f->data, 2 * SIZE);
	close(f->fd);
	free(f);
	return 0;
}

/* Appends a record of len payload bytes, all equal to fill, with the header flags given. */
static void produce(struct fake_ring *f, uint32_t len, unsigned char fill, uint32_t flags)
{
	unsigned long pos = f->producer_pos;
	uint32_t hdr[2] = { len | flags, 0 };

	memcpy(f->data + (pos & (SIZE - 1)), hdr, sizeof(hdr));
	/* Through the second mapping when it wraps, as the kernel's producer sees it. */
	memset(f->data + (pos & (SIZE - 1)) + BPF_RINGBUF_HDR_SZ, fill, len);
	f->producer_pos = pos + ((BPF_RINGBUF_HDR_SZ + len + 7) & ~7UL);
}

static struct rec_ring *ring_of(struct fake_ring *f, struct seen *s)
{
	struct rec_ring *r = rec_ring__new_mem(&f->consumer_pos, &f->producer_pos, f->data, SIZE,
					       record_seen, s);

	assert_non_null(r);
	return r;
}

static void test_empty(void **state)
{
	struct fake_ring *f = *state;
	struct seen s = { .stop_at = -1 };
	struct rec_ring *r = ring_of(f, &s);

	assert_int_equal(rec_ring__consume(r), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(f->consumer_pos, 0);
	assert_int_equal(rec_ring__fd(r), -1);
	rec_ring__free(r);
}

static void test_records_in_order(void **state)
{
	struct fake_ring *f = *state;
	struct seen s = { .stop_at = -1 };
	struct rec_ring *r = ring_of(f, &s);

	produce(f, 16, 'a', 0);
	produce(f, 5, 'b', 0);
	produce(f, 0, 0, 0);
	assert_int_equal(rec_ring__consume(r), 3);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.sizes[0], 16);
	assert_int_equal(s.first[0], 'a');
	assert_int_equal(s.sizes[1], 5);
	assert_int_equal(s.first[1], 'b');
	assert_int_equal(s.sizes[2], 0);
	/* Everything consumed, padding included. */
	assert_int_equal(f->consumer_pos, f->producer_pos);
	assert_int_equal(rec_ring__consume(r), 0);
	rec_ring__free(r);
}

static void test_busy_record_waits(void **state)
{
	struct fake_ring *f = *state;
	struct seen s = { .stop_at = -1 };
	struct rec_ring *r = ring_of(f, &s);
	unsigned long busy_at;
	uint32_t len;

	produce(f, 8, 'a', 0);
	busy_at = f->producer_pos;
	produce(f, 8, 'b', BPF_RINGBUF_BUSY_BIT);
	produce(f, 8, 'c', 0);
	assert_int_equal(rec_ring__consume(r), 1);
	assert_int_equal(f->consumer_pos, busy_at);
	/* Submitted now: it and the one after it come next, in order. */
	len = 8;
	memcpy(f->data + (busy_at & (SIZE - 1)), &len, sizeof(len));
	assert_int_equal(rec_ring__consume(r), 2);
	assert_int_equal(s.first[1], 'b');
	assert_int_equal(s.first[2], 'c');
	rec_ring__free(r);
}

static void test_discarded_record_is_skipped(void **state)
{
	struct fake_ring *f = *state;
	struct seen s = { .stop_at = -1 };
	struct rec_ring *r = ring_of(f, &s);

	produce(f, 8, 'a', BPF_RINGBUF_DISCARD_BIT);
	produce(f, 24, 'b', 0);
	assert_int_equal(rec_ring__consume(r), 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.first[0], 'b');
	assert_int_equal(f->consumer_pos, f->producer_pos);
	rec_ring__free(r);
}

static void test_record_that_wraps(void **state)
{
	struct fake_ring *f = *state;
	struct seen s = { .stop_at = -1 };
	struct rec_ring *r = ring_of(f, &s);

	/* Start 16 bytes before the end: the record runs past it into the start. */
	f->consumer_pos = f->producer_pos = 10 * SIZE - 16;
	produce(f, 100, 'w', 0);
	assert_int_equal(rec_ring__consume(r), 1);
	assert_int_equal(s.sizes[0], 100);
	assert_int_equal(s.first[0], 'w');
	assert_int_equal(f->data[(10 * SIZE - 16 + 8 + 99) & (SIZE - 1)], 'w');
	assert_int_equal(f->consumer_pos, f->producer_pos);
	rec_ring__free(r);
}

static void test_callback_stops_the_batch(void **state)
{
	struct fake_ring *f = *state;
	struct seen s = { .stop_at = 2 };
	struct rec_ring *r = ring_of(f, &s);

	for (int i = 0; i < 5; i++)
		produce(f, 8, (unsigned char)('0' + i), 0);
	/* The third call asks to stop: three were handed, the third is consumed. */
	assert_int_equal(rec_ring__consume(r), 3);
	assert_int_equal(f->consumer_pos, 3 * 16);
	s.stop_at = -1;
	assert_int_equal(rec_ring__consume(r), 2);
	assert_int_equal(s.first[3], '3');
	rec_ring__free(r);
}

static void test_at_most_a_ring_per_call(void **state)
{
	struct fake_ring *f = *state;
	struct seen s = { .stop_at = -1 };
	struct rec_ring *r = ring_of(f, &s);
	int64_t n;

	/*
	 * A producer that never pauses: twice a ring's worth committed ahead of
	 * us (a fake ring can; a real one is refilled while we read it).
	 */
	for (int i = 0; i < 2 * SIZE / 16; i++)
		produce(f, 8, 'x', 0);
	n = rec_ring__consume(r);
	assert_int_equal(n, SIZE / 16);
	assert_int_equal(f->consumer_pos, SIZE);
	rec_ring__free(r);
}

static void test_nested_consume_is_refused(void **state)
{
	struct fake_ring *f = *state;
	struct seen s = { .stop_at = -1 };
	struct rec_ring *r = ring_of(f, &s);

	produce(f, 8, 'a', 0);
	produce(f, 8, 'b', 0);
	s.ring = r;
	assert_int_equal(rec_ring__consume(r), 2);
	/* Handed once each: the nested call took nothing twice. */
	assert_int_equal(s.n, 2);
	assert_int_equal(s.nested, -EBUSY);
	rec_ring__free(r);
}

static void test_size_must_be_a_power_of_two(void **state)
{
	struct fake_ring *f = *state;

	errno = 0;
	assert_null(
		rec_ring__new_mem(&f->consumer_pos, &f->producer_pos, f->data, 3000, NULL, NULL));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_records_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy_record_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discarded_record_is_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_that_wraps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_stops_the_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_at_most_a_ring_per_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested_consume_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_must_be_a_power_of_two, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
