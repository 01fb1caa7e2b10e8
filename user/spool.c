/* SPDX-License-Identifier: MIT */
/*
 * A seq-indexed ring: the record with sequence number seq lives in slot
 * seq % cap, which also stores seq itself. The window is [lo, next_seq) with
 * lo = next_seq - cap (or 0); a slot is used only while its seq is inside the
 * window, so a slot whose seq fell out of the window is cleared when the
 * window moves past it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "spool.h"

struct rec_spool_slot {
	uint64_t seq;
	size_t len;
	bool used;
};

struct rec_spool {
	size_t cap;
	size_t slot_size;
	uint64_t next_seq;
	size_t count;
	struct rec_spool_slot *slots;	/* cap slots */
	unsigned char *data;		/* cap * slot_size bytes; slot i at i * slot_size */
};

/* The lowest seq still inside the window when the next seq is next_seq. */
static uint64_t window_lo(size_t cap, uint64_t next_seq)
{
	return next_seq > cap ? next_seq - cap : 0;
}

/* A spool of cap slots of at most slot_size bytes each; NULL with errno on failure. */
struct rec_spool *rec_spool__new(size_t cap, size_t slot_size)
{
	struct rec_spool *s;

	if (cap == 0) {
		errno = EINVAL;
		return NULL;
	}
	if (slot_size && cap > SIZE_MAX / slot_size) {
		errno = ENOMEM;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cap = cap;
	s->slot_size = slot_size;
	s->slots = calloc(cap, sizeof(*s->slots));
	/* At least one byte, so that a slot_size of 0 is not mistaken for a failure. */
	s->data = calloc(cap, slot_size ? slot_size : 1);
	if (!s->slots || !s->data) {
		rec_spool__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

/* Frees s and every record it holds. NULL is ignored. */
void rec_spool__free(struct rec_spool *s)
{
	if (!s)
		return;
	free(s->slots);
	free(s->data);
	free(s);
}

/* Moves the window so that next_seq becomes new_next, clearing the slots that fall out. */
static void spool_advance(struct rec_spool *s, uint64_t new_next)
{
	uint64_t old_lo = window_lo(s->cap, s->next_seq);
	uint64_t new_lo = window_lo(s->cap, new_next);
	uint64_t seq;
	size_t i;

	/* Seqs in [old_lo, new_lo) leave the window; look at each slot at most once. */
	if (new_lo - old_lo >= s->cap) {
		for (i = 0; i < s->cap; i++) {
			if (s->slots[i].used && s->slots[i].seq < new_lo) {
				s->slots[i].used = false;
				s->count--;
			}
		}
	} else {
		for (seq = old_lo; seq < new_lo; seq++) {
			struct rec_spool_slot *slot = &s->slots[seq % s->cap];

			if (slot->used && slot->seq == seq) {
				slot->used = false;
				s->count--;
			}
		}
	}
	s->next_seq = new_next;
}

/*
 * Stores a copy of len bytes for seq. Returns 0, -E2BIG if len > slot_size,
 * -ESTALE if seq fell out of the window, -EEXIST if seq is already held, and
 * -EINVAL for the one seq that has no successor (UINT64_MAX).
 */
int rec_spool__push(struct rec_spool *s, uint64_t seq, const void *data, size_t len)
{
	struct rec_spool_slot *slot;

	if (len > s->slot_size)
		return -E2BIG;
	if (seq == UINT64_MAX)
		return -EINVAL;
	if (seq < window_lo(s->cap, s->next_seq))
		return -ESTALE;
	if (seq >= s->next_seq)
		spool_advance(s, seq + 1);

	slot = &s->slots[seq % s->cap];
	if (slot->used && slot->seq == seq)
		return -EEXIST;
	/* A used slot here holds an older seq that is still in the window: overwrite it. */
	if (!slot->used)
		s->count++;
	slot->used = true;
	slot->seq = seq;
	slot->len = len;
	if (len)
		memcpy(s->data + (seq % s->cap) * s->slot_size, data, len);
	return 0;
}

/* The number of slots. */
size_t rec_spool__cap(const struct rec_spool *s)
{
	return s->cap;
}

/* One past the highest seq pushed, 0 if none. */
uint64_t rec_spool__next_seq(const struct rec_spool *s)
{
	return s->next_seq;
}

/* Records held now (at most cap). */
size_t rec_spool__count(const struct rec_spool *s)
{
	return s->count;
}

/*
 * Visits the last n held records (all if n == 0), oldest first. Returns 0, or
 * the first non-zero value fn returned.
 */
int rec_spool__tail(const struct rec_spool *s, size_t n, rec_spool_visit_fn fn, void *ctx)
{
	size_t skip = (n && n < s->count) ? s->count - n : 0;
	uint64_t seq;
	int err;

	for (seq = window_lo(s->cap, s->next_seq); seq < s->next_seq; seq++) {
		size_t i = seq % s->cap;
		const struct rec_spool_slot *slot = &s->slots[i];

		if (!slot->used || slot->seq != seq)
			continue;
		if (skip) {
			skip--;
			continue;
		}
		err = fn(seq, s->data + i * s->slot_size, slot->len, ctx);
		if (err)
			return err;
	}
	return 0;
}
