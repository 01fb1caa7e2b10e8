// SPDX-License-Identifier: MIT
/* The last spans of a recording (spans.h). */
#include <errno.h>
#include <stdlib.h>

#include "model/spans.h"

/* The first room for spans; it doubles up to the cap. */
#define SPANS_FIRST 16

int rec_spans__add(struct rec_spans *sp, uint64_t cap, const struct rec_kept_span *s)
{
	sp->seen++;
	if (cap && sp->n >= cap) {
		/* Full: the oldest goes. */
		sp->v[sp->next] = *s;
		sp->next = (sp->next + 1) % sp->n;
		sp->aged++;
		return 0;
	}
	if (sp->n == sp->alloc) {
		size_t a = sp->alloc ? 2 * sp->alloc : SPANS_FIRST;
		struct rec_kept_span *v;

		if (cap && a > cap)
			a = cap;
		v = realloc(sp->v, a * sizeof(*v));
		if (!v) {
			sp->lost++;
			return -ENOMEM;
		}
		sp->v = v;
		sp->alloc = a;
	}
	sp->v[sp->n++] = *s;
	return 0;
}

void rec_spans__lost(struct rec_spans *sp, uint64_t ring_lost)
{
	if (ring_lost <= sp->ring_lost)
		return;
	sp->seen += ring_lost - sp->ring_lost;
	sp->lost += ring_lost - sp->ring_lost;
	sp->ring_lost = ring_lost;
}

const struct rec_kept_span *rec_spans__at(const struct rec_spans *sp, size_t i)
{
	size_t k = sp->next + i;

	return &sp->v[k < sp->n ? k : k - sp->n];
}

void rec_spans__free(struct rec_spans *sp)
{
	free(sp->v);
	*sp = (struct rec_spans){ 0 };
}
