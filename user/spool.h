/* SPDX-License-Identifier: MIT */
/*
 * A spool keeps the last cap records of one recording, indexed by sequence
 * number. Records may arrive slightly out of order (two CPUs); a record whose
 * seq is no longer in the window [next_seq - cap, next_seq) is refused. Missing
 * seqs (dropped events) are gaps: the tail skips them.
 *
 * Memory follows the records actually stored, not cap * slot_size: a slot's
 * buffer is sized to the largest record it has held and kept for the next one,
 * so a push allocates only when its slot meets a record bigger than any before
 * (a few times in the slot's life, none in a steady state).
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
 * -EINVAL for seq UINT64_MAX, -ENOMEM if the slot's buffer had to grow and
 * could not. On any error the spool is unchanged: the window does not move and
 * the record the slot held, if any, is still there.
 */
int rec_spool__push(struct rec_spool *s, uint64_t seq, const void *data, size_t len);

size_t rec_spool__cap(const struct rec_spool *s);
/* One past the highest seq pushed, 0 if none. */
uint64_t rec_spool__next_seq(const struct rec_spool *s);
/* Records held now (at most cap). */
size_t rec_spool__count(const struct rec_spool *s);

/* Return non-zero to stop the walk; that value is returned by rec_spool__tail(). */
typedef int (*rec_spool_visit_fn)(uint64_t seq, const void *data, size_t len, void *ctx);

/* Visits the last n held records (all if n == 0), oldest first. */
int rec_spool__tail(const struct rec_spool *s, size_t n, rec_spool_visit_fn fn, void *ctx);

#endif /* REC_SPOOL_H */
