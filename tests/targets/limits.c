/* SPDX-License-Identifier: MIT */
/*
 * limits.c: the target of tests/e2e/test_limits.sh. Each mode pushes one of
 * recorder-attach's limits (docs/guide/limits.md):
 *
 *	limits [-w] MODE [N]
 *	  -> "pid N"
 *	  waits until recorder-attach arms the probes (with -w, then for SIGUSR1:
 *	  sent once a neighbour has done its worst)
 *	  runs the mode
 *	  -> "recording NAME 0xKEY" per named recording, then "ready"
 *	  waits for SIGTERM or SIGINT, then exits 0 (recordings left to the exit)
 *
 * Modes:
 *	normal     4 recordings "normal[i]" of cap 10, 25 events each
 *	many N     N recordings "many[i]" of cap 2, 3 events each, all left live
 *	invalid    1 recording "invalid" of cap 10 and 5 events; the 2nd and the
 *	           4th carry a field that fails validation (hand-written probes)
 *	retire N   N recordings "old[i]" of recorder "a", cap 4, 3 events each,
 *	           each freed; then 1 recording "kept" of recorder "b", 2 events
 *	callsites  1 recording "callsites" of cap 100: 64 events from 64
 *	           distinct callsites, each with its own literal field
 *	dead N     N threads, one after another, each ending inside the span
 *	           "doomed" of recording "dead" (up to 100: "thread TID" for each)
 *
 * Exit status: 0 done, 2 usage, 3 nothing attached within 20 s, 1 other errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <recorder.h>

#define ATTACH_TIMEOUT_MS 20000

static void die(const char *what)
{
	fprintf(stderr, "limits: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void wait_for_attach(void)
{
	const struct timespec tick = { .tv_nsec = 1000000 };
	uint64_t deadline = now_ms() + ATTACH_TIMEOUT_MS;

	while (!rec_is_attached()) {
		if (now_ms() >= deadline) {
			fprintf(stderr, "limits: no recorder attached after %d s\n",
				ATTACH_TIMEOUT_MS / 1000);
			exit(3);
		}
		nanosleep(&tick, NULL);
	}
}

static struct rec_recording *new_recording(struct rec_recorder *r, size_t cap, const char *name)
{
	struct rec_recording *rec = rec_recording_new(r, cap);

	if (!rec)
		die("rec_recording_new");
	printf("recording %s 0x%" PRIx64 "\n", name, rec_recording_key(rec));
	return rec;
}

static struct rec_recorder *new_recorder(const char *name)
{
	struct rec_recorder *r = rec_recorder_new();

	if (!r)
		die("rec_recorder_new");
	printf("recorder %s 0x%" PRIx64 "\n", name, rec_recorder_key(r));
	return r;
}

static void mode_normal(void)
{
	struct rec_recorder *r = new_recorder("normal");

	for (int i = 0; i < 4; i++) {
		char name[32];
		struct rec_recording *rec;
		struct rec_span span;

		snprintf(name, sizeof(name), "normal[%d]", i);
		rec = new_recording(r, 10, name);
		rec_recording_span(&span, rec, name);
		rec_span_enter(&span);
		for (int j = 0; j < 25; j++)
			REC_INFO("normal event", REC_U64(i, (uint64_t)i), REC_U64(n, (uint64_t)j));
		rec_span_exit(&span);
	}
}

static void mode_many(long n)
{
	struct rec_recorder *r = new_recorder("many");

	for (long i = 0; i < n; i++) {
		struct rec_recording *rec = rec_recording_new(r, 2);
		char subject[32];
		struct rec_span span;

		if (!rec)
			die("rec_recording_new");
		snprintf(subject, sizeof(subject), "many[%ld]", i);
		rec_recording_span(&span, rec, subject);
		rec_span_enter(&span);
		for (uint64_t j = 0; j < 3; j++)
			REC_INFO("many event", REC_U64(n, j));
		rec_span_exit(&span);
	}
}

/*
 * An event probe with the given types and two values, written out by hand
 * (include/recorder.h's own macros only emit valid types): the BPF side passes
 * the record on as it is, and user space must refuse it.
 */
/* Laid out by hand: as REC__PROBE12 is. */
/* clang-format off */
#define RAW_EVENT(msg, types, v0, v1)                                                             \
	do {                                                                                      \
		if (REC__ARMED(event)) {                                                          \
			struct rec_span *rec__s = rec__current;                                   \
			uint64_t rv0 = (v0), rv1 = (v1), z = 0;                                   \
			/* After the batch path's pending events, as the header's own. */    \
			rec__batch_sync();                                                        \
			REC__PROBE12(event, REC__META("E", INFO, REC__EVENT_NAME, msg, 2, "a\0b\0"), \
				     (uint64_t)(types), rec__s->recording_key, rec__s, rv0, rv1,  \
				     z, z, z, z, z, z);                                           \
		}                                                                                 \
	} while (0)
/* clang-format on */

static void mode_invalid(void)
{
	struct rec_recording *rec = new_recording(new_recorder("invalid"), 10, "invalid");
	struct rec_span span;

	rec_recording_span(&span, rec, "invalid");
	rec_span_enter(&span);
	REC_INFO("valid", REC_U64(n, 0));
	/* Field type 7 does not exist. */
	RAW_EVENT("unknown type", 0x7 | (REC__TYPE_U64 << 4), 1, 1);
	REC_INFO("valid", REC_U64(n, 2));
	/* A bool is 0 or 1. */
	RAW_EVENT("bool of 2", REC__TYPE_BOOL | (REC__TYPE_U64 << 4), 2, 3);
	REC_INFO("valid", REC_U64(n, 4));
	rec_span_exit(&span);
}

static void mode_retire(long n)
{
	struct rec_recorder *a = new_recorder("a"), *b = new_recorder("b");
	struct rec_recording *kept;
	struct rec_span span;

	for (long i = 0; i < n; i++) {
		struct rec_recording *rec = rec_recording_new(a, 4);
		char subject[32];

		if (!rec)
			die("rec_recording_new");
		snprintf(subject, sizeof(subject), "old[%ld]", i);
		rec_recording_span(&span, rec, subject);
		rec_span_enter(&span);
		for (uint64_t j = 0; j < 3; j++)
			REC_INFO("old event", REC_U64(n, j));
		rec_span_exit(&span);
		rec_recording_free(rec);
	}
	kept = new_recording(b, 10, "kept");
	rec_recording_span(&span, kept, "kept");
	rec_span_enter(&span);
	REC_INFO("kept event", REC_U64(n, 0));
	REC_INFO("kept event", REC_U64(n, 1));
	rec_span_exit(&span);
}

/* 64 event sites, each with its own message and its own literal. */
#define CS(i) REC_INFO("callsite " #i, REC_STR(lit, "literal " #i))
#define CS8(t)                                                                                     \
	CS(t##0);                                                                                  \
	CS(t##1);                                                                                  \
	CS(t##2);                                                                                  \
	CS(t##3);                                                                                  \
	CS(t##4);                                                                                  \
	CS(t##5);                                                                                  \
	CS(t##6);                                                                                  \
	CS(t##7)

static void mode_callsites(void)
{
	struct rec_recording *rec = new_recording(new_recorder("callsites"), 100, "callsites");
	struct rec_span span;

	rec_recording_span(&span, rec, "callsites");
	rec_span_enter(&span);
	CS8(1);
	CS8(2);
	CS8(3);
	CS8(4);
	CS8(5);
	CS8(6);
	CS8(7);
	CS8(8);
	rec_span_exit(&span);
}

static pid_t doomed_tid;

static void *doomed_thread(void *p)
{
	struct rec_recording *rec = p;
	struct rec_span span, doomed;

	doomed_tid = gettid();
	rec_recording_span(&span, rec, "dead");
	rec_span_enter(&span);
	REC_SPAN_INIT(&doomed, INFO, "doomed");
	rec_span_enter(&doomed);
	/* Ends inside both: its stack is what it died in. */
	return NULL;
}

static void mode_dead(long n)
{
	struct rec_recording *rec = new_recording(new_recorder("dead"), 10, "dead");

	for (long i = 0; i < n; i++) {
		pthread_t th;
		int err = pthread_create(&th, NULL, doomed_thread, rec);

		if (err) {
			errno = err;
			die("pthread_create");
		}
		pthread_join(th, NULL);
		/* Few of them: say which, so a test can tell the last ones. */
		if (n <= 100)
			printf("thread %d\n", (int)doomed_tid);
	}
}

static const struct {
	const char *name;
	int takes_n;
} modes[] = {
	{ "normal", 0 }, { "many", 1 },	     { "invalid", 0 },
	{ "retire", 1 }, { "callsites", 0 }, { "dead", 1 },
};

static void usage(void)
{
	fprintf(stderr, "usage: limits [-w] normal|many N|invalid|retire N|callsites|dead N\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool wait_go = false;
	const char *mode;
	sigset_t stop, go;
	long n = 0;
	int sig;

	if (argc > 1 && !strcmp(argv[1], "-w")) {
		wait_go = true;
		argc--;
		argv++;
	}
	if (argc < 2 || argc > 3)
		usage();
	mode = argv[1];
	for (size_t i = 0;; i++) {
		if (i == sizeof(modes) / sizeof(modes[0]))
			usage();
		if (!strcmp(mode, modes[i].name)) {
			if (modes[i].takes_n != (argc == 3))
				usage();
			break;
		}
	}
	if (argc == 3) {
		char *end;

		errno = 0;
		n = strtol(argv[2], &end, 10);
		if (errno || *end || n < 1)
			usage();
	}
	/* Blocked before any thread exists, so every thread inherits the mask. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigemptyset(&go);
	sigaddset(&go, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	pthread_sigmask(SIG_BLOCK, &go, NULL);

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	wait_for_attach();
	while (wait_go && sigwait(&go, &sig) != 0)
		;

	if (!strcmp(mode, "normal"))
		mode_normal();
	else if (!strcmp(mode, "many"))
		mode_many(n);
	else if (!strcmp(mode, "invalid"))
		mode_invalid();
	else if (!strcmp(mode, "retire"))
		mode_retire(n);
	else if (!strcmp(mode, "callsites"))
		mode_callsites();
	else
		mode_dead(n);
	printf("ready\n");
	fflush(stdout);
	while (sigwait(&stop, &sig) != 0)
		;
	return 0;
}
