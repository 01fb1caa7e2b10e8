// SPDX-License-Identifier: MIT
/* The thread that writes snapshots (user/dumps/snapwriter.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/param.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/dump.h"
#include "dumps/snapwriter.h"

#define KEY 0x8000000000000002ULL

static const char one_recording[] =
	"{\"format\":\"recorder-dump\",\"version\":2,\"pid\":42,\"ns_pid\":0,\n"
	"\"ended\":{\"how\":\"running\"},\n"
	"\"dumped_at\":\"2026-12-02T14:03:12.123456Z\",\"clock_offset_ns\":5,\n"
	"\"malformed\":0,\"orphans\":0,\n"
	"\"callsites\":[\n"
	"{\"addr\":\"0x1000\",\"kind\":\"E\",\"level\":2,\"name\":\"ev a\",\"target\":\"t\","
	"\"file\":\"a.c\",\"line\":1,\"message\":\"from a\",\"fields\":[\"x\"]}],\n"
	"\"recordings\":[\n"
	"{\"key\":\"0x8000000000000002\",\"recorder\":\"0x1\",\"subject\":\"a\",\"cap\":4,"
	"\"state\":\"live\",\"seen\":1,\"kept\":1,\"dropped\":0,\"stale\":0,\"events\":[\n"
	"{\"seq\":0,\"tid\":7,\"time_ns\":100,\"callsite\":\"0x1000\",\"values\":["
	"{\"type\":\"u64\",\"value\":1}]}]}],\n"
	"\"stacks\":[]}\n";

/* A job of the recording of one_recording, numbered n (its trigger's rule id), into dir. */
static struct rec_snapshot_job *job_of(struct rec_proc *p, const char *dir, int n)
{
	struct rec_snapshot_job *job = calloc(1, sizeof(*job));

	assert_non_null(job);
	assert_int_equal(rec_proc__copy_recording(&job->proc, p, KEY), 0);
	job->trigger = (struct rec_dump_trigger){ .rule_id = (uint64_t)n,
						  .kind = REC_DUMP_TRIGGER_LEVEL,
						  .rule = "level>=error",
						  .time_ns = 1796220192123456000LL,
						  .recording = KEY,
						  .subject = "a" };
	job->recording = KEY;
	job->dir = dir;
	job->owner = (void *)(uintptr_t)(n % 2 ? 1 : 2);
	return job;
}

/* Reads the snapshot at path back: its trigger's rule id. */
static uint64_t rule_of(const char *path)
{
	struct rec_proc back;
	char err[256];
	uint64_t id;

	if (rec_dump__read(path, &back, NULL, err, sizeof(err)))
		fail_msg("%s: %s", path, err);
	assert_non_null(back.trigger);
	id = back.trigger->rule_id;
	rec_proc__fini(&back);
	return id;
}

/* A new directory at dir (a mkdtemp() template) and p, one_recording read back. */
static void set_up(char *dir, struct rec_proc *p)
{
	char err[256];

	assert_non_null(mkdtemp(dir));
	assert_int_equal(
		rec_dump__read_mem(one_recording, strlen(one_recording), p, NULL, err, sizeof(err)),
		0);
	p->uid = (uid_t)-1;
}

/* Removes dir and the snapshots written into it. */
static void remove_dir(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -f %s/snapshot-42-*.json && rmdir %s", dir, dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * Jobs are written in the order pushed and handed back so, each owner's
 * apart; at most REC_SNAPWRITER_MAX_JOBS are out at once, and copies of at
 * most REC_SNAPWRITER_MAX_BYTES (one alone may hold more); the eventfd says
 * when one is done; a directory that cannot be written gives the job its
 * error; jobs never taken back are freed with the writer.
 */
static void test_jobs_are_written_in_order_and_handed_back(void **state)
{
	char dir[] = "/tmp/test_snapwriter.XXXXXX", bad[4200];
	struct rec_snapwriter *w;
	struct rec_snapshot_job *job;
	struct rec_proc p;
	int n;

	(void)state;
	set_up(dir, &p);
	assert_int_equal(rec_snapwriter__new(&w), 0);
	assert_null(rec_snapwriter__take_done(w, NULL));
	for (n = 1; n <= REC_SNAPWRITER_MAX_JOBS; n++) {
		assert_true(rec_snapwriter__has_room(w));
		assert_int_equal(rec_snapwriter__push(w, job_of(&p, dir, n)), 0);
	}
	assert_false(rec_snapwriter__has_room(w));
	job = job_of(&p, dir, n);
	assert_int_equal(rec_snapwriter__push(w, job), -EBUSY);
	rec_proc__fini(&job->proc);
	free(job);

	/* Owner 1's (the odd ones) first, in order; then owner 2's. */
	rec_snapwriter__wait(w, (void *)1);
	for (n = 1; n <= REC_SNAPWRITER_MAX_JOBS; n += 2) {
		job = rec_snapwriter__take_done(w, (void *)1);
		assert_non_null(job);
		assert_int_equal(job->err, 0);
		assert_int_equal(rule_of(job->path), n);
		assert_int_equal(unlink(job->path), 0);
		free(job);
	}
	assert_null(rec_snapwriter__take_done(w, (void *)1));
	rec_snapwriter__wait(w, NULL);
	assert_int_equal(
		poll(&(struct pollfd){ .fd = rec_snapwriter__fd(w), .events = POLLIN }, 1, 0), 1);
	for (n = 2; n <= REC_SNAPWRITER_MAX_JOBS; n += 2) {
		job = rec_snapwriter__take_done(w, NULL);
		assert_non_null(job);
		assert_int_equal(rule_of(job->path), n);
		assert_int_equal(unlink(job->path), 0);
		free(job);
	}
	/* All taken back: the eventfd says nothing, and there is room again. */
	assert_int_equal(
		poll(&(struct pollfd){ .fd = rec_snapwriter__fd(w), .events = POLLIN }, 1, 0), 0);
	assert_true(rec_snapwriter__has_room(w));

	/* One copy of REC_SNAPWRITER_MAX_BYTES: room for nothing else until it is back. */
	job = job_of(&p, dir, 7);
	job->bytes = REC_SNAPWRITER_MAX_BYTES;
	assert_int_equal(rec_snapwriter__push(w, job), 0);
	assert_false(rec_snapwriter__has_room(w));
	rec_snapwriter__wait(w, NULL);
	assert_false(rec_snapwriter__has_room(w));
	assert_ptr_equal(rec_snapwriter__take_done(w, NULL), job);
	assert_true(rec_snapwriter__has_room(w));
	assert_int_equal(unlink(job->path), 0);
	free(job);

	/* A dump directory under a file: the job's error, nothing written. */
	snprintf(bad, sizeof(bad), "%s/file", dir);
	fclose(fopen(bad, "w"));
	strcat(bad, "/sub");
	job = job_of(&p, bad, 9);
	assert_int_equal(rec_snapwriter__push(w, job), 0);
	rec_snapwriter__wait(w, NULL);
	assert_ptr_equal(rec_snapwriter__take_done(w, NULL), job);
	assert_int_equal(job->err, -ENOTDIR);
	free(job);

	/* Not taken back: written, and freed with the writer (ASan checks it). */
	assert_int_equal(rec_snapwriter__push(w, job_of(&p, dir, 11)), 0);
	rec_snapwriter__free(w);
	rec_proc__fini(&p);
	snprintf(bad, sizeof(bad), "%s/file", dir);
	unlink(bad);
	remove_dir(dir);
}

/* The nice of each thread of this process but this one, into nice[]; returns how many. */
static int other_threads_nice(int *nice, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) && n < max) {
		char path[300], line[512], *at;
		FILE *f;

		if (e->d_name[0] == '.' || atoi(e->d_name) == gettid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* Field 19 is the nice; the name (field 2) may hold spaces: count from its ')'. */
		at = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
		fclose(f);
		assert_non_null(at);
		assert_int_equal(sscanf(at + 2,
					"%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
					"%*d %*d %*d %d",
					&nice[n]),
				 1);
		n++;
	}
	closedir(d);
	return n;
}

/*
 * The writer's thread runs REC_SNAPWRITER_NICE nicer than the thread that
 * started it: on busy CPUs it leaves them to the one that drains the ring.
 */
static void test_the_writer_yields_to_the_event_path(void **state)
{
	char dir[] = "/tmp/test_snapwriter.XXXXXX";
	struct rec_snapwriter *w;
	struct rec_snapshot_job *job;
	struct rec_proc p;
	int nice[8], n, base;

	(void)state;
	set_up(dir, &p);
	/* Whatever this thread's nice (make test may run under one). */
	errno = 0;
	base = getpriority(PRIO_PROCESS, 0);
	assert_int_equal(errno, 0);
	assert_int_equal(rec_snapwriter__new(&w), 0);
	assert_int_equal(rec_snapwriter__push(w, job_of(&p, dir, 1)), 0);
	rec_snapwriter__wait(w, NULL);
	n = other_threads_nice(nice, 8);
	assert_int_equal(n, 1);
	assert_int_equal(nice[0], MIN(base + REC_SNAPWRITER_NICE, 19));
	/* This thread's own is left as it was. */
	assert_int_equal(getpriority(PRIO_PROCESS, 0), base);
	job = rec_snapwriter__take_done(w, NULL);
	assert_non_null(job);
	assert_int_equal(job->err, 0);
	free(job);
	rec_snapwriter__free(w);
	rec_proc__fini(&p);
	remove_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobs_are_written_in_order_and_handed_back),
		cmocka_unit_test(test_the_writer_yields_to_the_event_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
