/* SPDX-License-Identifier: MIT */
/*
 * never_asks.c: an instrumented target that never calls rec_is_attached(), as
 * a real server does not: it emits from its start, attached or not. Its
 * executable has no call to rec_is_attached() anywhere, so only the note the
 * header puts in every image leads recorder-attach to its attach block.
 *
 *	never_asks
 *	  -> "pid N"
 *	  one recording "never-asks", an event "tick" (field n) every millisecond
 *	  until SIGTERM or SIGINT, then exits 0
 *
 * Exit status: 0 done, 1 errors.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <recorder.h>

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct timespec ms = { 0, 1000000 };
	struct rec_recorder *recorder = rec_recorder_new();
	struct rec_recording *rec = recorder ? rec_recording_new(recorder, 50) : NULL;
	struct rec_span span;

	if (!rec) {
		fprintf(stderr, "never_asks: cannot create a recording\n");
		return 1;
	}
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	rec_recording_span(&span, rec, "never-asks");
	rec_span_enter(&span);
	for (uint64_t n = 0; !stop; n++) {
		REC_INFO("tick", REC_U64(n, n));
		nanosleep(&ms, NULL);
	}
	rec_span_exit(&span);
	rec_recording_free(rec);
	rec_recorder_free(recorder);
	return 0;
}
