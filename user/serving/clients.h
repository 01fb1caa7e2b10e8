/* SPDX-License-Identifier: MIT */
/*
 * The clients of the control sockets (control.h): accepting one, reading its
 * request, answering its query, and the followers that keep receiving a
 * target's events until they hang up. The session hands it each target's
 * listening socket and model, and gives it what it needs of the session as
 * callbacks (refresh a target, write its dump): it never calls the session.
 *
 * Nothing here waits on a client: it keeps its sockets in its own epoll set,
 * whose fd the session's loop watches. A request is read as it comes, within a
 * deadline; an answer is rendered into the client's buffer and sent as the
 * socket takes it; a follower that lets follow_buffer bytes pile up misses
 * events until it catches up, and is then told how many. At most max_clients
 * are served at once.
 */
#ifndef REC_CLIENTS_H
#define REC_CLIENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/proc.h"
#include "output/output.h"

struct rec_query;

/* The defaults of the limits in struct rec_clients_opts. */
#define REC_CLIENTS_MAX 32
#define REC_CLIENT_TIMEOUT_MS 5000
#define REC_FOLLOW_BUFFER (1u << 20)

struct rec_clients;

/* What --stats shows of a target after the clients' counters (see rec_clients_opts). */
struct rec_clients_target_stats {
	/* Its libraries loaded after the attach whose probes failed to attach at first. */
	uint64_t libraries_failed; /* all: retrying + attached_later + given_up */
	uint64_t libraries_retrying;
	uint64_t libraries_attached_later;
	uint64_t libraries_given_up;
	/* Black boxes removed by --keep-dumps and --max-dump-bytes (all processes). */
	uint64_t dumps_removed;
	uint64_t dumps_removed_bytes;
	/* The target's snapshots that could not be written (a full disk, say). */
	uint64_t snapshots_failed;
	/* Snapshots removed by --keep-snapshots and --max-snapshot-bytes (all processes). */
	uint64_t snapshots_removed;
	uint64_t snapshots_removed_bytes;
	/* Snapshots removed for a black box to fit (all processes). */
	uint64_t snapshots_made_room;
	uint64_t snapshots_made_room_bytes;
	/* Who traces the target: this recorder-attach, and the --binary file (NULL: -p). */
	pid_t attach_pid;
	const char *binary;
};

/*
 * A target is named by its owner: an opaque pointer of the session's, handed
 * to rec_clients__listen() with the target's model and given back to the
 * callbacks.
 */
struct rec_clients_opts {
	unsigned int max_clients; /* clients at once; 0 = REC_CLIENTS_MAX */
	int timeout_ms;		  /* for a request, or for each write of an answer; 0 = default */
	size_t follow_buffer;	  /* unsent bytes past which a follower's events are dropped */
	const char *dump_dir;	  /* named in the error of a dump that failed; NULL = none */
	/*
	 * Brings owner's model up to date before an answer. Returns 1 if owner is
	 * still traced, 0 if it is done: then nothing changes, and its events
	 * cannot be followed.
	 */
	int (*refresh)(void *ctx, void *owner);
	/* Writes owner's black box; its path goes into path. Returns 0 or -errno. */
	int (*write_dump)(void *ctx, void *owner, char *path, size_t len);
	/* Fills what --stats shows of owner after the clients' counters. */
	void (*target_stats)(void *ctx, void *owner, struct rec_clients_target_stats *st);
	/*
	 * Answers a trigger request of q (REC_Q_TRIGGERS, REC_Q_ADD_TRIGGER,
	 * REC_Q_REMOVE_TRIGGER) about owner into out: the status byte, then the
	 * text.
	 */
	void (*triggers)(void *ctx, void *owner, const struct rec_query *q, FILE *out);
	void *ctx;
};

/* Returns 0 or a negative errno. */
int rec_clients__new(struct rec_clients **csp, const struct rec_clients_opts *opts);
/* Closes every client, each after a last try at sending what is queued, and frees cs. */
void rec_clients__free(struct rec_clients *cs);

/* The fd to watch for input: readable while a client or a listening socket needs us. */
int rec_clients__fd(const struct rec_clients *cs);
/* How many clients are open. */
size_t rec_clients__count(const struct rec_clients *cs);

/*
 * Serves the clients that connect to listen_fd (non-blocking, owned by the
 * caller) with answers from p, the model of owner. Returns 0 or -errno.
 */
int rec_clients__listen(struct rec_clients *cs, int listen_fd, struct rec_proc *p, void *owner);

/* Does what the fds report, as much as they take now: accepts, reads requests, sends. */
void rec_clients__ready(struct rec_clients *cs);

/*
 * Once per turn of the loop: sends what is queued for followers, closes the
 * clients past their deadline, frees the closed ones.
 */
void rec_clients__tick(struct rec_clients *cs);

/*
 * Queues event d (as rec_proc__ingest_event() decoded it; len, its record's
 * bytes) of rs, a recording of p, owner's model, for every follower of owner
 * whose query it matches, made once for all of them (feed.h); a follower that
 * holds follow_buffer bytes (events not rendered yet, and text not sent)
 * misses it, and is told so later. Nothing is rendered here:
 * rec_clients__tick() renders and sends, within a bounded time per turn of
 * the loop.
 */
void rec_clients__follow_event(struct rec_clients *cs, void *owner, struct rec_proc *p,
			       const struct rec_rstate *rs, const struct rec_decoded *d,
			       size_t len);
/*
 * Queues the span r (a REC_RT_SPAN record, its times in CLOCK_MONOTONIC) of
 * rs, a recording of p, owner's model, for every follower of owner that asked
 * for spans (REC_Q_SPANS) and whose query it matches, as for events.
 */
void rec_clients__follow_span(struct rec_clients *cs, void *owner, const struct rec_proc *p,
			      const struct rec_rstate *rs, const struct rec_span_rec *r);

/* Whether any follower is connected: if not, rec_clients__follow_event() has nothing to do. */
int rec_clients__following(const struct rec_clients *cs);

/*
 * A follower inside this process (recorder-attach --otlp): o, its backend,
 * gets the views themselves. backlog(ctx) says how many bytes of what o was
 * given its taker has not taken yet: rendering waits while that is more than
 * a socket's follower may have unsent. done(ctx) is called once o has had
 * the target's last events and the spans it ended in.
 */
struct rec_clients_sink {
	const struct rec_output *o;
	size_t (*backlog)(void *ctx);
	void (*done)(void *ctx);
	void *ctx;
};

/*
 * Follows what q selects of p, owner's model, into sink: what p holds now
 * first, as a socket's follower's answer has it, then every event and span
 * (with REC_Q_SPANS) as it comes, paced and counted as for a socket's
 * follower, without a socket. It is no client: --stats and max_clients do
 * not count it. Returns 0 or -ENOMEM.
 */
int rec_clients__follow_in_process(struct rec_clients *cs, struct rec_proc *p, void *owner,
				   const struct rec_query *q, const struct rec_clients_sink *sink);

/* Whether a follower holds events it could be sent now: the loop should not wait. */
int rec_clients__busy(const struct rec_clients *cs);

/*
 * owner is done: its listening socket is no longer watched (the caller closes
 * it), and its followers get what is queued for them, then are closed.
 */
void rec_clients__target_done(struct rec_clients *cs, void *owner);

#endif /* REC_CLIENTS_H */
