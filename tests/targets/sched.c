/* SPDX-License-Identifier: MIT */
/*
 * sched.c: spans whose time goes to the kernel in known ways, for the kernel
 * time tests (issue 26). One recording "sched", entered; then, by mode:
 *
 *	sched sleep    a span "sleep" that sleeps 100 ms (clock_nanosleep)
 *	sched spin     a span "spin" that spins until it has had 100 ms of CPU
 *		       (no system call)
 *	sched hog      the thread and a CPU hog thread pinned to the same CPU; a
 *		       span "contended" that spins until it has had 50 ms of CPU
 *	sched wake     the thread and a CPU hog pinned to the same CPU; a span
 *		       "woken" that sleeps 1 ms 20 times: each wakeup waits for
 *		       the CPU the hog holds
 *	sched mutex    a span "lock" that waits 100 ms for a mutex another
 *		       thread holds (futex)
 *	sched many N   N spans "iter", each sleeping 1 ms and spinning 1 ms
 *	sched switch N a span "switchy" in which the thread passes a byte to and
 *		       fro with another thread N times over two pipes (two
 *		       switches a round trip: some 200,000 a second)
 *	sched fault F  a span "fault" that reads a byte of each page of file F,
 *		       mapped after its pages left the page cache: each read
 *		       is a major page fault that waits on the disk
 *
 * Prints "pid N", waits for recorder-attach (rec_is_attached()), runs, leaves
 * the recording span, prints "done", and waits for SIGTERM or SIGINT (exit 0).
 * Exit status: 2 usage, 3 nothing attached within 30 s, 4 a thread or the
 * affinity could not be set up.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"

#define MS 1000000LL

static atomic_int stop_hog, holder_ready;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(long long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };

	while (nanosleep(&ts, &ts))
		;
}

/* Spins until ns of clock c have passed (the vDSO: no system call). */
static void spin(clockid_t c, long long ns)
{
	long long end = clock_ns(c) + ns;

	while (clock_ns(c) < end)
		;
}

static void wait_attached(void)
{
	for (int i = 0; !rec_is_attached(); i++) {
		if (i == 30000) {
			fprintf(stderr, "sched: nothing attached within 30 s\n");
			exit(3);
		}
		sleep_ns(MS);
	}
}

static int pin_to_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void *hog(void *arg)
{
	(void)arg;
	if (pin_to_cpu0())
		exit(4);
	while (!atomic_load(&stop_hog))
		;
	return NULL;
}

/* Starts a CPU hog on CPU 0, this thread pinned there too; 0 once it runs. */
static int hog_start(pthread_t *th)
{
	if (pin_to_cpu0() || pthread_create(th, NULL, hog, NULL))
		return -1;
	sleep_ns(20 * MS); /* the hog is running */
	return 0;
}

static void hog_stop(pthread_t th)
{
	atomic_store(&stop_hog, 1);
	pthread_join(th, NULL);
}

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	atomic_store(&holder_ready, 1);
	sleep_ns(100 * MS);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* switch: the pipes to the echo thread and back. */
static int echo_in[2], echo_out[2];

static void *echo(void *arg)
{
	char b;

	(void)arg;
	while (read(echo_in[0], &b, 1) == 1 && write(echo_out[1], &b, 1) == 1)
		;
	return NULL;
}

/* n round trips with the echo thread, in a span "switchy". */
static int switchy(long n)
{
	struct rec_span s;
	pthread_t th;
	char b = 'x';

	if (pipe(echo_in) || pipe(echo_out) || pthread_create(&th, NULL, echo, NULL))
		return 4;
	REC_SPAN_INIT(&s, INFO, "switchy");
	rec_span_enter(&s);
	for (long i = 0; i < n; i++)
		if (write(echo_in[1], &b, 1) != 1 || read(echo_out[0], &b, 1) != 1)
			return 4;
	rec_span_exit(&s);
	close(echo_in[1]);
	pthread_join(th, NULL);
	return 0;
}

/* What fault_in read, kept. */
static volatile unsigned long fault_sum;

/* Each page of path, mapped once out of the page cache, read in a span "fault". */
static int fault_in(const char *path)
{
	struct rec_span s;
	volatile const char *p;
	unsigned long sum = 0;
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) || fdatasync(fd) ||
	    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		return 4;
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED || madvise((void *)p, st.st_size, MADV_RANDOM))
		return 4;
	REC_SPAN_INIT(&s, INFO, "fault");
	rec_span_enter(&s);
	for (off_t off = 0; off < st.st_size; off += page)
		sum += p[off];
	rec_span_exit(&s);
	munmap((void *)p, st.st_size);
	fault_sum = sum;
	return 0;
}

static int run(const char *mode, const char *arg)
{
	long n = arg ? strtol(arg, NULL, 10) : 0;

	struct rec_span s;
	pthread_t th;

	if (!strcmp(mode, "sleep")) {
		REC_SPAN_INIT(&s, INFO, "sleep");
		rec_span_enter(&s);
		sleep_ns(100 * MS);
		rec_span_exit(&s);
	} else if (!strcmp(mode, "spin")) {
		REC_SPAN_INIT(&s, INFO, "spin");
		rec_span_enter(&s);
		spin(CLOCK_THREAD_CPUTIME_ID, 100 * MS);
		rec_span_exit(&s);
	} else if (!strcmp(mode, "hog")) {
		if (hog_start(&th))
			return 4;
		REC_SPAN_INIT(&s, INFO, "contended");
		rec_span_enter(&s);
		spin(CLOCK_THREAD_CPUTIME_ID, 50 * MS);
		rec_span_exit(&s);
		hog_stop(th);
	} else if (!strcmp(mode, "wake")) {
		if (hog_start(&th))
			return 4;
		REC_SPAN_INIT(&s, INFO, "woken");
		rec_span_enter(&s);
		for (int i = 0; i < 20; i++)
			sleep_ns(MS);
		rec_span_exit(&s);
		hog_stop(th);
	} else if (!strcmp(mode, "mutex")) {
		if (pthread_create(&th, NULL, holder, NULL))
			return 4;
		while (!atomic_load(&holder_ready))
			sleep_ns(MS);
		REC_SPAN_INIT(&s, INFO, "lock");
		rec_span_enter(&s);
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
		rec_span_exit(&s);
		pthread_join(th, NULL);
	} else if (!strcmp(mode, "many") && n > 0) {
		for (long i = 0; i < n; i++) {
			REC_SPAN_INIT(&s, INFO, "iter");
			rec_span_enter(&s);
			sleep_ns(MS);
			spin(CLOCK_MONOTONIC, MS);
			rec_span_exit(&s);
		}
	} else if (!strcmp(mode, "switch") && n > 0) {
		return switchy(n);
	} else if (!strcmp(mode, "fault") && arg) {
		return fault_in(arg);
	} else {
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rec_recorder *r;
	struct rec_recording *rec;
	struct rec_span span;
	sigset_t stop;
	int sig, err;

	if (argc < 2) {
		fprintf(stderr,
			"usage: sched sleep|spin|hog|wake|mutex|many N|switch N|fault FILE\n");
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
	rec = rec_recording_new(r, 64);
	rec_recording_span(&span, rec, "sched");
	rec_span_enter(&span);
	err = run(argv[1], argc > 2 ? argv[2] : NULL);
	rec_span_exit(&span);
	if (err) {
		fprintf(stderr, "sched: %s\n", err == 2 ? "bad arguments" : "could not set up");
		return err;
	}
	printf("done\n");
	fflush(stdout);
	while (sigwait(&stop, &sig))
		;
	return 0;
}
