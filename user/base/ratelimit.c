// SPDX-License-Identifier: MIT
/* A repeated message, one line an interval at most, with a count of the rest (ratelimit.h). */
#include "base/ratelimit.h"

void rec_ratelimit__init(struct rec_ratelimit *rl, int64_t interval_ns)
{
	*rl = (struct rec_ratelimit){ .interval_ns = interval_ns };
}

bool rec_ratelimit__allow(struct rec_ratelimit *rl, int64_t now_ns, uint64_t *held)
{
	if (rl->passed && now_ns - rl->last_ns < rl->interval_ns) {
		rl->held++;
		return false;
	}
	*held = rl->held;
	rl->held = 0;
	rl->last_ns = now_ns;
	rl->passed = true;
	return true;
}

uint64_t rec_ratelimit__flush(struct rec_ratelimit *rl)
{
	uint64_t n = rl->held;

	rl->held = 0;
	return n;
}
