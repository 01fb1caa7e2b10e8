// SPDX-License-Identifier: MIT
/* Events and spans on their way to the followers, made once (feed.h). */
#include <stdlib.h>
#include <string.h>

#include "serving/feed.h"
#include "serving/query.h"

/* The subject of rs, copied into the item: what its origin names. */
static const char *subject_of(struct rec_feed_item *it, const struct rec_rstate *rs)
{
	memcpy(it->subject, rs->subject, sizeof(it->subject));
	it->subject[sizeof(it->subject) - 1] = '\0';
	return it->subject;
}

struct rec_feed_item *rec_feed__event(struct rec_proc *p, const struct rec_rstate *rs,
				      const struct rec_decoded *d, size_t len)
{
	size_t strings = 0, size;
	struct rec_feed_item *it;
	char *at;

	for (uint32_t i = 0; i < d->nfields; i++)
		if (d->values[i].type == REC_TYPE_STR)
			strings += d->values[i].str.len;
	size = sizeof(*it) + d->nfields * sizeof(it->values[0]) + strings;
	it = malloc(size);
	if (!it)
		return NULL;
	it->refs = 1;
	it->len = (uint32_t)len;
	it->is_span = false;
	at = (char *)&it->values[d->nfields];
	for (uint32_t i = 0; i < d->nfields; i++) {
		it->values[i] = d->values[i];
		if (d->values[i].type != REC_TYPE_STR || !d->values[i].str.len)
			continue;
		memcpy(at, d->values[i].str.ptr, d->values[i].str.len);
		it->values[i].str.ptr = at;
		at += d->values[i].str.len;
	}
	it->ev = rec_query__event_view(p, rs, d);
	it->ev.from.subject = subject_of(it, rs);
	it->ev.values = it->values;
	return it;
}

struct rec_feed_item *rec_feed__span(const struct rec_proc *p, const struct rec_rstate *rs,
				     const struct rec_span_rec *r)
{
	struct rec_feed_item *it = malloc(sizeof(*it));

	if (!it)
		return NULL;
	it->refs = 1;
	it->len = sizeof(*r);
	it->is_span = true;
	it->span = *r;
	it->span_from = rec_query__origin(p, rs, r->hdr.tid);
	it->span_from.subject = subject_of(it, rs);
	return it;
}

void rec_feed__put(struct rec_feed_item *it)
{
	if (it && --it->refs == 0)
		free(it);
}
