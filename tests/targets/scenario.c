/* SPDX-License-Identifier: MIT */
/*
 * scenario.c: the instrumented target of the end-to-end tests. Each scenario
 * twins a test of the reference recorder (shared/seed/recorder.rs) or checks
 * something the seed did not need. The tests drive it from the shell:
 *
 *	scenario NAME
 *	  -> "pid N"
 *	  waits until recorder-attach arms the probes (attach_mid_span: later)
 *	  runs the scenario
 *	  -> "recording SUBJECT 0xKEY" per recording ("recorder ..." for recorders)
 *	  -> "ready"
 *	  waits for SIGTERM or SIGINT, then leaves its spans, frees everything, exits 0
 *
 * Exit status: 0 done, 2 usage, 3 nothing attached within 20 s, 1 other errors.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include <recorder.h>

#include "lib/shlib.h"

#define ATTACH_TIMEOUT_MS 20000
#define MAX_RECORDINGS 8
#define MAX_OPEN_SPANS 4
#define NTHREADS 8
#define THREAD_EVENTS 50

struct named_key {
	const char *name;
	uint64_t key;
};

/*
 * What a scenario leaves behind for the common epilogue: the lines to print,
 * the spans still entered on the main thread (outermost first) and what to free.
 */
struct scenario {
	struct named_key recorder_lines[2];
	int nrecorder_lines;
	struct named_key recording_lines[MAX_RECORDINGS];
	int nrecording_lines;
	struct rec_span *open[MAX_OPEN_SPANS];
	int nopen;
	struct rec_recording *recordings[MAX_RECORDINGS];
	int nrecordings;
	struct rec_recorder *recorders[2];
	int nrecorders;
};

/* Spans that stay entered until SIGTERM must outlive the scenario function. */
static struct rec_span held_spans[MAX_OPEN_SPANS];

static void die_oom(void)
{
	perror("scenario: out of memory");
	exit(1);
}

static struct rec_recorder *new_recorder(struct scenario *sc)
{
	struct rec_recorder *r = rec_recorder_new();

	if (!r)
		die_oom();
	sc->recorders[sc->nrecorders++] = r;
	return r;
}

/* A recording that the epilogue frees and announces as "recording NAME 0xKEY". */
static struct rec_recording *new_recording(struct scenario *sc, struct rec_recorder *r, size_t cap,
					   const char *name)
{
	struct rec_recording *rec = rec_recording_new(r, cap);

	if (!rec)
		die_oom();
	sc->recordings[sc->nrecordings++] = rec;
	sc->recording_lines[sc->nrecording_lines++] = (struct named_key){
		.name = name,
		.key = rec_recording_key(rec),
	};
	return rec;
}

/* Frees a recording now; its line is still printed (the key was taken at creation). */
static void free_recording_early(struct scenario *sc, struct rec_recording *rec)
{
	for (int i = 0; i < sc->nrecordings; i++) {
		if (sc->recordings[i] == rec)
			sc->recordings[i] = NULL;
	}
	rec_recording_free(rec);
}

/* Enters s and leaves it entered until the epilogue. */
static void hold_span(struct scenario *sc, struct rec_span *s)
{
	rec_span_enter(s);
	sc->open[sc->nopen++] = s;
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
			fprintf(stderr, "scenario: no recorder attached after %d s\n",
				ATTACH_TIMEOUT_MS / 1000);
			exit(3);
		}
		nanosleep(&tick, NULL);
	}
}

static void sc_events_are_recorded(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "test");
	struct rec_span span;

	rec_recording_span(&span, rec, "test");
	rec_span_enter(&span);
	REC_INFO("This event should be recorded");
	REC_INFO("another event");
	rec_span_exit(&span);
}

static void sc_last_n_entries(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 5, "test");
	struct rec_span span;

	rec_recording_span(&span, rec, "test");
	rec_span_enter(&span);
	for (int i = 0; i < 10; i++)
		REC_INFOF("event %d", i);
	rec_span_exit(&span);
}

static void sc_events_outside_span_are_not_recorded(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "test");
	struct rec_span span;

	/* Initialised but never entered: the event below belongs to no recording. */
	rec_recording_span(&span, rec, "test");
	REC_INFO("This event should NOT be recorded");
}

static void sc_child_span_inherits_recorder(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "test");
	struct rec_span outer;

	rec_recording_span(&outer, rec, "test");
	rec_span_enter(&outer);
	{
		REC_SPAN_SCOPED(inner, INFO, "child_span");
		REC_INFO("Event from inner span");
	}
	rec_span_exit(&outer);
}

static void sc_recording_spans_are_isolated(struct scenario *sc)
{
	struct rec_recorder *r = new_recorder(sc);
	struct rec_recording *rec_a = new_recording(sc, r, 10, "test_a");
	struct rec_recording *rec_b = new_recording(sc, r, 10, "test_b");
	struct rec_span span_a, span_b;

	rec_recording_span(&span_a, rec_a, "test_a");
	rec_span_enter(&span_a);
	REC_INFO("event_from_a");
	{
		rec_recording_span(&span_b, rec_b, "test_b");
		rec_span_enter(&span_b);
		REC_INFO("event_from_b");
		rec_span_exit(&span_b);
	}
	rec_span_exit(&span_a);
}

static void sc_active_spans(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "test");
	struct rec_span *outer = &held_spans[0], *child = &held_spans[1];

	rec_recording_span(outer, rec, "test");
	hold_span(sc, outer);
	REC_SPAN_INIT(child, INFO, "child_span");
	hold_span(sc, child);
	REC_INFO("inside child");
	/* Both spans stay entered while the test asks for the stacks. */
}

static void sc_attach_mid_span(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "mid");
	struct rec_span *outer = &held_spans[0], *child = &held_spans[1];

	rec_recording_span(outer, rec, "mid");
	hold_span(sc, outer);
	REC_SPAN_INIT(child, INFO, "before_attach");
	hold_span(sc, child);
	REC_INFO("before attach, not recorded");
	/* The test attaches only now: the recorder must learn both spans mid-flight. */
	printf("inside\n");
	fflush(stdout);
	wait_for_attach();
	REC_INFO("after attach", REC_U64(n, 1));
	REC_INFO("after attach", REC_U64(n, 2));
}

/*
 * Running, not asleep, inside two spans when the recorder attaches: it spins
 * until the attach and SPIN_AFTER_ATTACH_MS after it, then sleeps in them
 * without another probe. Its stack can only come from the seeding at the
 * attach, which passes over a running thread: it has to try again.
 */
#define SPIN_AFTER_ATTACH_MS 100
static void sc_running_at_attach(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "busy");
	struct rec_span *outer = &held_spans[0], *child = &held_spans[1];
	uint64_t until;

	rec_recording_span(outer, rec, "busy");
	hold_span(sc, outer);
	REC_SPAN_INIT(child, INFO, "spinning");
	hold_span(sc, child);
	printf("inside\n");
	fflush(stdout);
	while (!rec_is_attached())
		;
	until = now_ms() + SPIN_AFTER_ATTACH_MS;
	while (now_ms() < until)
		;
}

struct thread_arg {
	int index;
	struct rec_recorder *recorder;
	pthread_barrier_t *barrier;
	struct rec_recording *recording;
	char subject[32];
};

static void *thread_main(void *p)
{
	struct thread_arg *arg = p;
	struct rec_span span;

	arg->recording = rec_recording_new(arg->recorder, 100);
	if (!arg->recording)
		die_oom();
	rec_recording_span(&span, arg->recording, arg->subject);
	rec_span_enter(&span);
	/* Every thread is inside its span before any emits, so the events interleave. */
	pthread_barrier_wait(arg->barrier);
	for (uint64_t j = 0; j < THREAD_EVENTS; j++)
		REC_INFO("thread event", REC_U64(thread, arg->index), REC_U64(n, j));
	rec_span_exit(&span);
	return NULL;
}

static void sc_threads(struct scenario *sc)
{
	static struct thread_arg args[NTHREADS];
	struct rec_recorder *r = new_recorder(sc);
	pthread_t threads[NTHREADS];
	pthread_barrier_t barrier;
	int err;

	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++) {
		args[i].index = i;
		args[i].recorder = r;
		args[i].barrier = &barrier;
		snprintf(args[i].subject, sizeof(args[i].subject), "thread[%d]", i);
		err = pthread_create(&threads[i], NULL, thread_main, &args[i]);
		if (err) {
			fprintf(stderr, "scenario: pthread_create: %s\n", strerror(err));
			exit(1);
		}
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&barrier);
	for (int i = 0; i < NTHREADS; i++) {
		sc->recordings[sc->nrecordings++] = args[i].recording;
		sc->recording_lines[sc->nrecording_lines++] = (struct named_key){
			.name = args[i].subject,
			.key = rec_recording_key(args[i].recording),
		};
	}
}

static void sc_shared_library(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "shlib");
	struct rec_span span;

	rec_recording_span(&span, rec, "shlib");
	rec_span_enter(&span);
	shlib_emit(3);
	REC_INFO("back in main");
	rec_span_exit(&span);
}

static void sc_retired(struct scenario *sc)
{
	struct rec_recorder *r = new_recorder(sc);
	struct rec_recording *old = new_recording(sc, r, 10, "old");
	struct rec_recording *fresh;
	struct rec_span s1, s2;

	rec_recording_span(&s1, old, "old");
	rec_span_enter(&s1);
	REC_INFO("kept");
	/* The span outlives its recording: from here on its events must be ignored. */
	free_recording_early(sc, old);
	REC_INFO("after free, ignored");
	{
		REC_SPAN_SCOPED(orphan, INFO, "orphan");
		REC_INFO("orphan, ignored");
	}
	rec_span_exit(&s1);

	fresh = new_recording(sc, r, 10, "new");
	rec_recording_span(&s2, fresh, "new");
	rec_span_enter(&s2);
	REC_INFO("fresh");
	rec_span_exit(&s2);
}

/* sc_retired_elsewhere: the worker's half, in lockstep with the main thread's. */
struct elsewhere {
	struct rec_span *span;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int step; /* 1: the worker logged before the free; 2: the main thread freed it */
};

static void elsewhere_step(struct elsewhere *e, int step, int wait_for)
{
	pthread_mutex_lock(&e->lock);
	if (step) {
		e->step = step;
		pthread_cond_broadcast(&e->cond);
	}
	while (wait_for && e->step < wait_for)
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

static void *elsewhere_worker(void *arg)
{
	struct elsewhere *e = arg;

	rec_span_enter(e->span);
	for (int i = 0; i < 3; i++)
		REC_INFO("before the free", REC_I64(n, i));
	/* rec_trigger() hands this thread's pending events over first: they are taken now. */
	rec_trigger(NULL, NULL);
	elsewhere_step(e, 1, 2);
	for (int i = 0; i < 3; i++)
		REC_INFO("after the free, ignored", REC_I64(n, i));
	/* Handed over now, while the free is still pending in the main thread's batch. */
	rec_trigger(NULL, NULL);
	rec_span_exit(e->span);
	return NULL;
}

/*
 * Rule 8 across threads: a recording made on this thread, its span entered on
 * a worker, freed here while the worker is still inside it. The worker's
 * events before the free are kept; those after it are ignored, even when the
 * worker hands them over before this thread's batch (which holds the free)
 * reaches recorder-attach.
 */
static void sc_retired_elsewhere(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "shared");
	struct elsewhere e = { .lock = PTHREAD_MUTEX_INITIALIZER,
			       .cond = PTHREAD_COND_INITIALIZER };
	struct rec_span span;
	pthread_t th;

	rec_recording_span(&span, rec, "shared");
	e.span = &span;
	/* Its new and its subject go over now: the worker's first events find it. */
	rec_trigger(NULL, NULL);
	if (pthread_create(&th, NULL, elsewhere_worker, &e))
		die_oom();
	elsewhere_step(&e, 0, 1);
	free_recording_early(sc, rec);
	elsewhere_step(&e, 2, 0);
	if (pthread_join(th, NULL))
		die_oom();
}

/* 300 bytes: longer than the 255 a string field keeps. */
#define LONG_LITERAL_10 "0123456789"
#define LONG_LITERAL_100                                                                           \
	LONG_LITERAL_10 LONG_LITERAL_10 LONG_LITERAL_10 LONG_LITERAL_10 LONG_LITERAL_10            \
		LONG_LITERAL_10 LONG_LITERAL_10 LONG_LITERAL_10 LONG_LITERAL_10 LONG_LITERAL_10
#define LONG_LITERAL LONG_LITERAL_100 LONG_LITERAL_100 LONG_LITERAL_100

static void sc_all_fields(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "fields");
	struct rec_span *span = &held_spans[0];
	char buf[32];

	/* Held until the end, so that the stacks have something to show too. */
	rec_recording_span(span, rec, "fields");
	hold_span(sc, span);
	REC_INFO("all types", REC_STR(s, "text"), REC_I64(i, -42), REC_U64(u, 42), REC_F64(f, 1.5),
		 REC_BOOL(b, 1), REC_ERR(err, "bad thing"), REC_STR(quote, "a \"quoted\"\nline"),
		 REC_U64(last, 8));
	/*
	 * A buffer is copied when the event fires (its later contents must not
	 * show); a literal is passed by address and read by the tracer; so is a
	 * null pointer constant. A long literal is cut like a long buffer.
	 */
	snprintf(buf, sizeof(buf), "copied %d", 1);
	REC_INFO("strings", REC_STR(buf, buf), REC_STR(lit, "literal"), REC_STR(null, NULL),
		 REC_STR(long_lit, LONG_LITERAL));
	strcpy(buf, "overwritten");
	REC_WARN("warned");
	REC_ERROR("failed", REC_I64(code, 7));
	REC_DEBUG("debugging");
	REC_TRACE("tracing");
}

/* One site whose level is a value: by status, as a server would log a request. */
static void sc_runtime_level(struct scenario *sc)
{
	static const int statuses[] = { 200, 404, 503, 100, 9999 };
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "levels");
	struct rec_span *span = &held_spans[0];

	rec_recording_span(span, rec, "levels");
	hold_span(sc, span);
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		int s = statuses[i];
		/* 9999: a level out of range, which the recorder counts as invalid. */
		int level = s == 9999  ? 9
			    : s >= 500 ? REC_LEVEL(ERROR)
			    : s >= 400 ? REC_LEVEL(WARN)
			    : s >= 200 ? REC_LEVEL(INFO)
				       : REC_LEVEL(DEBUG);

		REC_EVENT_LEVEL(level, "request done", REC_I64(status, s));
	}
}

static void sc_recorders(struct scenario *sc)
{
	struct rec_recorder *r1 = new_recorder(sc), *r2 = new_recorder(sc);
	struct rec_recording *rec1 = new_recording(sc, r1, 10, "r1");
	struct rec_recording *rec2 = new_recording(sc, r2, 10, "r2");
	struct rec_span s1, s2;

	sc->recorder_lines[sc->nrecorder_lines++] =
		(struct named_key){ .name = "r1", .key = rec_recorder_key(r1) };
	sc->recorder_lines[sc->nrecorder_lines++] =
		(struct named_key){ .name = "r2", .key = rec_recorder_key(r2) };

	rec_recording_span(&s1, rec1, "r1");
	rec_span_enter(&s1);
	REC_INFO("from r1");
	rec_span_exit(&s1);

	rec_recording_span(&s2, rec2, "r2");
	rec_span_enter(&s2);
	REC_INFO("from r2");
	rec_span_exit(&s2);
}

static void *exit_elsewhere(void *span)
{
	rec_span_exit(span);
	return NULL;
}

/*
 * Every unbalanced case of docs/probe-abi.md, inside one recording span that
 * stays entered: an exit on another thread, a close while entered, an exit
 * without an enter, an out-of-order exit, and nesting past the 32-frame limit.
 * Afterwards the thread is exactly inside the recording span again.
 */
static void sc_unbalanced(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 100, "unbalanced");
	static struct rec_span deep[40];
	struct rec_span cross, closed, never, x, y;
	pthread_t th;

	rec_recording_span(&held_spans[0], rec, "unbalanced");
	hold_span(sc, &held_spans[0]);

	REC_SPAN_INIT(&cross, INFO, "cross_thread");
	rec_span_enter(&cross);
	if (pthread_create(&th, NULL, exit_elsewhere, &cross) || pthread_join(th, NULL))
		die_oom();
	REC_INFO("still inside cross_thread");
	rec_span_exit(&cross);

	REC_SPAN_INIT(&closed, INFO, "closed_while_entered");
	rec_span_enter(&closed);
	rec_span_close(&closed);

	REC_SPAN_INIT(&never, INFO, "never_entered");
	rec_span_exit(&never);

	REC_SPAN_INIT(&x, INFO, "outer_x");
	rec_span_enter(&x);
	REC_SPAN_INIT(&y, INFO, "inner_y");
	rec_span_enter(&y);
	rec_span_exit(&x);
	REC_INFO("inside inner_y only");
	rec_span_exit(&y);

	for (int i = 0; i < 40; i++) {
		REC_SPAN_INIT(&deep[i], DEBUG, "deep");
		rec_span_enter(&deep[i]);
	}
	REC_INFO("forty deep");
	for (int i = 39; i >= 0; i--)
		rec_span_exit(&deep[i]);
	REC_INFO("balanced again");
}

static void *churn_thread(void *arg)
{
	struct rec_recording *rec = rec_recording_new(arg, 2);
	struct rec_span span;

	if (!rec)
		return NULL;
	rec_recording_span(&span, rec, "churn");
	rec_span_enter(&span);
	REC_INFO("churn");
	/* Half the threads die inside their span: their stacks must go with them. */
	if ((uintptr_t)&span & 16)
		rec_span_exit(&span);
	rec_recording_free(rec);
	return NULL;
}

/* 10,000 short-lived threads, each with its own recording, in batches of 50. */
static void sc_thread_churn(struct scenario *sc)
{
	struct rec_recorder *r = new_recorder(sc);
	pthread_t th[50];

	for (int b = 0; b < 200; b++) {
		for (int i = 0; i < 50; i++)
			if (pthread_create(&th[i], NULL, churn_thread, r))
				die_oom();
		for (int i = 0; i < 50; i++)
			pthread_join(th[i], NULL);
	}
}

/* Loads a library with probes only now, after the attach, and uses it. */
static void sc_dlopen(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "late");
	char exe[PATH_MAX], path[PATH_MAX + 32];
	int (*wait_attached)(int);
	void (*emit)(int);
	struct rec_span span;
	ssize_t n;
	void *h;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		die_oom();
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(path, sizeof(path), "%s/librecdlopen.so", exe);
	rec_recording_span(&span, rec, "late");
	rec_span_enter(&span);
	REC_INFO("before dlopen");
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "scenario: dlopen %s: %s\n", path, dlerror());
		exit(1);
	}
	*(void **)&wait_attached = dlsym(h, "late_wait_attached");
	*(void **)&emit = dlsym(h, "late_emit");
	if (!wait_attached || !emit || !wait_attached(10000)) {
		fprintf(stderr, "scenario: the late library's probes were not attached in 10 s\n");
		exit(3);
	}
	emit(2);
	REC_INFO("after dlopen");
	rec_span_exit(&span);
}

/* The sleeper's thread: inside two spans, it blocks before the attach and never wakes. */
static int sleeper_pipe[2];
static pthread_barrier_t sleeper_inside;

static void *sleeper_main(void *p)
{
	struct rec_recording *rec = p;
	struct rec_span span, blocked;
	char c;

	rec_recording_span(&span, rec, "sleeper");
	rec_span_enter(&span);
	REC_SPAN_INIT(&blocked, INFO, "blocked");
	rec_span_enter(&blocked);
	pthread_barrier_wait(&sleeper_inside);
	/* Nobody writes: it sleeps here, in its spans, until the process dies. */
	while (read(sleeper_pipe[0], &c, 1) != 0)
		;
	return NULL;
}

/*
 * A thread asleep inside spans from before the attach to the end: its stack
 * must be known without it hitting a probe (recorder-attach seeds it).
 */
static void sc_sleeper(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "sleeper");
	pthread_t th;

	if (pipe(sleeper_pipe) || pthread_barrier_init(&sleeper_inside, NULL, 2) ||
	    pthread_create(&th, NULL, sleeper_main, rec)) {
		perror("scenario: sleeper");
		exit(1);
	}
	pthread_barrier_wait(&sleeper_inside);
	printf("inside\n");
	fflush(stdout);
	wait_for_attach();
}

/*
 * An event with a literal field, then SIGKILL at once: the literal's bytes are
 * read by the tracer after the process is gone, from the file (the event only
 * carries the address).
 */
static void sc_literal_then_kill(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "last");
	struct rec_span span;

	rec_recording_span(&span, rec, "last");
	rec_span_enter(&span);
	REC_INFO("last words", REC_STR(why, "a literal read after death"));
	kill(getpid(), SIGKILL);
}

/* Records one event, then exits with status 3: the black box must say so. */
static void sc_exit_3(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "exit3");
	struct rec_span span;

	rec_recording_span(&span, rec, "exit3");
	rec_span_enter(&span);
	REC_INFO("about to exit", REC_I64(status, 3));
	rec_span_exit(&span);
	exit(3);
}

/*
 * Copied strings at the edges: exactly 255 bytes (kept whole, no mark), 256
 * (the first 255, marked truncated), three in one event (each in its own
 * place), and one the tracer cannot read: its first bytes are readable (the
 * header touches the first one) but it runs into a page with no access.
 */
static void sc_copied_strings(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "strings");
	long page = sysconf(_SC_PAGESIZE);
	char exact[256], over[257], a[8], b[8], c[8];
	struct rec_span span;
	char *area, *bad;

	memset(exact, 'e', 255);
	exact[255] = '\0';
	memset(over, 'o', 256);
	over[256] = '\0';
	strcpy(a, "alpha");
	strcpy(b, "beta");
	strcpy(c, "gamma");
	area = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || mprotect(area + page, page, PROT_NONE))
		die_oom();
	bad = area + page - 4;
	memcpy(bad, "abcd", 4);

	rec_recording_span(&span, rec, "strings");
	rec_span_enter(&span);
	REC_INFO("edges", REC_STR(exact, exact), REC_STR(over, over));
	REC_INFO("three", REC_STR(a, a), REC_STR(b, b), REC_STR(c, c));
	REC_INFO("unreadable", REC_STR(bad, bad), REC_STR(after, a));
	rec_span_exit(&span);
}

/* A label in one static buffer, reused by every call (as inet_ntoa's). */
static const char *reused_label(int i)
{
	static char label[16];

	snprintf(label, sizeof(label), "conn-%d", i);
	return label;
}

/*
 * REC_STRN: keys that are not NUL-terminated, one at the very end of a page
 * followed by an unmapped one, one followed by other bytes; a NUL among the
 * len bytes; 255 and 256 bytes; NULL, a negative and a zero length; beside a
 * REC_STR that cannot be read. Then fields of one reused buffer.
 */
static void sc_strn(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "strn");
	long page = sysconf(_SC_PAGESIZE);
	static const char request[] = "GET user:7 value\r\n";
	static const char with_nul[] = { 'a', 'b', '\0', 'c', 'd' };
	struct rec_span span;
	char *area, *end;
	ssize_t failed = -1;

	area = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || mprotect(area + page, page, PROT_NONE))
		die_oom();
	end = area + page;
	/* The page ends with 300 bytes of 'e', the last 7 of them "user:42". */
	memset(end - 300, 'e', 300);
	memcpy(end - 7, "user:42", 7);

	rec_recording_span(&span, rec, "strn");
	rec_span_enter(&span);
	REC_INFO("unmapped", REC_STRN(key, end - 7, 7));
	REC_INFO("followed", REC_STRN(verb, request, 3), REC_STRN(key, request + 4, 6),
		 REC_U64(len, 6));
	REC_INFO("nul", REC_STRN(key, with_nul, sizeof(with_nul)));
	REC_INFO("edges", REC_STRN(exact, end - 300, 255), REC_STRN(over, end - 300, 256));
	REC_INFO("nothing", REC_STRN(null, (const char *)NULL, 4),
		 REC_STRN(negative, request, failed), REC_STRN(empty, request, 0));
	/*
	 * The same key read as a REC_STR runs into the unmapped page: on the batch
	 * path that event falls back to its own probe, REC_STRN and all.
	 */
	REC_INFO("mixed", REC_STR(unterminated, end - 7), REC_STRN(key, end - 7, 7));
	/* Four fields, one buffer: each holds what the buffer holds when the event fires. */
	REC_INFO("reused", REC_STR(a, reused_label(1)), REC_STR(b, reused_label(2)),
		 REC_STRN(c, reused_label(3), 6), REC_STRN(d, reused_label(4), 6));
	/* Overwritten after the event: the event keeps what was read then. */
	reused_label(5);
	rec_span_exit(&span);
}

/* Subjects of 63 bytes (kept whole) and of 70 (cut to their first 63). */
static void sc_long_subjects(struct scenario *sc)
{
	static const char s63[] = "subject-of-63-bytes-....................................ends-63";
	static const char s70[] = "subject-of-70-bytes-....................................63-here"
				  "|cut-it";
	struct rec_recorder *r = new_recorder(sc);
	struct rec_recording *rec63 = new_recording(sc, r, 10, "s63");
	struct rec_recording *rec70 = new_recording(sc, r, 10, "s70");
	struct rec_span span63, span70;

	_Static_assert(sizeof(s63) == 64 && sizeof(s70) == 71, "subject lengths");
	rec_recording_span(&span63, rec63, s63);
	rec_span_enter(&span63);
	REC_INFO("in 63");
	rec_span_exit(&span63);
	rec_recording_span(&span70, rec70, s70);
	rec_span_enter(&span70);
	REC_INFO("in 70");
	rec_span_exit(&span70);
}

/*
 * Before the attach: enters the recording span, then outer_x, then inner_y,
 * exits outer_x first (it must be unlinked from the thread's chain of spans)
 * and then inner_y. The thread is inside the recording span only, which is
 * what recorder-attach must read from rec__current when it attaches.
 */
static void sc_exit_outer_first(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "outer");
	static struct rec_span x, y;

	rec_recording_span(&held_spans[0], rec, "outer");
	hold_span(sc, &held_spans[0]);
	REC_SPAN_INIT(&x, INFO, "outer_x");
	rec_span_enter(&x);
	REC_SPAN_INIT(&y, INFO, "inner_y");
	rec_span_enter(&y);
	rec_span_exit(&x);
	rec_span_exit(&y);
	printf("inside\n");
	fflush(stdout);
	wait_for_attach();
	REC_INFO("after attach");
}

/*
 * Emits "tick 0", then one more tick per SIGUSR1 until SIGTERM or SIGINT, so
 * that a test can see each event arrive while the process runs; with spans,
 * each tick after the first inside a "tick" span of its own, left at once.
 */
static void ticks(struct scenario *sc, bool spans)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 100, "ticks");
	struct rec_span span;
	sigset_t set;
	int sig = 0;

	rec_recording_span(&span, rec, "ticks");
	rec_span_enter(&span);
	REC_INFO("tick", REC_U64(n, 0));
	printf("ticking\n");
	fflush(stdout);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	for (uint64_t n = 1;; n++) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig != SIGUSR1)
			break;
		if (spans) {
			REC_SPAN_SCOPED(tick, INFO, "tick");
			REC_INFO("tick", REC_U64(n, n));
		} else {
			REC_INFO("tick", REC_U64(n, n));
		}
	}
	rec_span_exit(&span);
	exit(0);
}

static void sc_ticks(struct scenario *sc)
{
	ticks(sc, false);
}

/* The same, each tick in a span: spans arrive one by one (--follow, --otlp). */
static void sc_span_ticks(struct scenario *sc)
{
	ticks(sc, true);
}

/*
 * Spans (issue 13): inside the recording span "spans", 100 "step" spans
 * entered and left one after the other, each with one event; then "held"
 * entered and left open with the recording span, until the epilogue.
 */
static void sc_spans(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "spans");
	struct rec_span *outer = &held_spans[0], *held = &held_spans[1];

	rec_recording_span(outer, rec, "spans");
	hold_span(sc, outer);
	for (uint64_t i = 0; i < 100; i++) {
		REC_SPAN_SCOPED(step, INFO, "step");
		REC_INFO("step", REC_U64(i, i));
	}
	REC_SPAN_INIT(held, INFO, "held");
	hold_span(sc, held);
	REC_INFO("inside held");
}

/*
 * A flood of spans (issue 37): 300,000 "step" spans, no event, in a recording
 * made before the attach. BPF learns nothing of it itself (recorder-attach
 * reads it from the thread's stack), and a small ring refuses many of them:
 * each must be counted lost in its recording, as ring_full counts it.
 */
static void sc_span_flood(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "flood");
	struct rec_span *outer = &held_spans[0];

	rec_recording_span(outer, rec, "flood");
	hold_span(sc, outer);
	wait_for_attach();
	for (uint64_t i = 0; i < 300000; i++) {
		REC_SPAN_SCOPED(step, INFO, "step");
	}
}

/*
 * Two threads inside spans of recordings created before the attach, running
 * (so that the attach cannot read their stacks), leave their spans as soon as
 * it is done: each thread's first probe is an exit, and nothing announced the
 * recordings to recorder-attach. What an attach mid-flight expects to see: not
 * an unmatched exit, not an orphan span (issue 24).
 */
static pthread_barrier_t early_inside;

static void *early_main(void *p)
{
	static struct rec_span root;

	rec_recording_span(&root, p, "early2");
	rec_span_enter(&root);
	pthread_barrier_wait(&early_inside);
	while (!rec_is_attached())
		;
	rec_span_exit(&root);
	return NULL;
}

static void sc_exit_at_attach(struct scenario *sc)
{
	struct rec_recorder *r = new_recorder(sc);
	struct rec_recording *rec = new_recording(sc, r, 10, "early");
	struct rec_recording *rec2 = new_recording(sc, r, 10, "early2");
	static struct rec_span root, inner;
	pthread_t th;

	rec_recording_span(&root, rec, "early");
	rec_span_enter(&root);
	REC_SPAN_INIT(&inner, INFO, "inner");
	rec_span_enter(&inner);
	if (pthread_barrier_init(&early_inside, NULL, 2) ||
	    pthread_create(&th, NULL, early_main, rec2)) {
		perror("scenario: exit_at_attach");
		exit(1);
	}
	pthread_barrier_wait(&early_inside);
	printf("inside\n");
	fflush(stdout);
	while (!rec_is_attached())
		;
	rec_span_exit(&inner);
	rec_span_exit(&root);
	pthread_join(th, NULL);
}

/* Counts the evaluations of a field expression. */
static uint64_t side_effects;

static uint64_t side_effect(void)
{
	return ++side_effects;
}

/*
 * Inside a recording span, before and after the attach, an event whose field
 * has a side effect: while nothing is attached the event site must not build
 * its arguments, so the count stays 0 until the attach.
 */
static void sc_detached_side_effects(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "detached");
	struct rec_span span;
	uint64_t detached;

	rec_recording_span(&span, rec, "detached");
	rec_span_enter(&span);
	for (int i = 0; i < 1000; i++)
		REC_INFO("counted", REC_U64(calls, side_effect()));
	detached = side_effects;
	printf("inside\n");
	fflush(stdout);
	wait_for_attach();
	for (int i = 0; i < 3; i++)
		REC_INFO("counted", REC_U64(calls, side_effect()));
	rec_span_exit(&span);
	printf("side effects while detached: %" PRIu64 ", attached: %" PRIu64 "\n", detached,
	       side_effects - detached);
}

/* Appends a raw record of size bytes (words after its head) to this thread's batch buffer. */
static void forge_record(struct rec__tbuf *tb, uint16_t kind, uint16_t size, uint8_t nvals,
			 const uint64_t *words, size_t nwords)
{
	struct rec__brec h = { .kind = kind, .size = size, .nvals = nvals };
	uint32_t room = (uint32_t)(sizeof(h) + 8 * nwords);

	if (tb->len + room > REC__TBUF_DATA)
		rec__tbuf_flush(tb);
	memcpy(tb->data + tb->len, &h, sizeof(h));
	memcpy(tb->data + tb->len + sizeof(h), words, 8 * nwords);
	/* The length the record claims is what the reader sees; the bytes are room. */
	tb->len += (room + 7) & ~7u;
}

/* A thread that announces a buffer at an address where nothing is mapped, and flushes it. */
static void *wild_batch_thread(void *arg)
{
	(void)arg;
	if (REC__ARMED(batch)) {
		REC__PROBE3(batch, REC__BATCH_OPEN, 0x10000, 0);
		REC__PROBE2(batch, REC__BATCH_FLUSH, 0x10000);
	}
	return NULL;
}

/*
 * Hostile batches against recording "victim", beside recording "bystander"
 * whose 3 events are well formed: an event record with a forged callsite
 * (an address that holds no callsite metadata), a record whose length
 * overruns the batch, a buffer header claiming more than the buffer holds,
 * a flush of another address than the thread's buffer, and a thread whose
 * buffer is at an unmapped address. Prints "no batch path" if events do not
 * go to a batch buffer (recorder-attach --per-event).
 */
static void sc_hostile_batch(struct scenario *sc)
{
	struct rec_recorder *r = new_recorder(sc);
	struct rec_recording *victim = new_recording(sc, r, 10, "victim");
	struct rec_recording *bystander = new_recording(sc, r, 10, "bystander");
	static const char not_a_callsite[] = "XXXX not a callsite";
	struct rec_span vspan, bspan;
	struct rec__tbuf *tb;
	pthread_t t;

	rec_recording_span(&bspan, bystander, "bystander");
	rec_span_enter(&bspan);
	for (int i = 0; i < 3; i++)
		REC_INFO("bystander", REC_U64(n, i));
	rec_span_exit(&bspan);

	rec_recording_span(&vspan, victim, "victim");
	rec_span_enter(&vspan);
	REC_INFO("before", REC_U64(n, 0));
	tb = rec__tbuf;
	if (!tb || tb->magic != REC__TBUF_MAGIC || !REC__ARMED(batch)) {
		printf("no batch path\n");
		rec_span_exit(&vspan);
		return;
	}
	{
		uint64_t forged[6] = { REC__U(not_a_callsite), REC__TYPE_U64,  victim->key,
				       REC__U(&vspan),	       REC__U(victim), 7 };
		uint64_t overrun[4] = { 0, 0, 0, 0 };

		forge_record(tb, REC__BK_EVENT, 64, 1, forged, 6);
		/* Says it is 4 KiB long: past the end of what the batch holds. */
		forge_record(tb, REC__BK_ENTER, 4096, 0, overrun, 4);
		rec__tbuf_flush(tb);
		/* A header that claims more than the buffer holds (then emptied, as a flush does). */
		__atomic_store_n(&tb->len, REC__TBUF_SIZE, __ATOMIC_SEQ_CST);
		__asm__ __volatile__("" ::: "memory");
		REC__PROBE2(batch, REC__BATCH_FLUSH, tb);
		__asm__ __volatile__("" ::: "memory");
		__atomic_store_n(&tb->len, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&tb->gen, tb->gen + 1, __ATOMIC_SEQ_CST);
		/* A flush of an address that is not this thread's buffer. */
		REC__PROBE2(batch, REC__BATCH_FLUSH, REC__U(not_a_callsite));
	}
	if (pthread_create(&t, NULL, wild_batch_thread, NULL) == 0)
		pthread_join(t, NULL);
	REC_INFO("after", REC_U64(n, 2));
	rec_span_exit(&vspan);
	printf("hostile batches sent\n");
}

/*
 * Text that must not reach a terminal raw: a subject with a newline that
 * forges a glog line and escape sequences, a span name and a message with
 * ESC and BEL, a copied string with DEL and an 8-bit CSI (U+009B). The span
 * stays entered so that --stacks shows it.
 */
static void sc_hostile_text(struct scenario *sc)
{
	struct rec_recording *rec = new_recording(sc, new_recorder(sc), 10, "hostile");
	struct rec_span *evil = &held_spans[1];
	char copied[32];

	strcpy(copied, "del\x7f csi\xc2\x9b"
		       "31m nl\n");
	rec_recording_span(&held_spans[0], rec,
			   "s\nI0101 00:00:00.000000 1 forged.c:1] forged\x1b[2J\x1b]0;t\x07");
	hold_span(sc, &held_spans[0]);
	REC_SPAN_INIT(evil, INFO, "span\x1b[31m\nforged");
	hold_span(sc, evil);
	REC_INFO("msg\x1b[1m\r", REC_STR(copied, copied), REC_STR(lit, "lit\x1b\x07"));
}

static const struct {
	const char *name;
	void (*run)(struct scenario *sc);
	bool attaches_itself; /* waits for the attach at its own moment */
} scenarios[] = {
	{ "events_are_recorded", sc_events_are_recorded, false },
	{ "last_n_entries", sc_last_n_entries, false },
	{ "events_outside_span_are_not_recorded", sc_events_outside_span_are_not_recorded, false },
	{ "child_span_inherits_recorder", sc_child_span_inherits_recorder, false },
	{ "recording_spans_are_isolated_across_nested_recordings", sc_recording_spans_are_isolated,
	  false },
	{ "active_spans", sc_active_spans, false },
	{ "attach_mid_span", sc_attach_mid_span, true },
	{ "running_at_attach", sc_running_at_attach, true },
	{ "threads", sc_threads, false },
	{ "shared_library", sc_shared_library, false },
	{ "retired", sc_retired, false },
	{ "retired_elsewhere", sc_retired_elsewhere, false },
	{ "all_fields", sc_all_fields, false },
	{ "runtime_level", sc_runtime_level, false },
	{ "recorders", sc_recorders, false },
	{ "unbalanced", sc_unbalanced, false },
	{ "thread_churn", sc_thread_churn, false },
	{ "dlopen", sc_dlopen, false },
	{ "literal_then_kill", sc_literal_then_kill, false },
	{ "sleeper", sc_sleeper, true },
	{ "exit_3", sc_exit_3, false },
	{ "copied_strings", sc_copied_strings, false },
	{ "strn", sc_strn, false },
	{ "long_subjects", sc_long_subjects, false },
	{ "exit_outer_first", sc_exit_outer_first, true },
	{ "ticks", sc_ticks, false },
	{ "span_ticks", sc_span_ticks, false },
	{ "detached_side_effects", sc_detached_side_effects, true },
	{ "hostile_text", sc_hostile_text, false },
	{ "hostile_batch", sc_hostile_batch, false },
	{ "spans", sc_spans, false },
	{ "exit_at_attach", sc_exit_at_attach, true },
	{ "span_flood", sc_span_flood, true },
};

#define NSCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

static void usage(void)
{
	fprintf(stderr, "usage: scenario NAME\nscenarios:\n");
	for (size_t i = 0; i < NSCENARIOS; i++)
		fprintf(stderr, "  %s\n", scenarios[i].name);
}

int main(int argc, char **argv)
{
	struct scenario sc = { 0 };
	sigset_t stop, blocked;
	size_t which;
	int sig;

	if (argc != 2) {
		usage();
		return 2;
	}
	for (which = 0; which < NSCENARIOS; which++) {
		if (!strcmp(argv[1], scenarios[which].name))
			break;
	}
	if (which == NSCENARIOS) {
		fprintf(stderr, "scenario: unknown scenario '%s'\n", argv[1]);
		usage();
		return 2;
	}

	/* Blocked before any thread exists, so every thread inherits the mask and
	 * the signal stays pending for sigwait() instead of killing the process. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	blocked = stop;
	/* For the ticks scenario, which waits for it itself. */
	sigaddset(&blocked, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &blocked, NULL);

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (!scenarios[which].attaches_itself)
		wait_for_attach();

	scenarios[which].run(&sc);

	for (int i = 0; i < sc.nrecorder_lines; i++)
		printf("recorder %s 0x%" PRIx64 "\n", sc.recorder_lines[i].name,
		       sc.recorder_lines[i].key);
	for (int i = 0; i < sc.nrecording_lines; i++)
		printf("recording %s 0x%" PRIx64 "\n", sc.recording_lines[i].name,
		       sc.recording_lines[i].key);
	printf("ready\n");
	fflush(stdout);

	while (sigwait(&stop, &sig) != 0)
		;

	for (int i = sc.nopen - 1; i >= 0; i--)
		rec_span_exit(sc.open[i]);
	for (int i = 0; i < sc.nrecordings; i++)
		rec_recording_free(sc.recordings[i]);
	for (int i = 0; i < sc.nrecorders; i++)
		rec_recorder_free(sc.recorders[i]);
	return 0;
}
