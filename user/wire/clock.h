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
#include <time.h>

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

/* The fraction bits of the rate (struct rec_clock.mult). */
#define REC_CLOCK_MULT_SHIFT 40

/*
 * tsc in CLOCK_MONOTONIC ns; 0 if the clock has fewer than two points apart.
 * Inline: the consumer converts every event of a batch.
 */
static inline uint64_t rec_clock__ns(const struct rec_clock *c, uint64_t t)
{
	__int128 d;

	if (!c->ready)
		return 0;
	/* From the latest point: the nearest in time to what is converted. */
	d = ((__int128)((int64_t)(t - c->last.tsc)) * (__int128)c->mult +
	     ((__int128)1 << (REC_CLOCK_MULT_SHIFT - 1))) >>
	    REC_CLOCK_MULT_SHIFT;
	if (d < 0 && -d > (__int128)c->last.ns)
		return 0;
	d += c->last.ns;
	return d > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)d;
}

/*
 * The CLOCK_REALTIME time of an event recorded at mono_ns (CLOCK_MONOTONIC),
 * given the process's offset between the clocks: their sum, saturated to the
 * range of int64_t.
 */
int64_t rec_clock__realtime(uint64_t mono_ns, int64_t offset_ns);

/* CLOCK_MONOTONIC now, in ns. */
static inline int64_t rec_clock__mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* CLOCK_MONOTONIC now, in ms. */
static inline int64_t rec_clock__mono_ms(void)
{
	return rec_clock__mono_ns() / 1000000;
}

#endif /* REC_CLOCK_H */
