/* SPDX-License-Identifier: MIT */
/*
 * inflight.c: a program that serves one request at a time, each in a
 * recording of its own, so that an attach made while it serves finds a
 * request in flight (issue 35, item 0). A request: a recording, its span
 * "handle" entered, SLEEP_MS asleep inside it, one event "done" (after the
 * sleep: after an attach made during it), the span left and the recording
 * freed.
 *
 *	inflight SLEEP_MS
 *	  -> "pid N"
 *	  SIGUSR1: serves requests, one after the other, until SIGUSR2
 *	    -> "request N" as each request's span is entered (N counts from 1)
 *	    -> "idle N" once SIGUSR2 came and the request it found ended
 *	  SIGTERM or SIGINT: exits 0
 *
 * Exit status: 0 stopped, 2 usage, 1 errors.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <recorder.h>

/* One request: its recording and span around a sleep, and one event after it. */
static void serve(struct rec_recorder *recorder, long sleep_ms, unsigned long long n)
{
	struct timespec nap = { .tv_sec = sleep_ms / 1000, .tv_nsec = (sleep_ms % 1000) * 1000000 };
	struct rec_recording *rec = rec_recording_new(recorder, 16);
	struct rec_span span;

	if (!rec)
		exit(1);
	rec_recording_span(&span, rec, "request");
	rec_span_enter(&span);
	printf("request %llu\n", n);
	/* An attach made now finds this request in flight. */
	while (nanosleep(&nap, &nap))
		;
	REC_INFO("done", REC_U64(n, n));
	rec_span_exit(&span);
	rec_recording_free(rec);
}

int main(int argc, char **argv)
{
	long sleep_ms = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	struct timespec now = { 0 };
	struct rec_recorder *recorder;
	unsigned long long served = 0;
	sigset_t sigs, pause;
	int sig;

	if (sleep_ms <= 0) {
		fprintf(stderr, "usage: inflight SLEEP_MS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigemptyset(&pause);
	sigaddset(&pause, SIGUSR2);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sigprocmask(SIG_BLOCK, &pause, NULL);
	recorder = rec_recorder_new();
	if (!recorder)
		return 1;
	printf("pid %d\n", (int)getpid());
	while (sigwait(&sigs, &sig) == 0 && sig == SIGUSR1) {
		/* Until SIGUSR2, taken without waiting between two requests. */
		do
			serve(recorder, sleep_ms, ++served);
		while (sigtimedwait(&pause, NULL, &now) != SIGUSR2);
		printf("idle %llu\n", served);
	}
	rec_recorder_free(recorder);
	return 0;
}
