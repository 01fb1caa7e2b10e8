// SPDX-License-Identifier: MIT
/* The clients of the control sockets (clients.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serving/bbuf.h"
#include "serving/clients.h"
#include "serving/control.h"
#include "serving/feed.h"
#include "serving/query.h"
#include "wire/clock.h"

/* Connections taken from one listening socket at a time: a flood does not hold the loop. */
#define ACCEPT_BATCH 64
/* Events taken from the epoll set at a time. */
#define READY_BATCH 16
/*
 * A follower's events are rendered after the ring is drained, not as they are
 * ingested: at most RENDER_AHEAD bytes of text wait to be sent, and the
 * rendering of every follower together takes at most RENDER_BUDGET_NS of a
 * turn of the loop, so a reader, fast or slow, never holds the consumer.
 */
#define RENDER_AHEAD (64u << 10)
#define RENDER_BUDGET_NS 2000000LL
/* The clock is read once per this many events rendered. */
#define RENDER_CLOCK_EVERY 32
/* A line to a client that is not served, and what is read past a request. */
#define LINE_MAX_BYTES 512

enum watch_kind {
	W_LISTEN,
	W_CLIENT
};

/*
 * What a follower holds, in order: an event or span to render (shared with
 * the other followers, feed.h), or, with it NULL, a count of events it missed.
 */
struct held {
	struct rec_feed_item *it;
	uint64_t missed;
};

/* What an fd of the epoll set is: epoll hands back a pointer to it. */
struct watch {
	enum watch_kind kind;
	void *ptr;
};

/* A target's listening socket. Freed at the end of the loop's turn once closed. */
struct listener {
	int fd; /* the caller's; -1 once its target is done */
	struct rec_proc *p;
	void *owner;
	struct watch w;
	struct listener *next;
};

enum client_state {
	C_REQUEST, /* reading its request, until its deadline */
	C_ANSWER,  /* sending its answer; closed once it is sent */
	C_FOLLOW,  /* sending its answer, then every new event its query selects */
	C_CLOSED,  /* closed; freed at the end of the loop's turn */
};

/*
 * A client of a control socket. Nothing waits on it: its request is read and
 * its answer sent as the socket allows, from out's buffer.
 */
struct client {
	int fd;
	enum client_state state;
	struct rec_proc *p;	/* the model of its target, */
	void *owner;		/* and the target */
	struct rec_request req; /* as read so far */
	size_t got;
	struct rec_query q;
	FILE *out;	      /* writes into ob */
	struct rec_output o;  /* its backend, made once: the answer's, and a follower's */
	struct rec_bbuf ob;   /* what is to be sent */
	struct rec_bbuf held; /* a follower's events not rendered yet: struct held */
	size_t held_bytes;    /* what they count against follow_buffer: their records' bytes */
	int in_process;	      /* a follower inside this process: sink, not a socket */
	struct rec_clients_sink sink;
	int out_failed;	     /* ob or held could not grow: the output is cut */
	int rd_closed;	     /* it will send nothing more: no longer watched for input */
	int want_out;	     /* watched for room to send */
	int64_t deadline_ms; /* C_REQUEST: for the whole request; C_ANSWER: for the next byte */
	uint64_t missed;     /* events it was not sent since it was last told */
	struct watch w;
	struct client *next; /* every client */
	struct client *next_follower;
};

/* What happened to the clients of all targets, shown with --stats. */
struct client_counters {
	uint64_t accepted;
	uint64_t denied;    /* neither root nor the target's owner */
	uint64_t refused;   /* past max_clients */
	uint64_t timed_out; /* no request, or no progress sending an answer, in time */
	uint64_t not_sent;  /* events dropped for followers that did not keep up */
};

struct rec_clients {
	struct rec_clients_opts opts;
	int epfd;
	struct listener *listeners;
	struct client *clients; /* every open client */
	size_t nclients;
	struct client *followers; /* those in C_FOLLOW */
	struct client_counters count;
};

static unsigned int max_clients(const struct rec_clients *cs)
{
	return cs->opts.max_clients ? cs->opts.max_clients : REC_CLIENTS_MAX;
}

static int timeout_ms(const struct rec_clients *cs)
{
	return cs->opts.timeout_ms > 0 ? cs->opts.timeout_ms : REC_CLIENT_TIMEOUT_MS;
}

static size_t follow_buffer(const struct rec_clients *cs)
{
	return cs->opts.follow_buffer ? cs->opts.follow_buffer : REC_FOLLOW_BUFFER;
}

int rec_clients__new(struct rec_clients **csp, const struct rec_clients_opts *opts)
{
	struct rec_clients *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return -ENOMEM;
	cs->opts = *opts;
	cs->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (cs->epfd < 0) {
		int err = -errno;

		free(cs);
		return err;
	}
	*csp = cs;
	return 0;
}

int rec_clients__fd(const struct rec_clients *cs)
{
	return cs->epfd;
}

size_t rec_clients__count(const struct rec_clients *cs)
{
	return cs->nclients;
}

/* Has epoll report fd as w, of kind and for ptr. Returns 0 or -errno. */
static int watch_add(struct rec_clients *cs, int fd, struct watch *w, enum watch_kind kind,
		     void *ptr)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };

	w->kind = kind;
	w->ptr = ptr;
	return epoll_ctl(cs->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int rec_clients__listen(struct rec_clients *cs, int listen_fd, struct rec_proc *p, void *owner)
{
	struct listener *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	l->fd = listen_fd;
	l->p = p;
	l->owner = owner;
	err = watch_add(cs, listen_fd, &l->w, W_LISTEN, l);
	if (err) {
		free(l);
		return err;
	}
	l->next = cs->listeners;
	cs->listeners = l;
	return 0;
}

/* What c has rendered and not sent yet: a sink's, what its taker has not taken. */
static size_t pending(const struct client *c)
{
	return c->in_process ? c->sink.backlog(c->sink.ctx) : rec_bbuf__pending(&c->ob);
}

/* What a follower holds: text to send, and events to render. */
static size_t held(const struct client *c)
{
	return pending(c) + c->held_bytes;
}

/* Appends an entry to what c holds; a failure cuts its output. */
static void hold(struct client *c, struct rec_feed_item *it, uint64_t missed)
{
	struct held h = { it, missed };

	if (rec_bbuf__put(&c->held, &h, sizeof(h))) {
		c->out_failed = 1;
		rec_feed__put(it);
		return;
	}
	if (it)
		c->held_bytes += sizeof(uint32_t) + it->len;
}

/* Lets go of what c holds, unrendered. */
static void drop_held(struct client *c)
{
	struct held h;

	while (rec_bbuf__pending(&c->held)) {
		memcpy(&h, c->held.p + c->held.off, sizeof(h));
		c->held.off += sizeof(h);
		rec_feed__put(h.it);
	}
	c->held_bytes = 0;
}

/* stdio's writes to c->out land here, at the end of what is to be sent. */
static ssize_t obuf_write(void *cookie, const char *data, size_t n)
{
	struct client *c = cookie;

	if (rec_bbuf__put(&c->ob, data, n)) {
		c->out_failed = 1;
		return 0;
	}
	return n;
}

/* What c is watched for: input until it has sent all it will, room while output waits. */
static void client_watch(struct rec_clients *cs, struct client *c)
{
	struct epoll_event ev = { .data.ptr = &c->w };

	ev.events = (c->rd_closed ? 0 : EPOLLIN) | (c->want_out ? EPOLLOUT : 0);
	epoll_ctl(cs->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void unlink_follower(struct rec_clients *cs, struct client *c)
{
	for (struct client **pp = &cs->followers; *pp; pp = &(*pp)->next_follower) {
		if (*pp == c) {
			*pp = c->next_follower;
			break;
		}
	}
	c->next_follower = NULL;
}

/* Closes c now; it is freed at the end of the loop's turn, as epoll may still name it. */
static void client_close(struct rec_clients *cs, struct client *c)
{
	if (c->state == C_CLOSED)
		return;
	if (c->state == C_FOLLOW)
		unlink_follower(cs, c);
	c->state = C_CLOSED;
	if (c->in_process)
		return;
	epoll_ctl(cs->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	cs->nclients--;
}

/*
 * Queues, after the events already held, the line that tells a follower how
 * many events it was not sent.
 */
static void tell_missed(struct client *c)
{
	hold(c, NULL, c->missed);
	c->missed = 0;
}

/*
 * Renders c's held events and spans into its backend, as ingesting decoded
 * them (never again here), until ahead bytes wait to be sent or, if
 * deadline_ns is not 0, the clock passes it. Returns 1 if it stopped at the
 * deadline.
 */
static int render(struct rec_clients *cs, struct client *c, size_t ahead, int64_t deadline_ns)
{
	struct rec_bbuf *h = &c->held;
	unsigned int n = 0;
	int late = 0;

	while (rec_bbuf__pending(h) && pending(c) < ahead) {
		struct held e;

		if (deadline_ns && ++n % RENDER_CLOCK_EVERY == 0 &&
		    rec_clock__mono_ns() > deadline_ns) {
			late = 1;
			break;
		}
		memcpy(&e, h->p + h->off, sizeof(e));
		h->off += sizeof(e);
		if (!e.it) {
			rec_output__not_sent(&c->o, c->p, e.missed);
			continue;
		}
		c->held_bytes -= sizeof(uint32_t) + e.it->len;
		if (e.it->is_span)
			rec_query__follow_span(&c->o, c->p, e.it->span_from, &e.it->span);
		else
			rec_query__follow_event(&c->o, &e.it->ev, &c->q);
		rec_feed__put(e.it);
	}
	if (!rec_bbuf__pending(h))
		rec_bbuf__reset(h, 2 * follow_buffer(cs));
	if (c->out)
		fflush(c->out);
	return late;
}

/* Sends what is queued for c, as much as the socket takes now. */
static void client_send(struct rec_clients *cs, struct client *c)
{
	if (c->out_failed || c->in_process) {
		client_close(cs, c);
		return;
	}
	while (pending(c)) {
		ssize_t n =
			send(c->fd, c->ob.p + c->ob.off, pending(c), MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n > 0) {
			c->ob.off += n;
			c->deadline_ms = rec_clock__mono_ms() + timeout_ms(cs);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!c->want_out) {
				c->want_out = 1;
				client_watch(cs, c);
			}
			return;
		}
		client_close(cs, c);
		return;
	}
	/* A big answer sent: its buffer need not stay. */
	rec_bbuf__reset(&c->ob, 2 * follow_buffer(cs));
	if (c->want_out) {
		c->want_out = 0;
		client_watch(cs, c);
	}
	if (c->state == C_ANSWER)
		client_close(cs, c);
}

/* A last word to a client we do not serve: best effort, it is closed right after. */
static void say_and_close(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say_and_close(int fd, const char *fmt, ...)
{
	char buf[LINE_MAX_BYTES];
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

/*
 * The client counters, and the target's own that the session keeps (struct
 * rec_clients_target_stats), for the answer of --stats.
 */
static struct rec_output_clients clients_stats(struct rec_clients *cs, struct client *c)
{
	const struct client_counters *k = &cs->count;
	struct rec_clients_target_stats st = { 0 };

	if (cs->opts.target_stats)
		cs->opts.target_stats(cs->opts.ctx, c->owner, &st);
	return (struct rec_output_clients){
		.connected = cs->nclients,
		.max_clients = max_clients(cs),
		.accepted = k->accepted,
		.denied = k->denied,
		.refused = k->refused,
		.timed_out = k->timed_out,
		.not_sent = k->not_sent,
		.libraries_failed = st.libraries_failed,
		.libraries_retrying = st.libraries_retrying,
		.libraries_attached_later = st.libraries_attached_later,
		.libraries_given_up = st.libraries_given_up,
		.dumps_removed = st.dumps_removed,
		.dumps_removed_bytes = st.dumps_removed_bytes,
		.snapshots_failed = st.snapshots_failed,
		.snapshots_removed = st.snapshots_removed,
		.snapshots_removed_bytes = st.snapshots_removed_bytes,
		.snapshots_made_room = st.snapshots_made_room,
		.snapshots_made_room_bytes = st.snapshots_made_room_bytes,
		.attach_pid = st.attach_pid,
		.binary = st.binary,
	};
}

/* c's request is whole: renders the answer into its buffer, and it becomes a follower or not. */
static void client_answer(struct rec_clients *cs, struct client *c)
{
	struct rec_output_clients clients;
	char what[REC_SUBJECT_MAX + 64];
	int live, err;

	c->state = C_ANSWER;
	c->deadline_ms = rec_clock__mono_ms() + timeout_ms(cs);
	err = rec_control__parse(&c->req, sizeof(c->req), &c->q);
	if (err) {
		fprintf(c->out, "1recorder-attach: malformed request: %s\n", strerror(-err));
		goto send;
	}
	live = cs->opts.refresh(cs->opts.ctx, c->owner);
	if (c->q.flags & (REC_Q_TRIGGERS | REC_Q_ADD_TRIGGER | REC_Q_REMOVE_TRIGGER)) {
		cs->opts.triggers(cs->opts.ctx, c->owner, &c->q, c->out);
		goto send;
	}
	if (c->q.flags & REC_Q_DUMP) {
		char path[PATH_MAX];

		err = cs->opts.write_dump(cs->opts.ctx, c->owner, path, sizeof(path));
		if (err)
			fprintf(c->out,
				"1recorder-attach: failed to write the dump of pid %d into "
				"%s: %s\n",
				(int)c->p->pid,
				cs->opts.dump_dir ? cs->opts.dump_dir : "(no --dump-dir)",
				strerror(-err));
		else
			fprintf(c->out, "0%s\n", path);
		goto send;
	}
	if (rec_query__selects_nothing(c->p, &c->q, what, sizeof(what))) {
		fprintf(c->out, "1recorder-attach: no recording of pid %d matches %s\n",
			(int)c->p->pid, what);
		goto send;
	}
	fputc('0', c->out);
	clients = clients_stats(cs, c);
	rec_query__output(&c->o, c->out, &c->q);
	rec_query__answer_to(&c->o, c->p, &c->q, &clients, NULL);
	if ((c->q.flags & REC_Q_FOLLOW) && live &&
	    !(c->q.flags & (REC_Q_LIST | REC_Q_STACKS | REC_Q_STATS))) {
		c->state = C_FOLLOW;
		c->next_follower = cs->followers;
		cs->followers = c;
	}
send:
	fflush(c->out);
	client_send(cs, c);
}

/* Reads what c sent: its request, or, once it has one, input that is thrown away. */
static void client_read(struct rec_clients *cs, struct client *c)
{
	char junk[LINE_MAX_BYTES];
	ssize_t n;

	if (c->state == C_REQUEST)
		n = recv(c->fd, (char *)&c->req + c->got, sizeof(c->req) - c->got, MSG_DONTWAIT);
	else
		n = recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			client_close(cs, c);
		return;
	}
	if (n == 0) {
		/* It has said all it will; it may still read. */
		c->rd_closed = 1;
		client_watch(cs, c);
		if (c->state == C_REQUEST) {
			fprintf(c->out, "1recorder-attach: malformed request: %s\n",
				strerror(EPROTO));
			c->state = C_ANSWER;
			fflush(c->out);
			client_send(cs, c);
		}
		return;
	}
	if (c->state == C_REQUEST) {
		c->got += n;
		if (c->got == sizeof(c->req))
			client_answer(cs, c);
	}
}

static void client_new(struct rec_clients *cs, const struct listener *l, int fd)
{
	static const cookie_io_functions_t obuf_io = { .write = obuf_write };
	struct client *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->p = l->p;
	c->owner = l->owner;
	c->state = C_REQUEST;
	c->deadline_ms = rec_clock__mono_ms() + timeout_ms(cs);
	c->out = fopencookie(c, "w", obuf_io);
	if (!c->out || watch_add(cs, fd, &c->w, W_CLIENT, c)) {
		if (c->out)
			fclose(c->out);
		close(fd);
		free(c);
		return;
	}
	c->next = cs->clients;
	cs->clients = c;
	cs->nclients++;
	cs->count.accepted++;
}

/* Accepts the clients waiting on l, or refuses them (access, max_clients). */
static void accept_clients(struct rec_clients *cs, struct listener *l)
{
	const struct rec_proc *p = l->p;

	for (int i = 0; i < ACCEPT_BATCH && l->fd >= 0; i++) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd;

		fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
		    (cred.uid != 0 && cred.uid != p->uid)) {
			cs->count.denied++;
			if (p->uid == (uid_t)-1 || p->uid == 0)
				say_and_close(fd,
					      "1recorder-attach: uid %u may not read pid %d: only "
					      "root may\n",
					      (unsigned int)cred.uid, (int)p->pid);
			else
				say_and_close(fd,
					      "1recorder-attach: uid %u may not read pid %d: only "
					      "root and its owner (uid %u) may\n",
					      (unsigned int)cred.uid, (int)p->pid,
					      (unsigned int)p->uid);
			continue;
		}
		if (cs->nclients >= max_clients(cs)) {
			cs->count.refused++;
			say_and_close(fd,
				      "1recorder-attach: too many clients: at most %u at once "
				      "(--max-clients); pid %d was not read, try again later\n",
				      max_clients(cs), (int)p->pid);
			continue;
		}
		client_new(cs, l, fd);
	}
}

/* Does what epoll reported (events) for client c: reads its request, sends what is queued. */
static void client_ready(struct rec_clients *cs, struct client *c, uint32_t events)
{
	if (c->state == C_CLOSED)
		return;
	if (events & EPOLLERR) {
		client_close(cs, c);
		return;
	}
	if ((events & (EPOLLIN | EPOLLHUP)) && !c->rd_closed)
		client_read(cs, c);
	/* Gone both ways: what is queued can no longer be sent. */
	if (events & EPOLLHUP) {
		client_close(cs, c);
		return;
	}
	if ((events & EPOLLOUT) && c->state != C_CLOSED)
		client_send(cs, c);
}

void rec_clients__ready(struct rec_clients *cs)
{
	struct epoll_event evs[READY_BATCH];
	int n = epoll_wait(cs->epfd, evs, READY_BATCH, 0);

	for (int i = 0; i < n; i++) {
		struct watch *w = evs[i].data.ptr;

		if (w->kind == W_LISTEN)
			accept_clients(cs, w->ptr);
		else
			client_ready(cs, w->ptr, evs[i].events);
	}
}

int rec_clients__following(const struct rec_clients *cs)
{
	return cs->followers != NULL;
}

/* Queues it for follower c, or counts it missed if c holds too much. */
static void follow_queue(struct rec_clients *cs, struct client *c, struct rec_feed_item *it)
{
	size_t limit = follow_buffer(cs);

	/* Once it has missed some, it takes records again only at half the limit. */
	if (held(c) + sizeof(uint32_t) + it->len > limit || (c->missed && held(c) > limit / 2)) {
		c->missed++;
		cs->count.not_sent++;
		return;
	}
	if (c->missed)
		tell_missed(c);
	hold(c, rec_feed__hold(it), 0);
}

void rec_clients__follow_event(struct rec_clients *cs, void *owner, struct rec_proc *p,
			       const struct rec_rstate *rs, const struct rec_decoded *d, size_t len)
{
	struct rec_feed_item *it = NULL;

	/* Made once for every follower; rendering waits for the end of the loop's turn. */
	for (struct client *c = cs->followers; c; c = c->next_follower) {
		if (c->owner != owner || !rec_query__match(&c->q, rs))
			continue;
		if (!it && !(it = rec_feed__event(p, rs, d, len))) {
			c->out_failed = 1;
			continue;
		}
		follow_queue(cs, c, it);
	}
	rec_feed__put(it);
}

void rec_clients__follow_span(struct rec_clients *cs, void *owner, const struct rec_proc *p,
			      const struct rec_rstate *rs, const struct rec_span_rec *r)
{
	struct rec_feed_item *it = NULL;

	for (struct client *c = cs->followers; c; c = c->next_follower) {
		if (c->owner != owner || !(c->q.flags & REC_Q_SPANS) ||
		    !rec_query__match(&c->q, rs))
			continue;
		if (!it && !(it = rec_feed__span(p, rs, r))) {
			c->out_failed = 1;
			continue;
		}
		follow_queue(cs, c, it);
	}
	rec_feed__put(it);
}

int rec_clients__follow_in_process(struct rec_clients *cs, struct rec_proc *p, void *owner,
				   const struct rec_query *q, const struct rec_clients_sink *sink)
{
	struct client *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->fd = -1;
	c->p = p;
	c->owner = owner;
	c->q = *q;
	c->q.flags |= REC_Q_FOLLOW;
	c->in_process = 1;
	c->sink = *sink;
	c->o = *sink->o;
	rec_query__fit(&c->o, q);
	/* What it holds now first, as a socket's follower gets it in its answer. */
	rec_query__answer_to(&c->o, p, &c->q, NULL, NULL);
	c->state = C_FOLLOW;
	c->next = cs->clients;
	cs->clients = c;
	c->next_follower = cs->followers;
	cs->followers = c;
	return 0;
}

/*
 * Renders and sends what c holds, as much as its socket takes now, until
 * deadline_ns (0: no deadline). Returns 1 if it stopped at the deadline.
 */
static int serve_follower(struct rec_clients *cs, struct client *c, int64_t deadline_ns)
{
	int late = 0;

	/* A follower that missed events, with nothing more coming, hears of it once it has room. */
	if (c->missed && held(c) <= follow_buffer(cs) / 2)
		tell_missed(c);
	/* A sink's taker takes what is rendered in its own time: nothing to send here. */
	if (c->in_process)
		return render(cs, c, RENDER_AHEAD, deadline_ns);
	while (c->state != C_CLOSED && !c->want_out && !late) {
		late = render(cs, c, RENDER_AHEAD, deadline_ns);
		if (!pending(c))
			break;
		client_send(cs, c);
	}
	return late;
}

int rec_clients__busy(const struct rec_clients *cs)
{
	/* A sink whose taker is behind is not waited for: the drain timer comes back to it. */
	for (const struct client *c = cs->followers; c; c = c->next_follower)
		if (!c->want_out && (rec_bbuf__pending(&c->held) || c->missed) &&
		    (!c->in_process || pending(c) < RENDER_AHEAD))
			return 1;
	return 0;
}

void rec_clients__tick(struct rec_clients *cs)
{
	int64_t now = rec_clock__mono_ms(), deadline = rec_clock__mono_ns() + RENDER_BUDGET_NS;
	int late = 0;
	struct listener **lp;
	struct client **pp;

	for (struct client *c = cs->clients; c; c = c->next) {
		switch (c->state) {
		case C_FOLLOW:
			/* What the consumer queued goes out now, within the turn's budget. */
			if (!c->want_out && !late)
				late = serve_follower(cs, c, deadline);
			break;
		case C_REQUEST:
			if (now < c->deadline_ms)
				break;
			cs->count.timed_out++;
			c->state = C_ANSWER;
			fprintf(c->out,
				"1recorder-attach: no whole request within %d ms "
				"(--client-timeout); closing\n",
				timeout_ms(cs));
			fflush(c->out);
			/* Once: if that cannot go out now, it never will. */
			c->deadline_ms = now;
			client_send(cs, c);
			if (c->state != C_CLOSED)
				client_close(cs, c);
			break;
		case C_ANSWER:
			if (now >= c->deadline_ms) {
				cs->count.timed_out++;
				client_close(cs, c);
			}
			break;
		case C_CLOSED:
			break;
		}
	}
	for (pp = &cs->clients; *pp;) {
		struct client *c = *pp;

		if (c->state != C_CLOSED) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		drop_held(c);
		if (c->out)
			fclose(c->out);
		free(c->ob.p);
		free(c->held.p);
		free(c);
	}
	for (lp = &cs->listeners; *lp;) {
		struct listener *l = *lp;

		if (l->fd >= 0) {
			lp = &l->next;
			continue;
		}
		*lp = l->next;
		free(l);
	}
}

void rec_clients__target_done(struct rec_clients *cs, void *owner)
{
	for (struct listener *l = cs->listeners; l; l = l->next) {
		if (l->owner != owner || l->fd < 0)
			continue;
		epoll_ctl(cs->epfd, EPOLL_CTL_DEL, l->fd, NULL);
		l->fd = -1;
	}
	for (struct client *c = cs->clients; c; c = c->next) {
		if (c->owner != owner || c->state != C_FOLLOW)
			continue;
		/* The last of its events, what it missed, the spans it died in, then the end. */
		if (c->missed)
			tell_missed(c);
		render(cs, c, SIZE_MAX, 0);
		if (c->q.flags & REC_Q_SPANS)
			rec_query__open_spans(&c->o, c->p, &c->q);
		if (c->out)
			fflush(c->out);
		if (c->in_process)
			c->sink.done(c->sink.ctx);
		unlink_follower(cs, c);
		c->state = C_ANSWER;
		c->deadline_ms = rec_clock__mono_ms() + timeout_ms(cs);
		client_send(cs, c);
	}
}

void rec_clients__free(struct rec_clients *cs)
{
	if (!cs)
		return;
	for (struct client *c = cs->clients; c; c = c->next) {
		if (c->state == C_CLOSED)
			continue;
		if (c->state == C_FOLLOW) {
			if (c->missed)
				tell_missed(c);
			render(cs, c, SIZE_MAX, 0);
			if (c->in_process)
				c->sink.done(c->sink.ctx);
		}
		c->state = C_ANSWER;
		client_send(cs, c);
		client_close(cs, c);
	}
	for (struct listener *l = cs->listeners; l; l = l->next)
		if (l->fd >= 0) {
			epoll_ctl(cs->epfd, EPOLL_CTL_DEL, l->fd, NULL);
			l->fd = -1;
		}
	rec_clients__tick(cs);
	close(cs->epfd);
	free(cs);
}
