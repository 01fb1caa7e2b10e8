/* SPDX-License-Identifier: MIT */
/*
 * A seq-indexed ring: the record with sequence number seq lives in slot
 * seq % cap, which also stores seq itself. The window is [lo, next_seq) with
 * lo = next_seq - cap (or 0); a slot is used only while its seq is inside the
 * window, so a slot whose seq fell out of the window is cleared when the
 * window moves past it.
 *
 * Each slot owns a buffer sized to the largest record it has held, not to
 * slot_size: most records are much smaller than the largest kind, and a block
 * of cap * slot_size bytes would be touched page by page until RSS is the
 * worst case. A buffer only grows and is kept when its record leaves the
 * window, so once every slot has seen the biggest record it will hold, a push
 * allocates nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "spool.h"

/* 32 bytes a slot: len and size fit 32 bits, as rec_spool__new() refuses a larger slot_size. */
struct rec_spool_slot {
	uint64_t seq;
	unsigned char *data;	/* size bytes, NULL until the first non-empty record */
	uint32_t len;		/* of the record held */
	uint32_t size;		/* of data; never shrinks */
	bool used;
};

struct rec_spool {
	size_t cap;
	size_t slot_size;
	uint64_t next_seq;
	size_t count;
	struct rec_spool_slot *slots;	/* cap slots */
};

/* The lowest seq still inside the window when the next seq is next_seq. */
static uint64_t window_lo(size_t cap, uint64_t next_seq)
{
	return next_seq > cap ? next_seq - cap : 0;
}

/*
 * A spool of cap slots of at most slot_size bytes each; NULL with errno on
 * failure (EINVAL for a cap of 0 or a slot_size above UINT32_MAX).
 */
struct rec_spool *rec_spool__new(size_t cap, size_t slot_size)
{
	struct rec_spool *s;

	if (cap == 0 || slot_size > UINT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	/* Nothing of that is allocated now, but a full spool may come to hold it. */
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
	if (!s->slots) {
		rec_spool__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

/* Frees s and every record it holds. NULL is ignored. */
void rec_spool__free(struct rec_spool *s)
{
	size_t i;

	if (!s)
		return;
	/* Slots out of the window keep their buffers too: free every one. */
	for (i = 0; s->slots && i < s->cap; i++)
		free(s->slots[i].data);
	free(s->slots);
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
 * Makes slot's buffer hold at least len bytes (len <= slot_size). Returns 0 or
 * -ENOMEM, in which case the slot, old bytes included, is as it was.
 */
static int slot_grow(const struct rec_spool *s, struct rec_spool_slot *slot, size_t len)
{
	size_t size = len;
	unsigned char *data;

	/*
	 * Exact fit, unless doubling the old buffer is bigger (capped at
	 * slot_size). Event records come in three sizes (120, 376, 888), for
	 * which each step is at least a doubling anyway, so this is an exact
	 * fit and a slot grows at most twice. No rounding to size classes:
	 * glibc already makes those three requests chunks of 128, 384 and 896
	 * bytes, and asking for 128/384/896 would cost 16 bytes more each. The
	 * doubling only bounds the grows of a caller whose lengths creep up a
	 * few bytes at a time.
	 */
	if (slot->size > s->slot_size / 2)
		size = s->slot_size;
	else if (2 * (size_t)slot->size > size)
		size = 2 * (size_t)slot->size;

	/* Not realloc: the old bytes are about to be overwritten, copying them is waste. */
	data = malloc(size);
	if (!data)
		return -ENOMEM;
	free(slot->data);
	slot->data = data;
	slot->size = (uint32_t)size;
	return 0;
}

/*
 * Stores a copy of len bytes for seq. Returns 0, -E2BIG if len > slot_size,
 * -ESTALE if seq fell out of the window, -EEXIST if seq is already held,
 * -EINVAL for the one seq that has no successor (UINT64_MAX), and -ENOMEM if
 * the slot's buffer had to grow and could not; the spool is then unchanged.
 */
int rec_spool__push(struct rec_spool *s, uint64_t seq, const void *data, size_t len)
{
	struct rec_spool_slot *slot;
	int err;

	if (len > s->slot_size)
		return -E2BIG;
	if (seq == UINT64_MAX)
		return -EINVAL;
	if (seq < window_lo(s->cap, s->next_seq))
		return -ESTALE;

	slot = &s->slots[seq % s->cap];
	/* Slots hold seqs below next_seq only, so a seq that moves the window is never held. */
	if (slot->used && slot->seq == seq)
		return -EEXIST;
	/* Grow before the window moves, so that a failure leaves the spool as it was. */
	if (len > slot->size) {
		err = slot_grow(s, slot, len);
		if (err)
			return err;
	}
	if (seq >= s->next_seq)
		spool_advance(s, seq + 1);

	/* A used slot here holds an older seq that is still in the window: overwrite it. */
	if (!slot->used)
		s->count++;
	slot->used = true;
	slot->seq = seq;
	slot->len = (uint32_t)len;
	if (len)
		memcpy(slot->data, data, len);
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
	/* An empty record may have no buffer; fn gets a valid pointer all the same. */
	static const unsigned char no_bytes[1];
	size_t skip = (n && n < s->count) ? s->count - n : 0;
	uint64_t seq;
	int err;

	for (seq = window_lo(s->cap, s->next_seq); seq < s->next_seq; seq++) {
		const struct rec_spool_slot *slot = &s->slots[seq % s->cap];

		if (!slot->used || slot->seq != seq)
			continue;
		if (skip) {
			skip--;
			continue;
		}
		err = fn(seq, slot->data ? slot->data : no_bytes, slot->len, ctx);
		if (err)
			return err;
	}
	return 0;
}
