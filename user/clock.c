// SPDX-License-Identifier: MIT
/* TSC to CLOCK_MONOTONIC (clock.h). */
#include <time.h>

#include "clock.h"

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
	/* Once per point, not per stamp: a division costs more than the rest. */
	c->rate = (double)(c->last.ns - c->first.ns) / (double)(c->last.tsc - c->first.tsc);
}

uint64_t rec_clock__ns(const struct rec_clock *c, uint64_t t)
{
	double d;

	if (!c->ready)
		return 0;
	/* From the latest point: the nearest in time to what is converted. */
	d = ((double)t - (double)c->last.tsc) * c->rate;
	if (d < 0 && -d > (double)c->last.ns)
		return 0;
	return (uint64_t)((double)c->last.ns + d);
}
