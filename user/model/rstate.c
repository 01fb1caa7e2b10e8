// SPDX-License-Identifier: MIT
/* One recording's state and counts (rstate.h). */
#include <stdlib.h>

#include "model/rstate.h"

struct rec_rstate *rec_rstate__new(uint64_t key, uint64_t recorder, uint64_t cap,
				   uint64_t spool_cap)
{
	struct rec_rstate *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->key = key;
	rs->recorder = recorder;
	rs->cap = cap;
	rs->asked_cap = cap;
	rs->spool = rec_spool__new(spool_cap, REC_EVENT_REC_MAX);
	if (!rs->spool) {
		free(rs);
		return NULL;
	}
	return rs;
}

void rec_rstate__free(struct rec_rstate *rs)
{
	if (!rs)
		return;
	rec_spool__free(rs->spool);
	rec_spans__free(&rs->spans);
	free(rs);
}

void rec_rstate__update_counts(struct rec_rstate *rs, uint64_t produced, uint64_t dropped,
			       uint64_t spans_lost)
{
	rec_spans__lost(&rs->spans, spans_lost);
	if (produced > rs->produced)
		rs->produced = produced;
	if (dropped > rs->dropped)
		rs->dropped = dropped;
}
