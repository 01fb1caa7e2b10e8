// SPDX-License-Identifier: MIT
/* Retention of black boxes and snapshots, each kind by its name prefix (retention.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dumps/retention.h"

#define DUMP_SUFFIX ".json"

bool rec_retention__is_named(const char *name, const char *prefix)
{
	size_t n = strlen(name), p = strlen(prefix), s = strlen(DUMP_SUFFIX);

	return n > p + s && !strncmp(name, prefix, p) && !strcmp(name + n - s, DUMP_SUFFIX);
}

bool rec_retention__is_dump(const char *name)
{
	return rec_retention__is_named(name, REC_RETENTION_BLACK_BOX);
}

static int by_age(const void *a, const void *b)
{
	const struct rec_dump_file *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

size_t rec_retention__select(struct rec_dump_file *v, size_t n, size_t keep, uint64_t max_bytes)
{
	uint64_t bytes = 0;
	size_t left = n, marked = 0;

	qsort(v, n, sizeof(*v), by_age);
	for (size_t i = 0; i < n; i++) {
		v[i].remove = false;
		bytes += v[i].size;
	}
	for (size_t i = 0; i < n; i++) {
		bool too_many = keep && left > keep, too_big = max_bytes && bytes > max_bytes;

		if (!too_many && !too_big)
			break;
		if (v[i].keep)
			continue;
		v[i].remove = true;
		left--;
		bytes -= v[i].size;
		marked++;
	}
	return marked;
}

/* The files of dir (a directory stream of it) named prefix*.json: *vp, *np; names allocated. */
static int list_files(DIR *d, const char *prefix, struct rec_dump_file **vp, size_t *np)
{
	struct rec_dump_file *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	struct stat st;

	while ((e = readdir(d))) {
		if (!rec_retention__is_named(e->d_name, prefix))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			size_t c = cap ? 2 * cap : 64;
			struct rec_dump_file *w = realloc(v, c * sizeof(*v));

			if (!w)
				goto nomem;
			v = w;
			cap = c;
		}
		v[n] = (struct rec_dump_file){
			.name = strdup(e->d_name),
			.size = (uint64_t)st.st_size,
			.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
		};
		if (!v[n].name)
			goto nomem;
		n++;
	}
	*vp = v;
	*np = n;
	return 0;
nomem:
	while (n)
		free((char *)v[--n].name);
	free(v);
	return -ENOMEM;
}

int rec_retention__apply_prefix(const char *dir, const char *prefix, size_t keep,
				uint64_t max_bytes, const char *just_written,
				struct rec_retention_count *count)
{
	struct rec_dump_file *v;
	size_t n;
	DIR *d;
	int err;

	if (!keep && !max_bytes)
		return 0;
	d = opendir(dir);
	if (!d)
		return -errno;
	err = list_files(d, prefix, &v, &n);
	if (!err) {
		for (size_t i = 0; i < n; i++)
			v[i].keep = just_written && !strcmp(v[i].name, just_written);
		rec_retention__select(v, n, keep, max_bytes);
		for (size_t i = 0; i < n; i++) {
			if (v[i].remove) {
				if (unlinkat(dirfd(d), v[i].name, 0) == 0) {
					count->removed++;
					count->removed_bytes += v[i].size;
				} else {
					count->failed++;
				}
			}
			free((char *)v[i].name);
		}
		free(v);
	}
	closedir(d);
	return err;
}

int rec_retention__apply(const char *dir, size_t keep, uint64_t max_bytes, const char *just_written,
			 struct rec_retention_count *count)
{
	return rec_retention__apply_prefix(dir, REC_RETENTION_BLACK_BOX, keep, max_bytes,
					   just_written, count);
}

/*
 * Removes the oldest file of dir named prefix*.json. Returns 1 if it removed
 * one (counted), 0 if there was none, or -errno (counted failed if the file
 * would not go).
 */
static int remove_oldest(const char *dir, const char *prefix, struct rec_retention_count *count)
{
	struct rec_dump_file *v, *oldest = NULL;
	size_t n;
	DIR *d;
	int err;

	d = opendir(dir);
	if (!d)
		return -errno;
	err = list_files(d, prefix, &v, &n);
	if (err)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!oldest || by_age(&v[i], oldest) < 0)
			oldest = &v[i];
	if (oldest && unlinkat(dirfd(d), oldest->name, 0) == 0) {
		count->removed++;
		count->removed_bytes += oldest->size;
		err = 1;
	} else if (oldest) {
		err = -errno;
		count->failed++;
	}
	for (size_t i = 0; i < n; i++)
		free((char *)v[i].name);
	free(v);
out:
	closedir(d);
	return err;
}

int rec_retention__write_making_room(const char *dir, int (*write)(void *ctx), void *ctx,
				     struct rec_retention_count *count)
{
	int err;

	for (;;) {
		err = write(ctx);
		if (err != -ENOSPC && err != -EDQUOT)
			return err;
		if (remove_oldest(dir, REC_RETENTION_SNAPSHOT, count) != 1)
			return err;
	}
}
