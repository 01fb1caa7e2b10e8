/* SPDX-License-Identifier: MIT */
/*
 * Retention of the files of a dump directory: black boxes (recorder-*.json)
 * and trigger snapshots (snapshot-*.json) each have their own policy, and the
 * policy of one kind never counts or removes a file of the other. A directory
 * keeps at most keep files of a kind and max_bytes bytes of them (0: no
 * limit); the oldest go first, never the one just written. Only finished files
 * count: named PREFIX*.json, regular, not links; a file being written is a
 * .tmp file until it is renamed (dump_write.c) and is never seen here.
 */
#ifndef REC_RETENTION_H
#define REC_RETENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What the name of each kind of file starts with: PREFIX-PID-STAMP.json
 * (dump_write.c names them, the retention tells them apart by it).
 */
#define REC_RETENTION_BLACK_BOX "recorder-"
#define REC_RETENTION_SNAPSHOT "snapshot-"

/* The defaults of --keep-dumps and --max-dump-bytes (black boxes). */
#define REC_KEEP_DUMPS 100
#define REC_MAX_DUMP_BYTES (1ULL << 30)
/* The defaults of --keep-snapshots and --max-snapshot-bytes (snapshots). */
#define REC_KEEP_SNAPSHOTS 50
#define REC_MAX_SNAPSHOT_BYTES (256ULL << 20)

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
 * Applies the policy to the files in dir whose names start with prefix
 * (REC_RETENTION_BLACK_BOX or REC_RETENTION_SNAPSHOT) and end with .json,
 * keeping the file named just_written (a name in dir, or NULL); no other file
 * is looked at, counted or removed. Adds what it removed to count. Returns 0 or
 * -errno if dir cannot be read.
 */
int rec_retention__apply_prefix(const char *dir, const char *prefix, size_t keep,
				uint64_t max_bytes, const char *just_written,
				struct rec_retention_count *count);

/* rec_retention__apply_prefix() for the black boxes (REC_RETENTION_BLACK_BOX). */
int rec_retention__apply(const char *dir, size_t keep, uint64_t max_bytes, const char *just_written,
			 struct rec_retention_count *count);

/*
 * Writes a black box by write(ctx), which returns 0 or -errno, and, as long as
 * it fails for want of room (-ENOSPC, -EDQUOT), removes the oldest snapshot of
 * dir (REC_RETENTION_SNAPSHOT, whatever their policy; never a black box) and
 * tries again: a black box comes before any snapshot. Adds the snapshots it
 * removed to count (one that could not be removed is counted failed, and the
 * tries stop). Returns write's last result: 0, or its error once no snapshot
 * is left to remove.
 */
int rec_retention__write_making_room(const char *dir, int (*write)(void *ctx), void *ctx,
				     struct rec_retention_count *count);

/* Whether name is that of a finished file of its kind: prefix, at least one byte, .json. */
bool rec_retention__is_named(const char *name, const char *prefix);
/* Whether name is that of a finished black box: recorder-*.json. */
bool rec_retention__is_dump(const char *name);

#endif /* REC_RETENTION_H */
