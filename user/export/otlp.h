/* SPDX-License-Identifier: MIT */
/*
 * The OTLP/HTTP exporter of recorder-tail --otlp: takes the log records and
 * spans the OTLP backend writes (output/output_otlp.c, a line each; a span's
 * begins {"traceId":), and sends them to URL/v1/logs and URL/v1/traces in
 * export requests of at most batch_max records (or spans) each, with the
 * resource (service.name, process.pid, host.name) and scope around them.
 *
 * Delivery: 429, 502, 503 and 504, and a receiver that cannot be reached or
 * does not answer in time, are retried with a growing backoff (Retry-After
 * when given), up to max_tries in all; any other status (400 first) is
 * reported and the batch is not sent again. A batch is sent again as it was,
 * so nothing is sent twice or skipped. What could not be delivered is counted.
 */
#ifndef REC_OTLP_H
#define REC_OTLP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REC_OTLP_BATCH_MAX 256
#define REC_OTLP_TIMEOUT_MS 5000
#define REC_OTLP_TRIES 6

struct rec_otlp_opts {
	const char *url;	  /* http://host[:port][/base]: requests go to base/v1/logs */
	const char *service_name; /* resource service.name */
	int pid;		  /* resource process.pid */
	size_t batch_max;	  /* records per request; 0 = REC_OTLP_BATCH_MAX */
	int timeout_ms;		  /* per step of a request; 0 = REC_OTLP_TIMEOUT_MS */
	int max_tries;		  /* per batch; 0 = REC_OTLP_TRIES */
	FILE *log;		  /* where failures and retries are said (stderr) */
	const char *who;	  /* what they start with; NULL = "recorder-tail: OTLP" */
};

/* What an export request carries. */
enum rec_otlp_signal {
	REC_OTLP_LOGS,	 /* log records, to /v1/logs */
	REC_OTLP_TRACES, /* spans, to /v1/traces */
	REC_OTLP_SIGNALS
};

/* What became of one signal's items: log records, or spans. */
struct rec_otlp_tally {
	uint64_t taken;
	uint64_t sent;	   /* of those, accepted by the receiver (2xx) */
	uint64_t not_sent; /* of those, never delivered */
};

struct rec_otlp_counts {
	struct rec_otlp_tally sig[REC_OTLP_SIGNALS]; /* by enum rec_otlp_signal */
	uint64_t not_rendered; /* events recorder-attach did not send us: we read too slowly */
	uint64_t requests;     /* requests made, retries included */
	uint64_t retries;
};

struct rec_otlp;

/* Returns 0, or -EINVAL with why saying what is wrong with the URL. */
int rec_otlp__new(struct rec_otlp **op, const struct rec_otlp_opts *opts, const char **why);
void rec_otlp__free(struct rec_otlp *o);

/*
 * Takes n bytes of the backend's output (lines, possibly cut anywhere), as
 * recorder-tail --otlp reads them from a recorder-attach: a span's line
 * begins {"traceId":, a line {"not_sent":N} counts what was not rendered.
 */
void rec_otlp__write(struct rec_otlp *o, const char *data, size_t n);
/* Takes one record of sig (a log record, or a span: one line of the backend's, no newline). */
void rec_otlp__add(struct rec_otlp *o, enum rec_otlp_signal sig, const char *record, size_t n);
/* Counts n events the one who renders them was too slow for: not rendered, never sent. */
void rec_otlp__not_rendered(struct rec_otlp *o, uint64_t n);
/* Sends what is held, as one or more requests. */
void rec_otlp__flush(struct rec_otlp *o);
const struct rec_otlp_counts *rec_otlp__counts(const struct rec_otlp *o);

/*
 * Feeds o what a recorder-attach answers on fd (after the status byte) until
 * it hangs up, sending what is held at least every flush_ms. 0, or -errno.
 */
int rec_otlp__pump(struct rec_otlp *o, int fd, int flush_ms);

/*
 * Sends what is held, then says on o's log what was delivered, prefixed by
 * who ("recorder-tail: OTLP", "recorder-attach: OTLP for pid 42"). Returns
 * the number of records and spans not delivered.
 */
uint64_t rec_otlp__finish(struct rec_otlp *o, const char *who);

/* The export request body of sig for records (comma-separated log records or spans) into *body. */
int rec_otlp__envelope(const struct rec_otlp_opts *opts, enum rec_otlp_signal sig, const char *host,
		       const char *records, size_t len, char **body, size_t *body_len);

#endif /* REC_OTLP_H */
