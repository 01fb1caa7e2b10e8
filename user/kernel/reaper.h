/* SPDX-License-Identifier: MIT */
/*
 * Detaching without waiting: the kernel releases uprobes one grace period at a
 * time, so closing many link fds can take seconds. A forked child keeps the last
 * references and closes them from many threads; the caller's own closes return
 * at once.
 */
#ifndef REC_REAPER_H
#define REC_REAPER_H

#include <stddef.h>

/* Closes the n link fds in links, leaving the slow release to a reaper child. */
void rec_reaper__close_links(int *links, size_t n);

#endif /* REC_REAPER_H */
