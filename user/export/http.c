// SPDX-License-Identifier: MIT
/* A small HTTP/1.1 POST client (http.h). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "export/http.h"
#include "wire/clock.h"

/* What is read of a reply: the status line and headers; the body is not needed. */
#define REPLY_MAX 8192

int rec_http__parse_url(const char *url, struct rec_http_url *u, const char **why)
{
	const char *p = url, *host, *end, *colon;
	size_t n;

	memset(u, 0, sizeof(*u));
	if (strncmp(p, "http://", 7) != 0) {
		*why = strncmp(p, "https://", 8) == 0 ? "https is not supported: use http://"
						      : "expected http://HOST[:PORT][/PATH]";
		return -EINVAL;
	}
	host = p + 7;
	end = host + strcspn(host, "/");
	colon = memchr(host, ':', (size_t)(end - host));
	n = (size_t)((colon ? colon : end) - host);
	if (!n || n >= sizeof(u->host)) {
		*why = "no host";
		return -EINVAL;
	}
	memcpy(u->host, host, n);
	if (colon) {
		n = (size_t)(end - colon - 1);
		if (!n || n >= sizeof(u->port) || strspn(colon + 1, "0123456789") < n) {
			*why = "the port is not a number";
			return -EINVAL;
		}
		memcpy(u->port, colon + 1, n);
	} else {
		strcpy(u->port, "80");
	}
	n = strlen(end);
	while (n && end[n - 1] == '/')
		n--;
	if (n >= sizeof(u->path) || memchr(end, ' ', n) || memchr(end, '\r', n) ||
	    memchr(end, '\n', n)) {
		*why = "the path is too long or has spaces";
		return -EINVAL;
	}
	memcpy(u->path, end, n);
	return 0;
}

/* Waits until fd is ready for events, until deadline (ms). 0, or -ETIMEDOUT. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	for (;;) {
		int64_t left = deadline - rec_clock__mono_ms();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int connect_to(const struct rec_http_url *u, int64_t deadline, struct rec_http_reply *r)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	int fd = -1, err, gai;

	gai = getaddrinfo(u->host, u->port, &hints, &ai);
	if (gai) {
		snprintf(r->error, sizeof(r->error), "cannot resolve %s: %s", u->host,
			 gai_strerror(gai));
		r->permanent = gai == EAI_NONAME;
		return -EHOSTUNREACH;
	}
	err = -ECONNREFUSED;
	for (a = ai; a; a = a->ai_next) {
		socklen_t len = sizeof(err);
		int soerr = 0;

		fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			err = wait_fd(fd, POLLOUT, deadline);
			if (!err && !getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) && !soerr)
				break;
			if (!err)
				err = -soerr;
		} else {
			err = -errno;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		snprintf(r->error, sizeof(r->error), "cannot connect to %s:%s: %s", u->host,
			 u->port, strerror(-err));
	return fd < 0 ? err : fd;
}

static int send_all(int fd, const char *p, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (wait_fd(fd, POLLOUT, deadline))
			return -ETIMEDOUT;
	}
	return 0;
}

/* Parses "HTTP/1.x NNN ..." and a Retry-After header from the head of a reply. */
static int parse_reply(char *head, struct rec_http_reply *r)
{
	char *line, *save = NULL;
	int first = 1;

	for (line = strtok_r(head, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
		if (first) {
			int status;

			if (strncmp(line, "HTTP/1.", 7) != 0 ||
			    sscanf(line + 8, " %3d", &status) != 1 || status < 100 || status > 599)
				return -EPROTO;
			r->status = status;
			first = 0;
		} else if (!strncasecmp(line, "Retry-After:", 12)) {
			int s = atoi(line + 12);

			r->retry_after_s = s >= 0 ? s : -1;
		}
	}
	return first ? -EPROTO : 0;
}

int rec_http__post(const struct rec_http_url *u, const char *suffix, const char *body, size_t len,
		   int timeout_ms, struct rec_http_reply *r)
{
	char head[REPLY_MAX + 1], req[2048];
	int64_t deadline = rec_clock__mono_ms() + timeout_ms;
	size_t got = 0;
	int fd, err, n;

	memset(r, 0, sizeof(*r));
	r->retry_after_s = -1;
	fd = connect_to(u, deadline, r);
	if (fd < 0)
		return fd;
	n = snprintf(
		req, sizeof(req),
		"POST %s%s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/json\r\n"
		"Content-Length: %zu\r\nConnection: close\r\nUser-Agent: recorder-tail\r\n\r\n",
		u->path, suffix, u->host, u->port, len);
	err = send_all(fd, req, (size_t)n, deadline) ?: send_all(fd, body, len, deadline);
	if (err) {
		snprintf(r->error, sizeof(r->error), "sending to %s:%s failed: %s", u->host,
			 u->port,
			 err == -ETIMEDOUT ? "timed out (the receiver does not read)"
					   : strerror(-err));
		close(fd);
		return err;
	}
	/* The status line and headers: until the blank line, the end, or REPLY_MAX bytes. */
	while (got < REPLY_MAX) {
		ssize_t k = recv(fd, head + got, REPLY_MAX - got, 0);

		if (k > 0) {
			got += (size_t)k;
			head[got] = 0;
			if (strstr(head, "\r\n\r\n"))
				break;
			continue;
		}
		if (k == 0)
			break;
		if (errno != EAGAIN && errno != EINTR) {
			err = -errno;
			break;
		}
		err = wait_fd(fd, POLLIN, deadline);
		if (err)
			break;
	}
	close(fd);
	head[got] = 0;
	if (err && !got) {
		snprintf(r->error, sizeof(r->error), "no reply from %s:%s: %s", u->host, u->port,
			 err == -ETIMEDOUT ? "timed out waiting for its answer" : strerror(-err));
		return err;
	}
	if (parse_reply(head, r)) {
		r->permanent = 1;
		snprintf(r->error, sizeof(r->error), "%s:%s did not answer with HTTP (it sent %s)",
			 u->host, u->port, got ? "something else" : "nothing");
		return -EPROTO;
	}
	return 0;
}
