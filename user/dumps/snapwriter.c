// SPDX-License-Identifier: MIT
/* Snapshots written by a thread of their own: see snapwriter.h. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/param.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dumps/snapwriter.h"

struct rec_snapwriter {
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a job pushed, one written, or stop */
	pthread_t thread;
	bool started, stop;
	int efd;
	/* FIFO lists: pushed and not yet written, written and not taken back. */
	struct rec_snapshot_job *todo, *done;
	struct rec_snapshot_job *writing; /* the one its thread writes now */
	size_t jobs;			  /* in todo, writing and done */
	uint64_t bytes;			  /* their copies' */
};

static void append(struct rec_snapshot_job **list, struct rec_snapshot_job *job)
{
	while (*list)
		list = &(*list)->next;
	job->next = NULL;
	*list = job;
}

static void *writer_main(void *arg)
{
	struct rec_snapwriter *w = arg;
	const uint64_t one = 1;
	int prio;

	/*
	 * Below the thread that drains the ring: when every CPU is busy, a
	 * storm's snapshots wait a little rather than cost events (nice 10
	 * weighs a tenth of nice 0). An idle CPU writes them as soon.
	 */
	errno = 0;
	prio = getpriority(PRIO_PROCESS, 0);
	if (errno == 0)
		setpriority(PRIO_PROCESS, (id_t)gettid(), MIN(prio + REC_SNAPWRITER_NICE, 19));
	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct rec_snapshot_job *job = w->todo;
		struct rec_dump_opts opts;

		if (!job) {
			if (w->stop)
				break;
			pthread_cond_wait(&w->changed, &w->lock);
			continue;
		}
		w->todo = job->next;
		w->writing = job;
		pthread_mutex_unlock(&w->lock);
		job->trigger.counts = job->counts;
		opts = (struct rec_dump_opts){ .counters = &job->counters,
					       .only_recording = job->recording,
					       .trigger = &job->trigger };
		job->err = rec_dump__write_snapshot_file(job->dir, &job->proc, &opts, job->path,
							 sizeof(job->path));
		rec_proc__fini(&job->proc);
		pthread_mutex_lock(&w->lock);
		w->writing = NULL;
		append(&w->done, job);
		pthread_cond_broadcast(&w->changed);
		/* A counter: never full in practice, and a full one still reads readable. */
		if (write(w->efd, &one, sizeof(one)) < 0) {
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int rec_snapwriter__new(struct rec_snapwriter **wp)
{
	struct rec_snapwriter *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0) {
		int err = -errno;

		free(w);
		return err;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->changed, NULL);
	*wp = w;
	return 0;
}

int rec_snapwriter__fd(const struct rec_snapwriter *w)
{
	return w->efd;
}

bool rec_snapwriter__has_room(const struct rec_snapwriter *w)
{
	/* Only this thread adds jobs or takes them back: the count cannot grow meanwhile. */
	return __atomic_load_n(&w->jobs, __ATOMIC_RELAXED) < REC_SNAPWRITER_MAX_JOBS &&
	       __atomic_load_n(&w->bytes, __ATOMIC_RELAXED) < REC_SNAPWRITER_MAX_BYTES;
}

int rec_snapwriter__push(struct rec_snapwriter *w, struct rec_snapshot_job *job)
{
	int err = 0;

	pthread_mutex_lock(&w->lock);
	if (w->jobs >= REC_SNAPWRITER_MAX_JOBS || w->bytes >= REC_SNAPWRITER_MAX_BYTES)
		err = -EBUSY;
	else if (!w->started && (err = -pthread_create(&w->thread, NULL, writer_main, w)) == 0)
		w->started = true;
	if (!err) {
		append(&w->todo, job);
		__atomic_store_n(&w->jobs, w->jobs + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&w->bytes, w->bytes + job->bytes, __ATOMIC_RELAXED);
		pthread_cond_broadcast(&w->changed);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

struct rec_snapshot_job *rec_snapwriter__take_done(struct rec_snapwriter *w, const void *owner)
{
	struct rec_snapshot_job **at, *job = NULL;
	uint64_t n;

	pthread_mutex_lock(&w->lock);
	for (at = &w->done; *at; at = &(*at)->next)
		if (!owner || (*at)->owner == owner) {
			job = *at;
			*at = job->next;
			job->next = NULL;
			__atomic_store_n(&w->jobs, w->jobs - 1, __ATOMIC_RELAXED);
			__atomic_store_n(&w->bytes, w->bytes - job->bytes, __ATOMIC_RELAXED);
			break;
		}
	/*
	 * The last one taken: readable again at the next job written. Nothing
	 * taken: nothing to reset (it is reset each time the list empties), and
	 * no system call for the loop's every turn.
	 */
	if (job && !w->done && read(w->efd, &n, sizeof(n)) < 0) {
	}
	pthread_mutex_unlock(&w->lock);
	return job;
}

/* Whether a job of owner (NULL: any) is pushed and not yet written (w locked). */
static bool pending_of(const struct rec_snapwriter *w, const void *owner)
{
	if (w->writing && (!owner || w->writing->owner == owner))
		return true;
	for (const struct rec_snapshot_job *j = w->todo; j; j = j->next)
		if (!owner || j->owner == owner)
			return true;
	return false;
}

void rec_snapwriter__wait(struct rec_snapwriter *w, const void *owner)
{
	pthread_mutex_lock(&w->lock);
	while (pending_of(w, owner))
		pthread_cond_wait(&w->changed, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

void rec_snapwriter__free(struct rec_snapwriter *w)
{
	struct rec_snapshot_job *job;

	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_cond_broadcast(&w->changed);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
	}
	while ((job = w->done)) {
		w->done = job->next;
		free(job);
	}
	close(w->efd);
	pthread_cond_destroy(&w->changed);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
