/* SPDX-License-Identifier: MIT */
/*
 * A small HTTP/1.1 client for the OTLP exporter: one POST per connection, to
 * an http:// URL (no TLS), with one deadline for the whole request (connect,
 * send, the reply's head), so that a receiver that is down, is not HTTP, or
 * hangs costs a bounded wait and a clear error.
 */
#ifndef REC_HTTP_H
#define REC_HTTP_H

#include <stddef.h>

/* A parsed http://host[:port][/path] URL. */
struct rec_http_url {
	char host[256];
	char port[8];
	char path[1024]; /* "" or "/base", without a trailing slash */
};

/* Parses url. Returns 0, or -EINVAL with why set ("only http:// URLs are supported"). */
int rec_http__parse_url(const char *url, struct rec_http_url *u, const char **why);

struct rec_http_reply {
	int status;	   /* 200, 503, ...; 0 if none came */
	int retry_after_s; /* Retry-After in seconds, or -1 */
	int permanent;	   /* when status is 0: retrying cannot help (no such host, not HTTP) */
	char error[512];   /* when status is 0: what failed */
};

/*
 * POSTs body (len bytes, application/json) to u's path + suffix, within
 * timeout_ms in all (connect, send and the reply's head; the name lookup is
 * the resolver's own). Returns 0 once a status line came (r->status), or
 * -errno with r->error saying what failed.
 */
int rec_http__post(const struct rec_http_url *u, const char *suffix, const char *body, size_t len,
		   int timeout_ms, struct rec_http_reply *r);

#endif /* REC_HTTP_H */
