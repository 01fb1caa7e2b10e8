/* SPDX-License-Identifier: MIT */
/*
 * late.c: a library the "dlopen" scenario loads only after recorder-attach has
 * attached, so its probes must be found by the attach's rescan.
 */
#include <time.h>

#include <recorder.h>

/* Waits up to ms for this library's own probes to be attached; 1 if they are. */
int late_wait_attached(int ms)
{
	const struct timespec tick = { .tv_nsec = 1000000 };

	for (int i = 0; i < ms; i++) {
		if (rec_is_attached())
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

void late_emit(int n)
{
	REC_SPAN_SCOPED(span, INFO, "late_span");

	for (int k = 0; k < n; k++)
		REC_INFO("from a library loaded late", REC_I64(k, k));
}
