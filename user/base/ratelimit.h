/* SPDX-License-Identifier: MIT */
/*
 * A message that may repeat (a snapshot that cannot be written, again and
 * again in a storm of triggers): one line an interval at most, and the next
 * line that is let through says how many were held back since ("(N more
 * since)"). Time is passed in, no I/O.
 */
#ifndef REC_RATELIMIT_H
#define REC_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

/* One line a second at most. */
#define REC_RATELIMIT_NS 1000000000LL

struct rec_ratelimit {
	int64_t interval_ns; /* 0: every line passes */
	int64_t last_ns;     /* when a line last passed */
	bool passed;	     /* one has passed: last_ns holds */
	uint64_t held;	     /* lines held back since the last that passed */
};

/* rl lets one line through every interval_ns (0: every line). */
void rec_ratelimit__init(struct rec_ratelimit *rl, int64_t interval_ns);

/*
 * Whether the line of now_ns may be printed: the first, or one interval_ns or
 * more after the last that was. If it may, *held is how many were held back
 * since that one (and are forgotten); if not, it is counted held.
 */
bool rec_ratelimit__allow(struct rec_ratelimit *rl, int64_t now_ns, uint64_t *held);

/* How many lines were held back since the last that passed, forgotten now: for a last word. */
uint64_t rec_ratelimit__flush(struct rec_ratelimit *rl);

#endif /* REC_RATELIMIT_H */
