/* SPDX-License-Identifier: MIT */
/*
 * handover.c: a server that emits only when told to, so that the end-to-end
 * tests of a process handed between recorder-attach -p and --binary
 * (tests/e2e/test_handover.sh) can start and stop them in any order between
 * its rounds of events:
 *
 *	handover [--daemon | --spawn PROG] THREADS EVENTS REPORT
 *	  with --daemon: the parent forks and exits 0 without a probe (as
 *	  "memcached -d" does), after "parent PID"; the child goes on
 *	  -> "pid N"
 *	  with --spawn: forks a child that execs "PROG 60" at once
 *	  -> "spawned PID"
 *	  on each SIGUSR1: each of THREADS threads emits EVENTS events into a
 *	  recording of its own, inside its span (made and entered at the first
 *	  round, and never left: a round's first event is its first record); then
 *	  REPORT is written (each recording's key and events emitted so far, as
 *	  tools/workload.c writes them) -> "round K done"
 *	  on SIGTERM or SIGINT: exits 0
 *
 * Nothing runs a probe site before the first round: the process is known to
 * a --binary recorder-attach only from its exec, its fork or its discovery.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <recorder.h>

#define MAX_THREADS 16
#define CAP 5000

static struct rec_recorder *recorder;
static pthread_barrier_t start_round, end_round;
static unsigned long nthreads, nevents;
static int quit;

struct worker {
	pthread_t thread;
	unsigned long id;
	struct rec_recording *rec;
	struct rec_span span;
	char subject[32];
	uint64_t emitted;
};

static struct worker workers[MAX_THREADS];

static void *work(void *arg)
{
	struct worker *w = arg;

	for (;;) {
		pthread_barrier_wait(&start_round);
		if (quit)
			return NULL;
		if (!w->rec) {
			snprintf(w->subject, sizeof(w->subject), "worker[%lu]", w->id);
			w->rec = rec_recording_new(recorder, CAP);
			if (!w->rec) {
				perror("handover: rec_recording_new");
				exit(1);
			}
			rec_recording_span(&w->span, w->rec, w->subject);
			rec_span_enter(&w->span);
		}
		for (unsigned long i = 0; i < nevents; i++, w->emitted++)
			REC_INFO("handover event", REC_U64(n, w->emitted));
		pthread_barrier_wait(&end_round);
	}
}

/* The report, as tools/workload.c's: written aside, then renamed into place. */
static void report(const char *path)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		perror("handover: report");
		exit(1);
	}
	fprintf(f, "{\"pid\": %d, \"recordings\": [", (int)getpid());
	for (unsigned long i = 0; i < nthreads; i++)
		fprintf(f, "%s{\"key\": \"0x%" PRIx64 "\", \"emitted\": %" PRIu64 "}",
			i ? ", " : "", rec_recording_key(workers[i].rec), workers[i].emitted);
	fprintf(f, "]}\n");
	if (fclose(f) || rename(tmp, path)) {
		perror("handover: report");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int daemon = argc > 1 && !strcmp(argv[1], "--daemon");
	const char *spawn = argc > 2 && !strcmp(argv[1], "--spawn") ? argv[2] : NULL;
	/* The arguments before THREADS. */
	int nopts = daemon ? 1 : spawn ? 2 : 0;
	sigset_t set;
	int sig, round = 0;

	if (argc != 4 + nopts) {
		fprintf(stderr,
			"usage: handover [--daemon | --spawn PROG] THREADS EVENTS REPORT\n");
		return 2;
	}
	nthreads = strtoul(argv[1 + nopts], NULL, 10);
	nevents = strtoul(argv[2 + nopts], NULL, 10);
	if (nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "handover: THREADS must be 1..%d\n", MAX_THREADS);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (daemon) {
		pid_t child = fork();

		if (child < 0) {
			perror("handover: fork");
			return 1;
		}
		if (child > 0) {
			printf("parent %d\n", (int)getpid());
			return 0;
		}
		setsid();
	}
	if (spawn) {
		pid_t child = fork();

		if (child == 0) {
			execl(spawn, spawn, "60", (char *)NULL);
			_exit(127);
		}
		printf("spawned %d\n", (int)child);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_barrier_init(&start_round, NULL, nthreads + 1);
	pthread_barrier_init(&end_round, NULL, nthreads + 1);
	for (unsigned long i = 0; i < nthreads; i++) {
		workers[i].id = i;
		pthread_create(&workers[i].thread, NULL, work, &workers[i]);
	}
	printf("pid %d\n", (int)getpid());
	while (!sigwait(&set, &sig) && sig == SIGUSR1) {
		if (!recorder)
			recorder = rec_recorder_new();
		pthread_barrier_wait(&start_round);
		pthread_barrier_wait(&end_round);
		report(argv[3 + nopts]);
		printf("round %d done\n", ++round);
	}
	quit = 1;
	pthread_barrier_wait(&start_round);
	for (unsigned long i = 0; i < nthreads; i++)
		pthread_join(workers[i].thread, NULL);
	return 0;
}
