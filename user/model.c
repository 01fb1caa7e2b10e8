// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "model.h"

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

/* Literal addresses cached per process; a target that passes more is read uncached. */
#define REC_LITERALS_MAX 65536

static int64_t clock_offset(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return (rt.tv_sec - mono.tv_sec) * 1000000000LL + (rt.tv_nsec - mono.tv_nsec);
}

/* The owner of /proc/PID: the process's effective uid, or root if it is not dumpable. */
static uid_t owner_of(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) ? (uid_t)-1 : st.st_uid;
}

static pid_t ns_pid_of(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	pid_t last = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		char *p;

		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		/* The last number is the pid in the innermost namespace. */
		for (p = strtok(line + 6, " \t\n"); p; p = strtok(NULL, " \t\n"))
			last = (pid_t)strtol(p, NULL, 10);
		break;
	}
	free(line);
	fclose(f);
	return last == pid ? 0 : last;
}

int rec_proc__init(struct rec_proc *p, pid_t pid)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->alive = 1;
	p->clock_offset_ns = clock_offset();
	p->ns_pid = ns_pid_of(pid);
	p->uid = owner_of(pid);
	return rec_maps__read(&p->maps, pid);
}

static void rstate_free(struct rec_rstate *rs)
{
	rec_spool__free(rs->spool);
	free(rs);
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
		rstate_free(rs);
	}
	free_cache(&p->callsites, &unreadable);
	free_cache(&p->literals, &unreadable_literal);
	rec_u64map__free(&p->recordings);
	rec_maps__free(&p->maps);
	free(p->stacks);
	free(p->death);
	memset(p, 0, sizeof(*p));
}

void rec_rstate__update_counts(struct rec_rstate *rs, uint64_t produced, uint64_t dropped)
{
	if (produced > rs->produced)
		rs->produced = produced;
	if (dropped > rs->dropped)
		rs->dropped = dropped;
}

struct rec_rstate *rec_proc__find(struct rec_proc *p, uint64_t key)
{
	return rec_u64map__get(&p->recordings, key);
}

struct rec_rstate *rec_proc__get(struct rec_proc *p, uint64_t key, uint64_t recorder,
				 uint64_t cap)
{
	struct rec_rstate *rs = rec_proc__find(p, key);

	if (rs)
		return rs;
	if (cap < 2)
		cap = 2;
	if (cap > REC_CAP_MAX)
		cap = REC_CAP_MAX;
	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return NULL;
	rs->key = key;
	rs->recorder = recorder;
	rs->cap = cap;
	rs->spool = rec_spool__new(cap, REC_EVENT_REC_MAX);
	if (!rs->spool || rec_u64map__put(&p->recordings, key, rs)) {
		rstate_free(rs);
		return NULL;
	}
	if (p->last)
		p->last->next = rs;
	else
		p->first = rs;
	p->last = rs;
	return rs;
}

/* Keeps at most REC_RETIRED_KEEP retired recordings, freeing the oldest. */
static void trim_retired(struct rec_proc *p)
{
	struct rec_rstate **pp, *rs;
	size_t n = 0;

	for (rs = p->first; rs; rs = rs->next)
		n += rs->retired;
	for (pp = &p->first; n > REC_RETIRED_KEEP && *pp;) {
		rs = *pp;
		if (!rs->retired) {
			pp = &rs->next;
			continue;
		}
		*pp = rs->next;
		rec_u64map__del(&p->recordings, rs->key);
		rstate_free(rs);
		n--;
	}
	p->last = NULL;
	for (rs = p->first; rs; rs = rs->next)
		p->last = rs;
}

int rec_proc__ingest_recording(struct rec_proc *p, const struct rec_recording_rec *r)
{
	struct rec_rstate *rs;

	if (r->key == 0 || (r->state != REC_RS_LIVE && r->state != REC_RS_RETIRED)) {
		p->malformed++;
		return -EINVAL;
	}
	rs = rec_proc__get(p, r->key, r->recorder, r->cap);
	if (!rs)
		return -ENOMEM;
	if (r->has_subject) {
		memcpy(rs->subject, r->subject, sizeof(rs->subject));
		rs->subject[sizeof(rs->subject) - 1] = '\0';
	}
	rec_rstate__update_counts(rs, r->seq, r->dropped);
	if (r->state == REC_RS_RETIRED && !rs->retired) {
		rs->retired = 1;
		trim_retired(p);
	}
	return 0;
}

static int literal_cb(void *ctx, uint64_t addr, struct rec_value *v);

int rec_proc__ingest_event(struct rec_proc *p, const void *data, size_t len,
			   struct rec_decoded *d, struct rec_rstate **rsp)
{
	struct rec_rstate *rs;
	int err;

	ssize_t n = rec_event__normalize(data, len, literal_cb, p, p->norm);

	err = n < 0 ? (int)n : rec_event__decode(p->norm, (size_t)n, d);
	if (err) {
		p->malformed++;
		return err;
	}
	rs = rec_proc__find(p, d->recording);
	if (!rs) {
		p->orphans++;
		return -ENOENT;
	}
	rs->received++;
	if (d->seq + 1 > rs->produced)
		rs->produced = d->seq + 1;
	/* Resolve now: the process may be gone by the time someone asks. */
	rec_proc__callsite(p, d->meta);
	*rsp = rs;
	err = rec_spool__push(rs->spool, d->seq, p->norm, (size_t)n);
	if (err == -ESTALE)
		rs->stale++;
	return err;
}

static ssize_t read_live(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	/* Page by page: a read that crosses into an unmapped page fails whole. */
	while (got < len) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		struct iovec local, remote;
		ssize_t n;

		if (chunk > len - got)
			chunk = len - got;
		local.iov_base = buf + got;
		local.iov_len = chunk;
		remote.iov_base = (void *)(uintptr_t)(addr + got);
		remote.iov_len = chunk;
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			break;
		got += n;
	}
	return got ? (ssize_t)got : -1;
}

static ssize_t read_file(const struct rec_maps *maps, uint64_t addr, char *buf, size_t len)
{
	const struct rec_mapping *m = rec_maps__find(maps, addr);
	ssize_t n;
	int fd;

	if (!m)
		return -1;
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, buf, len, (off_t)(addr - m->start + m->offset));
	close(fd);
	return n;
}

/* Makes something of the n bytes read at an address into out; 0 if they were what it wanted. */
typedef int (*take_fn)(const char *buf, ssize_t n, void *out);

/*
 * Reads len bytes at addr in the target into buf and hands them to take: from
 * the process while it lives, or else (gone, or a mapping that changed) from
 * the file mapped there, which still has the bytes. Returns 0 once take
 * accepted a read, -EFAULT if neither gave it what it wanted.
 */
static int read_target(struct rec_proc *p, uint64_t addr, char *buf, size_t len, take_fn take,
		       void *out)
{
	ssize_t n = p->alive ? read_live(p->pid, addr, buf, len) : -1;

	if (n > 0 && take(buf, n, out) == 0)
		return 0;
	n = read_file(&p->maps, addr, buf, len);
	return n > 0 && take(buf, n, out) == 0 ? 0 : -EFAULT;
}

static int take_callsite(const char *buf, ssize_t n, void *out)
{
	return rec_callsite__parse(out, buf, (size_t)n);
}

const struct rec_callsite *rec_proc__callsite(struct rec_proc *p, uint64_t addr)
{
	struct rec_callsite *cs = rec_u64map__get(&p->callsites, addr);
	char buf[REC_CALLSITE_MAX];

	if (cs)
		return cs == &unreadable ? NULL : cs;
	if (addr == 0 || addr == UINT64_MAX)
		return NULL;
	cs = malloc(sizeof(*cs));
	if (!cs)
		return NULL;
	if (read_target(p, addr, buf, sizeof(buf), take_callsite, cs)) {
		free(cs);
		/* Only remember failures once the process cannot change any more. */
		if (!p->alive)
			rec_u64map__put(&p->callsites, addr, &unreadable);
		return NULL;
	}
	if (rec_u64map__put(&p->callsites, addr, cs)) {
		free(cs);
		return NULL;
	}
	return cs;
}

/* The bytes up to the first NUL of buf[0..n), at most REC_STR_MAX - 1 of them. */
static struct rec_literal *literal_new(const char *buf, ssize_t n)
{
	const char *nul = memchr(buf, '\0', (size_t)n);
	struct rec_literal *l;
	size_t len;

	if (nul) {
		len = (size_t)(nul - buf);
	} else if (n == REC_STR_MAX) {
		len = REC_STR_MAX - 1;
	} else {
		return NULL;	/* ends in an unreadable page without a NUL */
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

static int take_literal(const char *buf, ssize_t n, void *out)
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
			if (!p->alive && p->literals.live < REC_LITERALS_MAX)
				rec_u64map__put(&p->literals, addr, &unreadable_literal);
			return -EFAULT;
		}
		if (p->literals.live >= REC_LITERALS_MAX ||
		    rec_u64map__put(&p->literals, addr, l)) {
			/* Not cached: copy it out before letting go of it. */
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

int rec_proc__learn_recording(struct rec_proc *p, uint64_t span)
{
	struct rec_target_span sp;
	struct {
		struct rec_target_recording f;
		char subject[REC_SUBJECT_MAX];
	} tr;
	struct rec_recording_rec r = { .state = REC_RS_LIVE, .has_subject = 1 };

	_Static_assert(offsetof(typeof(tr), subject) == REC_TARGET_SUBJECT_OFF, "subject offset");
	if (!p->alive || read_live(p->pid, span, (char *)&sp, sizeof(sp)) != sizeof(sp) ||
	    !sp.recording || read_live(p->pid, sp.recording, (char *)&tr, sizeof(tr)) != sizeof(tr))
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

int rec_proc__ingest_stack(struct rec_proc *p, const struct rec_stack_rec *r)
{
	struct rec_thread_stack *v, *t;

	if (r->depth > REC_MAX_DEPTH) {
		p->malformed++;
		return -EINVAL;
	}
	v = realloc(p->death, (p->ndeath + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->death = v;
	t = &v[p->ndeath++];
	t->tid = r->hdr.tid;
	t->depth = r->depth;
	t->overflow = r->overflow;
	memcpy(t->frames, r->frames, sizeof(t->frames));
	return 0;
}

void rec_proc__ingest_exit(struct rec_proc *p, const struct rec_exit_rec *r)
{
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
	rec_proc__set_stacks(p, p->death, p->ndeath);
	p->death = NULL;
	p->ndeath = 0;
}

const char *rec_proc__describe_end(const struct rec_proc *p, char *buf, size_t len)
{
	const char *abbrev;

	switch (p->end) {
	case REC_END_RUNNING:
		snprintf(buf, len, "running");
		break;
	case REC_END_EXIT:
		snprintf(buf, len, "exited with status %d", p->end_code);
		break;
	case REC_END_SIGNAL:
		abbrev = sigabbrev_np(p->end_code);
		if (abbrev)
			snprintf(buf, len, "killed by SIG%s%s", abbrev,
				 p->end_core ? " (core dumped)" : "");
		else
			snprintf(buf, len, "killed by signal %d%s", p->end_code,
				 p->end_core ? " (core dumped)" : "");
		break;
	default:
		snprintf(buf, len, "ended (how was not seen)");
		break;
	}
	return buf;
}
