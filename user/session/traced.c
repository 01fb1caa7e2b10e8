// SPDX-License-Identifier: MIT
/*
 * A traced process's life (private.h): opened, served on its control socket
 * once its lock is ours, handed over between recorder-attach processes, and
 * ended, with its black box, in one way out.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "model/names.h"
#include "target/maps.h"
#include "session/private.h"

/* The rules' counts that a black box's pending triggers share. */
static struct rec_dump_rule_counts ended_counts[REC_TRIGGER_MAX_RULES];

/*
 * Opens pid as a target (t->target) and gives its model a reader of it.
 * Returns 0 or a negative errno (-ESRCH if it is gone), t usable either way.
 */
int traced__init(struct traced *t, pid_t pid, const struct rec_trigger_set *rules, int sched)
{
	struct rec_reader reader;
	int err;

	t->pidfd = t->listen_fd = t->lock_fd = -1;
	rec_ratelimit__init(&t->snapshot_failed_msg, REC_RATELIMIT_NS);
	if (rec_incident__init(&t->inc, rules))
		return -ENOMEM;
	if (getrandom(&t->otlp_salt, sizeof(t->otlp_salt), 0) != sizeof(t->otlp_salt))
		t->otlp_salt = (uint64_t)pid << 32 ^ (uint64_t)rec_clock__mono_ms();
	err = rec_target__open(&t->target, pid);
	rec_target__reader(&t->target, &reader);
	rec_proc__init(&t->proc, pid, &reader);
	/* Its intervals come once BPF traces it, from about now. */
	if (sched)
		rec_offcpu__start(&t->proc.sched, (uint64_t)rec_clock__mono_ns());
	t->proc.ns_pid = t->target.ns_pid;
	t->proc.uid = t->target.uid;
	return err;
}

/* Frees t, which has ended (traced__end) or never started. */
void traced__free(struct traced *t)
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
	err = traced__init(t, pid, s->opts.triggers, s->opts.sched);
	t->proc.limits = s->opts.limits;
	/* Spans entered before now have no enter time: they show as entered before the attach. */
	t->proc.attached_ns = (uint64_t)rec_clock__mono_ns();
	/*
	 * Before the probes: the exit of a process that dies right away is seen.
	 * An adopted process has its entry (and its count of recordings) already.
	 */
	if (!err)
		err = rec_bpfstate__trace(s->bs, pid);
	if (err) {
		traced__free(t);
		return err;
	}
	*tp = t;
	return 0;
}

/* Tells the session's owner of a hand-over of t (session.h, on_handover). */
void traced__handover(struct rec_session *s, struct traced *t, enum rec_handover what,
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
int traced__serve(struct rec_session *s, struct traced *t)
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
		traced__handover(s, t, REC_HANDOVER_DEFER, &t->holder, 0);
		err = 0;
	} else if (!err) {
		err = serve_socket(s, t);
	}
	err = err ?: session__watch_add(s, t->pidfd, &t->w_pidfd, W_PIDFD, t);
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
void traced__end(struct rec_session *s, struct traced *t, bool report)
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
		snapshots__done(s, t);
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
		tracer__untell_attached(t);
	/* Gone, or about to be let go: its stacks are the ones it died in, not live ones. */
	t->proc.alive = 0;
	if (t->started) {
		/* Everything the process emitted before it died is in the ring now. */
		tracer__refresh(s, t);
		rec_proc__died(&t->proc);
	}
	/* Let go alive (recorder-attach stops): its pending snapshots are written as they are. */
	if (!report)
		snapshots__write_due(s, t, true);
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
			incidents__dump_trigger_of(s, t, &t->inc.pending[npend], &pend[npend],
						   ended_counts);
		info.dump_err = snapshots__write_dump(s, t, pend, npend, info.dump_path,
						      sizeof(info.dump_path));
		free(pend);
		snapshots__ended_pending(s, t, &info);
		/* --otlp-keep: what it kept goes now, while its model is here. */
		while (rec_incident__take_keep(&t->inc, 0, true, &key))
			export__kept(s, t, &key);
		info.recordings = snapshots__recordings_of(&t->proc);
		info.kept = t->inc.kept;
	}
	/* --otlp-keep: what it had and kept, whether it ended or is let go alive. */
	export__end(s, t, snapshots__recordings_of(&t->proc), t->inc.kept);
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
			traced__handover(s, t, REC_HANDOVER_GIVEN, &w, 0);
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
		err = traced__serve(s, t);
	/* Once t is served: the records the seeding drains must find their process. */
	if (!err) {
		tracer__tell_attached(s, t);
		tracer__seed_stacks(s, t, true);
		export__start(s, t);
	}
	info->sites = count.sites;
	info->objects = count.objects;
	info->uid = t->proc.uid;
	info->lock_holder = t->holder.pid;
	snprintf(info->sock_path, sizeof(info->sock_path), "%s", t->sock_path);
	snprintf(info->lock_path, sizeof(info->lock_path), "%s", t->lock_path);
	if (err) {
		traced__end(s, t, false);
		traced__free(t);
		return err;
	}
	return 0;
}

/*
 * Libraries loaded after the attach (dlopen) have probes too: try again those
 * that failed to attach, look for new files and attach them. The target's
 * maps grow, so callsites of a library that was unloaded can still be read
 * from its file.
 */
void traced__rescan(struct rec_session *s, struct traced *t)
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
	tracer__tell_attached(s, t);
}

/*
 * t ended (its pidfd says so). One that another recorder-attach held is
 * settled by traced__take_over: its black box is written by one of the two.
 */
void traced__exited(struct rec_session *s, struct traced *t)
{
	if (!t->waiting) {
		traced__end(s, t, true);
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
void traced__take_over(struct rec_session *s, struct traced *t)
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
		traced__handover(s, t, ours ? REC_HANDOVER_TAKEN : REC_HANDOVER_GONE, &was, 0);
		traced__end(s, t, ours);
		return;
	}
	rec_control__unnote_wait(t->sock_path, false);
	err = err ?: serve_socket(s, t);
	if (err) {
		traced__handover(s, t, REC_HANDOVER_FAILED, &was, err);
		traced__end(s, t, false);
		return;
	}
	/*
	 * Said taken once its threads are told this one's word: what they
	 * enter from then on is timed by it (a span entered before their
	 * announce is read from their chain, untimed).
	 */
	tracer__tell_attached(s, t);
	traced__handover(s, t, REC_HANDOVER_TAKEN, &was, 0);
	/*
	 * Its threads batched under the word of the one that let go (it leaves
	 * it: traced__end), and this one took those batches in their order. Now
	 * each announces its buffer to this one's word.
	 */
	/*
	 * Each thread's stack is read from its chain as it announces its buffer
	 * to this word (bpf on_batch), or, asleep, by verify_stacks (refresh).
	 * No seeding iterator now: under load, a thread that woke while it
	 * wrote its stack would announce into a stack half written.
	 */
	rec_bpfstate__wait(s->bs, t->proc.pid, false);
	export__start(s, t);
	if (t->adopted && s->opts.on_adopt)
		s->opts.on_adopt(t->proc.pid, t->binary, s->opts.ctx);
}
