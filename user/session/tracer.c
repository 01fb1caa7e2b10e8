// SPDX-License-Identifier: MIT
/*
 * What the session tells a traced process and reads of it (private.h): the
 * tracer words that say a recorder-attach is attached, the batches of its
 * sleeping threads collected, and its span stacks seeded and refreshed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "target/elf.h"
#include "target/maps.h"
#include "session/private.h"

/*
 * Has BPF take what t's sleeping threads have pending in their batch buffers:
 * after the next drain, every event they emitted is in. Nothing to do with
 * --per-event.
 */
void tracer__collect(struct rec_session *s, struct traced *t)
{
	int err;

	if (s->opts.per_event || t->done || !t->proc.alive)
		return;
	err = rec_bpfstate__collect(s->bs, t->proc.pid);
	if (err && s->opts.verbose)
		fprintf(stderr, "recorder-attach: could not collect the batches of pid %d: %s\n",
			(int)t->proc.pid, strerror(-err));
}

/*
 * This session's tracer word: a recorder-attach is attached, the event path it
 * takes, and a number of its own, so that a thread's batch buffer announced to
 * another recorder-attach before is announced again to this one.
 */
uint32_t tracer__word(const struct rec_session *s)
{
	uint32_t id = 0;

	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint32_t)getpid() ^ (uint32_t)rec_clock__mono_ms();
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
void tracer__tell_attached(struct rec_session *s, struct traced *t)
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

/* Takes back what tracer__tell_attached wrote, from a process that goes on without us. */
void tracer__untell_attached(struct traced *t)
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
void tracer__refresh(struct rec_session *s, struct traced *t)
{
	tracer__collect(s, t);
	/*
	 * Once its sleeping threads' records are taken, their stacks must
	 * match their own chains of spans: a span whose exit BPF missed is
	 * dropped, never shown open nor held against a hung-span rule.
	 */
	if (t->tls_off && t->proc.alive && !t->waiting &&
	    rec_clock__mono_ms() - t->verified_ms >= VERIFY_MS) {
		t->verified_ms = rec_clock__mono_ms();
		rec_bpfstate__verify_stacks(s->bs, t->proc.pid, t->tls_off);
	}
	rec_ring__consume(s->rb);
	rec_bpfstate__refresh(s->bs, &t->proc, (uint64_t)rec_clock__mono_ns());
	for (size_t i = 0; i < t->proc.nstacks; i++)
		intake__frames_to_mono(s, t->proc.stacks[i].frames, t->proc.stacks[i].depth);
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
void tracer__seed_stacks(struct rec_session *s, struct traced *t, bool wait)
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
	 * then (traced__take_over).
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
	tracer__refresh(s, t);
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
