// SPDX-License-Identifier: MIT
/*
 * The clients of the control sockets: accepting one, answering its query, and
 * the followers that keep receiving a target's events until they hang up.
 *
 * Nothing here waits on a client: the ring's consumer shares the loop with
 * them. A request is read as it comes, within a deadline; an answer is rendered
 * into the client's buffer and sent as the socket takes it; a follower that
 * lets follow_buffer bytes pile up misses events until it catches up, and is
 * then told how many. At most max_clients are served at once.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "query.h"
#include "session_int.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static unsigned int max_clients(const struct rec_session *s)
{
	return s->opts.max_clients ? s->opts.max_clients : REC_CLIENTS_MAX;
}

static int timeout_ms(const struct rec_session *s)
{
	return s->opts.client_timeout_ms > 0 ? s->opts.client_timeout_ms : REC_CLIENT_TIMEOUT_MS;
}

static size_t follow_buffer(const struct rec_session *s)
{
	return s->opts.follow_buffer ? s->opts.follow_buffer : REC_FOLLOW_BUFFER;
}

static size_t pending(const struct client *c)
{
	return c->olen - c->ooff;
}

/* stdio's writes to c->out land here, at the end of what is to be sent. */
static ssize_t obuf_write(void *cookie, const char *data, size_t n)
{
	struct client *c = cookie;

	/* Reuse what was sent once that is no less than what is left: amortized O(1). */
	if (c->olen + n > c->ocap && c->ooff && c->ooff >= pending(c)) {
		memmove(c->obuf, c->obuf + c->ooff, pending(c));
		c->olen -= c->ooff;
		c->ooff = 0;
	}
	if (c->olen + n > c->ocap) {
		size_t cap = c->ocap ? c->ocap : 4096;
		char *v;

		while (cap < c->olen + n)
			cap *= 2;
		v = realloc(c->obuf, cap);
		if (!v) {
			c->out_failed = 1;
			return 0;
		}
		c->obuf = v;
		c->ocap = cap;
	}
	memcpy(c->obuf + c->olen, data, n);
	c->olen += n;
	return n;
}

/* What c is watched for: input until it has sent all it will, room while output waits. */
static void client_watch(struct rec_session *s, struct client *c)
{
	struct epoll_event ev = { .data.ptr = &c->w };

	ev.events = (c->rd_closed ? 0 : EPOLLIN) | (c->want_out ? EPOLLOUT : 0);
	epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void unlink_follower(struct rec_session *s, struct client *c)
{
	for (struct client **pp = &s->followers; *pp; pp = &(*pp)->next_follower) {
		if (*pp == c) {
			*pp = c->next_follower;
			break;
		}
	}
	c->next_follower = NULL;
}

/* Closes c now; it is freed at the end of the loop's turn, as epoll may still name it. */
static void client_close(struct rec_session *s, struct client *c)
{
	if (c->state == C_CLOSED)
		return;
	if (c->state == C_FOLLOW)
		unlink_follower(s, c);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->state = C_CLOSED;
	s->nclients--;
}

/* One line that tells a follower how many events it was not sent. */
static void tell_missed(struct client *c)
{
	rec_query__not_sent(c->out, &c->t->proc, c->missed, &c->q);
	c->missed = 0;
	fflush(c->out);
}

/* Sends what is queued for c, as much as the socket takes now. */
static void client_send(struct rec_session *s, struct client *c)
{
	/* A follower that missed events hears of it once it has room again. */
	if (c->state == C_FOLLOW && c->missed && pending(c) <= follow_buffer(s) / 2)
		tell_missed(c);
	if (c->out_failed) {
		client_close(s, c);
		return;
	}
	while (pending(c)) {
		ssize_t n = send(c->fd, c->obuf + c->ooff, pending(c), MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n > 0) {
			c->ooff += n;
			c->deadline_ms = now_ms() + timeout_ms(s);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!c->want_out) {
				c->want_out = 1;
				client_watch(s, c);
			}
			return;
		}
		client_close(s, c);
		return;
	}
	c->olen = c->ooff = 0;
	/* A big answer sent: its buffer need not stay. */
	if (c->ocap > 2 * follow_buffer(s)) {
		free(c->obuf);
		c->obuf = NULL;
		c->ocap = 0;
	}
	if (c->want_out) {
		c->want_out = 0;
		client_watch(s, c);
	}
	if (c->state == C_ANSWER)
		client_close(s, c);
}

/* A last word to a client we do not serve: best effort, it is closed right after. */
static void say_and_close(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say_and_close(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		send(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1,
		     MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

/* The client counters, for the answer of --stats. */
static struct rec_output_clients clients_stats(struct rec_session *s)
{
	const struct client_counters *k = &s->ccount;

	return (struct rec_output_clients){
		.connected = s->nclients,
		.max_clients = max_clients(s),
		.accepted = k->accepted,
		.denied = k->denied,
		.refused = k->refused,
		.timed_out = k->timed_out,
		.not_sent = k->not_sent,
	};
}

/* c's request is whole: renders the answer into its buffer, and it becomes a follower or not. */
static void client_answer(struct rec_session *s, struct client *c)
{
	struct rec_output_clients clients;
	struct target *t = c->t;
	int err;

	c->state = C_ANSWER;
	c->deadline_ms = now_ms() + timeout_ms(s);
	err = rec_control__parse(&c->req, sizeof(c->req), &c->q);
	if (err) {
		fprintf(c->out, "1recorder-attach: malformed request: %s\n", strerror(-err));
		goto send;
	}
	if (!t->done)
		session__refresh(s, t);
	if (c->q.flags & REC_Q_DUMP) {
		char path[4096];

		err = session__write_dump(s, t, path, sizeof(path));
		if (err)
			fprintf(c->out, "1recorder-attach: failed to write the dump of pid %d into "
					"%s: %s\n", (int)t->proc.pid,
				s->opts.dump_dir ? s->opts.dump_dir : "(no --dump-dir)",
				strerror(-err));
		else
			fprintf(c->out, "0%s\n", path);
		goto send;
	}
	fputc('0', c->out);
	clients = clients_stats(s);
	rec_query__answer_live(c->out, &t->proc, &c->q, &clients);
	if ((c->q.flags & REC_Q_FOLLOW) && !t->done &&
	    !(c->q.flags & (REC_Q_LIST | REC_Q_STACKS | REC_Q_STATS))) {
		c->state = C_FOLLOW;
		c->next_follower = s->followers;
		s->followers = c;
	}
send:
	fflush(c->out);
	client_send(s, c);
}

/* Reads what c sent: its request, or, once it has one, input that is thrown away. */
static void client_read(struct rec_session *s, struct client *c)
{
	char junk[512];
	ssize_t n;

	if (c->state == C_REQUEST)
		n = recv(c->fd, (char *)&c->req + c->got, sizeof(c->req) - c->got, MSG_DONTWAIT);
	else
		n = recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			client_close(s, c);
		return;
	}
	if (n == 0) {
		/* It has said all it will; it may still read. */
		c->rd_closed = 1;
		client_watch(s, c);
		if (c->state == C_REQUEST) {
			fprintf(c->out, "1recorder-attach: malformed request: %s\n",
				strerror(EPROTO));
			c->state = C_ANSWER;
			fflush(c->out);
			client_send(s, c);
		}
		return;
	}
	if (c->state == C_REQUEST) {
		c->got += n;
		if (c->got == sizeof(c->req))
			client_answer(s, c);
	}
}

static void client_new(struct rec_session *s, struct target *t, int fd)
{
	static const cookie_io_functions_t obuf_io = { .write = obuf_write };
	struct client *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->t = t;
	c->state = C_REQUEST;
	c->deadline_ms = now_ms() + timeout_ms(s);
	c->out = fopencookie(c, "w", obuf_io);
	if (!c->out || session__watch_add(s, fd, &c->w, W_CLIENT, c)) {
		if (c->out)
			fclose(c->out);
		close(fd);
		free(c);
		return;
	}
	c->next = s->clients;
	s->clients = c;
	s->nclients++;
	s->ccount.accepted++;
}

void session__accept_clients(struct rec_session *s, struct target *t)
{
	/* A bounded batch: a flood of connections does not hold the loop. */
	for (int i = 0; i < 64 && t->listen_fd >= 0; i++) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd;

		fd = accept4(t->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
		    (cred.uid != 0 && cred.uid != t->proc.uid)) {
			s->ccount.denied++;
			if (t->proc.uid == (uid_t)-1 || t->proc.uid == 0)
				say_and_close(fd, "1recorder-attach: uid %u may not read pid %d: only "
						  "root may\n", (unsigned int)cred.uid,
					      (int)t->proc.pid);
			else
				say_and_close(fd, "1recorder-attach: uid %u may not read pid %d: only "
						  "root and its owner (uid %u) may\n",
					      (unsigned int)cred.uid, (int)t->proc.pid,
					      (unsigned int)t->proc.uid);
			continue;
		}
		if (s->nclients >= max_clients(s)) {
			s->ccount.refused++;
			say_and_close(fd, "1recorder-attach: too many clients: at most %u at once "
					  "(--max-clients); pid %d was not read, try again later\n",
				      max_clients(s), (int)t->proc.pid);
			continue;
		}
		client_new(s, t, fd);
	}
}

void session__client_ready(struct rec_session *s, struct client *c, uint32_t events)
{
	if (c->state == C_CLOSED)
		return;
	if (events & EPOLLERR) {
		client_close(s, c);
		return;
	}
	if ((events & (EPOLLIN | EPOLLHUP)) && !c->rd_closed)
		client_read(s, c);
	/* Gone both ways: what is queued can no longer be sent. */
	if (events & EPOLLHUP) {
		client_close(s, c);
		return;
	}
	if ((events & EPOLLOUT) && c->state != C_CLOSED)
		client_send(s, c);
}

void session__follow_event(struct rec_session *s, struct target *t, const struct rec_rstate *rs,
			   const struct rec_decoded *d)
{
	size_t limit = follow_buffer(s);
	struct client *c, *next;

	for (c = s->followers; c; c = next) {
		next = c->next_follower;
		if (c->t != t || !rec_query__match(&c->q, rs))
			continue;
		/* Full, unless the socket takes some now (it is not waited for). */
		if (pending(c) >= limit && !c->want_out)
			client_send(s, c);
		if (c->state != C_FOLLOW)
			continue;
		/* Once it has missed some, it takes events again only at half the limit. */
		if (pending(c) >= limit || (c->missed && pending(c) > limit / 2)) {
			c->missed++;
			s->ccount.not_sent++;
			continue;
		}
		if (c->missed)
			tell_missed(c);
		rec_query__event(c->out, &t->proc, rs, d, &c->q);
		fflush(c->out);
	}
}

void session__clients_tick(struct rec_session *s)
{
	int64_t now = now_ms();
	struct client **pp;

	for (struct client *c = s->clients; c; c = c->next) {
		switch (c->state) {
		case C_FOLLOW:
			/* What the consumer queued goes out now: followers see events at once. */
			if ((pending(c) || c->missed) && !c->want_out)
				client_send(s, c);
			break;
		case C_REQUEST:
			if (now < c->deadline_ms)
				break;
			s->ccount.timed_out++;
			c->state = C_ANSWER;
			fprintf(c->out, "1recorder-attach: no whole request within %d ms "
					"(--client-timeout); closing\n", timeout_ms(s));
			fflush(c->out);
			/* Once: if that cannot go out now, it never will. */
			c->deadline_ms = now;
			client_send(s, c);
			if (c->state != C_CLOSED)
				client_close(s, c);
			break;
		case C_ANSWER:
			if (now >= c->deadline_ms) {
				s->ccount.timed_out++;
				client_close(s, c);
			}
			break;
		case C_CLOSED:
			break;
		}
	}
	for (pp = &s->clients; *pp;) {
		struct client *c = *pp;

		if (c->state != C_CLOSED) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		fclose(c->out);
		free(c->obuf);
		free(c);
	}
}

void session__clients_target_done(struct rec_session *s, struct target *t)
{
	for (struct client *c = s->clients; c; c = c->next) {
		if (c->t != t || c->state != C_FOLLOW)
			continue;
		/* The last of its events, what it missed, then the end. */
		unlink_follower(s, c);
		c->state = C_ANSWER;
		c->deadline_ms = now_ms() + timeout_ms(s);
		if (c->missed)
			tell_missed(c);
		client_send(s, c);
	}
}

void session__clients_free(struct rec_session *s)
{
	for (struct client *c = s->clients; c; c = c->next) {
		if (c->state == C_CLOSED)
			continue;
		if (c->state == C_FOLLOW && c->missed)
			tell_missed(c);
		c->state = C_ANSWER;
		client_send(s, c);
		client_close(s, c);
	}
	session__clients_tick(s);
}
