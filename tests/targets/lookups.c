/* SPDX-License-Identifier: MIT */
/*
 * lookups.c: a cache's requests as typed events, for recorder-tail --where.
 *
 *	lookups
 *	  -> "pid N"
 *	  waits for recorder-attach (rec_is_attached())
 *	  round 0, then one more round per SIGUSR1, each -> "round R"
 *	  SIGTERM or SIGINT: leaves its span, exits 0
 *
 * One recording "cache" (cap 100), its span entered for the process's life.
 * Each round R is a span "round" holding five events, every one with round=R:
 *	INFO  get   key="user:1" hit=true  status=200 (u64)
 *	INFO  get   key="user:2" hit=false status=404 (u64)
 *	WARN  get   key="item:3" hit=false status=503 (u64)
 *	ERROR set   key="user:4"           status=-500 + 1000 = 500 (i64: no hit field)
 *	INFO  stats status="500" (a string) ms=2.5 (f64)
 * so that seq 5R + i is event i of round R.
 * Exit status: 0 done, 2 usage, 3 nothing attached within 30 s.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"

static void wait_attached(void)
{
	struct timespec ms = { .tv_nsec = 1000000 };

	for (int i = 0; !rec_is_attached(); i++) {
		if (i == 30000) {
			fprintf(stderr, "lookups: nothing attached within 30 s\n");
			exit(3);
		}
		nanosleep(&ms, NULL);
	}
}

static void round_of(uint64_t r)
{
	/* An i64 status, so that numbers of two types compare by value. */
	int64_t set_status = -500 + 1000;

	REC_SPAN_SCOPED(in_round, INFO, "round");
	REC_INFO("get", REC_STR(key, "user:1"), REC_BOOL(hit, 1), REC_U64(status, 200),
		 REC_U64(round, r));
	REC_INFO("get", REC_STR(key, "user:2"), REC_BOOL(hit, 0), REC_U64(status, 404),
		 REC_U64(round, r));
	REC_WARN("get", REC_STR(key, "item:3"), REC_BOOL(hit, 0), REC_U64(status, 503),
		 REC_U64(round, r));
	REC_ERROR("set", REC_STR(key, "user:4"), REC_I64(status, set_status), REC_U64(round, r));
	REC_INFO("stats", REC_STR(status, "500"), REC_F64(ms, 2.5), REC_U64(round, r));
}

int main(int argc, char **argv)
{
	struct rec_recorder *recorder;
	struct rec_recording *rec;
	struct rec_span span;
	sigset_t set;
	int sig = 0;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: lookups\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	wait_attached();
	recorder = rec_recorder_new();
	rec = rec_recording_new(recorder, 100);
	rec_recording_span(&span, rec, "cache");
	rec_span_enter(&span);
	for (uint64_t r = 0;; r++) {
		round_of(r);
		printf("round %llu\n", (unsigned long long)r);
		fflush(stdout);
		while (sigwait(&set, &sig) != 0)
			;
		if (sig != SIGUSR1)
			break;
	}
	rec_span_exit(&span);
	rec_span_close(&span);
	rec_recording_free(rec);
	rec_recorder_free(recorder);
	return 0;
}
