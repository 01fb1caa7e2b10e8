/* SPDX-License-Identifier: MIT */
/*
 * What the parts of a session share, and nothing outside them may use: the
 * session's and its targets' structs, and the calls between session.c (life and
 * attaching), session_bpf.c (the BPF side's state) and session_clients.c.
 */
#ifndef REC_SESSION_INT_H
#define REC_SESSION_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "control.h"
#include "proc.h"
#include "query.h"
#include "target/target.h"
#include "session.h"
#include "u64map.h"
#include "compat/usdt_multi.h"

struct bpf_link;
struct rec_ring;
struct recorder_bpf;


enum watch_kind { W_RING, W_SIGNAL, W_PIDFD, W_LISTEN, W_CLIENT };

struct watch {
	enum watch_kind kind;
	void *ptr;
};

struct object_id {
	uint64_t inode;
	char *path;
};

struct target {
	struct rec_proc proc;
	struct rec_target target;	/* its maps and memory, which proc reads */
	struct object_id *objs;	/* objects whose probes are attached */
	size_t nobjs;
	int pidfd;
	int listen_fd;
	char sock_path[108];
	int lock_fd;		/* holds lock_path (flock) while we serve sock_path */
	char lock_path[108];
	int *links;		/* uprobe_multi link fds */
	size_t nlinks;
	int done;
	int adopted;		/* by --binary; its libraries are attached for every process */
	int seed_pending;	/* adopted inside the ring callback: seed after the batch */
	struct watch w_pidfd, w_listen;
};

enum client_state {
	C_REQUEST,	/* reading its request, until its deadline */
	C_ANSWER,	/* sending its answer; closed once it is sent */
	C_FOLLOW,	/* sending its answer, then every new event its query selects */
	C_CLOSED,	/* closed; freed at the end of the loop's turn */
};

/*
 * A client of a control socket. Nothing waits on it: its request is read and
 * its answer sent as the socket allows, from out's buffer.
 */
struct client {
	int fd;
	enum client_state state;
	struct target *t;
	struct rec_request req;	/* as read so far */
	size_t got;
	struct rec_query q;
	FILE *out;		/* writes into obuf */
	char *obuf;		/* what is to be sent: obuf[ooff..olen) */
	size_t olen, ooff, ocap;
	int out_failed;		/* obuf could not grow: the output is cut */
	int rd_closed;		/* it will send nothing more: no longer watched for input */
	int want_out;		/* watched for room to send */
	int64_t deadline_ms;	/* C_REQUEST: for the whole request; C_ANSWER: for the next byte */
	uint64_t missed;	/* events it was not sent since it was last told */
	struct watch w;
	struct client *next;	/* every client */
	struct client *next_follower;
};

/* What happened to the clients of all targets, shown with --stats. */
struct client_counters {
	uint64_t accepted;
	uint64_t denied;	/* neither root nor the target's owner */
	uint64_t refused;	/* past max_clients */
	uint64_t timed_out;	/* no request, or no progress sending an answer, in time */
	uint64_t not_sent;	/* events dropped for followers that did not keep up */
};

struct rec_session {
	struct recorder_bpf *skel;
	struct rec_ring *rb;
	struct bpf_link *iter_link;
	struct bpf_link *exit_link;	/* sched_process_exit: stacks at death, how it ended */
	int epfd, sigfd;
	struct target **targets;
	size_t ntargets;
	struct client *clients;		/* every open client */
	size_t nclients;
	struct client *followers;	/* those in C_FOLLOW */
	struct client_counters ccount;
	struct rec_session_opts opts;
	uint64_t foreign;	/* records of processes we do not trace */
	struct object_id bins[REC_MAX_BINARIES];	/* --binary files */
	dev_t bin_devs[REC_MAX_BINARIES];
	size_t nbins;
	int *bin_links;		/* the --binary files', and their libraries' (every process) */
	size_t nbin_links;
	struct object_id *bin_libs;	/* libraries attached for every process */
	size_t nbin_libs;
	struct rec_usdt_multi specs;
	struct rec_u64map rejected;	/* pid + 1 of processes that could not be adopted */
	struct watch w_ring, w_signal;
};

/* The live target of pid, or NULL. */
struct target *session__target_of(struct rec_session *s, pid_t pid);

/* Has epoll report fd as w, of kind and for ptr. Returns 0 or -errno. */
int session__watch_add(struct rec_session *s, int fd, struct watch *w, enum watch_kind kind,
		       void *ptr);

/*
 * Starts tracing pid, a process of a --binary file that hello (NULL if its
 * hello record was lost) announced, even if it is gone by now; returns its
 * target, or NULL (asked once). Called from the ring callback: it does not
 * consume the ring, and leaves the target's stack seeding to the loop.
 */
struct rec_hello_rec;
struct target *session__adopt(struct rec_session *s, pid_t pid, const struct rec_hello_rec *hello);

/* Writes t's black box into the dump directory. Returns 0, -ENOENT without one, or -errno. */
int session__write_dump(struct rec_session *s, struct target *t, char *path, size_t len);

/* The ring's consumer: takes one record into its target's model. Always returns 0. */
int session__on_record(void *ctx, void *data, size_t size);

/* Brings t's model up to date: pending records, live counters, span stacks. */
void session__refresh(struct rec_session *s, struct target *t);

/* Gives the threads of t that sleep inside spans their stacks, and learns their recordings. */
void session__seed_stacks(struct rec_session *s, struct target *t);

/* Removes tgid's entries from the BPF recordings table and frees their slots. */
void session__forget_recordings(struct rec_session *s, __u32 tgid);

/*
 * Queues the event d of rs for every follower of t whose query it matches; a
 * follower with follow_buffer bytes unsent misses it, and is told so later.
 */
void session__follow_event(struct rec_session *s, struct target *t, const struct rec_rstate *rs,
			   const struct rec_decoded *d);

/* Accepts the clients waiting on t's control socket, or refuses them (access, max_clients). */
void session__accept_clients(struct rec_session *s, struct target *t);

/* Does what epoll reported (events) for client c: reads its request, sends what is queued. */
void session__client_ready(struct rec_session *s, struct client *c, uint32_t events);

/*
 * Once per turn of the loop: sends what is queued for followers, closes the
 * clients past their deadline, frees the closed ones.
 */
void session__clients_tick(struct rec_session *s);

/* t is done: its followers get what is queued for them, then are closed. */
void session__clients_target_done(struct rec_session *s, struct target *t);

/* Closes every client, each after a last try at sending what is queued. */
void session__clients_free(struct rec_session *s);

#endif /* REC_SESSION_INT_H */
