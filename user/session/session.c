// SPDX-License-Identifier: MIT
/*
 * A recording session (session.h): what it is made of, the traced processes
 * from their start (attach by pid, by --binary, adoption) to their one way
 * out, the ring's records taken into their models, the rescans for libraries
 * loaded later, and the main loop. The parts below it only call down:
 *
 *	session.c -> bpfstate.c	the BPF programs and their maps
 *		  -> attach.c	the probes in a process's files
 *		  -> clients.c	the control-socket clients (they call back)
 *		  -> ring.c, target/, proc.c, dump_write.c, control.c
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kernel/attach.h"
#include "wire/batch.h"
#include "kernel/bpfstate.h"
#include "serving/clients.h"
#include "wire/clock.h"
#include "serving/control.h"
#include "model/dump.h"
#include "incidents/incident.h"
#include "kernel/machine.h"
#include "model/names.h"
#include "base/text.h"
#include "incidents/table.h"
#include "model/proc.h"
#include "kernel/ring.h"
#include "base/ratelimit.h"
#include "dumps/retention.h"
#include "session/session.h"
#include "dumps/snapwriter.h"
#include "target/elf.h"
#include "target/maps.h"
#include "target/target.h"
#include "base/u64map.h"

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
 * SEED_RETRY_MS, for up to SEED_WAIT_MS, until it sleeps (seed_stacks()).
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
	int done;	    /* ended (traced_end): kept only for its clients */
	int adopted;	    /* by --binary; its libraries are attached for every process */
	const char *binary; /* adopted: the --binary file it runs (a path of s->bins) */
	/*
	 * Another recorder-attach (holder) holds its lock: its records are taken
	 * into the model all the same, but it is not served, told, held against
	 * the rules nor dumped here until the lock is ours (take_over). exited:
	 * it ended meanwhile; whose black box it is, is settled by the lock.
	 */
	int waiting, exited;
	struct rec_control_peer holder;
	int exec_away;	  /* adopted, it exec'd a file no --binary names (settle_adopted) */
	int seed_pending; /* adopted inside the ring callback: seed after the batch */
	struct watch w_pidfd;
	/* Tracer words written into it (tell_attached): of its own images, of every process's. */
	size_t told, told_every;
	struct rec_tracer_word *written; /* each one written, to be cleared at the end */
	size_t nwritten;
	struct rec_incident inc;      /* its trigger rules and pending snapshots (issue 23) */
	uint64_t otlp_salt;	      /* --otlp-keep: mixed into its trace and span IDs */
	struct rec_dump_trigger live; /* its rules' counts for --stats (proc.live_triggers) */
	int64_t open_checked_ms;      /* when its open spans were last held against span rules */
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
	uint32_t tracer;	      /* the tracer word this session writes (tell_attached) */
	int64_t record_now_ns;	      /* coarse_mono_ns() as the current ring record was taken */
};

/* How often the sleeping threads' pending batches are collected by default: --follow's delay. */
#define COLLECT_MS 50

/* CLOCK_MONOTONIC in ns. */
static int64_t now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t now_ms(void)
{
	return now_mono_ns() / NS_PER_MS;
}

/* Has epoll report fd as w, of kind and for ptr. Returns 0 or -errno. */
static int watch_add(struct rec_session *s, int fd, struct watch *w, enum watch_kind kind,
		     void *ptr)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };

	/*
	 * The ring reports readable while any data waits, and the BPF side adds
	 * data without waking anyone: edge-triggered, it wakes us only for its
	 * forced wakeups, and the drain timer does the rest.
	 */
	if (kind == W_RING)
		ev.events |= EPOLLET;
	w->kind = kind;
	w->ptr = ptr;
	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* The live traced process of pid, or NULL. */
static struct traced *traced_of(struct rec_session *s, pid_t pid)
{
	for (size_t i = 0; i < s->ntraced; i++)
		if (s->traced[i]->proc.pid == pid && !s->traced[i]->done)
			return s->traced[i];
	return NULL;
}

/*
 * Has BPF take what t's sleeping threads have pending in their batch buffers:
 * after the next drain, every event they emitted is in. Nothing to do with
 * --per-event.
 */
static void collect(struct rec_session *s, struct traced *t)
{
	int err;

	if (s->opts.per_event || t->done || !t->proc.alive)
		return;
	err = rec_bpfstate__collect(s->bs, t->proc.pid);
	if (err && s->opts.verbose)
		fprintf(stderr, "recorder-attach: could not collect the batches of pid %d: %s\n",
			(int)t->proc.pid, strerror(-err));
}

static void frames_to_mono(struct rec_session *s, struct rec_frame *f, uint32_t n);

/*
 * This session's tracer word: a recorder-attach is attached, the event path it
 * takes, and a number of its own, so that a thread's batch buffer announced to
 * another recorder-attach before is announced again to this one.
 */
static uint32_t tracer_word(const struct rec_session *s)
{
	uint32_t id = 0;

	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint32_t)getpid() ^ (uint32_t)now_ms();
	id = (id << 2) ? id << 2 : 4;
	return id | REC_TRACER_ON | (s->opts.per_event ? 0 : REC_TRACER_BATCH);
}

/* Writes value into every tracer word of pid in words[from, n), as maps place them. */
static size_t write_words(struct rec_session *s, struct traced *t, const struct rec_maps *maps,
			  const struct rec_tracer_word *words, size_t from, size_t n)
{
	for (size_t i = from; i < n; i++) {
		struct rec_tracer_word *v;
		int err = rec_target__write_u32(t->proc.pid, maps, words[i].inode, words[i].off,
						s->tracer);

		if (err == -ENOENT)
			continue;
		if (err) {
			fprintf(stderr,
				"recorder-attach: could not tell pid %d that it is attached "
				"(its tracer word): %s; it stays on the per-event path and "
				"rec_is_attached() says 0\n",
				(int)t->proc.pid, strerror(-err));
			continue;
		}
		v = realloc(t->written, (t->nwritten + 1) * sizeof(*v));
		if (!v)
			continue;
		t->written = v;
		v[t->nwritten++] = words[i];
	}
	return n;
}

/* --binary: whether every link of the file at path (one of s->bins') is attached. */
static bool binary_ready(const struct rec_session *s, const char *path)
{
	for (size_t i = 0; i < s->nbins; i++)
		if (s->bins[i].path == path)
			return s->bin_ready[i];
	return false;
}

/*
 * Tells t, once every probe of an image is attached, that recorder-attach is
 * (its tracer word, include/recorder.h): only then does rec_is_attached() say
 * so, and does the image take the batch path. A peer (bpftrace, perf) that
 * arms the same probes changes neither (docs/probe-abi.md, "The attach block").
 */
static void tell_attached(struct rec_session *s, struct traced *t)
{
	const struct rec_attach_set *every = rec_attach__every(s->att);
	struct rec_maps maps;

	/*
	 * Not before its stacks are kept (bpf ready_bits): a thread's announce
	 * of its buffer, which the word brings, is where its stack is read.
	 */
	if (t->done || t->waiting || !t->proc.alive ||
	    (t->adopted && !binary_ready(s, t->binary)) ||
	    (t->told == t->att.nwords && (!t->adopted || t->told_every == every->nwords)))
		return;
	if (rec_maps__read(&maps, t->proc.pid))
		return;
	t->told = write_words(s, t, &maps, t->att.words, t->told, t->att.nwords);
	if (t->adopted)
		t->told_every =
			write_words(s, t, &maps, every->words, t->told_every, every->nwords);
	rec_maps__free(&maps);
}

/* Takes back what tell_attached wrote, from a process that goes on without us. */
static void untell_attached(struct traced *t)
{
	struct rec_maps maps;

	if (!t->nwritten || rec_maps__read(&maps, t->proc.pid))
		return;
	for (size_t i = 0; i < t->nwritten; i++)
		rec_target__write_u32(t->proc.pid, &maps, t->written[i].inode, t->written[i].off,
				      0);
	rec_maps__free(&maps);
	t->nwritten = 0;
}

/*
 * How often a process's stacks are held against their threads' chains, at
 * most: each check is a sleepable iterator whose task-storage calls take a
 * per-CPU lock, and a probe that preempts it there finds no storage.
 */
#define VERIFY_MS 1000

/* Brings t's model up to date: pending records, live counters, span stacks. */
static void refresh(struct rec_session *s, struct traced *t)
{
	collect(s, t);
	/*
	 * Once its sleeping threads' records are taken, their stacks must
	 * match their own chains of spans: a span whose exit BPF missed is
	 * dropped, never shown open nor held against a hung-span rule.
	 */
	if (t->tls_off && t->proc.alive && !t->waiting && now_ms() - t->verified_ms >= VERIFY_MS) {
		t->verified_ms = now_ms();
		rec_bpfstate__verify_stacks(s->bs, t->proc.pid, t->tls_off);
	}
	rec_ring__consume(s->rb);
	rec_bpfstate__refresh(s->bs, &t->proc, (uint64_t)now_mono_ns());
	for (size_t i = 0; i < t->proc.nstacks; i++)
		frames_to_mono(s, t->proc.stacks[i].frames, t->proc.stacks[i].depth);
}

/*
 * Gives the threads of t that sleep inside spans their stacks, read from their
 * rec__current, which every executable that includes the header defines, and
 * learns their recordings. Run after the probes are attached: from then on the
 * probes keep the stacks right. A thread that runs inside spans is passed
 * over; with wait (at the attach, not inside the loop) it is tried again
 * every SEED_RETRY_MS for up to SEED_WAIT_MS, so that one about to sleep
 * (the usual case) still shows its stack in the first read.
 */
static void seed_stacks(struct rec_session *s, struct traced *t, bool wait)
{
	const struct timespec pause = { .tv_nsec = SEED_RETRY_MS * NS_PER_MS };
	char exe[PROC_PATH_MAX];
	int64_t off;
	int err;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)t->proc.pid);
	if (rec_elf__tls_offset(exe, TLS_CURRENT, &off) || !off)
		return;
	t->tls_off = off;
	/*
	 * One it waits for: its batches are taken without their spans until it
	 * takes it over (bpf rec_tbuf_reg missed); its threads' stacks are read
	 * then (take_over).
	 */
	if (t->waiting)
		return;
	err = rec_bpfstate__seed_stacks(s->bs, t->proc.pid, off);
	for (int i = 0; wait && err > 0 && i < SEED_WAIT_MS / SEED_RETRY_MS; i++) {
		nanosleep(&pause, NULL);
		/* The other threads go on emitting meanwhile: the ring is read. */
		rec_ring__consume(s->rb);
		err = rec_bpfstate__seed_stacks(s->bs, t->proc.pid, off);
	}
	if (err > 0 && s->opts.verbose)
		fprintf(stderr,
			"recorder-attach: %d threads of pid %d were running inside spans at the "
			"attach: their stacks show from their next probe\n",
			err, (int)t->proc.pid);
	if (err < 0) {
		/* Optional: without it, a stack shows from the thread's next probe. */
		if (s->opts.verbose)
			fprintf(stderr, "recorder-attach: no stack seeding for pid %d: %s\n",
				(int)t->proc.pid, strerror(-err));
		return;
	}
	/*
	 * Their recordings may be older than the attach, and nothing announces
	 * them until a thread emits: learn them from the target now, while it
	 * lives, so that the stacks (and the black box) have their subjects.
	 * Their callsites too: a Rust program's are on its heap, which no file
	 * holds once it is gone (docs/probe-abi.md, "The Rust emitter").
	 */
	refresh(s, t);
	for (size_t i = 0; i < t->proc.nstacks; i++) {
		const struct rec_thread_stack *ts = &t->proc.stacks[i];

		for (uint32_t d = 0; d < ts->depth && d < REC_MAX_DEPTH; d++) {
			const struct rec_frame *f = &ts->frames[d];

			if (f->recording && !rec_proc__find(&t->proc, f->recording))
				rec_proc__learn_recording(&t->proc, f->span);
			if (f->recording)
				rec_proc__callsite(&t->proc, f->meta);
		}
	}
}

/* Writes t's black box into the dump directory; the path goes into path. */
/* The retention policy, after a black box was written at path: the oldest others go. */
/*
 * The retention of one kind of file in the dump directory (black boxes, or
 * snapshots: each its own, by name prefix), after path was written.
 */
static void keep_files(struct rec_session *s, const char *path, bool snapshots)
{
	const char *slash = strrchr(path, '/');
	struct rec_retention_count *count = snapshots ? &s->snapshots : &s->dumps;
	size_t keep = snapshots ? s->opts.keep_snapshots : s->opts.keep_dumps;
	uint64_t max = snapshots ? s->opts.max_snapshot_bytes : s->opts.max_dump_bytes;
	const char *opt = snapshots ? "snapshot" : "dump";
	uint64_t before = count->removed;
	int err;

	err = rec_retention__apply_prefix(
		s->opts.dump_dir, snapshots ? REC_RETENTION_SNAPSHOT : REC_RETENTION_BLACK_BOX,
		keep, max, slash ? slash + 1 : path, count);
	if (err)
		fprintf(stderr,
			"recorder-attach: could not apply --keep-%ss/--max-%s-bytes in %s: %s\n",
			opt, opt, s->opts.dump_dir, strerror(-err));
	else if (count->removed > before)
		fprintf(stderr,
			"recorder-attach: removed %" PRIu64 " old %s from %s (--keep-%ss %zu, "
			"--max-%s-bytes %" PRIu64 ")\n",
			count->removed - before, snapshots ? "snapshot(s)" : "black box(es)",
			s->opts.dump_dir, opt, keep, opt, max);
}

/* A black box to write (rec_retention__write_making_room's ctx). */
struct black_box {
	const char *dir;
	struct rec_proc *p;
	const struct rec_dump_opts *o;
	char *path;
	size_t len;
};

static int black_box__write(void *ctx)
{
	struct black_box *b = ctx;

	return rec_dump__write_file_opts(b->dir, b->p, b->o, b->path, b->len);
}

/*
 * t's black box, naming the npending triggers that fired as it ended. One that
 * does not fit takes the room of the oldest snapshots (said on one line).
 */
static int write_dump(struct rec_session *s, struct traced *t,
		      const struct rec_dump_trigger *pending, size_t npending, char *path,
		      size_t len)
{
	struct rec_dump_counters counters;
	struct rec_dump_opts o = { .counters = &counters,
				   .pending = pending,
				   .npending = npending };
	struct black_box b = { s->opts.dump_dir, &t->proc, &o, path, len };
	struct rec_retention_count before = s->room;
	int err;

	if (!s->opts.dump_dir)
		return -ENOENT;
	memcpy(counters.v, t->proc.counters, sizeof(counters.v));
	err = rec_retention__write_making_room(s->opts.dump_dir, black_box__write, &b, &s->room);
	if (s->room.removed > before.removed)
		fprintf(stderr,
			"recorder-attach: removed %" PRIu64 " snapshot(s) (%" PRIu64
			" bytes) from %s to make room for the black box of pid %d\n",
			s->room.removed - before.removed,
			s->room.removed_bytes - before.removed_bytes, s->opts.dump_dir,
			(int)t->proc.pid);
	if (!err)
		keep_files(s, path, false);
	return err;
}

/* ---- incidents (issue 23): the --trigger rules held against what comes in ---- */

/*
 * CLOCK_MONOTONIC to the tick (a few ms): what the trigger limiters ask per
 * firing. It costs a few ns where the precise clock costs tens (kvm-clock),
 * and in a storm every event fires.
 */
static int64_t coarse_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* How often open spans are held against the span rules: a hung request is caught this late. */
#define OPEN_CHECK_MS 100

/* What a rule fired on, to name its signature by: a callsite (an event's or a span's), or a reason. */
struct fired_on {
	uint64_t key;  /* the signature's: the callsite's address, the reason's hash */
	int64_t at_ns; /* the event's or span's own time, CLOCK_MONOTONIC */
	uint64_t meta; /* the callsite's address */
	const struct rec_callsite *cs;	  /* NULL: unread, or a reason's */
	bool code;			  /* a rec_trigger() call, of reason */
	const char *reason;		  /* rec_trigger()'s; NULL: none given */
	struct rec_incident_quiet *quiet; /* its callsite's cache entry of the rule (incident.h) */
};

/* The key of rec_trigger()'s reason (NULL: none): its FNV-1a hash, never the fold's. */
static uint64_t reason_key(const char *reason)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *p = reason ? reason : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	h ^= reason ? 0 : 1;
	return h == REC_TRIGGER_SIG_FOLD ? h - 1 : h;
}

/* Names a new signature g of rule i of t by what it fired on (texts from the target, unescaped). */
static void name_sig(struct traced *t, unsigned int i, struct rec_trigger_sig *g,
		     const struct fired_on *on)
{
	char text[REC_TRIGGER_SIG_TEXT_MAX];
	const struct rec_callsite *cs = on->cs;

	if (on->code)
		snprintf(text, sizeof(text), "code '%s'", on->reason ? on->reason : "");
	else if (!cs)
		snprintf(text, sizeof(text), "callsite 0x%" PRIx64 " (unread)", on->meta);
	else if (cs->kind == 'S')
		snprintf(text, sizeof(text), "span %s at %s:%" PRIu32, cs->name, cs->file,
			 cs->line);
	else
		snprintf(text, sizeof(text), "'%s' at %s:%" PRIu32,
			 cs->message[0] ? cs->message : "(formatted)", cs->file, cs->line);
	rec_trigger__name_sig(t->inc.rules, i, g, text);
}

/*
 * Rule i of t fired in recording, on what on says: a snapshot, if its
 * signature's limiter admits it, pins the recording. Returns it, for the
 * caller to say in its what on what it fired; NULL if none was admitted. In a
 * storm most firings are only counted: the limiters ask the coarse clock, a
 * signature is named once, and only an admitted firing takes the precise time
 * and is described.
 */
static struct rec_incident_pending *fired(struct rec_session *s, struct traced *t, unsigned int i,
					  uint64_t recording, struct fired_on *on)
{
	struct rec_rstate *rs = NULL;
	struct rec_incident_pending *p;
	struct rec_trigger_sig *g;
	/* A batch's events fire in one instant: the limiters' clock is read once a record. */
	int64_t now = s->record_now_ns ? s->record_now_ns : coarse_mono_ns();

	/* --otlp-keep: exported whatever the snapshots' cooldown and cap say. */
	if (t->inc.rules->rules[i].keep && s->opts.on_keep && recording &&
	    rec_incident__keep(&t->inc, recording, now, s->opts.trigger_after_ns,
			       t->inc.rules->rules[i].id, on->key) &&
	    (rs = rec_proc__find(&t->proc, recording)))
		rs->pinned++;
	p = rec_incident__fire(&t->inc, i, on->key, recording, now, on->at_ns,
			       s->opts.trigger_after_ns, on->quiet, &g);
	if (g && !g->id) {
		if (on->meta && !on->cs && !on->code)
			on->cs = rec_proc__cached_callsite(&t->proc, on->meta);
		name_sig(t, i, g, on);
	}
	if (!p)
		return NULL;
	p->fired_ns = now_mono_ns();
	p->due_ns = p->fired_ns + s->opts.trigger_after_ns;
	if (g) {
		p->sig_id = g->id;
		snprintf(p->sig_text, sizeof(p->sig_text), "%s", g->text);
	}
	if (recording && (rs || (rs = rec_proc__find(&t->proc, recording))))
		rs->pinned++;
	return p;
}

/*
 * --otlp-keep: the recording of k of t, its events and spans as OTLP lines,
 * each naming the trigger that kept it (its rule and signature), to on_keep.
 */
static void export_kept(struct rec_session *s, struct traced *t, const struct rec_incident_keep *k)
{
	uint64_t recording = k->recording;
	struct rec_query q = { .flags = REC_Q_OTLP | REC_Q_SPANS | REC_Q_HAS_RECORDING,
			       .recording = recording,
			       .otlp_salt = t->otlp_salt };
	struct rec_rstate *rs = rec_proc__find(&t->proc, recording);
	int at = t->inc.rules ? rec_trigger__find(t->inc.rules, k->rule_id) : -ENOENT;
	const struct rec_trigger_sig *g = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (at >= 0) {
		g = rec_trigger__find_sig(t->inc.rules, k->rule_id, k->sig_key);
		if (!g)
			g = rec_trigger__find_sig(t->inc.rules, k->rule_id, REC_TRIGGER_SIG_FOLD);
	}
	if (f) {
		struct rec_output_kept kept = { .rule = at >= 0 ? t->inc.rules->rules[at].text : "",
						.sig_id = g ? g->id : 0,
						.sig_text = g ? g->text : "" };

		rec_query__answer_kept(f, &t->proc, &q, &kept);
		if (fclose(f) == 0)
			s->opts.on_keep(t->proc.pid, recording, buf, len, s->opts.ctx);
	}
	free(buf);
	if (rs)
		rec_proc__unpin(&t->proc, rs);
}

/* check_event() past its first compare: a rule may fire. */
static void __attribute__((noinline))
check_event_rules(struct rec_session *s, struct traced *t, const struct rec_decoded *head)
{
	const struct rec_trigger_set *rules = t->inc.rules;
	const struct rec_callsite *cs = NULL;
	struct rec_event_view ev; /* set, and asked, only for a rule its callsite is not sure of */
	struct rec_incident_pending *p;
	struct rec_decoded full;
	struct fired_on on;
	uint64_t mask, sure;

	if (!rec_incident__cached_rules(&t->inc, head->meta, &mask, &sure)) {
		cs = rec_proc__cached_callsite(&t->proc, head->meta);
		mask = rec_incident__event_rules(&t->inc, head->meta, cs, &sure);
	}
	if (!mask)
		return;
	if (mask & ~sure) {
		/* A condition, or a formatted message: the event's own fields. */
		if (rec_event__decode(t->proc.norm, t->proc.norm_len, &full))
			return;
		ev = (struct rec_event_view){
			.from.recording = full.recording,
			.seq = full.seq,
			.meta = full.meta,
			.level = full.level,
			.nfields = full.nfields,
			.values = full.values,
			.cs = cs ? cs : rec_proc__cached_callsite(&t->proc, head->meta),
		};
	}
	for (unsigned int i = 0; i < rules->n && i < 64; i++) {
		if (!(mask & (1ULL << i)) ||
		    (!(sure & (1ULL << i)) &&
		     !rec_trigger__match_event(&rules->rules[i].rule, &ev)))
			continue;
		on = (struct fired_on){ .key = head->meta,
					.at_ns = (int64_t)head->time_ns,
					.meta = head->meta,
					.cs = cs,
					.quiet = rec_incident__quiet(&t->inc, head->meta, i) };
		p = fired(s, t, i, head->recording, &on);
		if (!p)
			continue;
		cs = cs ? cs : rec_proc__cached_callsite(&t->proc, head->meta);
		snprintf(p->what, sizeof(p->what), "event seq %" PRIu64 ": %s", head->seq,
			 cs && cs->message[0] ? cs->message : "(formatted)");
	}
}

/*
 * The event just ingested (t->proc.norm; head, its head as ingesting read it)
 * against t's level and event rules. Its callsite rules out most events at
 * the cost of a compare, here, inline; the fields are decoded only for a rule
 * that asks them.
 */
static inline void check_event(struct rec_session *s, struct traced *t,
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
	check_event_rules(s, t, head);
}

/* A span left (r, its times in CLOCK_MONOTONIC) against t's span rules. */
static void check_span(struct rec_session *s, struct traced *t, const struct rec_span_rec *r)
{
	struct rec_incident_pending *p;
	const struct rec_trigger_set *rules = t->inc.rules;
	const struct rec_callsite *cs;
	struct rec_sched_figs kt;
	int64_t took;

	if (!r->enter || r->hdr.time_ns < r->enter)
		return;
	took = (int64_t)(r->hdr.time_ns - r->enter);
	/* Caught while it was open: its end is the same incident. */
	if (rec_incident__open_fired(&t->inc, r->id, false))
		return;
	cs = rec_proc__callsite(&t->proc, r->meta);
	/* Its kernel time, for the rules on a part of it (span:GLOB blocked>DURATION). */
	rec_offcpu__charge(&t->proc.sched, r->hdr.tid, r->enter, r->hdr.time_ns, &kt);
	for (unsigned int i = 0; i < rules->n; i++) {
		const struct rec_trigger_rule *rule = &rules->rules[i].rule;
		/* A span's own time is its end. */
		struct fired_on on = {
			.key = r->meta, .at_ns = (int64_t)r->hdr.time_ns, .meta = r->meta, .cs = cs
		};

		if (rec_trigger__match_span(rule, cs, took) &&
		    (p = fired(s, t, i, r->recording, &on)))
			snprintf(p->what, sizeof(p->what), "span %s lasted %" PRId64 " ms",
				 cs ? cs->name : "?", took / 1000000);
		else if (rec_trigger__match_span_part(rule, cs, &kt) &&
			 (p = fired(s, t, i, r->recording, &on)))
			snprintf(p->what, sizeof(p->what),
				 "span %s lasted %" PRId64 " ms (cpu %" PRIu64 ", blocked %" PRIu64
				 ", runq %" PRIu64 " ms)",
				 cs ? cs->name : "?", took / 1000000, kt.cpu_ns / 1000000,
				 kt.blocked_ns / 1000000, kt.runq_ns / 1000000);
	}
}

/*
 * t's open spans against its span rules, every OPEN_CHECK_MS: a span still
 * open past a rule's duration fires while it is open (a hung request), once.
 */
static void check_open(struct rec_session *s, struct traced *t)
{
	struct rec_incident_pending *p;
	const struct rec_trigger_set *rules = t->inc.rules;
	int64_t now = now_mono_ns();
	struct fired_on on;

	if (!t->inc.span_rules || !t->proc.alive || now_ms() - t->open_checked_ms < OPEN_CHECK_MS)
		return;
	t->open_checked_ms = now_ms();
	refresh(s, t);
	for (size_t k = 0; k < t->proc.nstacks; k++) {
		const struct rec_thread_stack *st = &t->proc.stacks[k];

		for (uint32_t f = 0; f < st->depth && f < REC_MAX_DEPTH; f++) {
			const struct rec_frame *fr = &st->frames[f];
			const struct rec_callsite *cs;
			int64_t age;

			if (!fr->enter || !fr->recording || (int64_t)fr->enter > now)
				continue;
			age = now - (int64_t)fr->enter;
			cs = rec_proc__callsite(&t->proc, fr->meta);
			/* A span still open: its own time is its start. */
			on = (struct fired_on){ .key = fr->meta,
						.at_ns = (int64_t)fr->enter,
						.meta = fr->meta,
						.cs = cs };
			for (unsigned int i = 0; i < rules->n; i++)
				if (rec_trigger__match_span(&rules->rules[i].rule, cs, age) &&
				    !rec_incident__open_fired(&t->inc, fr->id, true) &&
				    (p = fired(s, t, i, fr->recording, &on)))
					snprintf(p->what, sizeof(p->what),
						 "span %s open for %" PRId64 " ms",
						 cs ? cs->name : "?", age / 1000000);
		}
	}
}

/* A rec_trigger() record against t's code rules. */
static void check_code(struct rec_session *s, struct traced *t, const struct rec_trigger_rec *r)
{
	struct rec_incident_pending *p;
	const struct rec_trigger_set *rules = t->inc.rules;
	char reason[REC_TRIGGER_REASON_MAX] = "";
	struct fired_on on = { .at_ns = (int64_t)r->hdr.time_ns, .code = true };

	if (r->reason_len > 0) {
		memcpy(reason, r->reason, sizeof(reason));
		reason[sizeof(reason) - 1] = 0;
	}
	on.reason = r->reason_len > 0 ? reason : NULL;
	on.key = reason_key(on.reason);
	for (unsigned int i = 0; i < rules->n; i++)
		if (rec_trigger__match_code(&rules->rules[i].rule, on.reason) &&
		    (p = fired(s, t, i, r->recording, &on)))
			snprintf(p->what, sizeof(p->what), "code: %s",
				 r->reason_len > 0 ? reason : "(no reason)");
}

_Static_assert((int)REC_DUMP_TRIGGER_LEVEL == (int)REC_TRIGGER_LEVEL &&
		       (int)REC_DUMP_TRIGGER_SPAN == (int)REC_TRIGGER_SPAN &&
		       (int)REC_DUMP_TRIGGER_EVENT == (int)REC_TRIGGER_EVENT &&
		       (int)REC_DUMP_TRIGGER_CODE == (int)REC_TRIGGER_CODE,
	       "trigger kinds in dumps are the rules' kinds");

/*
 * What a dump says of the pending snapshot p of t: its rule, what fired it and
 * when, and the counts of every rule of t now, in counts (room for
 * REC_TRIGGER_MAX_RULES).
 */
static void dump_trigger_of(struct rec_session *s, struct traced *t,
			    const struct rec_incident_pending *p, struct rec_dump_trigger *d,
			    struct rec_dump_rule_counts *counts)
{
	const struct rec_trigger_set *rules = t->inc.rules;
	struct rec_rstate *rs = p->recording ? rec_proc__find(&t->proc, p->recording) : NULL;
	struct rec_trigger_rule r = { 0 };
	char err[64];

	/* The firings the callsite cache held back, counted now that they are read. */
	rec_incident__flush(&t->inc);
	memset(d, 0, sizeof(*d));
	rec_trigger__parse(p->rule_text, &r, err, sizeof(err));
	d->rule_id = p->rule_id;
	d->kind = (enum rec_dump_trigger_kind)r.kind;
	snprintf(d->rule, sizeof(d->rule), "%s", p->rule_text);
	d->time_ns = p->fired_ns + t->proc.clock_offset_ns;
	d->at_ns = p->at_ns ? p->at_ns + t->proc.clock_offset_ns : 0;
	d->signature_id = p->sig_id;
	snprintf(d->signature, sizeof(d->signature), "%s", p->sig_text);
	if (rules) {
		d->signatures = rec_trigger__nsigs(rules);
		d->signatures_max = REC_TRIGGER_SIGNATURES_MAX;
		d->signatures_folded = rules->folded;
		d->signatures_new_capped = rules->new_capped;
	}
	d->recording = p->recording;
	if (rs)
		snprintf(d->subject, sizeof(d->subject), "%s", rs->subject);
	snprintf(d->what, sizeof(d->what), "%s", p->what);
	d->after_ns = (uint64_t)s->opts.trigger_after_ns;
	d->counts = counts;
	for (unsigned int i = 0; rules && i < rules->n && i < REC_TRIGGER_MAX_RULES; i++) {
		const struct rec_trigger_entry *e = rec_trigger__at(rules, i);

		counts[i] = (struct rec_dump_rule_counts){ .id = e->id,
							   .fired = e->count.fired,
							   .saved = e->count.saved,
							   .cooldown = e->count.cooldown,
							   .capped = e->count.capped,
							   .failed = e->count.failed };
		snprintf(counts[i].rule, sizeof(counts[i].rule), "%s", e->text);
		d->ncounts++;
	}
}

/* The rules' counts that a black box's pending triggers share, and --stats's. */
static struct rec_dump_rule_counts ended_counts[REC_TRIGGER_MAX_RULES];
static struct rec_dump_rule_counts live_counts[REC_TRIGGER_MAX_RULES];

/* The snapshot of pending p of t, into the dump directory; its path into path. */
static int snapshot_file(struct rec_session *s, struct traced *t,
			 const struct rec_incident_pending *pending, char *path, size_t len)
{
	static struct rec_dump_rule_counts counts[REC_TRIGGER_MAX_RULES];
	struct rec_dump_counters counters;
	struct rec_dump_trigger d;
	struct rec_dump_opts o = { .counters = &counters, .trigger = &d };
	int err;

	memcpy(counters.v, t->proc.counters, sizeof(counters.v));
	dump_trigger_of(s, t, pending, &d, counts);
	o.only_recording = s->opts.trigger_scope_process ? 0 : pending->recording;
	err = rec_dump__write_snapshot_file(s->opts.dump_dir, &t->proc, &o, path, len);
	/* A trigger of no recording (rec_trigger(NULL, ...)) holds the stacks of every thread. */
	if (err == -ENOENT && o.only_recording) {
		o.only_recording = 0;
		err = rec_dump__write_snapshot_file(s->opts.dump_dir, &t->proc, &o, path, len);
	}
	return err;
}

/* s escaped for a terminal (it came from the target) into buf. */
static void escape_to(char *buf, size_t len, const char *s)
{
	FILE *f = fmemopen(buf, len, "w");

	if (!f) {
		buf[0] = 0;
		return;
	}
	rec_text__escape(f, s, strnlen(s, REC_SUBJECT_MAX));
	fclose(f);
	buf[len - 1] = 0;
}

/* " (N more since)" if n lines were held back since the last one, else "". */
static const char *more_since(uint64_t n, char *buf, size_t len)
{
	if (!n)
		return "";
	snprintf(buf, len, " (%" PRIu64 " more since)", n);
	return buf;
}

/* A snapshot of one recording that the writer's thread writes (snapwriter.h). */
struct snapshot_job {
	struct rec_snapshot_job job; /* first: the writer hands it back */
	struct rec_incident_pending pending;
};

/*
 * The snapshot that pending stands for, t as it is now, copied for the
 * writer's thread (its recording and every thread's stack). Returns 0 once
 * pushed, or -errno: then it is to be written here (a trigger of no recording,
 * one of --trigger-scope process, or no memory for the copy).
 */
static int push_snapshot(struct rec_session *s, struct traced *t,
			 const struct rec_incident_pending *pending)
{
	struct snapshot_job *sj;
	int err;

	if (!s->opts.dump_dir || s->opts.trigger_scope_process || !pending->recording)
		return -EINVAL;
	sj = malloc(sizeof(*sj));
	if (!sj)
		return -ENOMEM;
	err = rec_proc__copy_recording(&sj->job.proc, &t->proc, pending->recording);
	if (err)
		goto out;
	memcpy(sj->job.counters.v, t->proc.counters, sizeof(sj->job.counters.v));
	dump_trigger_of(s, t, pending, &sj->job.trigger, sj->job.counts);
	sj->job.recording = pending->recording;
	sj->job.bytes = rec_spool__footprint(sj->job.proc.first->spool) +
			sj->job.proc.first->spans.n * sizeof(struct rec_kept_span) +
			sj->job.proc.nstacks * sizeof(struct rec_thread_stack);
	sj->job.dir = s->opts.dump_dir;
	sj->job.owner = t;
	sj->pending = *pending;
	err = rec_snapwriter__push(s->snapw, &sj->job);
out:
	if (err) {
		rec_proc__fini(&sj->job.proc);
		free(sj);
	}
	return err;
}

/*
 * The snapshot that pending stands for was written into path (err 0), or not
 * (-errno): says so on one stderr line, or why it could not (a line a second
 * at most, with a count of the rest); counts it saved or failed.
 */
static void snapshot_done(struct rec_session *s, struct traced *t,
			  const struct rec_incident_pending *pending, int err, const char *path)
{
	const struct rec_trigger_entry *e = pending->rule == REC_INCIDENT_NO_RULE
						    ? NULL
						    : rec_trigger__at(t->inc.rules, pending->rule);
	struct rec_rstate *rs =
		pending->recording ? rec_proc__find(&t->proc, pending->recording) : NULL;
	char subject[4 * REC_SUBJECT_MAX] = "", more[48];
	uint64_t held;

	if (!err)
		keep_files(s, path, true);
	if (rs)
		escape_to(subject, sizeof(subject), rs->subject);
	if (err) {
		t->snapshots_failed++;
		t->snapshot_err = err;
	}
	/* In a storm every snapshot fails alike (a full disk): a line a second says so. */
	if (err && rec_ratelimit__allow(&t->snapshot_failed_msg, now_mono_ns(), &held))
		fprintf(stderr,
			"recorder-attach: trigger '%s' fired in pid %d (%s): its snapshot could "
			"not be written into %s: %s%s\n",
			pending->rule_text, (int)t->proc.pid, subject, s->opts.dump_dir ?: "(none)",
			strerror(-err), more_since(held, more, sizeof(more)));
	else if (!err)
		fprintf(stderr,
			"recorder-attach: trigger '%s' fired in pid %d (%s): snapshot written to "
			"%s\n",
			pending->rule_text, (int)t->proc.pid, subject, path);
	/* A rule removed meanwhile has no counts left to report to. */
	if (e && e->id == pending->rule_id)
		rec_trigger__report(t->inc.rules, pending->rule, pending->sig_key, err, path);
	if (rs)
		rec_proc__unpin(&t->proc, rs);
}

/* The snapshots the writer's thread has written (of t only, with t): each said and counted. */
static void snapshots_done(struct rec_session *s, struct traced *t)
{
	struct rec_snapshot_job *job;

	while ((job = rec_snapwriter__take_done(s->snapw, t))) {
		struct snapshot_job *sj = (struct snapshot_job *)job;

		snapshot_done(s, job->owner, &sj->pending, job->err, job->path);
		free(sj);
	}
}

/*
 * Writes the snapshot that pending stands for: t as it is (its caller
 * refreshed it), its recording (or, with --trigger-scope process, every one),
 * and every thread's stack. One of a recording goes to the writer's thread
 * with async; snapshot_done() says and counts it once it is written.
 */
static void write_snapshot(struct rec_session *s, struct traced *t,
			   const struct rec_incident_pending *pending, bool async)
{
	char path[PATH_MAX] = "";
	int err = -ENOENT;

	if (async && push_snapshot(s, t, pending) == 0)
		return;
	if (s->opts.dump_dir)
		err = snapshot_file(s, t, pending, path, sizeof(path));
	snapshot_done(s, t, pending, err, path);
}

/*
 * The snapshots t still had pending when it ended: its black box (info) holds
 * their story and names them; each is counted saved in it, or failed with it.
 */
static void ended_pending(struct rec_session *s, struct traced *t, const struct rec_exit_info *info)
{
	struct rec_incident_pending p;
	char subject[4 * REC_SUBJECT_MAX];

	(void)s;
	while (rec_incident__take_due(&t->inc, 0, true, &p)) {
		struct rec_rstate *rs = p.recording ? rec_proc__find(&t->proc, p.recording) : NULL;

		escape_to(subject, sizeof(subject), rs ? rs->subject : "");
		if (info->dump_err)
			fprintf(stderr,
				"recorder-attach: trigger '%s' fired in pid %d (%s) as it ended: "
				"its "
				"black box could not be written either\n",
				p.rule_text, (int)t->proc.pid, subject);
		else
			fprintf(stderr,
				"recorder-attach: trigger '%s' fired in pid %d (%s) as it ended: "
				"its "
				"story is in its black box %s\n",
				p.rule_text, (int)t->proc.pid, subject, info->dump_path);
		if (p.rule != REC_INCIDENT_NO_RULE)
			rec_trigger__report(t->inc.rules, p.rule, p.sig_key, info->dump_err,
					    info->dump_path);
		if (rs)
			rec_proc__unpin(&t->proc, rs);
	}
}

/* Every recording p had: those it holds, and those it forgot. */
static uint64_t recordings_of(const struct rec_proc *p)
{
	struct rec_forgotten *v = NULL;
	ssize_t n = rec_proc__forgotten(p, &v);
	uint64_t total = 0;

	for (const struct rec_rstate *rs = p->first; rs; rs = rs->next)
		total++;
	for (ssize_t i = 0; i < n; i++)
		total += v[i].recordings;
	free(v);
	return total;
}

/*
 * The snapshots of every traced process that are due: pushed to the writer's
 * thread while it has room (the rest wait their turn, pending), each said
 * once written. With all (traced_end(), which waited for t's on the thread
 * first), every one of t's, written here.
 */
static void write_due(struct rec_session *s, struct traced *only, bool all)
{
	struct rec_incident_pending p;
	struct rec_incident_keep key;
	bool fresh;

	snapshots_done(s, NULL);
	for (size_t i = 0; i < s->ntraced; i++) {
		struct traced *t = s->traced[i];

		if ((only && t != only) || !t->inc.rules || t->done || t->waiting)
			continue;
		check_open(s, t);
		fresh = false;
		while ((all || rec_snapwriter__has_room(s->snapw)) &&
		       rec_incident__take_due(&t->inc, now_mono_ns(), all, &p)) {
			/* t as it is now: read once for the snapshots due together. */
			if (!fresh && t->proc.alive)
				refresh(s, t);
			fresh = true;
			write_snapshot(s, t, &p, !all);
		}
		while (rec_incident__take_keep(&t->inc, now_mono_ns(), all, &key))
			export_kept(s, t, &key);
	}
}

/* The clients' callbacks (clients.h): the owner of a client's target is its struct traced. */

/* --triggers, --add-trigger and --remove-trigger of recorder-tail, for t. */
static void client_triggers(void *ctx, void *owner, const struct rec_query *q, FILE *out)
{
	struct rec_session *s = ctx;
	struct traced *t = owner;
	const struct rec_trigger_set *d = s->opts.triggers;
	char err[256] = "";
	int r;

	if (q->flags & REC_Q_ADD_TRIGGER) {
		r = rec_incident__add(&t->inc, q->rule,
				      d ? d->cooldown_ns : REC_TRIGGER_COOLDOWN_NS,
				      d ? d->per_hour : REC_TRIGGER_PER_HOUR, err, sizeof(err));
		if (r > 0)
			rec_trigger__limit_signatures(t->inc.rules, d ? d->sig_per_hour
								      : REC_TRIGGER_SIG_PER_HOUR);
		if (r > 0)
			fprintf(out, "0added trigger %d: %s\n", r,
				rec_trigger__at(t->inc.rules, t->inc.rules->n - 1)->text);
		else
			fprintf(out, "1recorder-attach: cannot add trigger '%s' to pid %d: %s\n",
				q->rule, (int)t->proc.pid,
				r == -EEXIST   ? "it is there already"
				: r == -ENOSPC ? "the most rules a process may have are there"
				: r == -EINVAL ? err
					       : strerror(-r));
		return;
	}
	if (q->flags & REC_Q_REMOVE_TRIGGER) {
		r = rec_incident__remove(&t->inc, q->rule, err, sizeof(err));
		if (r)
			fprintf(out, "1recorder-attach: cannot remove trigger '%s' of pid %d: %s\n",
				q->rule, (int)t->proc.pid, err);
		else
			fprintf(out, "0removed trigger '%s'\n", q->rule);
		return;
	}
	fputc('0', out);
	rec_incident__flush(&t->inc);
	rec_output__triggers(out, t->inc.rules, !!(q->flags & REC_Q_JSON), t->proc.clock_offset_ns);
}

static int client_refresh(void *ctx, void *owner)
{
	struct traced *t = owner;

	if (t->done)
		return 0;
	refresh(ctx, t);
	/* --stats shows its trigger rules' counts as they are now. */
	t->proc.live_triggers = NULL;
	if (t->inc.rules && t->inc.rules->n) {
		struct rec_incident_pending none = { 0 };

		dump_trigger_of(ctx, t, &none, &t->live, live_counts);
		t->live.rule_id = 0;
		t->proc.live_triggers = &t->live;
	}
	return 1;
}

static int client_write_dump(void *ctx, void *owner, char *path, size_t len)
{
	return write_dump(ctx, owner, NULL, 0, path, len);
}

static void client_target_stats(void *ctx, void *owner, struct rec_clients_target_stats *st)
{
	struct rec_session *s = ctx;
	struct traced *t = owner;
	/* An adopted process's libraries are attached for every process. */
	const struct rec_late_counts *k = rec_attach__late(s->att, t->adopted ? NULL : &t->att);

	st->libraries_failed = k->failed;
	st->libraries_retrying = k->retrying;
	st->libraries_attached_later = k->attached_later;
	st->libraries_given_up = k->given_up;
	st->dumps_removed = s->dumps.removed;
	st->dumps_removed_bytes = s->dumps.removed_bytes;
	st->snapshots_failed = t->snapshots_failed;
	st->snapshots_removed = s->snapshots.removed;
	st->snapshots_removed_bytes = s->snapshots.removed_bytes;
	st->snapshots_made_room = s->room.removed;
	st->snapshots_made_room_bytes = s->room.removed_bytes;
	st->attach_pid = getpid();
	st->binary = t->binary;
}

static int on_record(void *ctx, void *data, size_t size);

int rec_session__open(struct rec_session **sp, const struct rec_session_opts *opts)
{
	struct rec_bpfstate_opts bo = { .ring_bytes = opts->ring_bytes,
					.follow_new = !!opts->follow_binaries,
					.verbose = !!opts->verbose,
					.sched = !!opts->sched };
	struct rec_attach_opts ao = { .on_skipped = opts->on_skipped,
				      .on_late = opts->on_late,
				      .per_event = opts->per_event,
				      .ctx = opts->ctx };
	struct rec_clients_opts co = { .max_clients = opts->max_clients,
				       .timeout_ms = opts->client_timeout_ms,
				       .follow_buffer = opts->follow_buffer,
				       .dump_dir = opts->dump_dir,
				       .refresh = client_refresh,
				       .write_dump = client_write_dump,
				       .target_stats = client_target_stats,
				       .triggers = client_triggers };
	struct rec_session *s;
	sigset_t mask;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->tracer = tracer_word(s);
	rec_clock__add(&s->clock, rec_clock__read());
	s->epfd = s->sigfd = -1;
	/* A limit left at 0 takes its default. */
	{
		const struct rec_limits d = REC_LIMITS_DEFAULT;
		struct rec_limits *l = &s->opts.limits;

		l->max_recordings = l->max_recordings ?: d.max_recordings;
		l->max_recordings_per_process = l->max_recordings_per_process ?:
						l->max_recordings /
						REC_DEFAULT_PER_PROCESS_SHARE ?: 1;
		l->keep_retired = l->keep_retired ?: d.keep_retired;
		l->max_callsites = l->max_callsites ?: d.max_callsites;
		l->max_literals = l->max_literals ?: d.max_literals;
		l->max_dead_stacks = l->max_dead_stacks ?: d.max_dead_stacks;
		l->max_forgotten_recorders =
			l->max_forgotten_recorders ?: d.max_forgotten_recorders;
		l->span_cap = l->span_cap ?: d.span_cap;
	}
	bo.max_recordings = s->opts.limits.max_recordings;
	bo.max_per_process = s->opts.limits.max_recordings_per_process;
	co.ctx = s;
	err = rec_bpfstate__open(&s->bs, &bo);
	if (err)
		goto fail;
	err = rec_attach__new(&s->att, s->bs, &ao) ?: rec_clients__new(&s->clients, &co);
	if (err)
		goto fail;
	s->rb = rec_ring__new(rec_bpfstate__ring_fd(s->bs), on_record, s);
	if (!s->rb) {
		err = -errno;
		goto fail;
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->epfd < 0 || s->sigfd < 0) {
		err = -errno;
		goto fail;
	}
	err = watch_add(s, rec_ring__fd(s->rb), &s->w_ring, W_RING, NULL) ?:
	      watch_add(s, s->sigfd, &s->w_signal, W_SIGNAL, NULL) ?:
	      watch_add(s, rec_clients__fd(s->clients), &s->w_clients, W_CLIENTS, NULL) ?:
	      rec_snapwriter__new(&s->snapw) ?:
	      watch_add(s, rec_snapwriter__fd(s->snapw), &s->w_snapshots, W_SNAPSHOTS, NULL);
	if (err)
		goto fail;
	*sp = s;
	return 0;
fail:
	rec_session__free(s);
	return err < 0 ? err : -err;
}

/*
 * Opens pid as a target (t->target) and gives its model a reader of it.
 * Returns 0 or a negative errno (-ESRCH if it is gone), t usable either way.
 */
static int traced_init(struct traced *t, pid_t pid, const struct rec_trigger_set *rules, int sched)
{
	struct rec_reader reader;
	int err;

	t->pidfd = t->listen_fd = t->lock_fd = -1;
	rec_ratelimit__init(&t->snapshot_failed_msg, REC_RATELIMIT_NS);
	if (rec_incident__init(&t->inc, rules))
		return -ENOMEM;
	if (getrandom(&t->otlp_salt, sizeof(t->otlp_salt), 0) != sizeof(t->otlp_salt))
		t->otlp_salt = (uint64_t)pid << 32 ^ (uint64_t)now_ms();
	err = rec_target__open(&t->target, pid);
	rec_target__reader(&t->target, &reader);
	rec_proc__init(&t->proc, pid, &reader);
	/* Its intervals come once BPF traces it, from about now. */
	if (sched)
		rec_offcpu__start(&t->proc.sched, (uint64_t)now_mono_ns());
	t->proc.ns_pid = t->target.ns_pid;
	t->proc.uid = t->target.uid;
	return err;
}

/* Frees t, which has ended (traced_end) or never started. */
static void traced_free(struct traced *t)
{
	rec_incident__fini(&t->inc);
	free(t->written);
	rec_attach__release(&t->att);
	if (t->pidfd >= 0)
		close(t->pidfd);
	rec_proc__fini(&t->proc);
	rec_target__close(&t->target);
	free(t);
}

/* A process to trace: its model, and its exit reported by the BPF side. */
static int traced_open(struct rec_session *s, pid_t pid, struct traced **tp)
{
	struct traced *t;
	int err;

	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	err = traced_init(t, pid, s->opts.triggers, s->opts.sched);
	t->proc.limits = s->opts.limits;
	/* Spans entered before now have no enter time: they show as entered before the attach. */
	t->proc.attached_ns = (uint64_t)now_mono_ns();
	/*
	 * Before the probes: the exit of a process that dies right away is seen.
	 * An adopted process has its entry (and its count of recordings) already.
	 */
	if (!err)
		err = rec_bpfstate__trace(s->bs, pid);
	if (err) {
		traced_free(t);
		return err;
	}
	*tp = t;
	return 0;
}

/* Tells the session's owner of a hand-over of t (session.h, on_handover). */
static void handover(struct rec_session *s, struct traced *t, enum rec_handover what,
		     const struct rec_control_peer *other, int err)
{
	if (s->opts.on_handover)
		s->opts.on_handover(what, t->proc.pid, other, err, s->opts.ctx);
}

/* Takes t's lock. Returns 0, -EBUSY (t->holder says who holds it) or another -errno. */
static int take_lock(struct traced *t)
{
	t->lock_fd = rec_control__lock(t->sock_path, t->binary, t->lock_path, sizeof(t->lock_path),
				       &t->holder);
	return t->lock_fd < 0 ? t->lock_fd : 0;
}

/* Serves t's socket, its lock taken. Returns 0 or -errno. */
static int serve_socket(struct rec_session *s, struct traced *t)
{
	t->listen_fd = rec_control__listen(t->sock_path, t->proc.uid);
	if (t->listen_fd < 0)
		return t->listen_fd;
	return rec_clients__listen(s->clients, t->listen_fd, &t->proc, t);
}

/*
 * Starts watching t's exit and serving its control socket, once its lock is
 * ours: one recorder-attach per process. A lock held by a --binary
 * recorder-attach is deferred to by any, one held by a -p one by a --binary
 * one (adopted t): t then waits (struct traced), and is taken over if that
 * one stops. Else -EBUSY sets t->holder (see rec_control__lock). A process
 * that is gone already (reaped) has neither: the loop ends it once its
 * records are in.
 */
static int traced_serve(struct rec_session *s, struct traced *t)
{
	struct traced **v;
	int err;

	v = realloc(s->traced, (s->ntraced + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->traced = v;
	t->pidfd = syscall(SYS_pidfd_open, t->proc.pid, 0);
	if (t->pidfd < 0 && errno == ESRCH && t->adopted) {
		t->proc.alive = 0;
		goto started;
	}
	if (t->pidfd < 0)
		return -errno;
	err = rec_control__path(t->sock_path, sizeof(t->sock_path), s->opts.sock_dir, t->proc.pid);
	if (err)
		return err;
	err = take_lock(t);
	if (err == -EBUSY && (t->adopted || t->holder.binary[0])) {
		/* Without its note, the holder only cannot say whom it hands t back to. */
		rec_control__note_wait(t->sock_path, t->binary);
		t->waiting = 1;
		rec_bpfstate__wait(s->bs, t->proc.pid, true);
		handover(s, t, REC_HANDOVER_DEFER, &t->holder, 0);
		err = 0;
	} else if (!err) {
		err = serve_socket(s, t);
	}
	err = err ?: watch_add(s, t->pidfd, &t->w_pidfd, W_PIDFD, t);
	if (err)
		return err;
started:
	s->traced[s->ntraced++] = t;
	t->started = 1;
	return 0;
}

/*
 * The one way a traced process ends, whatever got it there: it exited (report:
 * its black box is written and on_exit told), the session stops, or attaching
 * to it failed. What it has is let go of: its last records are taken if it had
 * started, BPF forgets it, its clients are told, its pidfd, socket and lock
 * go, and its links detach in the background. A started one stays in
 * s->traced, done, until the session is freed: a client may still be answered
 * from its model.
 */
static void traced_end(struct rec_session *s, struct traced *t, bool report)
{
	struct rec_exit_info info = { .pid = t->proc.pid };
	struct rec_control_peer waiter;
	struct rec_incident_keep key;
	uint64_t held;
	pid_t pid = t->proc.pid;

	if (t->done)
		return;
	/* Its snapshots on the writer's thread: written, said and counted before its black box. */
	if (s->snapw) {
		rec_snapwriter__wait(s->snapw, t);
		snapshots_done(s, t);
	}
	/*
	 * Let go alive: the batch path stops before the last collect (a dead
	 * one: nothing). Unless another recorder-attach waits to take it over:
	 * then the word stays, so that its threads go on batching under it, in
	 * order, and that one, which takes those batches too, writes its own
	 * when it takes over. Back on the per-event path meanwhile, a thread's
	 * probes would reach it before the records still in its buffer.
	 */
	if (report || t->lock_fd < 0 || rec_control__waiter(t->sock_path, &waiter))
		untell_attached(t);
	/* Gone, or about to be let go: its stacks are the ones it died in, not live ones. */
	t->proc.alive = 0;
	if (t->started) {
		/* Everything the process emitted before it died is in the ring now. */
		refresh(s, t);
		rec_proc__died(&t->proc);
	}
	/* Let go alive (recorder-attach stops): its pending snapshots are written as they are. */
	if (!report)
		write_due(s, t, true);
	held = rec_ratelimit__flush(&t->snapshot_failed_msg);
	if (held)
		fprintf(stderr,
			"recorder-attach: %" PRIu64 " more snapshot(s) of pid %d could not be "
			"written into %s since the last line that said so (the last: %s)\n",
			held, (int)pid, s->opts.dump_dir ?: "(none)", strerror(-t->snapshot_err));
	rec_bpfstate__untrace(s->bs, pid);
	if (report) {
		struct rec_dump_trigger *pend;
		size_t npend = 0;

		rec_names__end(t->proc.end, t->proc.end_code, t->proc.end_core, info.how,
			       sizeof(info.how));
		/* Fired as it ended: one file, its black box, names them. */
		pend = calloc(t->inc.npending ?: 1, sizeof(*pend));
		for (; pend && npend < t->inc.npending; npend++)
			dump_trigger_of(s, t, &t->inc.pending[npend], &pend[npend], ended_counts);
		info.dump_err =
			write_dump(s, t, pend, npend, info.dump_path, sizeof(info.dump_path));
		free(pend);
		ended_pending(s, t, &info);
		/* --otlp-keep: what it kept goes now, while its model is here. */
		while (rec_incident__take_keep(&t->inc, 0, true, &key))
			export_kept(s, t, &key);
		info.recordings = recordings_of(&t->proc);
		info.kept = t->inc.kept;
	}
	rec_bpfstate__forget(s->bs, pid);
	rec_clients__target_done(s->clients, t);
	if (t->pidfd >= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
		close(t->pidfd);
		t->pidfd = -1;
	}
	/*
	 * Its black box written: a recorder-attach that waits for it has nothing
	 * to take over. Let go alive: whoever waits for it takes it over.
	 */
	if (t->lock_fd >= 0 && report) {
		rec_control__unnote_wait(t->sock_path, true);
	} else if (t->lock_fd >= 0) {
		struct rec_control_peer w;

		if (!rec_control__waiter(t->sock_path, &w))
			handover(s, t, REC_HANDOVER_GIVEN, &w, 0);
	} else if (t->waiting) {
		rec_control__unnote_wait(t->sock_path, false);
	}
	/* The socket and the lock are removed only if they are ours. */
	if (t->listen_fd >= 0) {
		close(t->listen_fd);
		t->listen_fd = -1;
		unlink(t->sock_path);
	}
	rec_control__unlock(t->lock_fd, t->lock_path);
	t->lock_fd = -1;
	t->done = 1;
	if (report && s->on_exit)
		s->on_exit(&info, s->on_exit_ctx);
	/* Drained and reported: now its links may go (detaching takes a while). */
	rec_attach__detach(&t->att);
}

int rec_session__machine(struct rec_session *s, struct rec_machine *m)
{
	rec_machine__read(m, NULL);
	rec_machine__time_syscall(m);
	return rec_machine__time_uprobe(m, rec_bpfstate__object(s->bs),
					rec_bpfstate__program(s->bs, "uprobe_cost"));
}

int rec_session__attach(struct rec_session *s, pid_t pid, struct rec_attach_info *info)
{
	struct rec_attach_count count = { 0 };
	struct traced *t;
	int err;

	memset(info, 0, sizeof(*info));
	err = traced_open(s, pid, &t);
	if (err)
		return err;
	err = rec_attach__maps(s->att, &t->att, pid, false, &t->target.maps, &count);
	if (!err && count.objects == 0)
		err = -ENOENT;
	/* Every probe attached: its span stacks are kept from now on. */
	if (!err)
		rec_bpfstate__ready(s->bs, pid);
	if (!err)
		err = traced_serve(s, t);
	/* Once t is served: the records the seeding drains must find their process. */
	if (!err) {
		tell_attached(s, t);
		seed_stacks(s, t, true);
	}
	info->sites = count.sites;
	info->objects = count.objects;
	info->uid = t->proc.uid;
	info->lock_holder = t->holder.pid;
	snprintf(info->sock_path, sizeof(info->sock_path), "%s", t->sock_path);
	snprintf(info->lock_path, sizeof(info->lock_path), "%s", t->lock_path);
	if (err) {
		traced_end(s, t, false);
		traced_free(t);
		return err;
	}
	return 0;
}

/* The kernel's MINORBITS: its encoding of a device number is major << 20 | minor. */
#define KERNEL_MINORBITS 20

/* The kernel's encoding of a device number, as BPF reads s_dev. */
static uint64_t kernel_dev(dev_t dev)
{
	return ((uint64_t)major(dev) << KERNEL_MINORBITS) | minor(dev);
}

/* The --binary file pid runs, or NULL. */
static const struct rec_object_id *binary_of(struct rec_session *s, pid_t pid)
{
	char exe[PROC_PATH_MAX];
	struct stat st;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (stat(exe, &st))
		return NULL;
	for (size_t i = 0; i < s->nbins; i++)
		if (s->bins[i].inode == st.st_ino && s->bin_devs[i] == st.st_dev)
			return &s->bins[i];
	return NULL;
}

/* The --binary file a hello record names, or NULL. */
static const struct rec_object_id *binary_of_hello(struct rec_session *s,
						   const struct rec_hello_rec *hello)
{
	for (size_t i = 0; i < s->nbins; i++)
		if (s->bins[i].inode == hello->exe_ino &&
		    kernel_dev(s->bin_devs[i]) == hello->exe_dev)
			return &s->bins[i];
	return NULL;
}

/* Whether a process whose executable is loaded at start_code was forked by parent, not exec'd. */
static int forked_from(const struct traced *parent, const struct rec_object_id *bin,
		       uint64_t start_code)
{
	for (size_t i = 0; i < parent->target.maps.n; i++) {
		const struct rec_mapping *m = &parent->target.maps.v[i];

		if (m->inode == bin->inode && m->exec && m->start == start_code)
			return 1;
	}
	return 0;
}

/*
 * Completes the maps of an adopted process, so that its callsites and literals
 * can be read from the files once it is gone. A forked child has its parent's
 * layout: the parent's mappings are added after its own, which may be a part
 * only (read while the process was tearing its address space down) or none (a
 * zombie, or gone). A process with no maps and no traced parent of the same
 * layout gets its executable, placed where hello says it was loaded.
 */
static int complete_maps(struct rec_session *s, const struct rec_object_id *bin,
			 const struct rec_hello_rec *hello, struct traced *t)
{
	struct traced *parent = traced_of(s, (pid_t)hello->ppid);

	if (parent && forked_from(parent, bin, hello->start_code)) {
		if (!t->target.maps.n)
			t->proc.uid = t->target.uid = parent->proc.uid;
		return rec_maps__merge(&t->target.maps, &parent->target.maps);
	}
	if (t->target.maps.n)
		return 0;
	return rec_elf__image_maps(bin->path, bin->inode, hello->start_code, &t->target.maps);
}

/*
 * Starts tracing pid, a process of a --binary file that hello (NULL if its
 * hello record was lost) announced, even if it is gone by now; returns it, or
 * NULL (asked once per process). Its probes in that file are attached for
 * every process already, so only its libraries are left to the rescans: a
 * child that ran a few sites and exited before its hello was read still gets
 * its black box. Called from the ring callback: it does not consume the ring,
 * and leaves the seeding of its stacks to the loop.
 */
static struct traced *adopt(struct rec_session *s, pid_t pid, const struct rec_hello_rec *hello)
{
	const struct rec_object_id *bin;
	struct rec_mapping m = {};
	struct traced *t;
	int err;

	/* Asked once per process: its records keep coming, the answer won't change. */
	if (rec_u64map__get(&s->rejected, (uint64_t)pid + 1))
		return NULL;
	bin = hello ? binary_of_hello(s, hello) : binary_of(s, pid);
	if (!bin)
		goto reject;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto reject;
	t->adopted = 1;
	t->binary = bin->path;
	err = traced_init(t, pid, s->opts.triggers, s->opts.sched);
	if (err == -ESRCH && hello)
		err = 0;
	/* Gone, or a zombie: no maps, no memory left to read. */
	if (!err && !t->target.maps.n)
		t->proc.alive = 0;
	if (!err && hello)
		err = complete_maps(s, bin, hello, t);
	if (err) {
		traced_free(t);
		goto reject;
	}
	m.inode = bin->inode;
	for (size_t i = 0; i < t->target.maps.n; i++)
		if (t->target.maps.v[i].inode == bin->inode && t->target.maps.v[i].exec)
			m.path = t->target.maps.v[i].path;
	if ((m.path && rec_attach__seen(&t->att, &m)) || traced_serve(s, t)) {
		traced_end(s, t, false);
		traced_free(t);
		goto reject;
	}
	/* BPF makes it ready as it adopts it, unless that came first (bpf ready_bits). */
	if (s->bin_ready[bin - s->bins])
		rec_bpfstate__ready(s->bs, pid);
	t->seed_pending = t->proc.alive;
	/* One it waits for is said to be traced once it is taken over. */
	if (s->opts.on_adopt && !t->waiting)
		s->opts.on_adopt(pid, bin->path, s->opts.ctx);
	return t;
reject:
	/* Still marked traced in BPF: its records count as foreign until it exits. */
	rec_u64map__put(&s->rejected, (uint64_t)pid + 1, s);
	return NULL;
}

/*
 * A time of the target's TSC (the batch path's) in CLOCK_MONOTONIC; 0, a time
 * not known, stays 0.
 */
static uint64_t tsc_ns(struct rec_session *s, uint64_t tsc)
{
	if (!tsc)
		return 0;
	if (!s->clock.ready)
		rec_clock__add(&s->clock, rec_clock__read());
	return rec_clock__ns(&s->clock, tsc);
}

/* A record timed by the TSC (REC_HF_TSC, set on the batch path's only): in CLOCK_MONOTONIC. */
static void tsc_to_mono(struct rec_session *s, struct rec_hdr *h)
{
	h->time_ns = tsc_ns(s, h->time_ns);
	h->flags &= ~(uint32_t)REC_HF_TSC;
}

/* The enter times of n frames of a stack that are the TSC (REC_FF_TSC), in CLOCK_MONOTONIC. */
static void frames_to_mono(struct rec_session *s, struct rec_frame *f, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < REC_MAX_DEPTH; i++) {
		if (!(f[i].flags & REC_FF_TSC))
			continue;
		f[i].enter = tsc_ns(s, f[i].enter);
		f[i].flags &= ~(uint32_t)REC_FF_TSC;
	}
}

/* A span (a REC_RT_SPAN record's): its times in CLOCK_MONOTONIC, into its recording. */
static void ingest_span(struct rec_session *s, struct traced *t, struct rec_span_rec *r)
{
	if (r->hdr.flags & REC_HF_TSC) {
		r->enter = tsc_ns(s, r->enter);
		tsc_to_mono(s, &r->hdr);
	}
	/*
	 * A recording the BPF table knows and we do not yet, as for an event
	 * (ingested()): older than the attach (learnt from an event), its
	 * announcement lost, or its new in the batch whose spans go into the
	 * ring before it.
	 */
	if (!rec_proc__find(&t->proc, r->recording))
		rec_bpfstate__recover_recording(s->bs, &t->proc, r->recording);
	if (rec_proc__ingest_span(&t->proc, r) == 0 && rec_clients__following(s->clients))
		rec_clients__follow_span(s->clients, t, rec_proc__find(&t->proc, r->recording), r);
	if (t->inc.span_rules && !t->waiting)
		check_span(s, t, r);
}

/*
 * The spans of a REC_RT_SPANS record (size bytes), each as the REC_RT_SPAN
 * record it stands for; one whose count disagrees with its size is malformed.
 */
static void ingest_spans(struct rec_session *s, struct traced *t, const void *data, size_t size)
{
	struct rec_spans_rec h;
	struct rec_span_item it;
	struct rec_span_rec r;
	uint32_t i;

	if (size < REC_SPANS_SIZE(1)) {
		t->proc.malformed++;
		return;
	}
	memcpy(&h, data, REC_SPANS_SIZE(0));
	if (h.n < 1 || h.n > REC_SPANS_MAX || size != REC_SPANS_SIZE(h.n)) {
		t->proc.malformed++;
		return;
	}
	for (i = 0; i < h.n; i++) {
		memcpy(&it, (const char *)data + REC_SPANS_SIZE(i), sizeof(it));
		r.hdr = h.hdr;
		r.hdr.type = REC_RT_SPAN;
		r.hdr.size = sizeof(r);
		r.hdr.time_ns = it.exit;
		r.recording = it.recording;
		r.id = it.id;
		r.parent = it.parent;
		r.meta = it.meta;
		r.enter = it.enter;
		ingest_span(s, t, &r);
	}
}

/*
 * After an event of t was ingested with err: the followers get it, or, if its
 * recording's announcement was lost (ring full; -ENOENT), whether the BPF
 * table still knows the recording. Returns 1 if it does and the event should
 * be ingested again.
 */
static int ingested(struct rec_session *s, struct traced *t, int err, const struct rec_decoded *d,
		    const struct rec_rstate *rs, int retried, int following)
{
	if (err == -ENOENT && !retried &&
	    rec_bpfstate__recover_recording(s->bs, &t->proc, d->recording) == 0) {
		t->proc.orphans--;
		return 1;
	}
	if (err == 0 && following)
		rec_clients__follow_event(s->clients, t, rs, t->proc.norm, t->proc.norm_len);
	if (err == 0 && t->inc.event_rules && !t->waiting)
		check_event(s, t, d);
	return 0;
}

/* An event record from the ring. */
static void ingest_event(struct rec_session *s, struct traced *t, const void *data, size_t size)
{
	struct rec_rstate *rs = NULL;
	struct rec_decoded d;
	int err, retried = 0;

	t->proc.single_events++;
	if (t->inc.event_rules && size >= sizeof(struct rec_event_rec))
		rec_incident__prefetch(&t->inc, ((const struct rec_event_rec *)data)->meta);
	do {
		err = rec_proc__ingest_event(&t->proc, data, size, &d, &rs);
	} while (ingested(s, t, err, &d, rs, retried++, rec_clients__following(s->clients)));
}

/*
 * The events of a REC_RT_BATCH ring record, each taken where it lies in the
 * record (user/wire/batch.c): a malformed record ends the batch, counted.
 */
static void ingest_batch(struct rec_session *s, struct traced *t, const void *data, size_t size)
{
	struct rec_batch_iter it;
	struct rec_event_rec ev;
	struct rec_rstate *rs = NULL;
	struct rec_decoded d;
	const char *strings;
	uint32_t area, at;
	/* No client connects while a record is taken: asked once a batch. */
	int n, err, retried, following = rec_clients__following(s->clients);

	if (rec_batch__begin(&it, data, size)) {
		t->proc.malformed++;
		return;
	}
	t->proc.batches++;
	it.enters = t->proc.alive;
	for (at = it.pos; (n = rec_batch__next(&it, &ev, &strings, &area)) > 0; at = it.pos) {
		if (n == REC_BATCH_ENTER) {
			/*
			 * Its callsite read now, while the process lives: a Rust
			 * program's is on its heap and goes with it, and a span
			 * still open at a SIGKILL is named only if it was read.
			 */
			if (it.enter_meta != t->proc.enter_meta) {
				t->proc.enter_meta = it.enter_meta;
				rec_proc__know_callsite(&t->proc, it.enter_meta);
			}
			continue;
		}
		if (n == REC_BATCH_RECORDING) {
			/* A recording's new, span or free, where the thread wrote it. */
			if (it.recording.hdr.flags & REC_HF_TSC)
				tsc_to_mono(s, &it.recording.hdr);
			t->proc.batched_recordings++;
			rec_bpfstate__take_recording(s->bs, &t->proc, &it.recording);
			continue;
		}
		t->proc.batched_events++;
		if (t->inc.event_rules)
			rec_incident__prefetch(&t->inc, ev.meta);
		retried = 0;
		for (;;) {
			if (ev.hdr.flags & REC_HF_TSC)
				tsc_to_mono(s, &ev.hdr);
			err = rec_proc__ingest_parts(&t->proc, &ev, strings, area, &d, &rs);
			if (!ingested(s, t, err, &d, rs, retried++, following))
				break;
			/* Ingesting rewrote ev: read it from the batch again. */
			it.pos = at;
			rec_batch__next(&it, &ev, &strings, &area);
		}
	}
	if (n < 0)
		t->proc.malformed++;
}

/* The ring's consumer: takes one record into its process's model. Always returns 0. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct rec_session *s = ctx;
	struct rec_hdr h;
	struct traced *t;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	t = traced_of(s, h.tgid);
	if (!t && s->nbins && !s->closing) {
		struct rec_hello_rec hello;
		int is_hello = h.type == REC_RT_HELLO && size == sizeof(hello);

		if (is_hello)
			memcpy(&hello, data, sizeof(hello));
		t = adopt(s, h.tgid, is_hello ? &hello : NULL);
	}
	if (!t) {
		s->foreign++;
		/* Still marked traced in BPF (a process that could not be adopted): no more. */
		if (h.type == REC_RT_EXIT) {
			rec_bpfstate__untrace(s->bs, h.tgid);
			rec_u64map__del(&s->rejected, (uint64_t)h.tgid + 1);
		}
		return 0;
	}
	if (h.size != size) {
		t->proc.malformed++;
		return 0;
	}
	s->record_now_ns = t->inc.rules ? coarse_mono_ns() : 0;
	if (h.type == REC_RT_EVENT) {
		ingest_event(s, t, data, size);
	} else if (h.type == REC_RT_BATCH) {
		ingest_batch(s, t, data, size);
	} else if (h.type == REC_RT_HELLO && size == sizeof(struct rec_hello_rec)) {
		struct rec_hello_rec hello;

		/* Adopted above; or, adopted before, it exec'd: a file no --binary names? */
		memcpy(&hello, data, sizeof(hello));
		if (t->adopted && !binary_of_hello(s, &hello))
			t->exec_away = 1;
	} else if (h.type == REC_RT_SPAN && size == sizeof(struct rec_span_rec)) {
		struct rec_span_rec r;

		memcpy(&r, data, sizeof(r));
		ingest_span(s, t, &r);
	} else if (h.type == REC_RT_SPANS) {
		ingest_spans(s, t, data, size);
	} else if (h.type == REC_RT_STACK && size == sizeof(struct rec_stack_rec)) {
		struct rec_stack_rec r;

		memcpy(&r, data, sizeof(r));
		frames_to_mono(s, r.frames, r.depth);
		rec_proc__ingest_stack(&t->proc, &r);
	} else if (h.type == REC_RT_EXIT && size == sizeof(struct rec_exit_rec)) {
		struct rec_exit_rec r;

		memcpy(&r, data, sizeof(r));
		rec_proc__ingest_exit(&t->proc, &r);
	} else if (h.type == REC_RT_TRIGGER && size == sizeof(struct rec_trigger_rec)) {
		struct rec_trigger_rec r;

		memcpy(&r, data, sizeof(r));
		if (t->inc.code_rules && !t->waiting)
			check_code(s, t, &r);
	} else if (h.type == REC_RT_OFFCPU && size == sizeof(struct rec_offcpu_rec)) {
		struct rec_offcpu_rec r;

		memcpy(&r, data, sizeof(r));
		if (rec_offcpu__add(&t->proc.sched, &r) == -EINVAL)
			t->proc.malformed++;
	} else if (h.type == REC_RT_RECORDING && size == sizeof(struct rec_recording_rec)) {
		struct rec_recording_rec r;

		memcpy(&r, data, sizeof(r));
		t->proc.single_recordings++;
		rec_bpfstate__take_recording(s->bs, &t->proc, &r);
	} else {
		t->proc.malformed++;
	}
	s->record_now_ns = 0;
	return 0;
}

int rec_session__attach_binary(struct rec_session *s, const char *path,
			       struct rec_attach_info *info)
{
	struct rec_attach_count count = { 0 };
	struct rec_probe_names names;
	char real[PATH_MAX];
	struct stat st;
	DIR *proc;
	int err;

	memset(info, 0, sizeof(*info));
	if (!realpath(path, real) || stat(real, &st))
		return -errno;
	if (s->nbins == REC_MAX_BINARIES)
		return -E2BIG;
	err = rec_attach__probes_of(real, &names);
	if (err)
		return err;
	/* Before the probes: BPF adopts only the processes of these files. */
	err = rec_bpfstate__add_binary(s->bs, st.st_ino, kernel_dev(st.st_dev));
	if (err)
		return err;
	s->bins[s->nbins].inode = st.st_ino;
	s->bins[s->nbins].path = strdup(real);
	if (!s->bins[s->nbins].path)
		return -ENOMEM;
	s->bin_devs[s->nbins++] = st.st_dev;
	err = rec_attach__binary(s->att, real, &names, &count);
	info->sites = count.sites;
	info->objects = count.objects;
	if (err)
		return err;
	/*
	 * Every link attached: stacks are kept from now on, for the processes
	 * adopted while they were being attached too (bpf ready_bits).
	 */
	err = rec_bpfstate__binary_ready(s->bs, st.st_ino, kernel_dev(st.st_dev));
	if (err)
		return err;
	s->bin_ready[s->nbins - 1] = 1;
	for (size_t i = 0; i < s->ntraced; i++) {
		if (!s->traced[i]->adopted || s->traced[i]->binary != s->bins[s->nbins - 1].path)
			continue;
		rec_bpfstate__ready(s->bs, s->traced[i]->proc.pid);
		tell_attached(s, s->traced[i]);
	}
	/*
	 * Those running it already; later ones are adopted by their hello (exec,
	 * fork). Only its own: adopt() rejects any other for good, and a process
	 * of a later --binary would never be adopted.
	 */
	proc = opendir("/proc");
	for (struct dirent *de; proc && (de = readdir(proc));) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		struct traced *t;

		if (pid <= 0 || traced_of(s, pid) || binary_of(s, pid) != &s->bins[s->nbins - 1])
			continue;
		/* Rejected while no --binary named its file: asked again. */
		rec_u64map__del(&s->rejected, (uint64_t)pid + 1);
		if ((t = adopt(s, pid, NULL))) {
			/* Not inside the ring callback: seed it now. */
			t->seed_pending = 0;
			tell_attached(s, t);
			seed_stacks(s, t, true);
		}
	}
	if (proc)
		closedir(proc);
	return 0;
}

/*
 * Libraries loaded after the attach (dlopen) have probes too: try again those
 * that failed to attach, look for new files and attach them. The target's
 * maps grow, so callsites of a library that was unloaded can still be read
 * from its file.
 */
static void rescan(struct rec_session *s, struct traced *t)
{
	struct rec_maps maps;

	/* An adopted process's are every process's, tried again once per rescan by the loop. */
	if (!t->adopted)
		rec_attach__retry(s->att, &t->att);
	if (rec_maps__read(&maps, t->proc.pid))
		return;
	rec_attach__rescan(s->att, &t->att, t->proc.pid, t->adopted, &maps);
	rec_target__add_maps(&t->target, &maps);
	rec_maps__free(&maps);
	tell_attached(s, t);
}

/*
 * After a batch of ring records: the processes it adopted get their stacks
 * seeded now (never inside the ring callback, which must not consume the ring
 * again), those that were gone already when adopted are ended, and those that
 * exec'd a file no --binary names before any recording are let go.
 */
static void settle_adopted(struct rec_session *s)
{
	for (size_t i = 0; i < s->ntraced; i++) {
		struct traced *t = s->traced[i];

		if (t->done)
			continue;
		if (t->seed_pending) {
			t->seed_pending = 0;
			tell_attached(s, t);
			seed_stacks(s, t, false);
		}
		if (t->exec_away) {
			t->exec_away = 0;
			/* One with recordings keeps them until it exits: its black box has them. */
			if (!recordings_of(&t->proc)) {
				handover(s, t, REC_HANDOVER_EXEC, NULL, 0);
				traced_end(s, t, false);
				continue;
			}
		}
		if (t->pidfd < 0 && !t->exited)
			traced_end(s, t, true);
	}
}

/*
 * t ended (its pidfd says so). One that another recorder-attach held is
 * settled by take_over: its black box is written by one of the two.
 */
static void traced_exited(struct rec_session *s, struct traced *t)
{
	if (!t->waiting) {
		traced_end(s, t, true);
		return;
	}
	t->exited = 1;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
	close(t->pidfd);
	t->pidfd = -1;
}

/*
 * t waits for its lock (struct traced): once the recorder-attach that held it
 * has let go, t is served from here, nothing it emitted meanwhile missing.
 * One that ended meanwhile gets its black box here only if its note is still
 * ours: the holder that wrote the box took it away (rec_control__note_wait).
 */
static void take_over(struct rec_session *s, struct traced *t)
{
	struct rec_control_peer was = t->holder;
	struct rec_control_peer note;
	int err = take_lock(t);

	if (err == -EBUSY)
		return;
	t->waiting = 0;
	if (t->exited) {
		rec_bpfstate__wait(s->bs, t->proc.pid, false);
		bool ours =
			!err && !rec_control__waiter(t->sock_path, &note) && note.pid == getpid();

		if (ours)
			rec_control__unnote_wait(t->sock_path, false);
		handover(s, t, ours ? REC_HANDOVER_TAKEN : REC_HANDOVER_GONE, &was, 0);
		traced_end(s, t, ours);
		return;
	}
	rec_control__unnote_wait(t->sock_path, false);
	err = err ?: serve_socket(s, t);
	if (err) {
		handover(s, t, REC_HANDOVER_FAILED, &was, err);
		traced_end(s, t, false);
		return;
	}
	/*
	 * Said taken once its threads are told this one's word: what they
	 * enter from then on is timed by it (a span entered before their
	 * announce is read from their chain, untimed).
	 */
	tell_attached(s, t);
	handover(s, t, REC_HANDOVER_TAKEN, &was, 0);
	/*
	 * Its threads batched under the word of the one that let go (it leaves
	 * it: traced_end), and this one took those batches in their order. Now
	 * each announces its buffer to this one's word.
	 */
	/*
	 * Each thread's stack is read from its chain as it announces its buffer
	 * to this word (bpf on_batch), or, asleep, by verify_stacks (refresh).
	 * No seeding iterator now: under load, a thread that woke while it
	 * wrote its stack would announce into a stack half written.
	 */
	rec_bpfstate__wait(s->bs, t->proc.pid, false);
	if (t->adopted && s->opts.on_adopt)
		s->opts.on_adopt(t->proc.pid, t->binary, s->opts.ctx);
}

int rec_session__run(struct rec_session *s,
		     void (*on_exit)(const struct rec_exit_info *info, void *ctx), void *ctx)
{
	struct epoll_event evs[EPOLL_BATCH];
	int64_t last_scan = now_ms();

	s->on_exit = on_exit;
	s->on_exit_ctx = ctx;
	for (;;) {
		size_t live = 0;
		int n;

		for (size_t i = 0; i < s->ntraced; i++)
			live += !s->traced[i]->done;
		/*
		 * With --binary, processes come and go until we are stopped. The
		 * clients still open get what was queued for them (each within its
		 * deadline) before we go.
		 */
		if (!live && !s->nbins && !rec_clients__count(s->clients))
			return 0;
		/* A follower with events to render: a look at the fds, no wait. */
		n = epoll_wait(s->epfd, evs, EPOLL_BATCH,
			       rec_clients__busy(s->clients) ? 0 : s->opts.drain_ms);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (now_ms() - s->last_collect_ms >= (s->opts.collect_ms ?: COLLECT_MS)) {
			for (size_t i = 0; s->opts.collect_ms >= 0 && i < s->ntraced; i++)
				collect(s, s->traced[i]);
			rec_clock__add(&s->clock, rec_clock__read());
			s->last_collect_ms = now_ms();
		}
		rec_ring__consume(s->rb);
		settle_adopted(s);
		write_due(s, NULL, false);
		if (now_ms() - last_scan >= RESCAN_MS) {
			if (s->nbins)
				rec_attach__retry(s->att, NULL);
			for (size_t i = 0; i < s->ntraced; i++) {
				struct traced *t = s->traced[i];

				if (!t->done && t->waiting)
					take_over(s, t);
				if (!t->done && !t->exited)
					rescan(s, t);
			}
			last_scan = now_ms();
		}
		for (int i = 0; i < n; i++) {
			struct watch *w = evs[i].data.ptr;
			struct signalfd_siginfo si;

			switch (w->kind) {
			case W_RING:
				break;
			case W_SIGNAL:
				if (read(s->sigfd, &si, sizeof(si)) > 0)
					return 0;
				break;
			case W_PIDFD:
				traced_exited(s, w->ptr);
				break;
			case W_CLIENTS:
				rec_clients__ready(s->clients);
				break;
			case W_SNAPSHOTS:
				/* Only a wakeup: write_due() takes them back, every turn. */
				break;
			}
		}
		rec_clients__tick(s->clients);
	}
}

void rec_session__free(struct rec_session *s)
{
	if (!s)
		return;
	s->closing = 1;
	for (size_t i = 0; i < s->ntraced; i++)
		traced_end(s, s->traced[i], false);
	rec_clients__free(s->clients);
	rec_snapwriter__free(s->snapw);
	for (size_t i = 0; i < s->ntraced; i++)
		traced_free(s->traced[i]);
	free(s->traced);
	rec_attach__free(s->att);
	for (size_t i = 0; i < s->nbins; i++)
		free(s->bins[i].path);
	rec_u64map__free(&s->rejected);
	rec_ring__free(s->rb);
	rec_bpfstate__free(s->bs);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->sigfd >= 0)
		close(s->sigfd);
	free(s);
}
