// SPDX-License-Identifier: MIT
/* TSC to CLOCK_MONOTONIC (clock.h). */
#include <time.h>

#include "wire/clock.h"

/* Brackets tried per point; the tightest one is kept. */
#define TRIES 16
/* The least distance between the two points of the line, in TSC ticks. */
#define MIN_SPAN 1000000

static uint64_t tsc(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return 0;
#endif
}

struct rec_clock_point rec_clock__read(void)
{
	struct rec_clock_point best = { 0, 0 };
	uint64_t width = UINT64_MAX;

	for (int i = 0; i < TRIES; i++) {
		struct timespec ts;
		uint64_t a, b;

		a = tsc();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		b = tsc();
		if (b < a || b - a >= width)
			continue;
		width = b - a;
		best.tsc = a + (b - a) / 2;
		best.ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	}
	return best;
}

void rec_clock__add(struct rec_clock *c, struct rec_clock_point p)
{
	if (!c->first.tsc) {
		c->first = p;
		return;
	}
	if (p.tsc <= c->first.tsc || p.ns <= c->first.ns)
		return;
	c->last = p;
	c->ready = p.tsc - c->first.tsc >= MIN_SPAN;
	/*
	 * Once per point, not per stamp: a division costs more than the rest. The
	 * TSC runs at 10 MHz at least, so the rate is below 100 ns a tick: its
	 * integer part fits in the 24 bits above the fraction's 40.
	 */
	c->mult = (uint64_t)((double)(c->last.ns - c->first.ns) *
				     (double)(1ULL << REC_CLOCK_MULT_SHIFT) /
				     (double)(c->last.tsc - c->first.tsc) +
			     0.5);
}

int64_t rec_clock__realtime(uint64_t mono_ns, int64_t offset_ns)
{
	int64_t t;

	/* Both may come from a hostile dump: saturate instead of overflowing. */
	if (mono_ns > INT64_MAX) {
		/* Only a negative offset brings it back; the sum is then in [0, 2^64). */
		uint64_t sum = mono_ns + (uint64_t)offset_ns;

		return offset_ns >= 0 || sum > INT64_MAX ? INT64_MAX : (int64_t)sum;
	}
	if (__builtin_add_overflow((int64_t)mono_ns, offset_ns, &t))
		return offset_ns > 0 ? INT64_MAX : INT64_MIN;
	return t;
}
