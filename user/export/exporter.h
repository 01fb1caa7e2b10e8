/* SPDX-License-Identifier: MIT */
/*
 * recorder-attach --otlp: one job a traced process, each with a thread that
 * sends the process's events and spans to the receiver (otlp.h).
 *
 * The session gives a job views, through the backend the job hands it
 * (rec_export_job__output()): each is rendered as one OTLP record there, on
 * the session's thread, into the job's queue of its signal (logs or traces);
 * the job's thread takes the queues and sends them in export requests. The
 * session never waits on the network: while a job's thread is behind, the
 * session holds its views, and a job that falls further behind misses events,
 * counted as not sent (serving/clients.h), which its last line says. With
 * keep (--otlp-keep), a job is given only the recordings a keep rule fired on.
 */
#ifndef REC_EXPORTER_H
#define REC_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "output/output.h"

struct rec_exporter_opts {
	const char *url; /* checked already (rec_http__parse_url) */
	int timeout_ms;	 /* per step of a request; 0 = REC_OTLP_TIMEOUT_MS */
	int max_tries;	 /* per batch; 0 = REC_OTLP_TRIES */
	bool keep;	 /* --otlp-keep: only the recordings a keep rule fired on */
	FILE *log;	 /* where each job says what it delivered, and failures */
};

struct rec_exporter;
struct rec_export_job;

/* Returns 0 or -ENOMEM. opts->url was checked by the caller (rec_http__parse_url). */
int rec_exporter__new(struct rec_exporter **ep, const struct rec_exporter_opts *opts);
/* Whether its jobs take only the recordings a keep rule fired on (--otlp-keep). */
bool rec_exporter__keeps(const struct rec_exporter *e);

/*
 * Starts the job of process pid: its thread, whose resource names the
 * process (service.name, its comm). NULL if it could not (said on the log,
 * and counted by rec_exporter__join()).
 */
struct rec_export_job *rec_exporter__start(struct rec_exporter *e, pid_t pid);
/* The backend the session gives j's views to (events to /v1/logs, spans to /v1/traces). */
const struct rec_output *rec_export_job__output(struct rec_export_job *j);
/* Bytes rendered for job (a struct rec_export_job) that its thread has not taken yet. */
size_t rec_export_job__backlog(void *job);
/*
 * With keep: of the recordings its process had, how many it kept: its last
 * line says so.
 */
void rec_export_job__kept(struct rec_export_job *j, uint64_t recordings, uint64_t kept);
/*
 * job (a struct rec_export_job) was given its last: its thread sends what is
 * left, says what was delivered, and ends. Once per job.
 */
void rec_export_job__done(void *job);

/*
 * Waits for the thread of every job started, each once told done. Returns
 * how many processes had records not delivered, or no job at all.
 */
int rec_exporter__join(struct rec_exporter *e);
void rec_exporter__free(struct rec_exporter *e);

#endif /* REC_EXPORTER_H */
