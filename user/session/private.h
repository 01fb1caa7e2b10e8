/* SPDX-License-Identifier: MIT */
/*
 * What the files of the session share (session.c names each one): the
 * session's types and the functions that one file calls in another. Not for
 * use outside user/session/.
 */
#ifndef REC_SESSION_PRIVATE_H
#define REC_SESSION_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "incidents/incident.h"
#include "kernel/attach.h"
#include "kernel/bpfstate.h"
#include "kernel/ring.h"
#include "model/dump.h"
#include "model/proc.h"
#include "base/ratelimit.h"
#include "base/u64map.h"
#include "dumps/retention.h"
#include "dumps/snapwriter.h"
#include "serving/clients.h"
#include "serving/control.h"
#include "session/session.h"
#include "target/target.h"
#include "wire/clock.h"

struct rec_export_job;

/* How often the traced processes' maps are looked at for newly loaded libraries. */
#define RESCAN_MS 200
/* Events taken from the epoll set at a time. */
#define EPOLL_BATCH 16
/* A path under /proc/PID. */
#define PROC_PATH_MAX 64
/* The TLS variable of include/recorder.h that holds a thread's innermost span. */
#define TLS_CURRENT "rec__current"
/*
 * At the attach, a thread running inside spans is seeded again every
 * SEED_RETRY_MS, for up to SEED_WAIT_MS, until it sleeps (tracer__seed_stacks()).
 */
#define SEED_RETRY_MS 5
#define SEED_WAIT_MS 250

#define NS_PER_MS 1000000

enum watch_kind {
	W_RING,
	W_SIGNAL,
	W_PIDFD,
	W_CLIENTS,
	W_SNAPSHOTS
};

/* What an fd of the epoll set is: epoll hands back a pointer to it. */
struct watch {
	enum watch_kind kind;
	void *ptr;
};

/* A traced process, and everything the session holds for it. */
struct traced {
	struct rec_proc proc;	   /* its model */
	struct rec_target target;  /* its maps and memory, which the model reads */
	struct rec_attach_set att; /* its files seen and its links (per pid) */
	int pidfd;
	int listen_fd;
	char sock_path[REC_SOCK_PATH_MAX];
	int lock_fd; /* holds lock_path (flock) while we serve sock_path */
	char lock_path[REC_SOCK_PATH_MAX];
	int started;	    /* in s->traced: its records are taken, it ends with its last */
	int done;	    /* ended (traced__end): kept only for its clients */
	int adopted;	    /* by --binary; its libraries are attached for every process */
	const char *binary; /* adopted: the --binary file it runs (a path of s->bins) */
	/*
	 * Another recorder-attach (holder) holds its lock: its records are taken
	 * into the model all the same, but it is not served, told, held against
	 * the rules nor dumped here until the lock is ours (traced__take_over). exited:
	 * it ended meanwhile; whose black box it is, is settled by the lock.
	 */
	int waiting, exited;
	struct rec_control_peer holder;
	int exec_away;	  /* adopted, it exec'd a file no --binary names (adopt__settle) */
	int seed_pending; /* adopted inside the ring callback: seed after the batch */
	struct watch w_pidfd;
	/* Tracer words written into it (tracer__tell_attached): of its own images, of every process's. */
	size_t told, told_every;
	struct rec_tracer_word *written; /* each one written, to be cleared at the end */
	size_t nwritten;
	struct rec_incident inc;       /* its trigger rules and pending snapshots (issue 23) */
	uint64_t otlp_salt;	       /* --otlp: mixed into its trace and span IDs */
	struct rec_export_job *export; /* --otlp: its job of s->opts.exporter; NULL: none */
	struct rec_dump_trigger live;  /* its rules' counts for --stats (proc.live_triggers) */
	int64_t open_checked_ms;       /* when its open spans were last held against span rules */
	int64_t tls_off;     /* where rec__current is from a thread pointer; 0 = not known */
	int64_t verified_ms; /* when its stacks were last held against their chains (refresh) */
	/* Its snapshots that could not be written, and the line that says so (one a second). */
	uint64_t snapshots_failed;
	int snapshot_err; /* why the last one could not be, a negative errno */
	struct rec_ratelimit snapshot_failed_msg;
};

struct rec_session {
	struct rec_bpfstate *bs;
	struct rec_attach *att;
	struct rec_clients *clients;
	struct rec_ring *rb;
	int epfd, sigfd;
	struct traced **traced;
	size_t ntraced;
	struct rec_session_opts opts;
	uint64_t foreign;			     /* records of processes we do not trace */
	struct rec_retention_count dumps;	     /* black boxes removed by the retention */
	struct rec_retention_count snapshots;	     /* snapshots removed by theirs */
	struct rec_retention_count room;	     /* snapshots removed for a black box to fit */
	struct rec_object_id bins[REC_MAX_BINARIES]; /* --binary files */
	dev_t bin_devs[REC_MAX_BINARIES];
	size_t nbins;
	struct rec_u64map rejected; /* pid + 1 of processes that could not be adopted */
	/*
	 * rec_session__free() lets go of its processes: none is adopted now. A
	 * process let go is untraced in BPF, so its next probe says hello again,
	 * and the next one's last drain would take it back (each one let go
	 * adopted again, for as long as they hit probes).
	 */
	int closing;
	/* --binary: every link of bins[i] attached; a process of it adopted now is ready. */
	int bin_ready[REC_MAX_BINARIES];
	/* rec_session__run's: told of each process that ends. */
	void (*on_exit)(const struct rec_exit_info *info, void *ctx);
	void *on_exit_ctx;
	struct watch w_ring, w_signal, w_clients, w_snapshots;
	struct rec_snapwriter *snapw; /* the snapshots of one recording: written by its thread */
	struct rec_clock clock;	      /* the targets' TSC stamps (batch path) */
	int64_t last_collect_ms;      /* when the batch buffers were last collected */
	uint32_t tracer;       /* the tracer word this session writes (tracer__tell_attached) */
	int64_t record_now_ns; /* coarse_mono_ns() as the current ring record was taken */
};

/* How often the sleeping threads' pending batches are collected by default: --follow's delay. */
#define COLLECT_MS 50

/*
 * CLOCK_MONOTONIC to the tick (a few ms): what the trigger limiters ask per
 * firing. It costs a few ns where the precise clock costs tens (kvm-clock),
 * and in a storm every event fires.
 */
static inline int64_t coarse_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The live traced process of pid, or NULL. */
static inline struct traced *traced__of(struct rec_session *s, pid_t pid)
{
	for (size_t i = 0; i < s->ntraced; i++)
		if (s->traced[i]->proc.pid == pid && !s->traced[i]->done)
			return s->traced[i];
	return NULL;
}

/* session.c */
int session__watch_add(struct rec_session *s, int fd, struct watch *w, enum watch_kind kind,
		       void *ptr);

/* traced.c */
int traced__init(struct traced *t, pid_t pid, const struct rec_trigger_set *rules, int sched);
void traced__free(struct traced *t);
void traced__handover(struct rec_session *s, struct traced *t, enum rec_handover what,
		      const struct rec_control_peer *other, int err);
int traced__serve(struct rec_session *s, struct traced *t);
void traced__end(struct rec_session *s, struct traced *t, bool report);
void traced__rescan(struct rec_session *s, struct traced *t);
void traced__exited(struct rec_session *s, struct traced *t);
void traced__take_over(struct rec_session *s, struct traced *t);

/* tracer.c */
void tracer__collect(struct rec_session *s, struct traced *t);
uint32_t tracer__word(const struct rec_session *s);
void tracer__tell_attached(struct rec_session *s, struct traced *t);
void tracer__untell_attached(struct traced *t);
void tracer__refresh(struct rec_session *s, struct traced *t);
void tracer__seed_stacks(struct rec_session *s, struct traced *t, bool wait);

/* adopt.c */
const struct rec_object_id *adopt__binary_of_hello(struct rec_session *s,
						   const struct rec_hello_rec *hello);
struct traced *adopt__process(struct rec_session *s, pid_t pid, const struct rec_hello_rec *hello);
void adopt__settle(struct rec_session *s);

/* intake.c */
void intake__frames_to_mono(struct rec_session *s, struct rec_frame *f, uint32_t n);
int intake__on_record(void *ctx, void *data, size_t size);

/* incidents.c */
void incidents__check_event_rules(struct rec_session *s, struct traced *t,
				  const struct rec_decoded *head);
void incidents__check_span(struct rec_session *s, struct traced *t, const struct rec_span_rec *r);
void incidents__check_open(struct rec_session *s, struct traced *t);
void incidents__check_code(struct rec_session *s, struct traced *t,
			   const struct rec_trigger_rec *r);
void incidents__dump_trigger_of(struct rec_session *s, struct traced *t,
				const struct rec_incident_pending *p, struct rec_dump_trigger *d,
				struct rec_dump_rule_counts *counts);

/* export.c */
/* --otlp: t's job started (once it is served here), and with it its follower unless --otlp-keep. */
void export__start(struct rec_session *s, struct traced *t);
void export__kept(struct rec_session *s, struct traced *t, const struct rec_incident_keep *k);
/* --otlp-keep: t ended, of its recordings kept were; its job sends the rest and ends. */
void export__end(struct rec_session *s, struct traced *t, uint64_t recordings, uint64_t kept);

/* snapshots.c */
int snapshots__write_dump(struct rec_session *s, struct traced *t,
			  const struct rec_dump_trigger *pending, size_t npending, char *path,
			  size_t len);
void snapshots__done(struct rec_session *s, struct traced *t);
void snapshots__ended_pending(struct rec_session *s, struct traced *t,
			      const struct rec_exit_info *info);
uint64_t snapshots__recordings_of(const struct rec_proc *p);
void snapshots__write_due(struct rec_session *s, struct traced *only, bool all);

/* answers.c */
void answers__triggers(void *ctx, void *owner, const struct rec_query *q, FILE *out);
int answers__refresh(void *ctx, void *owner);
int answers__write_dump(void *ctx, void *owner, char *path, size_t len);
void answers__target_stats(void *ctx, void *owner, struct rec_clients_target_stats *st);

/*
 * The event just ingested (head: as ingesting decoded it, its values too)
 * against t's level and event rules. Its callsite rules out most events at
 * the cost of a compare, here, inline; the fields are decoded only for a rule
 * that asks them.
 */
static inline void incidents__check_event(struct rec_session *s, struct traced *t,
					  const struct rec_decoded *head)
{
	uint64_t mask, sure;

	if (rec_incident__cached_rules(&t->inc, head->meta, &mask, &sure)) {
		if (!mask)
			return;
		/* A storm's: its rules only count it, here too. */
		if (mask == sure &&
		    rec_incident__held_back(&t->inc, head->meta, mask,
					    s->record_now_ns ? s->record_now_ns : coarse_mono_ns(),
					    (int64_t)head->time_ns))
			return;
	}
	incidents__check_event_rules(s, t, head);
}

#endif /* REC_SESSION_PRIVATE_H */
