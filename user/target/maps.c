// SPDX-License-Identifier: MIT
/* Snapshots of /proc/PID/maps (maps.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/maps.h"

/* A path under /proc/PID. */
#define PROC_PATH_MAX 64
/* The first room for mappings; it doubles as needed. */
#define MAPS_FIRST_CAP 64

int rec_maps__read(struct rec_maps *maps, pid_t pid)
{
	char path[PROC_PATH_MAX], *line = NULL, c;
	size_t linecap = 0, cap = 0;
	FILE *f;
	int err = 0;

	maps->v = NULL;
	maps->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &linecap, f) > 0) {
		uint64_t start, end, off, inode;
		char perms[8], *p;
		int pos = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*x:%*x %" SCNu64 " %n",
			   &start, &end, perms, &off, &inode, &pos) < 5)
			continue;
		p = line + pos;
		p[strcspn(p, "\n")] = '\0';
		if (p[0] != '/')
			continue;
		if (maps->n == cap) {
			struct rec_mapping *nv;

			cap = cap ? cap * 2 : MAPS_FIRST_CAP;
			nv = realloc(maps->v, cap * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			maps->v = nv;
		}
		maps->v[maps->n] = (struct rec_mapping){
			.start = start,
			.end = end,
			.offset = off,
			.inode = inode,
			.exec = perms[2] == 'x',
			.path = strdup(p),
		};
		if (!maps->v[maps->n].path) {
			err = -ENOMEM;
			break;
		}
		maps->n++;
	}
	free(line);
	/*
	 * The file is read a page or less at a time, and a process that exits
	 * meanwhile loses its memory between two reads: what is left reads as
	 * nothing, and the snapshot would miss its last mappings. Once gone, it
	 * never comes back: if the file still has a byte now, nothing was cut.
	 */
	if (!err && maps->n && pread(fileno(f), &c, 1, 0) != 1)
		err = -ESRCH;
	fclose(f);
	if (err)
		rec_maps__free(maps);
	return err;
}

const struct rec_mapping *rec_maps__find(const struct rec_maps *maps, uint64_t addr)
{
	for (size_t i = 0; i < maps->n; i++)
		if (addr >= maps->v[i].start && addr < maps->v[i].end)
			return &maps->v[i];
	return NULL;
}

int rec_maps__merge(struct rec_maps *dst, const struct rec_maps *src)
{
	struct rec_mapping *v;
	size_t n = dst->n;

	if (!src->n)
		return 0;
	v = realloc(dst->v, (dst->n + src->n) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	dst->v = v;
	for (size_t i = 0; i < src->n; i++) {
		int known = 0;

		for (size_t j = 0; j < n && !known; j++)
			known = v[j].start == src->v[i].start;
		if (known)
			continue;
		v[dst->n] = src->v[i];
		v[dst->n].path = src->v[i].path ? strdup(src->v[i].path) : NULL;
		if (src->v[i].path && !v[dst->n].path)
			return -ENOMEM;
		dst->n++;
	}
	return 0;
}

void rec_maps__free(struct rec_maps *maps)
{
	for (size_t i = 0; i < maps->n; i++)
		free(maps->v[i].path);
	free(maps->v);
	maps->v = NULL;
	maps->n = 0;
}
