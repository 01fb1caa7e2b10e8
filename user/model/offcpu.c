// SPDX-License-Identifier: MIT
/* Kernel time per span (offcpu.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/offcpu.h"

/* The first room of a thread's history. */
#define FIRST_ROOM 16
/* Distinct causes told apart in one span before the rest go to other. */
#define MAX_CAUSES 32

struct interval {
	uint64_t off, wake, on;
	int32_t cause;
	uint32_t lost; /* intervals lost just before this one (since the one before it ran) */
};

/* One thread's last intervals, a ring in time order, the oldest at next once it is full. */
struct rec_sched_thread {
	struct interval *v;
	uint32_t n, room, next;
	/* Intervals that ended before this were pushed out (0: none). */
	uint64_t forgot_until;
	uint64_t last_on; /* the newest interval's end */
};

void rec_offcpu__start(struct rec_offcpu *s, uint64_t mono)
{
	s->since_ns = mono ? mono : 1;
}

static int grow(struct rec_sched_thread *t)
{
	uint32_t room = t->room ? t->room * 2 : FIRST_ROOM;
	struct interval *v;

	if (room > REC_SCHED_THREAD_CAP)
		room = REC_SCHED_THREAD_CAP;
	v = realloc(t->v, room * sizeof(*v));
	if (!v)
		return -ENOMEM;
	t->v = v;
	t->room = room;
	return 0;
}

int rec_offcpu__add(struct rec_offcpu *s, const struct rec_offcpu_rec *r)
{
	uint64_t key = (uint64_t)r->hdr.tid + 1;
	struct rec_sched_thread *t;
	struct interval *iv;

	if (r->off_ns > r->wake_ns || r->wake_ns > r->hdr.time_ns)
		return -EINVAL;
	t = rec_u64map__get(&s->threads, key);
	if (!t) {
		if (s->threads.live >= REC_SCHED_MAX_THREADS) {
			s->count.threads_full++;
			return 0;
		}
		t = calloc(1, sizeof(*t));
		if (!t || rec_u64map__put(&s->threads, key, t)) {
			free(t);
			return -ENOMEM;
		}
	}
	s->count.intervals++;
	s->count.lost += r->lost;
	if (t->n == t->room && t->room < REC_SCHED_THREAD_CAP && grow(t))
		return -ENOMEM;
	if (t->n < t->room) {
		iv = &t->v[t->n++];
	} else {
		/* Full: the oldest goes. */
		iv = &t->v[t->next];
		t->forgot_until = iv->on;
		t->next = (t->next + 1) % t->room;
		s->count.forgotten++;
	}
	*iv = (struct interval){
		.off = r->off_ns,
		.wake = r->wake_ns,
		.on = r->hdr.time_ns,
		.cause = r->cause,
		.lost = r->lost,
	};
	t->last_on = iv->on;
	return 0;
}

/* How much of [a, b) lies in [lo, hi). */
static uint64_t overlap(uint64_t a, uint64_t b, uint64_t lo, uint64_t hi)
{
	uint64_t x = a > lo ? a : lo, y = b < hi ? b : hi;

	return y > x ? y - x : 0;
}

struct causes {
	struct rec_sched_cause v[MAX_CAUSES];
	unsigned int n;
	uint64_t other;
};

static void tally(struct causes *c, int32_t cause, uint64_t ns)
{
	unsigned int i;

	for (i = 0; i < c->n && c->v[i].cause != cause; i++)
		;
	if (i == c->n) {
		if (c->n == MAX_CAUSES) {
			c->other += ns;
			return;
		}
		c->v[c->n++] = (struct rec_sched_cause){ .cause = cause };
	}
	c->v[i].ns += ns;
}

static int by_ns_desc(const void *a, const void *b)
{
	const struct rec_sched_cause *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return x->cause < y->cause ? -1 : x->cause > y->cause;
}

/* Keeps sl among f's REC_SCHED_SLICES longest slices (the shortest goes, counted). */
static void keep_slice(struct rec_sched_figs *f, const struct rec_sched_slice *sl)
{
	uint32_t shortest = 0;

	if (f->nslices < REC_SCHED_SLICES) {
		f->slices[f->nslices++] = *sl;
		return;
	}
	f->slices_omitted++;
	for (uint32_t i = 1; i < f->nslices; i++)
		if (f->slices[i].on - f->slices[i].off <
		    f->slices[shortest].on - f->slices[shortest].off)
			shortest = i;
	if (sl->on - sl->off > f->slices[shortest].on - f->slices[shortest].off)
		f->slices[shortest] = *sl;
}

static int by_off(const void *a, const void *b)
{
	const struct rec_sched_slice *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * How many of t's newest intervals to pass over for a span that ended at
 * exit: those that went off the CPU at or after it, but the oldest of them,
 * whose lost check looks back into the span. A binary search of the ring,
 * which is in time order: a span is charged when its thread's batch comes,
 * up to a full buffer after its exit, and must not walk every interval since.
 */
static uint32_t newer_than(const struct rec_sched_thread *t, uint64_t exit)
{
	uint32_t lo = 0, hi = t->n;

	/* The first (oldest first) that went off at or after exit: in [lo, hi]. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->v[(t->next + mid) % t->room].off >= exit)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < t->n ? t->n - 1 - lo : 0;
}

void rec_offcpu__charge(const struct rec_offcpu *s, uint32_t tid, uint64_t enter, uint64_t exit,
			struct rec_sched_figs *f)
{
	struct rec_sched_thread *t;
	struct causes c = { .n = 0 };
	uint64_t prev_on;

	memset(f, 0, sizeof(*f));
	if (!s->since_ns || !enter || exit < enter)
		return;
	f->flags = REC_SCHED_KNOWN;
	/* Entered before the hooks were attached: its start was not watched. */
	if (enter < s->since_ns)
		f->flags |= REC_SCHED_PARTIAL;
	t = rec_u64map__get(&s->threads, (uint64_t)tid + 1);
	if (!t && s->count.threads_full)
		f->flags |= REC_SCHED_PARTIAL;
	/* Newest first, back to the first interval that ended before the span. */
	for (uint32_t k = t ? newer_than(t, exit) : 0; t && k < t->n; k++) {
		uint32_t i = (t->next + t->n - 1 - k) % t->room;
		const struct interval *iv = &t->v[i];
		uint64_t b, q;

		if (iv->on <= enter)
			break;
		b = overlap(iv->off, iv->wake, enter, exit);
		q = overlap(iv->wake, iv->on, enter, exit);
		if (b)
			tally(&c, iv->cause, b);
		if (b || q) {
			struct rec_sched_slice sl = {
				.off = iv->off > enter ? iv->off : enter,
				.wake = iv->wake < enter  ? enter
					: iv->wake > exit ? exit
							  : iv->wake,
				.on = iv->on < exit ? iv->on : exit,
				.cause = iv->cause,
			};

			keep_slice(f, &sl);
		}
		f->blocked_ns += b;
		f->runq_ns += q;
		if (iv->off >= enter && iv->off < exit)
			f->switches++;
		/* Lost intervals between the one before and this one, inside the span. */
		prev_on = k + 1 < t->n ? t->v[(i + t->room - 1) % t->room].on : 0;
		if (iv->lost && iv->off > enter && prev_on < exit)
			f->flags |= REC_SCHED_PARTIAL;
	}
	if (t && t->forgot_until > enter)
		f->flags |= REC_SCHED_PARTIAL;
	/* Clocks disagree by a few ns at most; never more off-CPU time than the span. */
	if (f->blocked_ns + f->runq_ns > exit - enter)
		f->runq_ns = exit - enter > f->blocked_ns ? exit - enter - f->blocked_ns : 0;
	if (f->blocked_ns > exit - enter)
		f->blocked_ns = exit - enter;
	f->cpu_ns = exit - enter - f->blocked_ns - f->runq_ns;
	qsort(f->slices, f->nslices, sizeof(f->slices[0]), by_off);
	qsort(c.v, c.n, sizeof(c.v[0]), by_ns_desc);
	for (unsigned int i = 0; i < c.n; i++) {
		if (i < REC_SCHED_TOP)
			f->top[i] = c.v[i];
		else
			c.other += c.v[i].ns;
	}
	f->other_ns = c.other;
}

void rec_offcpu__free(struct rec_offcpu *s)
{
	for (size_t i = 0; i < s->threads.cap; i++) {
		uint64_t k = s->threads.keys[i];

		if (k && k != UINT64_MAX) {
			struct rec_sched_thread *t = s->threads.vals[i];

			free(t->v);
			free(t);
		}
	}
	rec_u64map__free(&s->threads);
	memset(s, 0, sizeof(*s));
}
