// SPDX-License-Identifier: MIT
/* recorder-attach --otlp: a job a traced process, each with its thread (exporter.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/exporter.h"
#include "export/otlp.h"
#include "serving/bbuf.h"

/* What is held is sent once nothing more came for this long, as recorder-tail --otlp does. */
#define FLUSH_MS 1000
#define NS_PER_MS 1000000L
#define NS_PER_S 1000000000L

struct rec_export_job {
	struct rec_exporter *e;
	pid_t pid;
	pthread_t thread;
	bool lost; /* some of its records were not delivered */
	/* The session's thread's: the backend it is given, and the OTLP one that renders. */
	struct rec_output out;
	struct rec_output otlp;
	FILE *render_f; /* writes into render */
	struct rec_bbuf render;
	/* Between the session's thread and the job's. */
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct rec_bbuf q[REC_OTLP_SIGNALS]; /* rendered records of each signal, a line each */
	size_t queued;			     /* bytes in q; read unlocked by the backlog */
	uint64_t not_rendered;		     /* events its follower was too slow to be given */
	uint64_t recordings, kept;	     /* with keep: said at the end */
	bool done;
	struct rec_export_job *next;
};

struct rec_exporter {
	struct rec_exporter_opts opts;
	struct rec_export_job *jobs;
	int failed; /* jobs that could not start */
};

static ssize_t render_write(void *cookie, const char *data, size_t n)
{
	struct rec_export_job *j = cookie;

	return rec_bbuf__put(&j->render, data, n) ? 0 : (ssize_t)n;
}

/* What was just rendered, one record of sig, into the queue for the job's thread. */
static void queue_rendered(struct rec_export_job *j, enum rec_otlp_signal sig)
{
	fflush(j->render_f);
	if (!j->render.len)
		return;
	pthread_mutex_lock(&j->lock);
	if (rec_bbuf__put(&j->q[sig], j->render.p, j->render.len) == 0)
		__atomic_store_n(&j->queued, j->queued + j->render.len, __ATOMIC_RELAXED);
	else
		j->not_rendered++;
	pthread_cond_signal(&j->more);
	pthread_mutex_unlock(&j->lock);
	j->render.len = 0;
}

static void job_event(struct rec_output *o, const struct rec_event_view *ev)
{
	struct rec_export_job *j = o->state;

	j->otlp.salt = o->salt;
	j->otlp.kept = o->kept;
	rec_output__event(&j->otlp, ev);
	queue_rendered(j, REC_OTLP_LOGS);
}

static void job_span(struct rec_output *o, const struct rec_span_view *sp)
{
	struct rec_export_job *j = o->state;

	j->otlp.salt = o->salt;
	j->otlp.kept = o->kept;
	rec_output__span(&j->otlp, sp);
	queue_rendered(j, REC_OTLP_TRACES);
}

static void job_not_sent(struct rec_output *o, const struct rec_proc *p, uint64_t n)
{
	struct rec_export_job *j = o->state;

	(void)p;
	pthread_mutex_lock(&j->lock);
	j->not_rendered += n;
	pthread_cond_signal(&j->more);
	pthread_mutex_unlock(&j->lock);
}

/* Events and spans only: the rest of an answer (lists, stacks, stats) is not OTLP. */
static const struct rec_output_ops job_ops = {
	.event = job_event,
	.span = job_span,
	.not_sent = job_not_sent,
};

/* The exporter's options for j: the process's name is its service.name. */
static void otlp_opts(struct rec_export_job *j, struct rec_otlp_opts *o, char *comm, size_t commlen,
		      char *who, size_t wholen)
{
	char proc[32];
	FILE *f;

	*o = (struct rec_otlp_opts){ .url = j->e->opts.url,
				     .log = j->e->opts.log,
				     .pid = j->pid,
				     .timeout_ms = j->e->opts.timeout_ms,
				     .max_tries = j->e->opts.max_tries };
	comm[0] = 0;
	snprintf(proc, sizeof(proc), "/proc/%d/comm", (int)j->pid);
	f = fopen(proc, "r");
	if (f && fgets(comm, (int)commlen, f))
		comm[strcspn(comm, "\n")] = 0;
	if (f)
		fclose(f);
	o->service_name = comm[0] ? comm : "unknown_service:recorder";
	snprintf(who, wholen, "recorder-attach: OTLP for pid %d", (int)j->pid);
	o->who = who;
}

/* Hands the records in b, a line each, to otlp as records of sig. */
static void add_lines(struct rec_otlp *otlp, enum rec_otlp_signal sig, const struct rec_bbuf *b)
{
	const char *at = b->p, *end = b->p + b->len;

	while (at < end) {
		const char *nl = memchr(at, '\n', (size_t)(end - at));
		size_t n = nl ? (size_t)(nl - at) : (size_t)(end - at);

		if (n)
			rec_otlp__add(otlp, sig, at, n);
		at += n + 1;
	}
}

/* Sends what the session queues until it is done, then says what was delivered. */
static void *job_main(void *arg)
{
	struct rec_export_job *j = arg;
	struct rec_bbuf take[REC_OTLP_SIGNALS] = { 0 };
	char who[64], comm[64];
	struct rec_otlp_opts o;
	struct rec_otlp *otlp;
	const char *why;

	otlp_opts(j, &o, comm, sizeof(comm), who, sizeof(who));
	if (rec_otlp__new(&otlp, &o, &why)) {
		fprintf(j->e->opts.log, "%s: %s\n", who, why);
		j->lost = true;
		return NULL;
	}
	pthread_mutex_lock(&j->lock);
	for (;;) {
		uint64_t not_rendered;
		bool done;

		if (!j->queued && !j->not_rendered && !j->done) {
			struct timespec until;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += FLUSH_MS * NS_PER_MS;
			until.tv_sec += until.tv_nsec / NS_PER_S;
			until.tv_nsec %= NS_PER_S;
			if (pthread_cond_timedwait(&j->more, &j->lock, &until) == ETIMEDOUT) {
				pthread_mutex_unlock(&j->lock);
				rec_otlp__flush(otlp);
				pthread_mutex_lock(&j->lock);
			}
			continue;
		}
		for (int sig = 0; sig < REC_OTLP_SIGNALS; sig++) {
			struct rec_bbuf b = take[sig];

			take[sig] = j->q[sig];
			j->q[sig] = (struct rec_bbuf){ .p = b.p, .cap = b.cap };
		}
		__atomic_store_n(&j->queued, 0, __ATOMIC_RELAXED);
		not_rendered = j->not_rendered;
		j->not_rendered = 0;
		done = j->done;
		pthread_mutex_unlock(&j->lock);
		for (int sig = 0; sig < REC_OTLP_SIGNALS; sig++)
			add_lines(otlp, (enum rec_otlp_signal)sig, &take[sig]);
		rec_otlp__not_rendered(otlp, not_rendered);
		/* A kept recording goes whole and at once. */
		if (j->e->opts.keep)
			rec_otlp__flush(otlp);
		pthread_mutex_lock(&j->lock);
		if (done && !j->queued && !j->not_rendered)
			break;
	}
	pthread_mutex_unlock(&j->lock);
	if (j->e->opts.keep)
		fprintf(j->e->opts.log,
			"%s: kept %" PRIu64 " of its %" PRIu64 " recordings (--otlp-keep); %" PRIu64
			" skipped\n",
			who, j->kept, j->recordings, j->recordings - j->kept);
	if (rec_otlp__finish(otlp, who))
		j->lost = true;
	rec_otlp__free(otlp);
	for (int sig = 0; sig < REC_OTLP_SIGNALS; sig++)
		free(take[sig].p);
	return NULL;
}

int rec_exporter__new(struct rec_exporter **ep, const struct rec_exporter_opts *opts)
{
	struct rec_exporter *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->opts = *opts;
	*ep = e;
	return 0;
}

bool rec_exporter__keeps(const struct rec_exporter *e)
{
	return e->opts.keep;
}

struct rec_export_job *rec_exporter__start(struct rec_exporter *e, pid_t pid)
{
	static const cookie_io_functions_t render_io = { .write = render_write };
	struct rec_export_job *j = calloc(1, sizeof(*j));

	if (!j)
		goto fail;
	j->e = e;
	j->pid = pid;
	pthread_mutex_init(&j->lock, NULL);
	pthread_cond_init(&j->more, NULL);
	j->render_f = fopencookie(j, "w", render_io);
	if (!j->render_f)
		goto fail;
	rec_output__init(&j->otlp, j->render_f, &rec_output_otlp__ops);
	rec_output__init(&j->out, NULL, &job_ops);
	j->out.state = j;
	if (pthread_create(&j->thread, NULL, job_main, j))
		goto fail;
	j->next = e->jobs;
	e->jobs = j;
	return j;
fail:
	fprintf(e->opts.log, "recorder-attach: OTLP: no thread to follow pid %d\n", (int)pid);
	e->failed++;
	if (j && j->render_f)
		fclose(j->render_f);
	free(j);
	return NULL;
}

const struct rec_output *rec_export_job__output(struct rec_export_job *j)
{
	return &j->out;
}

size_t rec_export_job__backlog(void *job)
{
	struct rec_export_job *j = job;

	return __atomic_load_n(&j->queued, __ATOMIC_RELAXED);
}

void rec_export_job__kept(struct rec_export_job *j, uint64_t recordings, uint64_t kept)
{
	pthread_mutex_lock(&j->lock);
	j->recordings = recordings;
	j->kept = kept;
	pthread_mutex_unlock(&j->lock);
}

void rec_export_job__done(void *job)
{
	struct rec_export_job *j = job;

	pthread_mutex_lock(&j->lock);
	j->done = true;
	pthread_cond_signal(&j->more);
	pthread_mutex_unlock(&j->lock);
}

int rec_exporter__join(struct rec_exporter *e)
{
	int lost = e->failed;

	e->failed = 0;
	while (e->jobs) {
		struct rec_export_job *j = e->jobs;

		e->jobs = j->next;
		/* Nothing more comes once the session is gone. */
		rec_export_job__done(j);
		pthread_join(j->thread, NULL);
		lost += j->lost;
		fclose(j->render_f);
		free(j->render.p);
		for (int sig = 0; sig < REC_OTLP_SIGNALS; sig++)
			free(j->q[sig].p);
		pthread_mutex_destroy(&j->lock);
		pthread_cond_destroy(&j->more);
		free(j);
	}
	return lost;
}

void rec_exporter__free(struct rec_exporter *e)
{
	if (!e)
		return;
	rec_exporter__join(e);
	free(e);
}
