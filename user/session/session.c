// SPDX-License-Identifier: MIT
/*
 * A recording session (session.h): its opening, the main loop and its end. The
 * rest of the session is in the files beside this one (private.h):
 *
 *	session.c	open, the loop, free
 *	traced.c	a traced process's life, from its attach to its one way
 *			out, and the hand-over of its lock
 *	tracer.c	the tracer words written into a target, and its stacks
 *			seeded and refreshed
 *	adopt.c		--binary: the processes of a file, adopted
 *	intake.c	the ring's records taken into the models, clocks converted
 *	incidents.c	the trigger rules held against what comes in
 *	snapshots.c	snapshots and black boxes written, with their retention
 *	answers.c	what the control socket's clients ask of a traced process
 *
 * The parts below it only call down: kernel/ (the BPF programs, the probes,
 * the ring), serving/ (the clients, who call back through answers.c),
 * model/, dumps/, incidents/.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "kernel/machine.h"
#include "session/private.h"

/* Has epoll report fd as w, of kind and for ptr. Returns 0 or -errno. */
int session__watch_add(struct rec_session *s, int fd, struct watch *w, enum watch_kind kind,
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
				       .refresh = answers__refresh,
				       .write_dump = answers__write_dump,
				       .target_stats = answers__target_stats,
				       .triggers = answers__triggers };
	struct rec_session *s;
	sigset_t mask;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->tracer = tracer__word(s);
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
	s->rb = rec_ring__new(rec_bpfstate__ring_fd(s->bs), intake__on_record, s);
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
	err = session__watch_add(s, rec_ring__fd(s->rb), &s->w_ring, W_RING, NULL) ?:
	      session__watch_add(s, s->sigfd, &s->w_signal, W_SIGNAL, NULL) ?:
	      session__watch_add(s, rec_clients__fd(s->clients), &s->w_clients, W_CLIENTS, NULL) ?:
	      rec_snapwriter__new(&s->snapw) ?:
	      session__watch_add(s, rec_snapwriter__fd(s->snapw), &s->w_snapshots, W_SNAPSHOTS, NULL);
	if (err)
		goto fail;
	*sp = s;
	return 0;
fail:
	rec_session__free(s);
	return err < 0 ? err : -err;
}

int rec_session__machine(struct rec_session *s, struct rec_machine *m)
{
	rec_machine__read(m, NULL);
	rec_machine__time_syscall(m);
	return rec_machine__time_uprobe(m, rec_bpfstate__object(s->bs),
					rec_bpfstate__program(s->bs, "uprobe_cost"));
}

int rec_session__run(struct rec_session *s,
		     void (*on_exit)(const struct rec_exit_info *info, void *ctx), void *ctx)
{
	struct epoll_event evs[EPOLL_BATCH];
	int64_t last_scan = rec_clock__mono_ms();

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
		if (rec_clock__mono_ms() - s->last_collect_ms >=
		    (s->opts.collect_ms ?: COLLECT_MS)) {
			for (size_t i = 0; s->opts.collect_ms >= 0 && i < s->ntraced; i++)
				tracer__collect(s, s->traced[i]);
			rec_clock__add(&s->clock, rec_clock__read());
			s->last_collect_ms = rec_clock__mono_ms();
		}
		rec_ring__consume(s->rb);
		adopt__settle(s);
		snapshots__write_due(s, NULL, false);
		if (rec_clock__mono_ms() - last_scan >= RESCAN_MS) {
			if (s->nbins)
				rec_attach__retry(s->att, NULL);
			for (size_t i = 0; i < s->ntraced; i++) {
				struct traced *t = s->traced[i];

				if (!t->done && t->waiting)
					traced__take_over(s, t);
				if (!t->done && !t->exited)
					traced__rescan(s, t);
			}
			last_scan = rec_clock__mono_ms();
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
				traced__exited(s, w->ptr);
				break;
			case W_CLIENTS:
				rec_clients__ready(s->clients);
				break;
			case W_SNAPSHOTS:
				/* Only a wakeup: snapshots__write_due() takes them back, every turn. */
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
		traced__end(s, s->traced[i], false);
	rec_clients__free(s->clients);
	rec_snapwriter__free(s->snapw);
	for (size_t i = 0; i < s->ntraced; i++)
		traced__free(s->traced[i]);
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
