/* SPDX-License-Identifier: MIT */
/*
 * The target's TSC stamps (batch path, REC_HF_TSC) in CLOCK_MONOTONIC
 * nanoseconds: a line through (rdtsc, CLOCK_MONOTONIC) points, each taken as
 * the tightest of a few (rdtsc, clock_gettime, rdtsc) brackets. The first point
 * stays; each new one lengthens the baseline, so the rate gets better with time.
 */
#ifndef REC_CLOCK_H
#define REC_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct rec_clock_point {
	uint64_t tsc;
	uint64_t ns;
};

struct rec_clock {
	struct rec_clock_point first, last;
	bool ready;    /* two points far enough apart */
	uint64_t mult; /* ns per TSC tick along the line, once ready, with 40 bits of fraction */
};

/* A point read now: the middle of the tightest of a few brackets. */
struct rec_clock_point rec_clock__read(void);

/* Adds a point; the line goes through the first and the latest. */
void rec_clock__add(struct rec_clock *c, struct rec_clock_point p);

/* tsc in CLOCK_MONOTONIC ns; 0 if the clock has fewer than two points apart. */
uint64_t rec_clock__ns(const struct rec_clock *c, uint64_t tsc);

#endif /* REC_CLOCK_H */
