/* SPDX-License-Identifier: MIT */
/*
 * Black-box dumps: everything the loader holds about one process, written as one
 * JSON document when it dies (or when asked), and read back into a process model
 * so that recorder-tail --file shows it exactly as it showed the live process.
 * The format is in docs/dump-format.md.
 */
#ifndef REC_DUMP_H
#define REC_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proc.h"

/* The version written; the reader reads every version from 1 to it. */
#define REC_DUMP_VERSION 2
/*
 * The most recordings and thread stacks a dump holds: the writer leaves out
 * what is past them (and says how many in "recordings_omitted" and
 * "stacks_omitted"), the reader refuses a dump with more.
 */
#define REC_DUMP_MAX_RECORDINGS (1u << 16)
#define REC_DUMP_MAX_STACKS (1u << 16)

/* Loader-wide counters recorded in a dump (the BPF counters map, summed). */
struct rec_dump_counters {
	uint64_t v[REC_C_MAX];
};

/*
 * Writes p as a dump to out. counters may be NULL. now_ns is the CLOCK_REALTIME
 * time of the dump. Looks up (and so caches) the callsite of every event and frame
 * it writes. Returns 0, -ENOMEM, or -EIO if a write failed.
 */
int rec_dump__write(FILE *out, struct rec_proc *p, const struct rec_dump_counters *counters,
		    int64_t now_ns);

/*
 * Writes p's dump into dir (created 0711, its missing parents 0755; a directory
 * that exists is never changed) as recorder-PID-YYYYmmddTHHMMSS.uuuuuuZ.json,
 * atomically (a temporary file, then a rename), and puts its path into path.
 * The file is 0600 from its creation, and given to p's owner (p->uid) once
 * whole; it stays root's if the owner is unknown or cannot be given it.
 * Returns 0 or a negative errno: the real reason a write failed (-ENOSPC,
 * -EDQUOT, -EROFS, ...), not -EIO.
 */
int rec_dump__write_file(const char *dir, struct rec_proc *p,
			 const struct rec_dump_counters *counters, char *path, size_t len);

/*
 * Makes sure dumps can be written into dir: creates it as rec_dump__write_file()
 * does if it is missing, checks that its mode lets the effective user write in
 * it (without CAP_DAC_OVERRIDE, which recorder-attach gives up once attached),
 * then creates, writes and removes a small file in it. Returns 0, or the
 * negative errno that a dump would meet (-ENOTDIR, -EACCES, -EROFS, -EPERM,
 * -ENOSPC, ...).
 */
int rec_dump__prepare_dir(const char *dir);

/*
 * The most recordings and thread stacks the reader takes from one dump. Far
 * above what a writer writes (docs/dump-format.md, "Limits of the reader"):
 * the reader must never refuse a black box.
 */
#define REC_DUMP_READ_MAX_RECORDINGS (1u << 20)
#define REC_DUMP_READ_MAX_STACKS (1u << 20)

/*
 * Reads the dump at path into p (which it initializes; the caller frees it with
 * rec_proc__fini) and, if counters is not NULL, the counters. Returns 0, or
 * -EINVAL with a message in err (e.g. "recordings[2].events[5].seq: expected an
 * unsigned integer") for a malformed dump, -ENOMEM, -ENOTSUP if path is not a
 * regular file (a FIFO, a device, a socket or a directory: refused before it is
 * opened), or -errno if the file can't be read; err then starts with the path.
 * On error p is left zeroed.
 * Never trusts the file: every type, length, enum and key is checked, and
 * events are validated exactly as live records are. Builds nothing but p: time
 * and memory follow the file's size and what p holds, whatever the file
 * declares (docs/dump-format.md, "Limits of the reader").
 */
int rec_dump__read(const char *path, struct rec_proc *p, struct rec_dump_counters *counters,
		   char *err, size_t errlen);

/* Reads a dump from the len bytes at buf, as rec_dump__read() does from a file. */
int rec_dump__read_mem(const char *buf, size_t len, struct rec_proc *p,
		       struct rec_dump_counters *counters, char *err, size_t errlen);

#endif /* REC_DUMP_H */
