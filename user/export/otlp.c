// SPDX-License-Identifier: MIT
/* The OTLP/HTTP exporter (otlp.h). */
#include <errno.h>
#include <poll.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "export/http.h"
#include "export/otlp.h"
#include "base/json.h"

/* The first backoff, doubled at each retry up to BACKOFF_MAX_MS; Retry-After is capped too. */
#define BACKOFF_FIRST_MS 250
#define BACKOFF_MAX_MS 8000
#define RETRY_AFTER_MAX_S 30

/* Records (or spans) held for one request, comma-separated. */
struct batch {
	char *buf;
	size_t len, cap, n;
};

/* The names of each signal's request. */
static const struct signal {
	const char *path, *resource, *scope, *items, *what;
} signals[] = {
	[REC_OTLP_LOGS] = { "/v1/logs", "resourceLogs", "scopeLogs", "logRecords", "log records" },
	[REC_OTLP_TRACES] = { "/v1/traces", "resourceSpans", "scopeSpans", "spans", "spans" },
};

struct rec_otlp {
	struct rec_otlp_opts opts;
	struct rec_http_url url;
	char host[256];
	char *line; /* the line being taken */
	size_t line_len, line_cap;
	struct batch batch[REC_OTLP_SIGNALS]; /* by enum rec_otlp_signal */
	struct rec_otlp_counts count;
};

static int grow(char **p, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 4096;
	char *v;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	v = realloc(*p, c);
	if (!v)
		return -ENOMEM;
	*p = v;
	*cap = c;
	return 0;
}

int rec_otlp__new(struct rec_otlp **op, const struct rec_otlp_opts *opts, const char **why)
{
	struct rec_otlp *o = calloc(1, sizeof(*o));

	if (!o) {
		*why = "out of memory";
		return -ENOMEM;
	}
	if (rec_http__parse_url(opts->url, &o->url, why)) {
		free(o);
		return -EINVAL;
	}
	o->opts = *opts;
	if (!o->opts.batch_max)
		o->opts.batch_max = REC_OTLP_BATCH_MAX;
	if (!o->opts.timeout_ms)
		o->opts.timeout_ms = REC_OTLP_TIMEOUT_MS;
	if (!o->opts.max_tries)
		o->opts.max_tries = REC_OTLP_TRIES;
	if (gethostname(o->host, sizeof(o->host) - 1))
		strcpy(o->host, "unknown");
	*op = o;
	return 0;
}

void rec_otlp__free(struct rec_otlp *o)
{
	if (!o)
		return;
	free(o->line);
	for (int sig = 0; sig < REC_OTLP_SIGNALS; sig++)
		free(o->batch[sig].buf);
	free(o);
}

const struct rec_otlp_counts *rec_otlp__counts(const struct rec_otlp *o)
{
	return &o->count;
}

static void attr(struct rec_json *w, const char *key, const char *kind, const char *v)
{
	rec_json__begin_object(w);
	rec_json__member_cstr(w, "key", key);
	rec_json__key(w, "value");
	rec_json__begin_object(w);
	rec_json__member_cstr(w, kind, v);
	rec_json__end_object(w);
	rec_json__end_object(w);
}

int rec_otlp__envelope(const struct rec_otlp_opts *opts, enum rec_otlp_signal sig, const char *host,
		       const char *records, size_t len, char **body, size_t *body_len)
{
	const struct signal *s = &signals[sig];
	struct rec_json w;
	char pid[16];
	FILE *f = open_memstream(body, body_len);

	if (!f)
		return -ENOMEM;
	snprintf(pid, sizeof(pid), "%d", opts->pid);
	rec_json__init(&w, f);
	rec_json__begin_object(&w);
	rec_json__key(&w, s->resource);
	rec_json__begin_array(&w);
	rec_json__begin_object(&w);
	rec_json__key(&w, "resource");
	rec_json__begin_object(&w);
	rec_json__key(&w, "attributes");
	rec_json__begin_array(&w);
	attr(&w, "service.name", "stringValue", opts->service_name);
	attr(&w, "process.pid", "intValue", pid);
	attr(&w, "host.name", "stringValue", host);
	rec_json__end_array(&w);
	rec_json__end_object(&w);
	rec_json__key(&w, s->scope);
	rec_json__begin_array(&w);
	rec_json__begin_object(&w);
	rec_json__key(&w, "scope");
	rec_json__begin_object(&w);
	rec_json__member_cstr(&w, "name", "recorder");
	rec_json__member_cstr(&w, "version", "0.1");
	rec_json__end_object(&w);
	rec_json__key(&w, s->items);
	fputc('[', f);
	fwrite(records, 1, len, f);
	fputs("]}]}]}", f);
	return fclose(f) ? -ENOMEM : 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* What o's messages start with. */
static const char *who(const struct rec_otlp *o)
{
	return o->opts.who ? o->opts.who : "recorder-tail: OTLP";
}

static int retryable(int status)
{
	return status == 429 || status == 502 || status == 503 || status == 504;
}

/* Sends sig's batch, retrying what may be retried. */
static void send_batch(struct rec_otlp *o, enum rec_otlp_signal sig)
{
	const struct signal *s = &signals[sig];
	struct batch *b = &o->batch[sig];
	struct rec_otlp_tally *t = &o->count.sig[sig];
	struct rec_http_reply r;
	size_t body_len = 0;
	char *body = NULL;
	int backoff = BACKOFF_FIRST_MS;

	if (!b->n)
		return;
	if (rec_otlp__envelope(&o->opts, sig, o->host, b->buf, b->len, &body, &body_len)) {
		fprintf(o->opts.log, "%s: out of memory; %zu %s not sent\n", who(o), b->n, s->what);
		t->not_sent += b->n;
		goto done;
	}
	for (int try = 1;; try++) {
		int err = rec_http__post(&o->url, s->path, body, body_len, o->opts.timeout_ms, &r);
		int wait = backoff;

		o->count.requests++;
		if (!err && r.status >= 200 && r.status < 300) {
			t->sent += b->n;
			break;
		}
		if (!err && !retryable(r.status)) {
			fprintf(o->opts.log,
				"%s: %s%s refused %zu %s with status %d%s; they are not sent "
				"again\n",
				who(o), o->opts.url, s->path, b->n, s->what, r.status,
				r.status == 400 ? " (bad request)" : "");
			t->not_sent += b->n;
			break;
		}
		if (try >= o->opts.max_tries || (err && r.permanent)) {
			fprintf(o->opts.log, "%s: giving up on %zu %s after %d %s to %s%s: %s\n",
				who(o), b->n, s->what, try, try == 1 ? "try" : "tries", o->opts.url,
				s->path, err ? r.error : "still busy");
			t->not_sent += b->n;
			break;
		}
		if (!err && r.retry_after_s >= 0)
			wait = 1000 * (r.retry_after_s < RETRY_AFTER_MAX_S ? r.retry_after_s
									   : RETRY_AFTER_MAX_S);
		if (err)
			fprintf(o->opts.log, "%s: %s; retrying in %d ms\n", who(o), r.error, wait);
		else
			fprintf(o->opts.log, "%s: %s%s answered %d; retrying in %d ms\n", who(o),
				o->opts.url, s->path, r.status, wait);
		o->count.retries++;
		sleep_ms(wait);
		backoff = backoff * 2 < BACKOFF_MAX_MS ? backoff * 2 : BACKOFF_MAX_MS;
	}
done:
	free(body);
	b->len = b->n = 0;
}

/* One whole line of the backend: a log record, or what a follower was not sent. */
static void take_line(struct rec_otlp *o, const char *line, size_t n)
{
	enum rec_otlp_signal sig;
	uint64_t lost;

	if (!n)
		return;
	if (sscanf(line, "{\"not_sent\":%" SCNu64 "}", &lost) == 1) {
		o->count.not_rendered += lost;
		return;
	}
	/* A span begins {"traceId": (output_otlp.c); a log record does not. */
	sig = n > 11 && !memcmp(line, "{\"traceId\":", 11) ? REC_OTLP_TRACES : REC_OTLP_LOGS;
	rec_otlp__add(o, sig, line, n);
}

void rec_otlp__not_rendered(struct rec_otlp *o, uint64_t n)
{
	o->count.not_rendered += n;
}

void rec_otlp__add(struct rec_otlp *o, enum rec_otlp_signal sig, const char *record, size_t n)
{
	struct batch *b = &o->batch[sig];

	o->count.sig[sig].taken++;
	if (grow(&b->buf, &b->cap, b->len + n + 1)) {
		o->count.sig[sig].not_sent++;
		return;
	}
	if (b->n)
		b->buf[b->len++] = ',';
	memcpy(b->buf + b->len, record, n);
	b->len += n;
	b->n++;
	if (b->n >= o->opts.batch_max)
		send_batch(o, sig);
}

void rec_otlp__write(struct rec_otlp *o, const char *data, size_t n)
{
	while (n) {
		const char *nl = memchr(data, '\n', n);
		size_t k = nl ? (size_t)(nl - data) : n;

		if (grow(&o->line, &o->line_cap, o->line_len + k + 1) == 0) {
			memcpy(o->line + o->line_len, data, k);
			o->line_len += k;
		}
		if (!nl)
			return;
		take_line(o, o->line, o->line_len);
		o->line_len = 0;
		data += k + 1;
		n -= k + 1;
	}
}

void rec_otlp__flush(struct rec_otlp *o)
{
	send_batch(o, REC_OTLP_LOGS);
	send_batch(o, REC_OTLP_TRACES);
}

int rec_otlp__pump(struct rec_otlp *o, int fd, int flush_ms)
{
	char buf[65536];

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int k = poll(&pfd, 1, flush_ms);

		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0) {
			rec_otlp__flush(o);
			continue;
		}
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		rec_otlp__write(o, buf, (size_t)n);
	}
}

uint64_t rec_otlp__finish(struct rec_otlp *o, const char *who)
{
	const struct rec_otlp_counts *k = &o->count;
	const struct rec_otlp_tally *logs = &k->sig[REC_OTLP_LOGS],
				    *spans = &k->sig[REC_OTLP_TRACES];

	rec_otlp__flush(o);
	fprintf(o->opts.log,
		"%s: %" PRIu64 " of %" PRIu64 " log records delivered to %s/v1/logs in %" PRIu64
		" requests (%" PRIu64 " retries)",
		who, logs->sent, logs->taken, o->opts.url, k->requests, k->retries);
	if (logs->not_sent || k->not_rendered)
		fprintf(o->opts.log,
			"; not delivered: %" PRIu64 " refused or unreachable, %" PRIu64
			" not sent by recorder-attach (read too slowly)",
			logs->not_sent, k->not_rendered);
	if (spans->taken)
		fprintf(o->opts.log,
			"; %" PRIu64 " of %" PRIu64 " spans delivered to %s/v1/traces (%" PRIu64
			" not delivered)",
			spans->sent, spans->taken, o->opts.url, spans->not_sent);
	fputc('\n', o->opts.log);
	fflush(o->opts.log);
	return logs->not_sent + k->not_rendered + spans->not_sent;
}
