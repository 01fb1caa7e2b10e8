/* SPDX-License-Identifier: MIT */
/*
 * Attaching the recorder probes: finding the files with probes (the
 * executable, its libraries) in a process's maps, and attaching each probe's
 * BPF program to all its sites in a file with one link, for that process or
 * for every process. The probes go on in a fixed order, "attached" last. A
 * library found after the attach (a rescan) whose probes fail to attach is
 * counted, reported, and tried again at the next rescans, up to a bound.
 */
#ifndef REC_ATTACH_H
#define REC_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/maps.h"
#include "usdt/usdt.h"

struct bpf_object;
struct rec_bpfstate;
struct rec_attach;
struct rec_attach_object;

/* The tries in all, one per rescan, for a library whose probes fail to attach at a rescan. */
#define REC_ATTACH_TRIES 50

/* What became of a library found at a rescan whose probes failed to attach. */
enum rec_late_library {
	REC_LATE_FAILED,   /* its first try failed: it is tried again at each rescan */
	REC_LATE_ATTACHED, /* a later try attached the rest of its probes */
	REC_LATE_GAVE_UP,  /* REC_ATTACH_TRIES tries failed: no more */
};

/* The libraries found at rescans whose probes failed to attach at first. */
struct rec_late_counts {
	uint64_t failed;	 /* all of them: retrying + attached_later + given_up */
	uint64_t retrying;	 /* still tried again at each rescan */
	uint64_t attached_later; /* attached at a later try */
	uint64_t given_up;	 /* failed REC_ATTACH_TRIES tries, or their process ended */
};

/* A file, as a process's maps name it. */
struct rec_object_id {
	uint64_t inode;
	char *path;
};

/* What is attached in one process, or, for a --binary, in every process. */
/*
 * The tracer word of an image that has one (include/recorder.h, "the attach
 * block"): recorder-attach writes it once every probe of the image is attached.
 */
struct rec_tracer_word {
	uint64_t inode;
	uint64_t off; /* its file offset */
};

struct rec_attach_set {
	struct rec_object_id *objs; /* the files seen, probes or not: each is scanned once */
	size_t nobjs;
	int *links; /* uprobe_multi link fds */
	size_t nlinks;
	struct rec_attach_object *pending; /* libraries to try again (rec_attach__retry) */
	size_t npending;
	struct rec_late_counts late;
	/* The images attached whole that have a tracer word, in the order attached. */
	struct rec_tracer_word *words;
	size_t nwords;
};

struct rec_attach_opts {
	/*
	 * Called when nsites sites of probe name in the file at path (for pid, 0
	 * = every process) are left out because their argument spec (the first
	 * one's is spec) is not supported; the other sites are attached.
	 */
	void (*on_skipped)(pid_t pid, const char *path, const char *probe, unsigned int nsites,
			   const char *spec, void *ctx);
	/*
	 * Called when the probes of the library at path, found at a rescan, failed
	 * to attach for pid (0 = every process) at their first try (err is why),
	 * when a later one attached them (err 0), or when the last one failed:
	 * tries is the number of that try.
	 */
	void (*on_late)(enum rec_late_library what, pid_t pid, const char *path, int err,
			unsigned int tries, void *ctx);
	void *ctx;
	/* Leave the "batch" probe alone: every event fires its own probe. */
	bool per_event;
};

/* What an attach attached. */
struct rec_attach_count {
	unsigned int sites;   /* probe sites attached (skipped ones not counted) */
	unsigned int objects; /* executable and libraries that had probes */
};

/*
 * Gets ready to attach the USDT programs of bs, loaded, whose names are
 * "on_" and the probe's. Returns 0 or a negative errno (-ENOENT if one is missing).
 */
int rec_attach__new(struct rec_attach **ap, const struct rec_bpfstate *bs,
		    const struct rec_attach_opts *opts);
/* Lets go of what is attached for every process (detaching takes a while: the reaper does it). */
void rec_attach__free(struct rec_attach *a);

/*
 * Attaches every probe of the files in maps, the maps of process pid, that
 * set has not seen. With every (a --binary process), the probes of its
 * libraries go on for every process that maps them, once per session, like
 * the executable's: a child it forks may run their sites and exit before
 * anyone could attach them for its pid (BPF ignores processes of other
 * executables). Adds what it attached to *count. Returns 0 or a negative
 * errno: then what was attached before the error stays attached.
 */
int rec_attach__maps(struct rec_attach *a, struct rec_attach_set *set, pid_t pid, bool every,
		     const struct rec_maps *maps, struct rec_attach_count *count);

/*
 * rec_attach__maps() after the attach, at a rescan: a library whose probes
 * fail to attach does not stop the others. What was attached of it stays; it
 * is counted in set->late (every process's, with every), reported through
 * on_late, and the rest of its probes are tried again by rec_attach__retry().
 */
void rec_attach__rescan(struct rec_attach *a, struct rec_attach_set *set, pid_t pid, bool every,
			const struct rec_maps *maps);

/*
 * Tries once more to attach what is left of each library of set (of every
 * process, if set is NULL) whose probes failed to attach at a rescan: at most
 * REC_ATTACH_TRIES tries in all, each counted and reported.
 */
void rec_attach__retry(struct rec_attach *a, struct rec_attach_set *set);

/* The libraries that failed to attach at rescans, of set or (set NULL) of every process. */
const struct rec_late_counts *rec_attach__late(const struct rec_attach *a,
					       const struct rec_attach_set *set);

/* The recorder probes of the file at path. Returns 0, -ENOENT if it has none, or -errno. */
int rec_attach__probes_of(const char *path, struct rec_probe_names *names);

/*
 * Attaches the probes names (rec_attach__probes_of) of the executable at path
 * for every process that maps it, now or later, through fork and exec. Adds
 * what it attached to *count. Returns 0 or a negative errno.
 */
int rec_attach__binary(struct rec_attach *a, const char *path, const struct rec_probe_names *names,
		       struct rec_attach_count *count);

/* set has seen the file mapped at m (its probes are attached already). Returns 0 or -ENOMEM. */
int rec_attach__seen(struct rec_attach_set *set, const struct rec_mapping *m);

/*
 * Lets go of set's links: they detach in the background (reaper.h). Its
 * libraries are no longer tried again (counted as given up).
 */
void rec_attach__detach(struct rec_attach_set *set);

/* The set of every process (--binary files and their libraries). */
const struct rec_attach_set *rec_attach__every(const struct rec_attach *a);

/*
 * The file offset of the tracer word of the ELF file at path into *off.
 * Returns 0, -ENOENT if it has no "attached" probe or was built with a header
 * that has no tracer word (its attach block's marker is not there), or
 * another negative errno.
 */
int rec_attach__tracer_word(const char *path, uint64_t *off);
/* Detaches set and frees what it holds. */
void rec_attach__release(struct rec_attach_set *set);

#endif /* REC_ATTACH_H */
