/* SPDX-License-Identifier: MIT */
/*
 * incident.c: requests, one recording each, for the trigger tests (issue 23).
 *
 *	incident requests N BAD [RATE]  N requests in turn, one recording each
 *		(subject "req[I]"), a span "request" with 5 "step" events (field
 *		i); request BAD (0 = none) logs REC_ERROR "request failed"
 *		(status=503) as its third event; then 3 more steps, the span is
 *		left and the recording freed at once. RATE requests a second (0:
 *		flat out). Prints "bad KEY" first (the key request BAD will have).
 *	incident storm N                one recording, N REC_ERROR events
 *		"request failed" (status=500), flat out
 *	incident errors N MS            one recording "errors", N REC_ERROR events
 *		"request failed" (status=500, i), one every MS milliseconds
 *	incident slow MS               one recording "slow", a span "request"
 *		that lasts MS milliseconds, then left
 *	incident hang                   one recording "hung", a span "request"
 *		entered and never left
 *	incident hung-get               issue 35's hung request: a recording "set"
 *		whose span "command" takes 3 ms, then, 50 ms later, a recording
 *		"get" whose spans "command" and "lookup" (in it) are entered and
 *		never left
 *	incident code REASON            one recording "health", 3 events, then
 *		rec_trigger(rec, REASON)
 *	incident starve N MS            one recording "flood", N REC_ERROR events
 *		"request failed" (status=500) of one callsite, flat out; then one
 *		REC_ERROR "disk full" of another; then a span "slowreq" that lasts
 *		MS milliseconds (issue 35: a flood of one signature starves no other)
 *	Each prints "pid N", waits for recorder-attach (rec_is_attached()), runs,
 *	prints "done", and waits for SIGTERM or SIGINT (exit 0).
 * Exit status: 2 usage, 3 nothing attached within 30 s.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recorder.h"

static void sleep_ns(long long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };

	while (nanosleep(&ts, &ts))
		;
}

static void wait_attached(void)
{
	for (int i = 0; !rec_is_attached(); i++) {
		if (i == 30000) {
			fprintf(stderr, "incident: nothing attached within 30 s\n");
			exit(3);
		}
		sleep_ns(1000000);
	}
}

/* Request i of recorder r: bad ones log an error as their third event. */
static void request(struct rec_recorder *r, unsigned long i, int bad)
{
	struct rec_recording *rec = rec_recording_new(r, 16);
	struct rec_span span, req;
	char subject[32];

	snprintf(subject, sizeof(subject), "req[%lu]", i);
	rec_recording_span(&span, rec, subject);
	rec_span_enter(&span);
	REC_SPAN_INIT(&req, INFO, "request");
	rec_span_enter(&req);
	for (uint64_t k = 0; k < 8; k++) {
		if (k == 2 && bad)
			REC_ERROR("request failed", REC_U64(status, 503), REC_U64(i, k));
		else if (k < 5 || bad)
			REC_INFO("step", REC_U64(i, k));
	}
	rec_span_exit(&req);
	rec_span_exit(&span);
	rec_span_close(&req);
	rec_span_close(&span);
	rec_recording_free(rec);
}

/* One recording named subject, entered: its span stays entered. */
static struct rec_recording *one(struct rec_recorder *r, struct rec_span *span, const char *subject)
{
	struct rec_recording *rec = rec_recording_new(r, 64);

	rec_recording_span(span, rec, subject);
	rec_span_enter(span);
	return rec;
}

int main(int argc, char **argv)
{
	struct rec_recorder *r;
	struct rec_span span, req;
	sigset_t stop;
	int sig;

	if (argc < 2) {
		fprintf(stderr, "usage: incident "
				"requests|storm|errors|slow|hang|hung-get|code|starve ...\n");
		return 2;
	}
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	r = rec_recorder_new();
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	wait_attached();
	if (!strcmp(argv[1], "requests") && argc >= 4) {
		unsigned long n = strtoul(argv[2], NULL, 10), bad = strtoul(argv[3], NULL, 10);
		long rate = argc > 4 ? strtol(argv[4], NULL, 10) : 0;
		/* Keys count up from the recorder's: request i's is the recorder's + i. */
		printf("bad 0x%" PRIx64 "\n", bad ? rec_recorder_key(r) + bad : 0);
		fflush(stdout);
		for (unsigned long i = 1; i <= n; i++) {
			request(r, i, i == bad);
			if (rate > 0)
				sleep_ns(1000000000LL / rate);
		}
	} else if (!strcmp(argv[1], "storm") && argc >= 3) {
		unsigned long n = strtoul(argv[2], NULL, 10);

		one(r, &span, "storm");
		for (unsigned long k = 0; k < n; k++)
			REC_ERROR("request failed", REC_U64(status, 500), REC_U64(i, k));
		rec_span_exit(&span);
	} else if (!strcmp(argv[1], "errors") && argc >= 4) {
		unsigned long n = strtoul(argv[2], NULL, 10);
		long long ms = strtoll(argv[3], NULL, 10);

		one(r, &span, "errors");
		for (unsigned long k = 0; k < n; k++) {
			REC_ERROR("request failed", REC_U64(status, 500), REC_U64(i, k));
			sleep_ns(ms * 1000000LL);
		}
		rec_span_exit(&span);
	} else if (!strcmp(argv[1], "slow") && argc >= 3) {
		one(r, &span, "slow");
		REC_SPAN_INIT(&req, INFO, "request");
		rec_span_enter(&req);
		REC_INFO("step", REC_U64(i, 0));
		sleep_ns(strtoll(argv[2], NULL, 10) * 1000000LL);
		REC_INFO("step", REC_U64(i, 1));
		rec_span_exit(&req);
		rec_span_exit(&span);
	} else if (!strcmp(argv[1], "hang")) {
		one(r, &span, "hung");
		REC_SPAN_INIT(&req, INFO, "request");
		rec_span_enter(&req);
		REC_INFO("step", REC_U64(i, 0));
		printf("hanging\n");
		fflush(stdout);
	} else if (!strcmp(argv[1], "hung-get")) {
		struct rec_span get, set_cmd, get_cmd, lookup;

		one(r, &span, "set");
		REC_SPAN_INIT(&set_cmd, INFO, "command");
		rec_span_enter(&set_cmd);
		REC_INFO("set", REC_U64(i, 1));
		sleep_ns(3000000);
		rec_span_exit(&set_cmd);
		rec_span_exit(&span);
		sleep_ns(50000000);
		one(r, &get, "get");
		REC_SPAN_INIT(&get_cmd, INFO, "command");
		rec_span_enter(&get_cmd);
		REC_SPAN_INIT(&lookup, INFO, "lookup");
		rec_span_enter(&lookup);
		REC_INFO("lookup", REC_U64(i, 1));
		printf("hanging\n");
		fflush(stdout);
	} else if (!strcmp(argv[1], "starve") && argc >= 4) {
		unsigned long n = strtoul(argv[2], NULL, 10);

		one(r, &span, "flood");
		for (unsigned long k = 0; k < n; k++)
			REC_ERROR("request failed", REC_U64(status, 500), REC_U64(i, k));
		REC_ERROR("disk full", REC_U64(free, 0));
		REC_SPAN_INIT(&req, INFO, "slowreq");
		rec_span_enter(&req);
		sleep_ns(strtoll(argv[3], NULL, 10) * 1000000LL);
		rec_span_exit(&req);
		rec_span_exit(&span);
	} else if (!strcmp(argv[1], "code") && argc >= 3) {
		struct rec_recording *rec = one(r, &span, "health");

		for (uint64_t k = 0; k < 3; k++)
			REC_INFO("step", REC_U64(i, k));
		rec_trigger(rec, argv[2]);
		rec_span_exit(&span);
	} else {
		fprintf(stderr, "incident: bad arguments\n");
		return 2;
	}
	printf("done\n");
	fflush(stdout);
	while (sigwait(&stop, &sig))
		;
	return 0;
}
