/* SPDX-License-Identifier: MIT */
/*
 * A traced process seen from outside: who it is (its pid in its namespace, its
 * owner), which files back which addresses, and reading its memory: live while
 * it runs, else from the file mapped at the address. Its reader is what the
 * model (proc.h) is given to read the target.
 */
#ifndef REC_TARGET_TARGET_H
#define REC_TARGET_TARGET_H

#include <stdint.h>
#include <sys/types.h>

#include "target/maps.h"

struct rec_reader;

struct rec_target {
	pid_t pid;
	pid_t ns_pid; /* its pid inside its namespace, 0 if the same */
	uid_t uid;    /* who owns /proc/PID: its effective uid, or root if it is not
				 * dumpable; (uid_t)-1 if unknown */
	/* Every file mapping seen, growing with rescans: a file unmapped since still reads. */
	struct rec_maps maps;
};

/*
 * Opens pid as a target: its ns pid, its owner, and its maps. Returns 0, or a
 * negative errno (-ESRCH if it is gone) with t still usable and its maps empty.
 */
int rec_target__open(struct rec_target *t, pid_t pid);
void rec_target__close(struct rec_target *t);

/*
 * Adds the mappings of maps that t does not know yet (none at the same start),
 * taking their paths out of maps. Returns 0 or -ENOMEM (some were not added).
 */
int rec_target__add_maps(struct rec_target *t, struct rec_maps *maps);

/*
 * Writes the 32-bit value into pid's memory at file offset off of the file
 * (inode) it maps, where maps (read just now: an old mapping's addresses may
 * hold another file since) say it is. Returns 0, -ENOENT if no mapping holds
 * it, or the negative errno of the write (-ESRCH: gone).
 */
int rec_target__write_u32(pid_t pid, const struct rec_maps *maps, uint64_t inode, uint64_t off,
			  uint32_t value);

/* A reader of t's memory for the model (struct rec_reader), valid while t is. */
void rec_target__reader(struct rec_target *t, struct rec_reader *r);

#endif /* REC_TARGET_TARGET_H */
