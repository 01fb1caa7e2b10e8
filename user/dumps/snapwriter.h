/* SPDX-License-Identifier: MIT */
/*
 * Snapshots written by a thread of their own. A storm of triggers saves many
 * snapshots at once, each thousands of events of JSON: written on the ring's
 * thread, they would leave the ring undrained for as long, and it would drop
 * the very events of the incident. The caller copies what a snapshot of one
 * recording reads (rec_proc__copy_recording()) into a job and pushes it; the
 * writer's thread writes it into the dump directory, one at a time in the
 * order pushed, and hands it back done through an eventfd the caller polls.
 * Everything else (the counts, the lines on stderr, the retention of files)
 * stays the caller's, on its own thread, as it takes each job back.
 */
#ifndef REC_SNAPWRITER_H
#define REC_SNAPWRITER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/dump.h"
#include "model/proc.h"

/*
 * Snapshots pushed and not yet taken back, at most, and the bytes of their
 * copies past which no more is pushed (one alone may hold more): a storm's
 * snapshots due together are copied together, and the rest wait, pending.
 */
#define REC_SNAPWRITER_MAX_JOBS 64
#define REC_SNAPWRITER_MAX_BYTES (64ULL << 20)
/* The writer's thread runs this much nicer than recorder-attach's own. */
#define REC_SNAPWRITER_NICE 10

/* One snapshot to write: the caller fills the first part, the writer the second. */
struct rec_snapshot_job {
	struct rec_proc proc; /* the copy it is written from: freed by the writer */
	struct rec_dump_counters counters;
	struct rec_dump_trigger trigger; /* its counts: counts */
	struct rec_dump_rule_counts counts[REC_DUMP_MAX_RULES];
	uint64_t recording; /* the one recording of proc it is written of */
	uint64_t bytes;	    /* what the copy holds in memory, about */
	const char *dir;    /* the dump directory: it outlives the writer */
	void *owner;	    /* the caller's */
	/* Written by the writer: rec_dump__write_snapshot_file()'s result, the file's path. */
	int err;
	char path[PATH_MAX];
	struct rec_snapshot_job *next;
};

struct rec_snapwriter;

/* A writer; its thread starts with the first job. Returns 0 or -errno (the eventfd). */
int rec_snapwriter__new(struct rec_snapwriter **w);
/* The eventfd that is readable while a job done waits to be taken back. */
int rec_snapwriter__fd(const struct rec_snapwriter *w);
/*
 * Whether a job may be pushed now: fewer than REC_SNAPWRITER_MAX_JOBS not
 * taken back, holding fewer than REC_SNAPWRITER_MAX_BYTES.
 */
bool rec_snapwriter__has_room(const struct rec_snapwriter *w);
/*
 * Gives the writer job (malloc'd; the caller takes it back done). Returns 0,
 * -EBUSY if there is no room, or -errno if its thread could not start (then
 * the job is still the caller's, untouched).
 */
int rec_snapwriter__push(struct rec_snapwriter *w, struct rec_snapshot_job *job);
/*
 * The first job written and not taken back (its err and path set, its copy
 * freed), now the caller's to free; NULL if none is done. With owner, only
 * that owner's.
 */
struct rec_snapshot_job *rec_snapwriter__take_done(struct rec_snapwriter *w, const void *owner);
/* Waits until every job pushed of owner (NULL: of any) is written. */
void rec_snapwriter__wait(struct rec_snapwriter *w, const void *owner);
/* Writes what was pushed, stops the thread and frees w with the jobs not taken back. */
void rec_snapwriter__free(struct rec_snapwriter *w);

#endif /* REC_SNAPWRITER_H */
