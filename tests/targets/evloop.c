/* SPDX-License-Identifier: MIT */
/*
 * evloop.c: a small epoll server instrumented with recorder.h, the example of
 * the event-loop guide, docs/guide/event-loop.md (whose excerpts are this file's
 * lines: tests/e2e/test_evloop.sh checks them, and drives the server with
 * tests/targets/evloop_client.py).
 *
 * One thread, one epoll loop, on 127.0.0.1 only, on a port the kernel picks.
 * A request is a line "GET <key>", answered "VALUE <key> <n>" (n: the
 * connection's requests so far); "QUIT" closes the connection; "HANG" hangs
 * the server inside the request until SIGTERM or SIGINT (30 s at most), to
 * show what recorder-tail --stacks shows then. The server stops by itself
 * after SECONDS (60 by default), or on SIGTERM or SIGINT, and then closes
 * every connection still open.
 *
 *	evloop [SECONDS]
 *	  -> "pid N", "port P", "ready"
 *	  -> "conn 127.0.0.1:PORT" per connection accepted (its recording's subject)
 *	  -> "hanging 127.0.0.1:PORT" when a HANG request hangs
 *	  -> "stopped"
 *
 * The instrumentation is recorder.h's API alone: -DEVLOOP_PLAIN builds the
 * same server without it (tests/targets/evloop_plain.h), for a comparison.
 * Exit status: 0 stopped, 2 usage, 1 other errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifdef EVLOOP_PLAIN
#include "evloop_plain.h"
#else
#include <recorder.h>
#endif

#define MAX_CONNS 64
#define BUF_SIZE 4096
/* Events each connection's recording keeps. */
#define CONN_CAP 64

struct conn {
	int fd;
	int slot;
	size_t len; /* bytes of buf not parsed yet */
	uint64_t requests;
	struct rec_recording *rec; /* one recording per connection */
	struct rec_span span;	   /* its recording span, entered around each callback */
	char peer[INET_ADDRSTRLEN + 8];
	char buf[BUF_SIZE];
};

static struct rec_recorder *recorder;
/* The loop's own recording, for what no one connection owns (an accept wakeup). */
static struct rec_recording *loop_rec;
static struct rec_span loop_span;
static struct conn *conns[MAX_CONNS];
static int epfd;
/* SIGTERM and SIGINT, blocked: the loop takes them from a signalfd. */
static sigset_t stop_signals;
static int stopping;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Writes all of s, or fails: replies are short, and the client reads them. */
static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A new connection on fd, with its recording, or NULL (then fd is closed). */
static struct conn *conn_open(int fd, const struct sockaddr_in *sa)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct conn *c = NULL;
	char addr[INET_ADDRSTRLEN];
	int slot;

	for (slot = 0; slot < MAX_CONNS && conns[slot]; slot++)
		;
	if (slot == MAX_CONNS || !(c = calloc(1, sizeof(*c))))
		goto fail;
	c->fd = fd;
	c->slot = slot;
	inet_ntop(AF_INET, &sa->sin_addr, addr, sizeof(addr));
	snprintf(c->peer, sizeof(c->peer), "%s:%u", addr, ntohs(sa->sin_port));
	/* One recording per connection, its subject the peer. */
	c->rec = rec_recording_new(recorder, CONN_CAP);
	if (!c->rec)
		goto fail;
	rec_recording_span(&c->span, c->rec, c->peer);
	ev.data.ptr = c;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		goto fail;
	conns[slot] = c;
	printf("conn %s\n", c->peer);
	return c;
fail:
	if (c)
		rec_recording_free(c->rec);
	free(c);
	close(fd);
	return NULL;
}

/*
 * Closes c, whose span the caller has entered: its last event, then its
 * recording is freed, and only then its fd closed.
 */
static void conn_close(struct conn *c, const char *why)
{
	REC_INFO("closed", REC_STR(why, why), REC_U64(requests, c->requests));
	rec_span_exit(&c->span);
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	conns[c->slot] = NULL;
	/*
	 * Free the recording, then close: from close() on, accept() may give
	 * the fd to a new connection (in another thread's loop too), and a
	 * server that keeps its connections by fd (memcached does) hands it
	 * this one's slot, recording and all.
	 */
	rec_recording_free(c->rec);
	close(c->fd);
	free(c);
}

/* A request stuck (until SIGTERM or SIGINT, 30 s at most): then the server stops. */
static void hang(struct conn *c)
{
	struct timespec most = { .tv_sec = 30 };

	printf("hanging %s\n", c->peer);
	sigtimedwait(&stop_signals, NULL, &most);
	stopping = 1;
}

/* Serves one request line (without its newline). Returns 1 if it asked to close. */
static int serve(struct conn *c, const char *line, size_t n)
{
	char reply[BUF_SIZE + 32];
	struct rec_span req;
	int quit = 0;

	/* A span per request, inside the connection's span. */
	REC_SPAN_INIT(&req, INFO, "request");
	rec_span_enter(&req);
	if (n && line[n - 1] == '\r')
		n--;
	if (n > 4 && memcmp(line, "GET ", 4) == 0) {
		const char *key = line + 4;
		size_t klen = n - 4;
		int len;

		c->requests++;
		/* The key is in the read buffer, not NUL-terminated: its klen bytes only. */
		REC_INFO("get", REC_STRN(key, key, klen), REC_U64(n, c->requests));
		len = snprintf(reply, sizeof(reply), "VALUE %.*s %llu\n", (int)klen, key,
			       (unsigned long long)c->requests);
		if (write_all(c->fd, reply, (size_t)len))
			quit = 1;
	} else if (n == 4 && memcmp(line, "QUIT", 4) == 0) {
		quit = 1;
	} else if (n == 4 && memcmp(line, "HANG", 4) == 0) {
		REC_WARN("hanging");
		hang(c);
	} else {
		REC_WARN("bad request", REC_STRN(line, line, n));
		if (write_all(c->fd, "ERROR\n", 6))
			quit = 1;
	}
	rec_span_exit(&req);
	return quit;
}

/* A wakeup of connection c: enter its span, serve what it sent, leave it. */
static void on_readable(struct conn *c)
{
	size_t off = 0;
	ssize_t r;
	char *nl;

	rec_span_enter(&c->span);
	r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
	if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
		rec_span_exit(&c->span);
		return;
	}
	if (r <= 0) {
		conn_close(c, r == 0 ? "peer closed" : "read failed");
		return;
	}
	c->len += (size_t)r;
	while ((nl = memchr(c->buf + off, '\n', c->len - off))) {
		if (serve(c, c->buf + off, (size_t)(nl - (c->buf + off)))) {
			conn_close(c, "quit");
			return;
		}
		off = (size_t)(nl - c->buf) + 1;
	}
	if (off == 0 && c->len == sizeof(c->buf)) {
		conn_close(c, "line too long");
		return;
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	rec_span_exit(&c->span);
}

/*
 * A wakeup of the listener, which may accept several connections: the loop's
 * span around it, and each connection's own span, in turn, around its events.
 */
static void on_accept(int lfd)
{
	uint64_t accepted = 0;

	rec_span_enter(&loop_span);
	for (;;) {
		struct sockaddr_in sa;
		socklen_t salen = sizeof(sa);
		int fd = accept4(lfd, (struct sockaddr *)&sa, &salen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c;

		if (fd < 0)
			break;
		c = conn_open(fd, &sa);
		if (!c) {
			REC_WARN("refused", REC_I64(fd, fd));
			continue;
		}
		accepted++;
		rec_span_enter(&c->span);
		REC_INFO("accepted", REC_STR(peer, c->peer));
		rec_span_exit(&c->span);
	}
	REC_DEBUG("accept wakeup", REC_U64(accepted, accepted));
	rec_span_exit(&loop_span);
}

/* Stopping: one callback for every connection, each inside its own span in turn. */
static void close_all(const char *why)
{
	for (int i = 0; i < MAX_CONNS; i++) {
		if (!conns[i])
			continue;
		rec_span_enter(&conns[i]->span);
		conn_close(conns[i], why);
	}
}

/* A socket on 127.0.0.1, on a port the kernel picks, or -1. */
static int listen_loopback(unsigned int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		perror("evloop: listen on 127.0.0.1");
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

int main(int argc, char **argv)
{
	struct epoll_event ev = { .events = EPOLLIN };
	long seconds = argc > 1 ? strtol(argv[1], NULL, 10) : 60;
	uint64_t deadline;
	unsigned int port = 0;
	int lfd, sfd;

	if (argc > 2 || seconds <= 0) {
		fprintf(stderr, "usage: evloop [SECONDS]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	sigprocmask(SIG_BLOCK, &stop_signals, NULL);
	signal(SIGPIPE, SIG_IGN);
	recorder = rec_recorder_new();
	loop_rec = rec_recording_new(recorder, CONN_CAP);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	sfd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
	lfd = listen_loopback(&port);
	if (!recorder || !loop_rec || epfd < 0 || sfd < 0 || lfd < 0)
		return 1;
	rec_recording_span(&loop_span, loop_rec, "loop");
	ev.data.ptr = &lfd;
	epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
	ev.data.ptr = &sfd;
	epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &ev);
	printf("pid %d\nport %u\nready\n", (int)getpid(), port);

	deadline = now_ms() + (uint64_t)seconds * 1000;
	while (!stopping) {
		struct epoll_event events[16];
		uint64_t now = now_ms();
		int n;

		if (now >= deadline)
			break;
		n = epoll_wait(epfd, events, 16,
			       deadline - now > 1000 ? 1000 : (int)(deadline - now));
		for (int i = 0; i < n && !stopping; i++) {
			if (events[i].data.ptr == &lfd)
				on_accept(lfd);
			else if (events[i].data.ptr == &sfd)
				stopping = 1;
			else
				on_readable(events[i].data.ptr);
		}
	}
	close_all("server stopping");
	rec_recording_free(loop_rec);
	rec_recorder_free(recorder);
	close(lfd);
	printf("stopped\n");
	return 0;
}
