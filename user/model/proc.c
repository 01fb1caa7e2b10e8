// SPDX-License-Identifier: MIT
/* The process model (proc.h). */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/proc.h"

#define NS_PER_S 1000000000LL
/* The first room for the stacks of exited threads; it doubles up to the limit. */
#define DEATH_FIRST_CAP 16

/* Remembered for addresses whose callsite could not be read. */
static struct rec_callsite unreadable;

/* A string literal read from the target: len bytes, then a NUL. */
struct rec_literal {
	uint32_t len;
	enum rec_str_status status;
	char s[];
};

/* Remembered for addresses whose literal could not be read. */
static struct rec_literal unreadable_literal = { .status = REC_STR_FAULT };

static int64_t clock_offset(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return (rt.tv_sec - mono.tv_sec) * NS_PER_S + (rt.tv_nsec - mono.tv_nsec);
}

void rec_proc__init(struct rec_proc *p, pid_t pid, const struct rec_reader *reader)
{
	const struct rec_limits defaults = REC_LIMITS_DEFAULT;

	memset(p, 0, sizeof(*p));
	p->limits = defaults;
	p->pid = pid;
	p->uid = (uid_t)-1;
	p->alive = 1;
	p->clock_offset_ns = clock_offset();
	if (reader)
		p->reader = *reader;
}

/* Frees a cache of malloc'd values (all but its shared "could not read" value) and the map. */
static void free_cache(struct rec_u64map *m, const void *unreadable_val)
{
	for (size_t i = 0; i < m->cap; i++) {
		uint64_t k = m->keys[i];

		if (k && k != UINT64_MAX && m->vals[i] != unreadable_val)
			free(m->vals[i]);
	}
	rec_u64map__free(m);
}

void rec_proc__fini(struct rec_proc *p)
{
	struct rec_rstate *rs, *next;

	for (rs = p->first; rs; rs = next) {
		next = rs->next;
		rec_rstate__free(rs);
	}
	free_cache(&p->callsites, &unreadable);
	free_cache(&p->literals, &unreadable_literal);
	free_cache(&p->forgotten, NULL);
	free(p->callsite_buf);
	rec_offcpu__free(&p->sched);
	rec_u64map__free(&p->recordings);
	free(p->stacks);
	free(p->death);
	free(p->trigger);
	free(p->triggers_pending);
	free(p->trigger_counts);
	memset(p, 0, sizeof(*p));
}

/* What rec_proc__copy_recording() copies a callsite into: dst, from src. */
struct copy_walk {
	struct rec_proc *dst, *src;
	struct rec_spool *spool;
	int err;
};

/* The callsite at addr, as src reads it now, into dst's cache (none if src cannot read it). */
static void copy_callsite(struct copy_walk *cw, uint64_t addr)
{
	const struct rec_callsite *cs;
	int err;

	if (!addr || addr == UINT64_MAX || rec_u64map__get(&cw->dst->callsites, addr))
		return;
	cs = rec_proc__callsite(cw->src, addr);
	err = cs ? rec_proc__add_callsite(cw->dst, addr, cs) : 0;
	if (err && !cw->err)
		cw->err = err;
}

static int copy_event(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct copy_walk *cw = ctx;
	struct rec_decoded d;
	int err = rec_spool__push(cw->spool, seq, data, len);

	if (err) {
		cw->err = err;
		return 1;
	}
	rec_event__head(data, &d);
	copy_callsite(cw, d.meta);
	return cw->err != 0;
}

int rec_proc__copy_recording(struct rec_proc *dst, struct rec_proc *src, uint64_t key)
{
	struct rec_rstate *rs = rec_proc__find(src, key), *c;
	struct copy_walk cw = { .dst = dst, .src = src };
	struct rec_forgotten *v = NULL;
	ssize_t nf;

	rec_proc__init(dst, src->pid, NULL);
	if (!rs)
		return -ENOENT;
	dst->ns_pid = src->ns_pid;
	dst->uid = src->uid;
	dst->alive = src->alive;
	dst->end = src->end;
	dst->end_code = src->end_code;
	dst->end_core = src->end_core;
	dst->ended_ns = src->ended_ns;
	dst->clock_offset_ns = src->clock_offset_ns;
	dst->attached_ns = src->attached_ns;
	dst->malformed = src->malformed;
	dst->orphans = src->orphans;
	dst->fields_left_out = src->fields_left_out;
	dst->span_orphans = src->span_orphans;
	dst->spans_before_attach = src->spans_before_attach;
	dst->sched.since_ns = src->sched.since_ns;
	dst->sched.count = src->sched.count;
	/* No limits: the copy keeps all it is given, and counts nothing of its own. */
	memset(&dst->limits, 0, sizeof(dst->limits));
	nf = rec_proc__forgotten(src, &v);
	if (nf < 0)
		return (int)nf;
	for (ssize_t i = 0; i < nf; i++)
		rec_proc__forget(dst, v[i].recorder ?: UINT64_MAX, v[i].recordings, v[i].seen,
				 v[i].kept, v[i].dropped);
	free(v);
	c = rec_proc__get(dst, rs->key, rs->recorder, rs->cap);
	if (!c)
		goto nomem;
	c->asked_cap = rs->asked_cap;
	memcpy(c->subject, rs->subject, sizeof(c->subject));
	c->retired = rs->retired;
	c->untracked = rs->untracked;
	c->produced = rs->produced;
	c->dropped = rs->dropped;
	c->invalid = rs->invalid;
	c->received = rs->received;
	c->stale = rs->stale;
	cw.spool = c->spool;
	rec_spool__tail(rs->spool, 0, copy_event, &cw);
	if (rs->spans.n) {
		c->spans.v = malloc(rs->spans.n * sizeof(*c->spans.v));
		if (!c->spans.v)
			goto nomem;
		for (size_t i = 0; i < rs->spans.n; i++) {
			c->spans.v[i] = *rec_spans__at(&rs->spans, i);
			copy_callsite(&cw, c->spans.v[i].meta);
		}
		c->spans.n = c->spans.alloc = rs->spans.n;
	}
	c->spans.seen = rs->spans.seen;
	c->spans.aged = rs->spans.aged;
	c->spans.lost = rs->spans.lost;
	c->spans.ring_lost = rs->spans.ring_lost;
	if (src->nstacks) {
		struct rec_thread_stack *st = malloc(src->nstacks * sizeof(*st));

		if (!st)
			goto nomem;
		memcpy(st, src->stacks, src->nstacks * sizeof(*st));
		rec_proc__set_stacks(dst, st, src->nstacks);
		for (size_t t = 0; t < src->nstacks; t++)
			for (uint32_t i = 0; i < st[t].depth && i < REC_MAX_DEPTH; i++)
				copy_callsite(&cw, st[t].frames[i].meta);
	}
	/* What src's reads of the callsites counted, the dump's "limits" too. */
	memcpy(dst->use, src->use, sizeof(dst->use));
	if (!cw.err)
		return 0;
nomem:
	return cw.err ?: -ENOMEM;
}

struct rec_span_totals rec_proc__span_totals(const struct rec_proc *p)
{
	struct rec_span_totals t = { 0 };

	for (const struct rec_rstate *rs = p->first; rs; rs = rs->next) {
		t.seen += rs->spans.seen;
		t.kept += rs->spans.n;
		t.aged += rs->spans.aged;
		t.lost += rs->spans.lost;
	}
	return t;
}

struct rec_rstate *rec_proc__find(struct rec_proc *p, uint64_t key)
{
	struct rec_rstate *rs;

	if (p->hot && p->hot->key == key)
		return p->hot;
	rs = rec_u64map__get(&p->recordings, key);
	if (rs)
		p->hot = rs;
	return rs;
}

/* A new recording of p, last in creation order, whose spool holds spool_cap events. */
static struct rec_rstate *rstate_new(struct rec_proc *p, uint64_t key, uint64_t recorder,
				     uint64_t cap, uint64_t spool_cap)
{
	struct rec_rstate *rs = rec_rstate__new(key, recorder, cap, spool_cap);

	if (!rs || rec_u64map__put(&p->recordings, key, rs)) {
		rec_rstate__free(rs);
		return NULL;
	}
	rs->prev = p->last;
	if (p->last)
		p->last->next = rs;
	else
		p->first = rs;
	p->last = rs;
	return rs;
}

uint64_t rec_proc__effective_cap(const struct rec_limits *l, uint64_t cap)
{
	cap = cap < 2 ? 2 : cap > REC_CAP_MAX ? REC_CAP_MAX : cap;
	if (l->min_cap && cap < l->min_cap)
		cap = l->min_cap;
	if (l->max_cap && cap > l->max_cap)
		cap = l->max_cap;
	return cap;
}

struct rec_rstate *rec_proc__get(struct rec_proc *p, uint64_t key, uint64_t recorder, uint64_t cap)
{
	struct rec_rstate *rs = rec_proc__find(p, key);
	uint64_t keep;

	if (rs)
		return rs;
	keep = rec_proc__effective_cap(&p->limits, cap);
	rs = rstate_new(p, key, recorder, keep, keep);
	if (rs)
		rs->asked_cap = cap;
	return rs;
}

/* Unlinks rs from p's list (the caller took it off the retired ones) and frees it. */
static void rstate_remove(struct rec_proc *p, struct rec_rstate *rs)
{
	if (rs->prev)
		rs->prev->next = rs->next;
	else
		p->first = rs->next;
	if (rs->next)
		rs->next->prev = rs->prev;
	else
		p->last = rs->prev;
	rec_u64map__del(&p->recordings, rs->key);
	if (p->hot == rs)
		p->hot = NULL;
	rec_rstate__free(rs);
}

static int cmp_forgotten(const void *a, const void *b)
{
	uint64_t x = ((const struct rec_forgotten *)a)->recorder;
	uint64_t y = ((const struct rec_forgotten *)b)->recorder;

	return x < y ? -1 : x > y;
}

void rec_proc__forget(struct rec_proc *p, uint64_t recorder, uint64_t recordings, uint64_t seen,
		      uint64_t kept, uint64_t dropped)
{
	struct rec_forgotten *f = NULL;

	if (recorder && recorder != UINT64_MAX) {
		f = rec_u64map__get(&p->forgotten, recorder);
		if (!f && (!p->limits.max_forgotten_recorders ||
			   p->forgotten.live < p->limits.max_forgotten_recorders)) {
			f = calloc(1, sizeof(*f));
			if (f && rec_u64map__put(&p->forgotten, recorder, f)) {
				free(f);
				f = NULL;
			}
			if (f)
				f->recorder = recorder;
		}
	}
	if (!f)
		f = &p->forgotten_other;
	f->recordings += recordings;
	f->seen += seen;
	f->kept += kept;
	f->dropped += dropped;
	p->use[REC_L_RETIRED].over += recordings;
	p->use[REC_L_RETIRED].events += seen;
}

ssize_t rec_proc__forgotten(const struct rec_proc *p, struct rec_forgotten **vp)
{
	const struct rec_u64map *m = &p->forgotten;
	struct rec_forgotten *v;
	size_t n = 0;

	v = malloc((m->live + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] && m->keys[i] != UINT64_MAX)
			v[n++] = *(const struct rec_forgotten *)m->vals[i];
	qsort(v, n, sizeof(*v), cmp_forgotten);
	/* The recorders past the limit, together, last. */
	if (p->forgotten_other.recordings)
		v[n++] = p->forgotten_other;
	*vp = v;
	return (ssize_t)n;
}

/*
 * Keeps at most limits.keep_retired retired recordings, forgetting the ones
 * retired first; what they saw goes to their recorder's tally.
 */
static void trim_retired(struct rec_proc *p)
{
	/* A pinned one waits for its snapshot, and so do those retired after it. */
	while (p->limits.keep_retired && p->nretired > p->limits.keep_retired && p->retired_first &&
	       !p->retired_first->pinned) {
		struct rec_rstate *rs = p->retired_first;

		p->retired_first = rs->retired_next;
		if (!p->retired_first)
			p->retired_last = NULL;
		p->nretired--;
		rec_proc__forget(p, rs->recorder, 1, rs->produced, rs->received,
				 rec_rstate__dropped(rs));
		rstate_remove(p, rs);
	}
}

void rec_proc__unpin(struct rec_proc *p, struct rec_rstate *rs)
{
	if (rs->pinned)
		rs->pinned--;
	trim_retired(p);
}

/* rs is retired: it joins the retired ones, and the oldest of them may go. */
static void retire(struct rec_proc *p, struct rec_rstate *rs)
{
	rs->retired = 1;
	rs->retired_next = NULL;
	if (p->retired_last)
		p->retired_last->retired_next = rs;
	else
		p->retired_first = rs;
	p->retired_last = rs;
	p->nretired++;
	trim_retired(p);
}

int rec_proc__ingest_recording(struct rec_proc *p, const struct rec_recording_rec *r)
{
	int untracked = (int)r->untracked;
	struct rec_rstate *rs;

	if (r->key == 0 || (r->state != REC_RS_LIVE && r->state != REC_RS_RETIRED) ||
	    (untracked && untracked != REC_UT_OVER_QUOTA && untracked != REC_UT_TABLE_FULL)) {
		p->malformed++;
		return -EINVAL;
	}
	rs = rec_proc__find(p, r->key);
	/* Untracked, it will never hold an event: no room for cap of them. */
	if (!rs) {
		uint64_t cap = rec_proc__effective_cap(&p->limits, r->cap);

		rs = rstate_new(p, r->key, r->recorder, cap, untracked ? 1 : cap);
		if (rs)
			rs->asked_cap = r->cap;
	}
	if (!rs)
		return -ENOMEM;
	if (untracked)
		rs->untracked = untracked;
	if (r->has_subject) {
		memcpy(rs->subject, r->subject, sizeof(rs->subject));
		rs->subject[sizeof(rs->subject) - 1] = '\0';
	}
	rec_rstate__update_counts(rs, r->seq, r->dropped, r->spans_lost);
	if (r->state == REC_RS_RETIRED && !rs->retired)
		retire(p, rs);
	return 0;
}

static int literal_cb(void *ctx, uint64_t addr, struct rec_value *v);

/*
 * The rest of ingesting an event: normalized into p->norm (n bytes), or
 * malformed (n < 0). fixed is its fixed part as it came, NULL if it had none.
 */
static int ingest_normalized(struct rec_proc *p, ssize_t n, const struct rec_event_rec *fixed,
			     struct rec_decoded *d, struct rec_rstate **rsp)
{
	struct rec_rstate *rs;
	int err;

	p->norm_len = n < 0 ? 0 : (size_t)n;
	if (n < 0) {
		/*
		 * The BPF side wrote the header, the recording and the seq; the
		 * target's part failed. Its recording numbered it: there it counts
		 * as seen and not kept, so that seen = kept + dropped.
		 */
		rs = fixed && fixed->hdr.type == REC_RT_EVENT ? rec_proc__find(p, fixed->recording)
							      : NULL;
		if (!rs && fixed && fixed->hdr.type == REC_RT_EVENT) {
			p->orphans++;
			d->recording = fixed->recording;
			return -ENOENT;
		}
		if (rs) {
			rs->invalid++;
			if (fixed->seq != UINT64_MAX && fixed->seq + 1 > rs->produced)
				rs->produced = fixed->seq + 1;
		}
		p->malformed++;
		return (int)n;
	}
	/* d: the event as normalizing decoded it, its values too (strings in p->norm). */
	rs = rec_proc__find(p, d->recording);
	if (!rs) {
		p->orphans++;
		return -ENOENT;
	}
	rs->received++;
	if (d->seq + 1 > rs->produced)
		rs->produced = d->seq + 1;
	/*
	 * Resolve its callsite now (the process may be gone by the time someone
	 * asks), once while events of one callsite follow each other, and count
	 * what it leaves out of each of its events.
	 */
	if (d->meta != p->left_meta) {
		const struct rec_callsite *cs = rec_proc__callsite(p, d->meta);

		p->left_meta = d->meta;
		p->left_per = cs ? cs->left_out : 0;
	}
	p->fields_left_out += p->left_per;
	*rsp = rs;
	err = rec_spool__push(rs->spool, d->seq, p->norm, (size_t)n);
	if (err == -ESTALE)
		rs->stale++;
	return err;
}

int rec_proc__ingest_event(struct rec_proc *p, const void *data, size_t len, struct rec_decoded *d,
			   struct rec_rstate **rsp)
{
	struct rec_event_rec fixed;
	ssize_t n = rec_event__normalize(data, len, literal_cb, p, p->norm, d);

	if (n >= 0 || len < sizeof(fixed))
		return ingest_normalized(p, n, NULL, d, rsp);
	memcpy(&fixed, data, sizeof(fixed));
	return ingest_normalized(p, n, &fixed, d, rsp);
}

int rec_proc__ingest_parts(struct rec_proc *p, struct rec_event_rec *ev, const char *strings,
			   uint32_t area, struct rec_decoded *d, struct rec_rstate **rsp)
{
	ssize_t n = rec_event__normalize_parts(ev, strings, area, literal_cb, p, p->norm, d);

	/* Its type, recording and seq are as they came: normalizing left them. */
	return ingest_normalized(p, n, ev, d, rsp);
}

/*
 * Reads len bytes at addr in the target into buf through p's reader and hands
 * them to take: from the process while it lives, or else (gone, or a mapping
 * that changed) from the file mapped there, which still has the bytes.
 * Returns 0 once take accepted a read, -EFAULT if neither gave it what it wanted.
 */
static int read_target(struct rec_proc *p, uint64_t addr, char *buf, size_t len, rec_take_fn take,
		       void *out)
{
	unsigned int from = (p->alive ? REC_READ_LIVE : 0) | REC_READ_FILE;

	if (!p->reader.read)
		return -EFAULT;
	return p->reader.read(p->reader.ctx, addr, buf, len, from, take, out);
}

static int take_callsite(const char *buf, size_t n, void *out)
{
	return rec_callsite__parse(out, buf, n);
}

/* Whether a cache of limit entries (0: no limit) has room for one more. */
static int cache_has_room(const struct rec_u64map *m, uint64_t limit)
{
	return !limit || m->live < limit;
}

const struct rec_callsite *rec_proc__cached_callsite(const struct rec_proc *p, uint64_t addr)
{
	const struct rec_callsite *cs = rec_u64map__get(&p->callsites, addr);

	return cs == &unreadable ? NULL : cs;
}

int rec_proc__add_callsite(struct rec_proc *p, uint64_t addr, const struct rec_callsite *cs)
{
	size_t size = offsetof(struct rec_callsite, blob) + cs->blob_len;
	struct rec_callsite *c;

	if (addr == 0 || addr == UINT64_MAX || cs->blob_len > sizeof(cs->blob))
		return -EINVAL;
	if (rec_u64map__get(&p->callsites, addr))
		return -EEXIST;
	if (!cache_has_room(&p->callsites, p->limits.max_callsites))
		return -ENOSPC;
	/* Only the bytes the blob uses: most callsites are a few dozen bytes, not 2 KiB. */
	c = malloc(size);
	if (!c)
		return -ENOMEM;
	memcpy(c, cs, size);
#define REBASE(f) ((f) ? c->blob + ((f)-cs->blob) : NULL)
	c->name = REBASE(cs->name);
	c->target = REBASE(cs->target);
	c->file = REBASE(cs->file);
	c->message = REBASE(cs->message);
	for (uint32_t i = 0; i < REC_MAX_FIELDS; i++)
		c->field_names[i] = REBASE(cs->field_names[i]);
#undef REBASE
	if (rec_u64map__put(&p->callsites, addr, c)) {
		free(c);
		return -ENOMEM;
	}
	return 0;
}

const struct rec_callsite *rec_proc__callsite(struct rec_proc *p, uint64_t addr)
{
	struct rec_callsite *cs = rec_u64map__get(&p->callsites, addr);
	char buf[REC_CALLSITE_MAX];
	int err;

	if (cs) {
		/* Cached for good: the entries of the cache are never taken out. */
		p->hot_meta = addr;
		return cs == &unreadable ? NULL : cs;
	}
	if (addr == 0 || addr == UINT64_MAX)
		return NULL;
	if (!p->callsite_buf) {
		p->callsite_buf = malloc(sizeof(*p->callsite_buf));
		if (!p->callsite_buf)
			return NULL;
	}
	cs = p->callsite_buf;
	if (read_target(p, addr, buf, sizeof(buf), take_callsite, cs)) {
		/* Only remember failures once the process cannot change any more. */
		if (!p->alive && cache_has_room(&p->callsites, p->limits.max_callsites))
			rec_u64map__put(&p->callsites, addr, &unreadable);
		return NULL;
	}
	err = rec_proc__add_callsite(p, addr, cs);
	if (err == 0)
		return rec_u64map__get(&p->callsites, addr);
	/* Past the limit (or out of memory): good until the next call, like a literal. */
	p->use[REC_L_CALLSITES].over++;
	return cs;
}

void rec_proc__know_callsite(struct rec_proc *p, uint64_t addr)
{
	uint64_t hot = p->hot_meta;

	if (rec_u64map__get(&p->callsites, addr))
		return;
	rec_proc__callsite(p, addr);
	p->hot_meta = hot;
}

/* The bytes up to the first NUL of buf[0..n), at most REC_STR_MAX - 1 of them. */
static struct rec_literal *literal_new(const char *buf, size_t n)
{
	const char *nul = memchr(buf, '\0', n);
	struct rec_literal *l;
	size_t len;

	if (nul) {
		len = (size_t)(nul - buf);
	} else if (n == REC_STR_MAX) {
		len = REC_STR_MAX - 1;
	} else {
		return NULL; /* ends in an unreadable page without a NUL */
	}
	l = malloc(sizeof(*l) + len + 1);
	if (!l)
		return NULL;
	l->len = (uint32_t)len;
	l->status = nul ? REC_STR_OK : REC_STR_TRUNCATED;
	memcpy(l->s, buf, len);
	l->s[len] = '\0';
	return l;
}

static int take_literal(const char *buf, size_t n, void *out)
{
	struct rec_literal **l = out;

	*l = literal_new(buf, n);
	return *l ? 0 : -ENOENT;
}

int rec_proc__literal(struct rec_proc *p, uint64_t addr, struct rec_value *v)
{
	struct rec_literal *l = rec_u64map__get(&p->literals, addr);
	char buf[REC_STR_MAX];

	if (!l) {
		if (addr == 0 || addr == UINT64_MAX)
			return -EFAULT;
		if (read_target(p, addr, buf, sizeof(buf), take_literal, &l)) {
			/* Only remember failures once the process cannot change any more. */
			if (!p->alive && cache_has_room(&p->literals, p->limits.max_literals))
				rec_u64map__put(&p->literals, addr, &unreadable_literal);
			return -EFAULT;
		}
		if (!cache_has_room(&p->literals, p->limits.max_literals) ||
		    rec_u64map__put(&p->literals, addr, l)) {
			/* Not cached: copy it out before letting go of it. */
			p->use[REC_L_LITERALS].over++;
			memcpy(p->literal_buf, l->s, l->len + 1);
			v->str.ptr = p->literal_buf;
			v->str.len = l->len;
			v->str.status = l->status;
			free(l);
			return 0;
		}
	}
	if (l == &unreadable_literal)
		return -EFAULT;
	v->str.ptr = l->s;
	v->str.len = l->len;
	v->str.status = l->status;
	return 0;
}

static int literal_cb(void *ctx, uint64_t addr, struct rec_value *v)
{
	return rec_proc__literal(ctx, addr, v);
}

/* Accepts a read of all *want bytes (they are in the reader's buffer already). */
static int take_whole(const char *buf, size_t n, void *want)
{
	(void)buf;
	return n == *(size_t *)want ? 0 : -EFAULT;
}

int rec_proc__learn_recording(struct rec_proc *p, uint64_t span)
{
	struct rec_target_span sp;
	struct {
		struct rec_target_recording f;
		char subject[REC_SUBJECT_MAX];
	} tr;
	struct rec_recording_rec r = { .state = REC_RS_LIVE, .has_subject = 1 };

	size_t want_sp = sizeof(sp), want_tr = sizeof(tr);

	_Static_assert(offsetof(typeof(tr), subject) == REC_TARGET_SUBJECT_OFF, "subject offset");
	/* Live memory only: a span or a recording in a file's data has moved on since it loaded. */
	if (!p->alive || !p->reader.read ||
	    p->reader.read(p->reader.ctx, span, (char *)&sp, sizeof(sp), REC_READ_LIVE, take_whole,
			   &want_sp) ||
	    !sp.recording ||
	    p->reader.read(p->reader.ctx, sp.recording, (char *)&tr, sizeof(tr), REC_READ_LIVE,
			   take_whole, &want_tr))
		return -EFAULT;
	if (tr.f.magic != REC_RECORDING_MAGIC || tr.f.key != sp.recording_key || tr.f.cap < 2)
		return -ENOENT;
	r.hdr.type = REC_RT_RECORDING;
	r.hdr.size = sizeof(r);
	r.key = tr.f.key;
	r.recorder = tr.f.recorder_key;
	r.cap = tr.f.cap;
	memcpy(r.subject, tr.subject, sizeof(r.subject));
	r.subject[sizeof(r.subject) - 1] = '\0';
	return rec_proc__ingest_recording(p, &r);
}

void rec_proc__set_stacks(struct rec_proc *p, struct rec_thread_stack *v, size_t n)
{
	free(p->stacks);
	p->stacks = v;
	p->nstacks = n;
}

int rec_proc__ingest_span(struct rec_proc *p, const struct rec_span_rec *r)
{
	struct rec_kept_span sp = rec_spans__of_rec(r);
	struct rec_rstate *rs;

	if (!r->id || !r->hdr.time_ns || (r->enter && r->enter > r->hdr.time_ns)) {
		p->malformed++;
		return -EINVAL;
	}
	rs = rec_proc__find(p, r->recording);
	if (!rs) {
		/* Entered before the attach: its recording is older than the attach. */
		if (!r->enter || (p->attached_ns && r->enter < p->attached_ns))
			p->spans_before_attach++;
		else
			p->span_orphans++;
		return -ENOENT;
	}
	/*
	 * Resolve now, as an event's: a callsite on the target's heap (the Rust
	 * layer's) cannot be read from any file once the process is gone.
	 */
	if (r->meta != p->hot_meta && p->alive)
		rec_proc__callsite(p, r->meta);
	rec_offcpu__charge(&p->sched, sp.tid, sp.enter, sp.exit, &sp.sched);
	if (sp.sched.flags & REC_SCHED_PARTIAL)
		p->sched.count.partial++;
	return rec_spans__add(&rs->spans, p->limits.span_cap, &sp);
}

int rec_proc__ingest_stack(struct rec_proc *p, const struct rec_stack_rec *r)
{
	uint64_t max = p->limits.max_dead_stacks;
	struct rec_thread_stack *t;

	if (r->depth > REC_MAX_DEPTH) {
		p->malformed++;
		return -EINVAL;
	}
	if (!max || max > REC_MAX_DEAD_STACKS_LIMIT)
		max = REC_MAX_DEAD_STACKS_LIMIT;
	if (p->ndeath < max) {
		/* Grown by doubling, up to the limit. */
		if (p->ndeath == p->death_cap) {
			size_t cap = p->death_cap ? 2 * p->death_cap : DEATH_FIRST_CAP;
			struct rec_thread_stack *v;

			if (cap > max)
				cap = max;
			v = realloc(p->death, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			p->death = v;
			p->death_cap = cap;
		}
		t = &p->death[p->ndeath++];
	} else {
		/* Full: the newest stacks tell most about the end; the oldest goes. */
		t = &p->death[p->death_next];
		p->death_next = (p->death_next + 1) % p->ndeath;
		p->use[REC_L_DEAD_STACKS].over++;
	}
	t->tid = r->hdr.tid;
	t->depth = r->depth;
	t->overflow = r->overflow;
	memcpy(t->frames, r->frames, sizeof(t->frames));
	return 0;
}

void rec_proc__ingest_exit(struct rec_proc *p, const struct rec_exit_rec *r)
{
	p->ended_ns = r->hdr.time_ns;
	if ((r->status & 0x7f) == 0) {
		p->end = REC_END_EXIT;
		p->end_code = (r->status >> 8) & 0xff;
		p->end_core = 0;
	} else {
		p->end = REC_END_SIGNAL;
		p->end_code = r->status & 0x7f;
		p->end_core = !!(r->status & 0x80);
	}
}

void rec_proc__died(struct rec_proc *p)
{
	p->alive = 0;
	if (p->end == REC_END_RUNNING)
		p->end = REC_END_UNKNOWN;
	/* Oldest first, as they died. */
	if (p->death_next) {
		struct rec_thread_stack *v = malloc(p->ndeath * sizeof(*v));
		size_t k = p->ndeath - p->death_next;

		if (v) {
			memcpy(v, p->death + p->death_next, k * sizeof(*v));
			memcpy(v + k, p->death, p->death_next * sizeof(*v));
			free(p->death);
			p->death = v;
		}
	}
	rec_proc__set_stacks(p, p->death, p->ndeath);
	p->use[REC_L_DEAD_STACKS].used = p->ndeath;
	p->death = NULL;
	p->ndeath = p->death_cap = p->death_next = 0;
}

void rec_proc__limits(struct rec_proc *p)
{
	p->use[REC_L_RECORDINGS].limit = p->limits.max_recordings;
	p->use[REC_L_PROC_RECORDINGS].limit = p->limits.max_recordings_per_process;
	p->use[REC_L_RETIRED].limit = p->limits.keep_retired;
	p->use[REC_L_RETIRED].used = p->nretired;
	p->use[REC_L_CALLSITES].limit = p->limits.max_callsites;
	p->use[REC_L_CALLSITES].used = p->callsites.live;
	p->use[REC_L_LITERALS].limit = p->limits.max_literals;
	p->use[REC_L_LITERALS].used = p->literals.live;
	p->use[REC_L_DEAD_STACKS].limit = p->limits.max_dead_stacks;
	/* Once the process is gone, its stacks are the ones its threads died in. */
	p->use[REC_L_DEAD_STACKS].used = p->alive ? p->ndeath : p->nstacks;
}
