/* SPDX-License-Identifier: MIT */
/*
 * shlib.h: the shared library of the end-to-end test targets
 * (build/tests/targets/librecshared.so). It has its own probe sites, so a test
 * can check that recorder-attach finds probes in libraries as well as in the
 * executable.
 */
#ifndef SHLIB_H
#define SHLIB_H

/*
 * Emits n events "from shared library" with field i = 0..n-1, inside a span
 * "shlib_span" that is a child of the caller's current span.
 */
void shlib_emit(int n);

/* rec_is_attached() of the library: its own probes (and semaphores) are armed. */
int shlib_is_attached(void);

#endif /* SHLIB_H */
