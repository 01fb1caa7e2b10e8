/* SPDX-License-Identifier: MIT */
/*
 * Attaching the recorder probes: finding the files with probes (the
 * executable, its libraries) in a process's maps, and attaching each probe's
 * BPF program to all its sites in a file with one link, for that process or
 * for every process. The probes go on in a fixed order, "attached" last.
 */
#ifndef REC_ATTACH_H
#define REC_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/maps.h"
#include "usdt.h"

struct bpf_object;
struct rec_attach;

/* A file, as a process's maps name it. */
struct rec_object_id {
	uint64_t inode;
	char *path;
};

/* What is attached in one process, or, for a --binary, in every process. */
struct rec_attach_set {
	struct rec_object_id *objs;	/* the files seen, probes or not: each is scanned once */
	size_t nobjs;
	int *links;			/* uprobe_multi link fds */
	size_t nlinks;
};

struct rec_attach_opts {
	/*
	 * Called when nsites sites of probe name in the file at path (for pid, 0
	 * = every process) are left out because their argument spec (the first
	 * one's is spec) is not supported; the other sites are attached.
	 */
	void (*on_skipped)(pid_t pid, const char *path, const char *probe, unsigned int nsites,
			   const char *spec, void *ctx);
	void *ctx;
};

/* What an attach attached. */
struct rec_attach_count {
	unsigned int sites;	/* probe sites attached (skipped ones not counted) */
	unsigned int objects;	/* executable and libraries that had probes */
};

/*
 * Gets ready to attach the USDT programs of obj, loaded, whose names are
 * "on_" and the probe's. Returns 0 or a negative errno (-ENOENT if one is missing).
 */
int rec_attach__new(struct rec_attach **ap, struct bpf_object *obj,
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

/* The recorder probes of the file at path. Returns 0, -ENOENT if it has none, or -errno. */
int rec_attach__probes_of(const char *path, struct rec_probe_names *names);

/*
 * Attaches the probes names (rec_attach__probes_of) of the executable at path
 * for every process that maps it, now or later, through fork and exec. Adds
 * what it attached to *count. Returns 0 or a negative errno.
 */
int rec_attach__binary(struct rec_attach *a, const char *path,
		       const struct rec_probe_names *names, struct rec_attach_count *count);

/* set has seen the file mapped at m (its probes are attached already). Returns 0 or -ENOMEM. */
int rec_attach__seen(struct rec_attach_set *set, const struct rec_mapping *m);

/* Lets go of set's links: they detach in the background (reaper.h). */
void rec_attach__detach(struct rec_attach_set *set);
/* Detaches set and frees what it holds. */
void rec_attach__release(struct rec_attach_set *set);

#endif /* REC_ATTACH_H */
