/* SPDX-License-Identifier: MIT */
/*
 * A spool keeps the last cap records of one recording, indexed by sequence
 * number. Records may arrive slightly out of order (two CPUs); a record whose
 * seq is no longer in the window [next_seq - cap, next_seq) is refused. Missing
 * seqs (dropped events) are gaps: the tail skips them.
 *
 * Memory and time follow the records actually stored, never cap: the slot
 * array starts empty and doubles (to 8 slots, then up to cap) only when the
 * records held at once fill it, and a slot's buffer is sized to the largest
 * record it has held and kept for the next one. So a push allocates only when
 * the spool holds more records than ever before or its slot meets a record
 * bigger than any before (none in a steady state). Whatever cap is, new and
 * count take constant time, free and tail (all) time in the most records held
 * at once, and push a search among the records held, plus, for a record that
 * arrives late, a move of the records between its place and the nearer end.
 */
#ifndef REC_SPOOL_H
#define REC_SPOOL_H

#include <stddef.h>
#include <stdint.h>

struct rec_spool;

/*
 * A spool of cap slots of at most slot_size bytes each; NULL with errno on
 * failure (EINVAL for a cap of 0 or a slot_size above UINT32_MAX).
 */
struct rec_spool *rec_spool__new(size_t cap, size_t slot_size);
void rec_spool__free(struct rec_spool *s);

/*
 * Stores a copy of len bytes for seq. Returns 0, -E2BIG if len > slot_size,
 * -ESTALE if seq fell out of the window, -EEXIST if seq is already held,
 * -EINVAL for seq UINT64_MAX, -ENOMEM if the slot array or the slot's buffer
 * had to grow and could not. On any error the spool is unchanged: the window
 * does not move and every record it held is still there (only its footprint
 * may have grown).
 */
int rec_spool__push(struct rec_spool *s, uint64_t seq, const void *data, size_t len);

size_t rec_spool__cap(const struct rec_spool *s);
/* One past the highest seq pushed, 0 if none. */
uint64_t rec_spool__next_seq(const struct rec_spool *s);
/* Records held now (at most cap). */
size_t rec_spool__count(const struct rec_spool *s);
/*
 * Bytes the spool has allocated: itself, its slot array (24 bytes a slot, at
 * most cap and at most max(8, twice the most records it has held at once)
 * slots) and each slot's buffer (the largest record that slot has held),
 * malloc's own overhead aside. It does not grow with cap.
 */
size_t rec_spool__footprint(const struct rec_spool *s);

/* Return non-zero to stop the walk; that value is returned by rec_spool__tail(). */
typedef int (*rec_spool_visit_fn)(uint64_t seq, const void *data, size_t len, void *ctx);

/* Visits the last n held records (all if n == 0), oldest first. */
int rec_spool__tail(const struct rec_spool *s, size_t n, rec_spool_visit_fn fn, void *ctx);

#endif /* REC_SPOOL_H */
