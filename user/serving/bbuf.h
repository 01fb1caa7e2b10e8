/* SPDX-License-Identifier: MIT */
/*
 * Bytes that wait to be taken, in order: appended at len, taken from off. A
 * client's answer waiting to be sent, and what a follower holds, are such.
 */
#ifndef REC_BBUF_H
#define REC_BBUF_H

#include <stddef.h>

struct rec_bbuf {
	char *p;
	size_t len, off, cap;
};

/* The bytes not taken yet. */
static inline size_t rec_bbuf__pending(const struct rec_bbuf *b)
{
	return b->len - b->off;
}

/* Appends n bytes to b. Returns 0, or -ENOMEM and b is as it was. */
int rec_bbuf__put(struct rec_bbuf *b, const void *data, size_t n);
/* b is empty: starts it over, and frees its buffer if that is bigger than keep bytes. */
void rec_bbuf__reset(struct rec_bbuf *b, size_t keep);

#endif /* REC_BBUF_H */
