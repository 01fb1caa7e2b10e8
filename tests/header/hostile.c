/* SPDX-License-Identifier: MIT */
/*
 * Compiled by tests/run-all.sh as C11 and C++17: recorder.h in a translation
 * unit that has redefined malloc, calloc, free and snprintf (as civetweb does),
 * or, with -DPOISON, poisoned them. The system headers come first, as they
 * would in such a project.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef POISON
#pragma GCC poison malloc calloc free snprintf
#else
#define malloc(n) use_mg_malloc_instead(n)
#define calloc(n, m) use_mg_calloc_instead(n, m)
#define free(p) use_mg_free_instead(p)
#define snprintf use_mg_snprintf_instead
#endif

#include "recorder.h"

int main(void)
{
	struct rec_recorder *r = rec_recorder_new();
	struct rec_recording *rec = rec_recording_new(r, 10);
	struct rec_span span;

	if (!r || !rec)
		return 1;
	rec_recording_span(&span, rec, "subject");
	rec_span_enter(&span);
	REC_INFO("info", REC_U64(a, 1), REC_STR(b, "s"), REC_F64(c, 0.5));
	REC_WARNF("formatted %d %s", 1, "x");
	REC_INFO("strn", REC_STRN(key, "key!", 3));
	rec_span_exit(&span);
	rec_recording_free(rec);
	rec_recorder_free(r);
	return 0;
}
