/* SPDX-License-Identifier: MIT */
/*
 * Retention of black boxes: a dump directory keeps at most keep dumps and
 * max_bytes bytes of them (0: no limit); the oldest go first, never the one
 * just written. Only finished dumps count: files named recorder-*.json,
 * regular, not links; a dump being written is a .tmp file until it is renamed
 * (dump_write.c) and is never seen here.
 */
#ifndef REC_RETENTION_H
#define REC_RETENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The defaults of --keep-dumps and --max-dump-bytes. */
#define REC_KEEP_DUMPS 100
#define REC_MAX_DUMP_BYTES (1ULL << 30)

struct rec_dump_file {
	const char *name;
	uint64_t size;
	int64_t mtime_ns;
	bool keep;   /* never removed: the dump just written */
	bool remove; /* set by rec_retention__select() */
};

/*
 * Marks the files of v to remove, oldest first (mtime, then name), until at
 * most keep are left (0: any number) and they hold at most max_bytes (0: any
 * size). Sorts v by age. Returns how many it marked.
 */
size_t rec_retention__select(struct rec_dump_file *v, size_t n, size_t keep, uint64_t max_bytes);

/* What rec_retention__apply() removed, added to. */
struct rec_retention_count {
	uint64_t removed;
	uint64_t removed_bytes;
	uint64_t failed; /* could not be removed */
};

/*
 * Applies the policy to the dumps in dir, keeping the file named just_written
 * (a name in dir, or NULL). Returns 0 or -errno if dir cannot be read.
 */
int rec_retention__apply(const char *dir, size_t keep, uint64_t max_bytes, const char *just_written,
			 struct rec_retention_count *count);

/* Whether name is that of a finished dump: recorder-*.json. */
bool rec_retention__is_dump(const char *name);

#endif /* REC_RETENTION_H */
