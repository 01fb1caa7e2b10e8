/* SPDX-License-Identifier: MIT */
/*
 * forker.c: a traced process whose children run probe sites. The end-to-end
 * tests of fork safety (tests/e2e/test_fork.sh) drive it:
 *
 *	forker CHILDREN
 *	  -> "pid N"
 *	  waits until a recorder is attached (exit 3 after 20 s)
 *	  runs every kind of probe site once, inside recording "parent"
 *	  forks CHILDREN children, one after the other; each runs, inside the
 *	  parent's span it inherited and then inside a recording of its own:
 *	    the event site the parent hit, an event site nobody hit before, the
 *	    shared library's sites, a span enter and exit, rec_is_attached(), and
 *	    a recording's new, span and free; then it exits 0
 *	  -> "child PID exited with status S" or "child PID killed by SIGNAME"
 *	  -> "ready"
 *	  waits for SIGTERM or SIGINT, then exits 0
 *
 * On kernel 6.18 a site the parent has hit is a call into the parent's
 * [uprobes-trampoline] page, which the child does not have (docs/uprobe-fork.md),
 * unless the site is one the kernel never optimizes.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <recorder.h>

#include "lib/shlib.h"

#define ATTACH_TIMEOUT_MS 20000

/* One site, run by the parent before the fork and by every child after it. */
__attribute__((noinline)) static void shared_event(const char *who, int n)
{
	REC_INFO("shared site", REC_STR(who, who), REC_I64(n, n));
}

__attribute__((noinline)) static void span_pair(void)
{
	REC_SPAN_SCOPED(inner, DEBUG, "inner");
	REC_DEBUG("inside inner");
}

/* Every site a process can run with a recording of its own: new, span, events, free. */
static void own_recording(struct rec_recorder *r, const char *subject, int child)
{
	struct rec_recording *rec = rec_recording_new(r, 50);
	struct rec_span span;

	if (!rec) {
		perror("forker: rec_recording_new");
		_exit(1);
	}
	rec_recording_span(&span, rec, subject);
	rec_span_enter(&span);
	shared_event(subject, 1);
	if (child)
		REC_WARN("only children run this site", REC_I64(pid, getpid()));
	shlib_emit(1);
	span_pair();
	(void)rec_is_attached();
	rec_span_exit(&span);
	rec_recording_free(rec);
}

static void run_child(struct rec_recorder *r)
{
	/* Still inside the parent's recording span, inherited with the memory. */
	shared_event("child in the parent's span", 0);
	own_recording(r, "child", 1);
	fflush(stdout);
	_exit(0);
}

/* Until the executable's probes and the shared library's are attached. */
static void wait_for_attach(void)
{
	const struct timespec tick = { .tv_nsec = 1000000 };

	for (int ms = 0; !rec_is_attached() || !shlib_is_attached(); ms++) {
		if (ms >= ATTACH_TIMEOUT_MS) {
			fprintf(stderr, "forker: no recorder attached after %d s\n",
				ATTACH_TIMEOUT_MS / 1000);
			exit(3);
		}
		nanosleep(&tick, NULL);
	}
}

int main(int argc, char **argv)
{
	struct rec_recorder *r;
	struct rec_recording *rec;
	struct rec_span span;
	sigset_t stop;
	int children, sig;

	if (argc != 2 || (children = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: forker CHILDREN\n");
		return 2;
	}
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	wait_for_attach();

	r = rec_recorder_new();
	rec = r ? rec_recording_new(r, 50) : NULL;
	if (!rec) {
		perror("forker: rec_recording_new");
		return 1;
	}
	rec_recording_span(&span, rec, "parent");
	rec_span_enter(&span);
	/* Every site the children will run, hit here first (twice: optimized after one). */
	for (int i = 0; i < 2; i++) {
		shared_event("parent", i);
		shlib_emit(1);
		span_pair();
		own_recording(r, "parent's own", 0);
	}

	for (int i = 0; i < children; i++) {
		int status;
		pid_t pid;

		/* Nothing buffered for the child to print again. */
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("forker: fork");
			return 1;
		}
		if (pid == 0)
			run_child(r);
		if (waitpid(pid, &status, 0) != pid) {
			perror("forker: waitpid");
			return 1;
		}
		if (WIFSIGNALED(status))
			printf("child %d killed by SIG%s\n", (int)pid,
			       sigabbrev_np(WTERMSIG(status)));
		else
			printf("child %d exited with status %d\n", (int)pid, WEXITSTATUS(status));
	}
	shared_event("parent after the children", children);
	printf("ready\n");
	fflush(stdout);

	while (sigwait(&stop, &sig) != 0)
		;
	rec_span_exit(&span);
	rec_recording_free(rec);
	rec_recorder_free(r);
	return 0;
}
