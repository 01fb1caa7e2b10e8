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

#include "model/proc.h"

/* The version written; the reader reads every version from 1 to it. */
#define REC_DUMP_VERSION 3
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

/* Room for a trigger rule's canonical text, NUL included (trigger.h's REC_TRIGGER_TEXT_MAX fits). */
#define REC_DUMP_RULE_MAX 1024
/* Room for what fired a trigger, NUL included: "event seq 1234: request failed". */
#define REC_DUMP_WHAT_MAX 512
/* Room for a trigger's signature text, NUL included (trigger.h's REC_TRIGGER_SIG_TEXT_MAX fits). */
#define REC_DUMP_SIGNATURE_MAX 256
/* The most rows of a trigger's "counts" (rules), and the most "triggers_pending". */
#define REC_DUMP_MAX_RULES 256
#define REC_DUMP_MAX_TRIGGERS_PENDING 256

/* The kind of rule that fired ("kind"): the values of trigger.h's enum rec_trigger_kind. */
enum rec_dump_trigger_kind {
	REC_DUMP_TRIGGER_LEVEL = 1, /* "level": level>=LEVEL */
	REC_DUMP_TRIGGER_SPAN,	    /* "span": span:GLOB>DURATION */
	REC_DUMP_TRIGGER_EVENT,	    /* "event": event:GLOB [COND] */
	REC_DUMP_TRIGGER_CODE,	    /* "code": code[:GLOB] */
};

/* One rule of the process, and what had become of its fires when a trigger fired. */
struct rec_dump_rule_counts {
	uint32_t id;
	char rule[REC_DUMP_RULE_MAX]; /* its canonical text */
	uint64_t fired;		      /* matched */
	uint64_t saved;		      /* snapshots written */
	uint64_t cooldown;	      /* suppressed: the rule's cooldown */
	uint64_t capped;	      /* suppressed: the hourly cap */
	uint64_t failed;	      /* snapshots that could not be written */
};

/*
 * A trigger that fired: what a snapshot was written for ("trigger"), or one
 * that fired while its process exited, named by the black box
 * ("triggers_pending"). Strings are NUL-terminated, or cut at their last byte.
 */
struct rec_dump_trigger {
	uint32_t rule_id;
	enum rec_dump_trigger_kind kind;
	char rule[REC_DUMP_RULE_MAX]; /* the rule's canonical text */
	int64_t time_ns;	      /* when recorder-attach saw it fire: CLOCK_REALTIME */
	int64_t at_ns;	       /* its event's or span's own time: CLOCK_REALTIME; 0: unknown */
	uint64_t signature_id; /* its signature's short id (trigger.h); 0: none */
	char signature[REC_DUMP_SIGNATURE_MAX]; /* its signature's text, from the target */
	uint64_t recording;			/* the recording it fired in, 0: none */
	char subject[REC_SUBJECT_MAX];		/* that recording's subject */
	char what[REC_DUMP_WHAT_MAX];		/* what fired it: "span request open 812ms" */
	uint64_t after_ns; /* --trigger-after: from the firing to the snapshot */
	/* The signatures of the process when it fired (signatures_max: 0 unless known). */
	uint64_t signatures, signatures_max, signatures_folded, signatures_new_capped;
	/* Every rule of the process when it fired, at most REC_DUMP_MAX_RULES. */
	const struct rec_dump_rule_counts *counts;
	size_t ncounts;
};

/* How to write a dump (rec_dump__write_opts()). Zeroed, it writes every recording. */
struct rec_dump_opts {
	const struct rec_dump_counters *counters; /* NULL: no "counters" */
	int64_t now_ns;				  /* the time of the dump (CLOCK_REALTIME) */
	/*
	 * 0: every recording (scope "process"); else only the recording of this
	 * key (scope "recording"), still with every thread's stack.
	 */
	uint64_t only_recording;
	/* The trigger of a snapshot; NULL: p->trigger (that of a dump read back), if any. */
	const struct rec_dump_trigger *trigger;
	/* The triggers that fired while the process exited; NULL: p->triggers_pending. */
	const struct rec_dump_trigger *pending;
	size_t npending;
};

/*
 * Writes p as a dump to out, as opts says. With only_recording, the dump holds
 * that recording whole (its events, spans and counts), the callsites its
 * events and spans and the stacks refer to, and of the other recordings
 * nothing but the frames of the stacks; the process's counts, limits and
 * stacks are all there. A model read from a dump of scope "recording" is
 * written back as one. Looks up (and so caches) the callsite of every event,
 * span and frame it writes. Returns 0, -ENOENT if p has no recording
 * only_recording (nothing written), -EINVAL for a trigger it could not write
 * so that it reads back (an unknown kind, a time before 1970, counts NULL
 * with ncounts, more than REC_DUMP_MAX_RULES counts or
 * REC_DUMP_MAX_TRIGGERS_PENDING pending; nothing written), -ENOMEM, or -EIO
 * if a write failed.
 */
int rec_dump__write_opts(FILE *out, struct rec_proc *p, const struct rec_dump_opts *opts);

/*
 * Writes p as a dump of every recording to out: rec_dump__write_opts() with
 * counters (may be NULL) and now_ns, the CLOCK_REALTIME time of the dump.
 */
int rec_dump__write(FILE *out, struct rec_proc *p, const struct rec_dump_counters *counters,
		    int64_t now_ns);

/*
 * Writes p's dump (opts as rec_dump__write_opts() takes it, but for now_ns:
 * the time of the write) into dir (created 0711, its missing parents 0755; a
 * directory that exists is never changed) as
 * recorder-PID-YYYYmmddTHHMMSS.uuuuuuZ.json, atomically (a temporary file,
 * then a rename), and puts its path into path. The file is 0600 from its
 * creation, and given to p's owner (p->uid) once whole; it stays root's if the
 * owner is unknown or cannot be given it. Returns 0 or a negative errno: those
 * of rec_dump__write_opts(), or the real reason a write failed (-ENOSPC,
 * -EDQUOT, -EROFS, ...), not -EIO.
 */
int rec_dump__write_file_opts(const char *dir, struct rec_proc *p, const struct rec_dump_opts *opts,
			      char *path, size_t len);

/* rec_dump__write_file_opts() of every recording, with counters (may be NULL). */
int rec_dump__write_file(const char *dir, struct rec_proc *p,
			 const struct rec_dump_counters *counters, char *path, size_t len);

/*
 * Writes a trigger snapshot of p: as rec_dump__write_file_opts() writes a
 * black box, the same safe way, but named
 * snapshot-PID-YYYYmmddTHHMMSS.uuuuuuZ.json, which the retention of black
 * boxes never counts (retention.h: REC_RETENTION_SNAPSHOT has its own).
 */
int rec_dump__write_snapshot_file(const char *dir, struct rec_proc *p,
				  const struct rec_dump_opts *opts, char *path, size_t len);

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
 * rec_proc__fini) and, if counters is not NULL, the counters. What it says of
 * triggers goes to p->trigger and p->triggers_pending, its scope to
 * p->dump_one_recording. Returns 0, or
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
