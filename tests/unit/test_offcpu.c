// SPDX-License-Identifier: MIT
/* rec_offcpu (offcpu.h): off-CPU intervals charged to spans by time. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/offcpu.h"

/* Thread tid was off the CPU from off, woken at wake, ran again at on. */
static void add(struct rec_offcpu *s, uint32_t tid, uint64_t off, uint64_t wake, uint64_t on,
		int32_t cause, uint32_t lost)
{
	struct rec_offcpu_rec r = {
		.hdr = { .type = REC_RT_OFFCPU, .size = sizeof(r), .tid = tid, .time_ns = on },
		.off_ns = off,
		.wake_ns = wake,
		.cause = cause,
		.lost = lost,
	};

	assert_int_equal(rec_offcpu__add(s, &r), 0);
}

static void off_means_nothing_known(void **state)
{
	struct rec_offcpu s = { 0 };
	struct rec_sched_figs f;

	(void)state;
	rec_offcpu__charge(&s, 1, 100, 200, &f);
	assert_int_equal(f.flags, 0);
}

static void a_span_is_charged_what_overlaps_it(void **state)
{
	struct rec_offcpu s = { 0 };
	struct rec_sched_figs f;

	(void)state;
	rec_offcpu__start(&s, 10);
	add(&s, 1, 50, 60, 70, 202, 0);		    /* before the span: not charged */
	add(&s, 1, 110, 150, 160, 202, 0);	    /* futex 40, runq 10 */
	add(&s, 1, 170, 170, 180, REC_OFF_RUNQ, 0); /* preempted: runq 10 */
	add(&s, 1, 185, 190, 195, 0, 0);	    /* read 5, runq 5 */
	add(&s, 2, 100, 200, 200, 202, 0);	    /* another thread */
	rec_offcpu__charge(&s, 1, 100, 200, &f);
	assert_int_equal(f.flags, REC_SCHED_KNOWN);
	assert_int_equal(f.blocked_ns, 45);
	assert_int_equal(f.runq_ns, 25);
	assert_int_equal(f.cpu_ns, 30);
	assert_int_equal(f.switches, 3);
	assert_int_equal(f.top[0].cause, 202);
	assert_int_equal(f.top[0].ns, 40);
	assert_int_equal(f.top[1].cause, 0);
	assert_int_equal(f.top[1].ns, 5);
	assert_int_equal(f.top[2].ns, 0);
	assert_int_equal(f.other_ns, 0);
	/* A span cut in the middle of an interval gets only its part. */
	rec_offcpu__charge(&s, 1, 130, 165, &f);
	assert_int_equal(f.blocked_ns, 20);
	assert_int_equal(f.runq_ns, 10);
	assert_int_equal(f.cpu_ns, 5);
	assert_int_equal(f.switches, 0);
	rec_offcpu__free(&s);
}

static void past_the_top_causes_the_rest_is_other(void **state)
{
	struct rec_offcpu s = { 0 };
	struct rec_sched_figs f;
	uint64_t t = 100;

	(void)state;
	rec_offcpu__start(&s, 10);
	/* Causes 0..5, cause c blocked (c + 1) * 10 ns. */
	for (int32_t c = 0; c < 6; c++) {
		add(&s, 1, t, t + (uint64_t)(c + 1) * 10, t + (uint64_t)(c + 1) * 10, c, 0);
		t += 100;
	}
	rec_offcpu__charge(&s, 1, 100, t, &f);
	assert_int_equal(f.blocked_ns, 210);
	for (int i = 0; i < REC_SCHED_TOP; i++)
		assert_int_equal(f.top[i].cause, 5 - i);
	assert_int_equal(f.other_ns, 20 + 10);
	assert_int_equal(f.cpu_ns + f.blocked_ns + f.runq_ns, t - 100);
	rec_offcpu__free(&s);
}

static void lost_forgotten_or_before_the_start_is_partial(void **state)
{
	struct rec_offcpu s = { 0 };
	struct rec_sched_figs f;
	uint64_t t = 1000;

	(void)state;
	rec_offcpu__start(&s, 500);
	rec_offcpu__charge(&s, 1, 400, 600, &f);
	assert_int_equal(f.flags, REC_SCHED_KNOWN | REC_SCHED_PARTIAL);
	add(&s, 1, 700, 710, 720, 0, 0);
	add(&s, 1, 800, 810, 820, 0, 3); /* 3 lost between 720 and 800 */
	rec_offcpu__charge(&s, 1, 600, 900, &f);
	assert_int_equal(f.flags, REC_SCHED_KNOWN | REC_SCHED_PARTIAL);
	rec_offcpu__charge(&s, 1, 805, 900, &f);
	assert_int_equal(f.flags, REC_SCHED_KNOWN);
	assert_int_equal(s.count.lost, 3);
	/* Past a thread's cap the oldest go: a span older than those left is partial. */
	for (int i = 0; i < REC_SCHED_THREAD_CAP; i++, t += 10)
		add(&s, 1, t, t + 1, t + 2, 0, 0);
	assert_int_equal(s.count.forgotten, 2);
	rec_offcpu__charge(&s, 1, 700, t, &f);
	assert_true(f.flags & REC_SCHED_PARTIAL);
	rec_offcpu__charge(&s, 1, 1500, t, &f);
	assert_int_equal(f.flags, REC_SCHED_KNOWN);
	rec_offcpu__free(&s);
}

/*
 * A process's threads past REC_SCHED_MAX_THREADS keep no intervals: counted
 * (threads_full), and a span of such a thread is partial, not wrongly all CPU.
 * (10,000 threads fit; the 16,385th and on do not.)
 */
static void threads_past_the_limit_are_counted_and_partial(void **state)
{
	struct rec_offcpu s = { 0 };
	struct rec_sched_figs f;
	uint32_t tid;

	(void)state;
	rec_offcpu__start(&s, 100);
	for (tid = 1; tid <= REC_SCHED_MAX_THREADS; tid++)
		add(&s, tid, 200, 300, 400, 0, 0);
	assert_int_equal(s.count.threads_full, 0);
	rec_offcpu__charge(&s, 10000, 150, 500, &f);
	assert_int_equal(f.flags, REC_SCHED_KNOWN);
	assert_int_equal(f.blocked_ns, 100);
	assert_int_equal(f.runq_ns, 100);
	for (; tid <= REC_SCHED_MAX_THREADS + 10; tid++)
		add(&s, tid, 200, 300, 400, 0, 0);
	assert_int_equal(s.count.threads_full, 10);
	rec_offcpu__charge(&s, REC_SCHED_MAX_THREADS + 5, 150, 500, &f);
	assert_int_equal(f.flags, REC_SCHED_KNOWN | REC_SCHED_PARTIAL);
	rec_offcpu__free(&s);
}

/*
 * A span charged long after it ended (its thread's batch comes a full buffer
 * later): the intervals since count nothing, but the first of them, whose lost
 * intervals may lie inside the span; the ring full and wrapped, so that the
 * search for where to begin crosses its end.
 */
static void a_span_charged_late_passes_over_the_intervals_since(void **state)
{
	struct rec_offcpu s = { 0 };
	struct rec_sched_figs f;

	(void)state;
	rec_offcpu__start(&s, 1);
	/* Before the span (100000..100100), then in it: futex 40, runq 10. */
	for (uint64_t i = 0; i < REC_SCHED_THREAD_CAP; i++)
		add(&s, 1, 10 * i, 10 * i + 2, 10 * i + 4, 202, 0);
	add(&s, 1, 100010, 100050, 100060, 202, 0);
	/* Right after it, with intervals lost since the one before: partial. */
	add(&s, 1, 100200, 100210, 100220, 202, 2);
	for (uint64_t i = 0; i < 3 * REC_SCHED_THREAD_CAP / 4; i++)
		add(&s, 1, 101000 + 100 * i, 101010 + 100 * i, 101020 + 100 * i, 202, 0);
	rec_offcpu__charge(&s, 1, 100000, 100100, &f);
	assert_int_equal(f.flags, REC_SCHED_KNOWN | REC_SCHED_PARTIAL);
	assert_int_equal(f.blocked_ns, 40);
	assert_int_equal(f.runq_ns, 10);
	assert_int_equal(f.cpu_ns, 50);
	assert_int_equal(f.switches, 1);
	rec_offcpu__free(&s);
	/* Without the lost ones: whole. */
	s = (struct rec_offcpu){ 0 };
	rec_offcpu__start(&s, 1);
	add(&s, 1, 100010, 100050, 100060, 202, 0);
	add(&s, 1, 100200, 100210, 100220, 202, 0);
	for (uint64_t i = 0; i < 100; i++)
		add(&s, 1, 101000 + 100 * i, 101010 + 100 * i, 101020 + 100 * i, 202, 0);
	rec_offcpu__charge(&s, 1, 100000, 100100, &f);
	assert_int_equal(f.flags, REC_SCHED_KNOWN);
	assert_int_equal(f.blocked_ns, 40);
	assert_int_equal(f.switches, 1);
	rec_offcpu__free(&s);
}

static void a_malformed_interval_is_refused(void **state)
{
	struct rec_offcpu s = { 0 };
	struct rec_offcpu_rec r = { .hdr = { .tid = 1, .time_ns = 10 },
				    .off_ns = 20,
				    .wake_ns = 15 };

	(void)state;
	assert_int_equal(rec_offcpu__add(&s, &r), -EINVAL);
	r.off_ns = 5;
	r.wake_ns = 11;
	assert_int_equal(rec_offcpu__add(&s, &r), -EINVAL);
	assert_int_equal(s.count.intervals, 0);
	rec_offcpu__free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(off_means_nothing_known),
		cmocka_unit_test(a_span_is_charged_what_overlaps_it),
		cmocka_unit_test(past_the_top_causes_the_rest_is_other),
		cmocka_unit_test(lost_forgotten_or_before_the_start_is_partial),
		cmocka_unit_test(threads_past_the_limit_are_counted_and_partial),
		cmocka_unit_test(a_span_charged_late_passes_over_the_intervals_since),
		cmocka_unit_test(a_malformed_interval_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
