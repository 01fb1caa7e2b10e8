/* SPDX-License-Identifier: MIT */
/* A snapshot of /proc/PID/maps: which file backs which address. */
#ifndef REC_TARGET_MAPS_H
#define REC_TARGET_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rec_mapping {
	uint64_t start, end, offset;
	uint64_t inode;
	int exec;   /* mapped executable */
	char *path; /* NULL for anonymous mappings */
};

struct rec_maps {
	struct rec_mapping *v;
	size_t n;
};

/*
 * Reads /proc/pid/maps into *maps. Returns 0 or a negative errno: -ESRCH if
 * the process is gone, or lost its memory (it exits) while it was read. A
 * zombie's maps are empty.
 */
int rec_maps__read(struct rec_maps *maps, pid_t pid);
/* The file mapping that contains addr, or NULL. */
const struct rec_mapping *rec_maps__find(const struct rec_maps *maps, uint64_t addr);
/*
 * Appends to dst the mappings of src that start where none of dst's does; dst's
 * own come first, so rec_maps__find() prefers them. Returns 0 or -ENOMEM.
 */
int rec_maps__merge(struct rec_maps *dst, const struct rec_maps *src);
void rec_maps__free(struct rec_maps *maps);

#endif /* REC_TARGET_MAPS_H */
