/* SPDX-License-Identifier: MIT */
/*
 * The held records, oldest first, in a ring of slots that grows with them:
 * record i (0 = oldest) is in slot (head + i) % nslots, and its seq is stored
 * with it. The records are kept in seq order, so the ones that leave when the
 * window [next_seq - cap, next_seq) moves are the first ones, and a seq is
 * found by a search. Nothing is indexed by seq % cap: the slot array follows
 * the most records held at once (it doubles when they fill it, up to cap),
 * not cap, and free, push, tail and count never walk empty seqs.
 *
 * Each slot owns a buffer sized to the largest record it has held, not to
 * slot_size: most records are much smaller than the largest kind, and a block
 * of cap * slot_size bytes would be touched page by page until RSS is the
 * worst case. A buffer only grows; it stays with its slot when its record
 * leaves, and moves with it when a late record shifts records along, so once
 * every slot has seen the biggest record it will hold, a push allocates
 * nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/spool.h"

/* The first slot array; a spool that holds a few records stays this small. */
#define SPOOL_MIN_SLOTS 8

/* 24 bytes a slot: len and size fit 32 bits, as rec_spool__new() refuses a larger slot_size. */
struct rec_spool_slot {
	uint64_t seq;
	unsigned char *data; /* size bytes, NULL until the first non-empty record */
	uint32_t len;	     /* of the record held */
	uint32_t size;	     /* of data; never shrinks */
};

struct rec_spool {
	size_t cap;
	size_t slot_size;
	uint64_t next_seq;
	struct rec_spool_slot *slots; /* nslots slots, NULL until the first push */
	size_t nslots;		      /* at most cap */
	size_t head;		      /* the slot of the oldest record */
	size_t count;		      /* records held, in the count slots from head on */
	size_t footprint;	      /* bytes allocated: see rec_spool__footprint() */
};

/* The lowest seq still inside the window when the next seq is next_seq. */
static uint64_t window_lo(size_t cap, uint64_t next_seq)
{
	return next_seq > cap ? next_seq - cap : 0;
}

/*
 * The slot i places after the oldest record's (i < nslots). Slot count is the
 * first free one, or the oldest record's when every slot is used; slot
 * nslots - 1 is the free one before the oldest record when one is free.
 */
static struct rec_spool_slot *slot_at(const struct rec_spool *s, size_t i)
{
	size_t at = s->head + i;

	return &s->slots[at < s->nslots ? at : at - s->nslots];
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
	s->footprint = sizeof(*s);
	return s;
}

/* Frees s and every record it holds. NULL is ignored. */
void rec_spool__free(struct rec_spool *s)
{
	size_t i;

	if (!s)
		return;
	/* Free slots keep their buffers too: free every one. */
	for (i = 0; i < s->nslots; i++)
		free(s->slots[i].data);
	free(s->slots);
	free(s);
}

/*
 * The number of held records whose seq is below seq (they are the oldest
 * ones), knowing that it is in [lo, hi]: the records before lo are below seq,
 * the one at hi, if held, is not.
 */
static size_t bisect(const struct rec_spool *s, uint64_t seq, size_t lo, size_t hi)
{
	size_t mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (slot_at(s, mid)->seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The number of held records whose seq is below seq, galloping from the
 * oldest record first: when the window moves (mostly by one seq), the answer
 * is mostly 0 or 1.
 */
static size_t held_below(const struct rec_spool *s, uint64_t seq)
{
	size_t lo = 0, hi = s->count, probe = 0, step = 1;

	while (probe < hi && slot_at(s, probe)->seq < seq) {
		lo = probe + 1;
		probe += step;
		step *= 2;
	}
	return bisect(s, seq, lo, probe < hi ? probe : hi);
}

/* The same, galloping from the newest record: a late record is mostly just behind it. */
static size_t held_below_late(const struct rec_spool *s, uint64_t seq)
{
	size_t lo = 0, hi = s->count, probe, step = 1;

	while (hi > 0) {
		probe = hi > step ? hi - step : 0;
		if (slot_at(s, probe)->seq < seq) {
			lo = probe + 1;
			break;
		}
		hi = probe;
		step *= 2;
	}
	return bisect(s, seq, lo, hi);
}

/*
 * Doubles the slot array (at least SPOOL_MIN_SLOTS, at most cap slots), the
 * oldest record moving to slot 0. Returns 0 or -ENOMEM, in which case the
 * spool is as it was.
 */
static int spool_grow(struct rec_spool *s)
{
	struct rec_spool_slot *slots;
	size_t n, i;

	if (s->nslots > s->cap / 2)
		n = s->cap;
	else
		n = s->nslots * 2 > SPOOL_MIN_SLOTS ? s->nslots * 2 : SPOOL_MIN_SLOTS;
	if (n > s->cap)
		n = s->cap;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	/* The free slots follow with their buffers, to be reused and freed. */
	for (i = 0; i < s->nslots; i++)
		slots[i] = *slot_at(s, i);
	free(s->slots);
	s->footprint += (n - s->nslots) * sizeof(*slots);
	s->slots = slots;
	s->nslots = n;
	s->head = 0;
	return 0;
}

/*
 * Makes slot's buffer hold at least len bytes (len <= slot_size). Returns 0 or
 * -ENOMEM, in which case the slot, old bytes included, is as it was.
 */
static int slot_grow(struct rec_spool *s, struct rec_spool_slot *slot, size_t len)
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
	s->footprint += size - slot->size;
	slot->data = data;
	slot->size = (uint32_t)size;
	return 0;
}

/*
 * Stores a copy of len bytes for seq. Returns 0, -E2BIG if len > slot_size,
 * -ESTALE if seq fell out of the window, -EEXIST if seq is already held,
 * -EINVAL for the one seq that has no successor (UINT64_MAX), and -ENOMEM if
 * the slot array or the slot's buffer had to grow and could not; the spool
 * then holds what it held (its footprint may have grown).
 */
int rec_spool__push(struct rec_spool *s, uint64_t seq, const void *data, size_t len)
{
	struct rec_spool_slot *slot, taken;
	size_t gone = 0, pos, i;
	bool before;
	int err;

	if (len > s->slot_size)
		return -E2BIG;
	if (seq == UINT64_MAX)
		return -EINVAL;
	if (seq < window_lo(s->cap, s->next_seq))
		return -ESTALE;
	/*
	 * The usual push once the slot array is full: the next seq, which the
	 * oldest record alone leaves the window for, and a big enough buffer in
	 * the oldest's slot. The new record takes that slot, as below.
	 */
	if (seq == s->next_seq && s->count && s->count == s->nslots) {
		uint64_t lo = window_lo(s->cap, seq + 1);

		slot = &s->slots[s->head];
		if (slot->seq < lo && (s->count == 1 || slot_at(s, 1)->seq >= lo) &&
		    len <= slot->size) {
			s->head = s->head + 1 == s->nslots ? 0 : s->head + 1;
			s->next_seq = seq + 1;
			slot->seq = seq;
			slot->len = (uint32_t)len;
			if (len)
				memcpy(slot->data, data, len);
			return 0;
		}
	}

	if (seq >= s->next_seq) {
		/* The window moves: the oldest records, up to its new low end, leave. */
		gone = held_below(s, window_lo(s->cap, seq + 1));
		pos = s->count;
	} else {
		pos = held_below_late(s, seq);
		if (pos < s->count && slot_at(s, pos)->seq == seq)
			return -EEXIST;
	}
	/* Every record that stays has a slot, and there is none for this one. */
	if (s->count - gone == s->nslots) {
		err = spool_grow(s);
		if (err)
			return err;
	}
	/*
	 * A late record goes in by moving the fewer records: the older ones one
	 * slot back into the free slot before the oldest, or the newer ones one
	 * slot on into the free slot after the newest (when the window moves,
	 * that is the first slot that leaves if none is free).
	 */
	before = pos < s->count - pos;
	slot = slot_at(s, before ? s->nslots - 1 : s->count);
	/* Grow before anything moves, so that a failure leaves the records as they were. */
	if (len > slot->size) {
		err = slot_grow(s, slot, len);
		if (err)
			return err;
	}

	s->head += gone;
	if (s->head >= s->nslots)
		s->head -= s->nslots;
	s->count -= gone;
	pos -= gone;
	if (seq >= s->next_seq)
		s->next_seq = seq + 1;
	taken = *slot;
	if (before) {
		s->head = s->head ? s->head - 1 : s->nslots - 1;
		for (i = 0; i < pos; i++)
			*slot_at(s, i) = *slot_at(s, i + 1);
	} else {
		for (i = s->count; i > pos; i--)
			*slot_at(s, i) = *slot_at(s, i - 1);
	}
	slot = slot_at(s, pos);
	*slot = taken;
	s->count++;
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

/* Bytes allocated for s: itself, its slot array and its record buffers. */
size_t rec_spool__footprint(const struct rec_spool *s)
{
	return s->footprint;
}

/*
 * Visits the last n held records (all if n == 0), oldest first. Returns 0, or
 * the first non-zero value fn returned.
 */
int rec_spool__tail(const struct rec_spool *s, size_t n, rec_spool_visit_fn fn, void *ctx)
{
	/* An empty record may have no buffer; fn gets a valid pointer all the same. */
	static const unsigned char no_bytes[1];
	size_t i = (n && n < s->count) ? s->count - n : 0;
	int err;

	for (; i < s->count; i++) {
		const struct rec_spool_slot *slot = slot_at(s, i);

		err = fn(slot->seq, slot->data ? slot->data : no_bytes, slot->len, ctx);
		if (err)
			return err;
	}
	return 0;
}
