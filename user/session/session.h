/* SPDX-License-Identifier: MIT */
/*
 * A recording session: the loaded BPF programs, the processes attached to, the
 * ring-buffer consumer and the control sockets. recorder-attach is a thin CLI
 * around it.
 */
#ifndef REC_SESSION_H
#define REC_SESSION_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/attach.h"
#include "serving/clients.h"
#include "serving/control.h"
#include "model/proc.h"

struct rec_exporter;

struct rec_session;
struct rec_trigger_set;

/*
 * A process between two recorder-attach (on_handover): a -p one and a
 * --binary one, or two --binary ones. One process's lock has one holder; the
 * other one waits, taking the process's records all the same.
 */
enum rec_handover {
	REC_HANDOVER_DEFER,  /* other holds it: this one waits, and takes it over if other stops */
	REC_HANDOVER_TAKEN,  /* other (which held it) let go: this one serves it now */
	REC_HANDOVER_GIVEN,  /* this one lets it go alive, and other, which waits, takes it over */
	REC_HANDOVER_GONE,   /* it ended while other held it: the black box is other's */
	REC_HANDOVER_FAILED, /* other let go, but its socket could not be served here (err) */
	REC_HANDOVER_EXEC,   /* adopted, it exec'd a file no --binary names, before any recording */
};

/*
 * The defaults of --trigger-after (long enough for a request to end after its
 * error, short enough that the snapshot is on disk before anyone looks),
 * --trigger-cooldown, --trigger-cap and --trigger-signature-cap (--keep-snapshots and --max-snapshot-bytes:
 * retention.h).
 */
#define REC_TRIGGER_AFTER_NS (200LL * 1000000)
#define REC_TRIGGER_COOLDOWN_NS (10LL * 1000000000)
#define REC_TRIGGER_PER_HOUR 60
/* --trigger-signature-cap: snapshots of one signature an hour (trigger.h). */
#define REC_TRIGGER_SIG_PER_HOUR 6

/* A control socket's path, or its lock's: at most sun_path of struct sockaddr_un. */
#define REC_SOCK_PATH_MAX 108

struct rec_session_opts {
	size_t ring_bytes;    /* ring buffer size, a power of two >= 4096 */
	int drain_ms;	      /* how often the ring is drained when nobody is woken */
	int verbose;	      /* show libbpf's own messages */
	const char *sock_dir; /* NULL = REC_CONTROL_DIR, made ready by rec_control__prepare_dir */
	const char *dump_dir; /* where black boxes are written; NULL = none */
	size_t keep_dumps;    /* black boxes kept in dump_dir, the newest (0: any number) */
	uint64_t max_dump_bytes;  /* bytes of black boxes kept in dump_dir (0: any size) */
	int follow_binaries;	  /* rec_session__attach_binary will be used */
	unsigned int max_clients; /* control socket clients at once; 0 = REC_CLIENTS_MAX */
	int client_timeout_ms;	  /* for a request, or for each write of an answer; 0 = default */
	size_t follow_buffer;	  /* unsent bytes past which a follower's events are dropped */
	int per_event;		  /* no batch path: every event fires its own probe */
	int sched;	/* --sched: charge each span its time on and off the CPU (offcpu.h) */
	int collect_ms; /* sleeping threads' batches taken this often; 0 = 50, -1 = never */
	struct rec_limits limits; /* a limit left at 0 takes its default */
	/* Incidents (issue 23): the --trigger rules (NULL: none) and what their snapshots hold. */
	const struct rec_trigger_set *triggers;
	int64_t trigger_after_ns;  /* --trigger-after */
	int trigger_scope_process; /* --trigger-scope process: every recording */
	size_t keep_snapshots;	   /* snapshots kept in dump_dir (0: any number) */
	/*
	 * recorder-attach --otlp: each process served here gets a job of it,
	 * given its events and spans as they come or, if it keeps
	 * (--otlp-keep), a recording that a rule marked keep fired on, when
	 * --trigger-after has passed (or its process ended). NULL: none. The
	 * caller joins it after rec_session__free().
	 */
	struct rec_exporter *exporter;
	uint64_t max_snapshot_bytes;
	/* Called when a process running a --binary file starts being traced (and served). */
	void (*on_adopt)(pid_t pid, const char *binary, void *ctx);
	/* Called at each hand-over of pid: what, and the other recorder-attach (none for EXEC). */
	void (*on_handover)(enum rec_handover what, pid_t pid, const struct rec_control_peer *other,
			    int err, void *ctx);
	/*
	 * Called when nsites sites of probe name in the file at path (for pid, 0
	 * = every process) are left out because their argument spec (the first
	 * one's is spec) is not supported; the other sites are attached.
	 */
	void (*on_skipped)(pid_t pid, const char *path, const char *probe, unsigned int nsites,
			   const char *spec, void *ctx);
	/*
	 * Called when the probes of the library at path, loaded after the attach,
	 * failed to attach for pid (0 = every process) at their first try (err is
	 * why), when a later try attached them (err 0), or when the last of
	 * REC_ATTACH_TRIES tries (one per rescan) failed: tries is that try's number.
	 */
	void (*on_late)(enum rec_late_library what, pid_t pid, const char *path, int err,
			unsigned int tries, void *ctx);
	void *ctx;
};

/* What became of a process: how it ended, and its dump (path, or err < 0). */
struct rec_exit_info {
	pid_t pid;
	char how[64];
	char dump_path[PATH_MAX];
	int dump_err;
	/* With --otlp-keep: the recordings it had, and those of them exported (the rest: skipped). */
	uint64_t recordings, kept;
};

struct rec_attach_info {
	unsigned int sites;   /* probe sites attached (skipped ones not counted) */
	unsigned int objects; /* executable and libraries that had probes */
	uid_t uid;	      /* the process's owner, (uid_t)-1 if unknown (see struct rec_proc) */
	char sock_path[REC_SOCK_PATH_MAX];
	char lock_path[REC_SOCK_PATH_MAX];
	pid_t lock_holder; /* with -EBUSY: who holds the lock (0 if unknown) */
};

/* Opens and loads the BPF programs. Returns 0 or a negative errno. */
int rec_session__open(struct rec_session **sp, const struct rec_session_opts *opts);

struct rec_machine;
/*
 * What decides the cost of recording here (machine.h): reads the clocksource
 * and pti, and times a system call and a hit of s's uprobe_cost program. Call
 * it before the first attach. Returns 0, or the uprobe timing's negative errno
 * (the rest of *m is filled all the same).
 */
int rec_session__machine(struct rec_session *s, struct rec_machine *m);

/*
 * Attaches to every recorder probe in pid's executable and loaded libraries and
 * serves its control socket. A --binary recorder-attach that holds it is
 * deferred to (on_handover): pid is taken over if that one stops. Returns 0,
 * -ESRCH if there is no such process, -ENOENT if it has no recorder probes,
 * -EBUSY if another -p recorder-attach holds the lock of its socket
 * (info->lock_path, info->lock_holder), -EADDRINUSE if
 * another server answers on its socket, -EEXIST if a file that is no socket is
 * in the socket's place (info->sock_path), or another negative errno.
 */
int rec_session__attach(struct rec_session *s, pid_t pid, struct rec_attach_info *info);

/*
 * Attaches to the recorder probes of the executable at path for every process
 * that runs it, now and later (fork, exec), until the session ends: each is
 * adopted at the attach, its exec or its fork, probe hit or not, and gets its
 * own recordings, control socket and dump. One another recorder-attach holds
 * is waited for (on_handover). Returns 0, -ENOENT if the file has no
 * recorder probes, -E2BIG past REC_MAX_BINARIES, or another negative errno.
 */
int rec_session__attach_binary(struct rec_session *s, const char *path,
			       struct rec_attach_info *info);

/*
 * Runs until every attached process has exited (never, with a --binary) or
 * SIGINT/SIGTERM arrives. When a process exits, drains everything it emitted,
 * writes its dump (if dump_dir is set), then calls on_exit (if set). Returns 0
 * or -errno.
 */
int rec_session__run(struct rec_session *s,
		     void (*on_exit)(const struct rec_exit_info *info, void *ctx), void *ctx);

/* Detaches everything and frees s. */
void rec_session__free(struct rec_session *s);

#endif /* REC_SESSION_H */
