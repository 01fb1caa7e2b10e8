/* SPDX-License-Identifier: MIT */
/* An open-addressing map from non-zero u64 keys to pointers. Grows by doubling. */
#ifndef REC_U64MAP_H
#define REC_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct rec_u64map {
	uint64_t *keys; /* 0 = empty slot, UINT64_MAX = deleted */
	void **vals;
	size_t cap;  /* power of two, or 0 */
	size_t used; /* live + deleted slots */
	size_t live;
};

/* The value for key, or NULL. */
void *rec_u64map__get(const struct rec_u64map *m, uint64_t key);
/* Inserts or replaces. key must not be 0 or UINT64_MAX. Returns 0 or -ENOMEM/-EINVAL. */
int rec_u64map__put(struct rec_u64map *m, uint64_t key, void *val);
/* Removes key; returns its value or NULL. */
void *rec_u64map__del(struct rec_u64map *m, uint64_t key);
/* Frees the table (not the values). */
void rec_u64map__free(struct rec_u64map *m);

#endif /* REC_U64MAP_H */
