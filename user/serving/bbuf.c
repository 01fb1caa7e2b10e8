// SPDX-License-Identifier: MIT
/* Bytes that wait to be taken (bbuf.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "serving/bbuf.h"

/* The first size of a buffer; it doubles as needed. */
#define BBUF_FIRST 4096

int rec_bbuf__put(struct rec_bbuf *b, const void *data, size_t n)
{
	/* Reuse what was taken once that is no less than what is left: amortized O(1). */
	if (b->len + n > b->cap && b->off && b->off >= rec_bbuf__pending(b)) {
		memmove(b->p, b->p + b->off, rec_bbuf__pending(b));
		b->len -= b->off;
		b->off = 0;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : BBUF_FIRST;
		char *v;

		while (cap < b->len + n)
			cap *= 2;
		v = realloc(b->p, cap);
		if (!v)
			return -ENOMEM;
		b->p = v;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

void rec_bbuf__reset(struct rec_bbuf *b, size_t keep)
{
	b->len = b->off = 0;
	if (b->cap > keep) {
		free(b->p);
		b->p = NULL;
		b->cap = 0;
	}
}
