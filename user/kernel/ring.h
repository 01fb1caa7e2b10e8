/* SPDX-License-Identifier: MIT */
/*
 * The consumer side of the BPF ring buffer (BPF_MAP_TYPE_RINGBUF), read from
 * its memory map. Unlike libbpf 1.1's ring_buffer__consume(), which publishes
 * the consumer position after every record, this publishes it once per batch
 * (and every eighth of the ring within a long one): the producers read that
 * position on every reserve, and a cache line the consumer keeps rewriting
 * costs each of them a miss.
 */
#ifndef REC_RING_H
#define REC_RING_H

#include <stddef.h>
#include <stdint.h>

/* Called for each record, in ring order; a non-zero return stops the batch. */
typedef int (*rec_ring_fn)(void *ctx, void *data, size_t size);

struct rec_ring;

/* Maps the ring of map_fd. NULL with errno on failure. */
struct rec_ring *rec_ring__new(int map_fd, rec_ring_fn fn, void *ctx);
/*
 * A consumer of a ring that is not a BPF map's but has its layout (tests): the
 * consumer and producer positions, and size data bytes (a power of two)
 * followed by the same bytes again, so a record that wraps reads contiguously.
 * The caller keeps the memory. NULL with errno on failure.
 */
struct rec_ring *rec_ring__new_mem(unsigned long *consumer_pos, unsigned long *producer_pos,
				   unsigned char *data, size_t size, rec_ring_fn fn, void *ctx);
void rec_ring__free(struct rec_ring *r);
/* The fd to poll for the producer's wakeups (the map's fd; -1 for rec_ring__new_mem). */
int rec_ring__fd(const struct rec_ring *r);
/*
 * Hands the committed records to fn, at most a ring's worth (call again for more).
 * Returns the number handed, or a negative errno (-EBUSY when called from fn).
 */
int64_t rec_ring__consume(struct rec_ring *r);

#endif /* REC_RING_H */
