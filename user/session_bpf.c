// SPDX-License-Identifier: MIT
/*
 * A target's state on the BPF side: the records of the ring, the recordings
 * table and its slots, the counters, and the span stacks read by iterators.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "recorder.skel.h"

#include "proc.h"
#include "ring.h"
#include "session_int.h"
#include "target/elf.h"

/*
 * The BPF table's entry for recording key of t, with the counters from its
 * slot when it has one (struct rec_rslot). Returns 0 or -ENOENT.
 */
static int bpf_recording(struct rec_session *s, struct target *t, uint64_t key,
			 struct rec_rval *v)
{
	struct rec_rkey k = { .tgid = t->proc.pid, .key = key };
	struct rec_rslot sl;
	__u32 i;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.recordings), &k, v))
		return -ENOENT;
	if (!v->slot)
		return 0;
	i = v->slot - 1;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.rslots), &i, &sl) ||
	    sl.k.tgid != k.tgid || sl.k.key != key)
		return -ENOENT;
	*v = sl.v;
	return 0;
}

/*
 * Deletes the BPF table entry k, whose value is v, and frees its slot if it has
 * one. With release, its process's quota gets the place back (struct rec_pstat).
 */
static void forget_recording(struct rec_session *s, const struct rec_rkey *k,
			     const struct rec_rval *v, bool release)
{
	int rfd = bpf_map__fd(s->skel->maps.released);
	struct rec_rslot free_slot = { 0 };
	__u64 n = 0;
	__u32 i;

	if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.recordings), k))
		return;
	/* Its slot is free for the next recording once the table entry is gone. */
	if (v->slot) {
		i = v->slot - 1;
		bpf_map_update_elem(bpf_map__fd(s->skel->maps.rslots), &i, &free_slot, BPF_ANY);
	}
	/* Only this thread writes released: a read, then a write, is enough. */
	if (release) {
		bpf_map_lookup_elem(rfd, &k->tgid, &n);
		n++;
		bpf_map_update_elem(rfd, &k->tgid, &n, BPF_ANY);
	}
}

/* Takes the final counters of a retired recording into r, then forgets it in BPF. */
static void finalize_retired(struct rec_session *s, struct target *t, struct rec_recording_rec *r)
{
	struct rec_rkey k = { .tgid = t->proc.pid, .key = r->key };
	struct rec_rval v;

	/* An untracked one has no entry: BPF deleted its own, its count is in r. */
	if (bpf_recording(s, t, r->key, &v))
		return;
	if (v.seq > r->seq)
		r->seq = v.seq;
	if (v.dropped > r->dropped)
		r->dropped = v.dropped;
	forget_recording(s, &k, &v, true);
}

/* Takes a recording record of t's, its BPF entry forgotten first if it retires. */
static void take_recording(struct rec_session *s, struct target *t, struct rec_recording_rec *r)
{
	if (r->state == REC_RS_RETIRED)
		finalize_retired(s, t, r);
	rec_proc__ingest_recording(&t->proc, r);
}

static int recover_recording(struct rec_session *s, struct target *t, uint64_t key)
{
	struct rec_rval v;

	if (bpf_recording(s, t, key, &v))
		return -ENOENT;
	return rec_proc__get(&t->proc, key, v.recorder, v.cap) ? 0 : -ENOMEM;
}

int session__on_record(void *ctx, void *data, size_t size)
{
	struct rec_session *s = ctx;
	struct rec_hdr h;
	struct target *t;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	t = session__target_of(s, h.tgid);
	if (!t && s->nbins) {
		struct rec_hello_rec hello;
		int is_hello = h.type == REC_RT_HELLO && size == sizeof(hello);

		if (is_hello)
			memcpy(&hello, data, sizeof(hello));
		t = session__adopt(s, h.tgid, is_hello ? &hello : NULL);
	}
	if (!t) {
		s->foreign++;
		/* Still marked traced in BPF (a process that could not be adopted): no more. */
		if (h.type == REC_RT_EXIT) {
			__u32 tgid = h.tgid;

			bpf_map_delete_elem(bpf_map__fd(s->skel->maps.traced), &tgid);
			bpf_map_delete_elem(bpf_map__fd(s->skel->maps.released), &tgid);
			rec_u64map__del(&s->rejected, (uint64_t)h.tgid + 1);
		}
		return 0;
	}
	if (h.size != size) {
		t->proc.malformed++;
		return 0;
	}
	if (h.type == REC_RT_EVENT) {
		struct rec_rstate *rs;
		struct rec_decoded d;
		int err;

		err = rec_proc__ingest_event(&t->proc, data, size, &d, &rs);
		/* Its announcement was lost (ring full): the BPF table still knows it. */
		if (err == -ENOENT && recover_recording(s, t, d.recording) == 0) {
			t->proc.orphans--;
			err = rec_proc__ingest_event(&t->proc, data, size, &d, &rs);
		}
		if (err == 0 && s->followers)
			session__follow_event(s, t, rs, &d);
	} else if (h.type == REC_RT_HELLO && size == sizeof(struct rec_hello_rec)) {
		/* Adopted above: nothing more to it. */
	} else if (h.type == REC_RT_STACK && size == sizeof(struct rec_stack_rec)) {
		struct rec_stack_rec r;

		memcpy(&r, data, sizeof(r));
		rec_proc__ingest_stack(&t->proc, &r);
	} else if (h.type == REC_RT_EXIT && size == sizeof(struct rec_exit_rec)) {
		struct rec_exit_rec r;

		memcpy(&r, data, sizeof(r));
		rec_proc__ingest_exit(&t->proc, &r);
	} else if (h.type == REC_RT_RECORDING && size == sizeof(struct rec_recording_rec)) {
		struct rec_recording_rec r;

		memcpy(&r, data, sizeof(r));
		take_recording(s, t, &r);
	} else {
		t->proc.malformed++;
	}
	return 0;
}

static void read_counters(struct rec_session *s, uint64_t *out)
{
	int fd = bpf_map__fd(s->skel->maps.counters), ncpu = libbpf_num_possible_cpus();
	uint64_t vals[512];

	if (ncpu <= 0 || ncpu > 512)
		return;
	for (__u32 c = 0; c < REC_C_MAX; c++) {
		out[c] = 0;
		if (bpf_map_lookup_elem(fd, &c, vals))
			continue;
		for (int i = 0; i < ncpu; i++)
			out[c] += vals[i];
	}
}

/*
 * The keys tgid has in the BPF table fd (the recordings table or the untracked
 * one): how many, and, if keys is not NULL, the keys themselves in a malloc'd
 * *keys (as many as memory allows). *all, if not NULL, gets the number of
 * entries of every process. Collected first, since deleting while walking the
 * table could skip entries.
 */
static size_t recording_keys(int fd, __u32 tgid, struct rec_rkey **keys, uint64_t *all)
{
	struct rec_rkey k, next;
	size_t n = 0, cap = 0;
	void *prev = NULL;

	if (keys)
		*keys = NULL;
	if (all)
		*all = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (all)
			(*all)++;
		if (next.tgid != tgid)
			continue;
		if (keys && n == cap) {
			struct rec_rkey *grown = realloc(*keys, (cap ? 2 * cap : 16) * sizeof(**keys));

			if (!grown)
				break;
			*keys = grown;
			cap = cap ? 2 * cap : 16;
		}
		if (keys)
			(*keys)[n] = next;
		n++;
	}
	return n;
}

/*
 * Brings t's recordings up to date with the BPF side: the live counters of the
 * tracked ones, a retirement whose record was lost (the ring was full), and
 * the untracked ones, whose announcement may have been lost too.
 */
static void refresh_recordings(struct rec_session *s, struct target *t)
{
	int ufd = bpf_map__fd(s->skel->maps.untracked);
	struct rec_recording_rec *gone = NULL;
	struct rec_rkey *keys = NULL;
	size_t n = 0, cap = 0;
	struct rec_rstate *rs;

	for (rs = t->proc.first; rs; rs = rs->next) {
		struct rec_rkey k = { .tgid = t->proc.pid, .key = rs->key };
		struct rec_recording_rec r = {
			.key = rs->key, .recorder = rs->recorder, .cap = rs->cap,
			.state = REC_RS_RETIRED, .untracked = (__u32)rs->untracked,
		};
		struct rec_untracked u;
		struct rec_rval val;

		if (rs->retired)
			continue;
		if (rs->untracked) {
			if (bpf_map_lookup_elem(ufd, &k, &u) == 0) {
				rec_rstate__update_counts(rs, u.seen, u.seen);
				continue;
			}
			/* Retired (BPF deletes it then), and that record was lost. */
			r.seq = r.dropped = rs->produced;
		} else if (bpf_recording(s, t, rs->key, &val)) {
			continue;
		} else {
			rec_rstate__update_counts(rs, val.seq, val.dropped);
			/* Retired, and that record was lost: its entry would stay. */
			if (val.state != REC_RS_RETIRED)
				continue;
			r.seq = val.seq;
			r.dropped = val.dropped;
		}
		/* Taken after the walk: retiring one may free others. */
		if (n == cap) {
			size_t grown = cap ? 2 * cap : 8;
			struct rec_recording_rec *v = realloc(gone, grown * sizeof(*v));

			if (!v)
				break;
			gone = v;
			cap = grown;
		}
		gone[n++] = r;
	}
	for (size_t i = 0; i < n; i++)
		take_recording(s, t, &gone[i]);
	free(gone);
	/* Untracked ones whose announcement was lost (the ring was full). */
	n = recording_keys(ufd, t->proc.pid, &keys, NULL);
	for (size_t i = 0; i < n; i++) {
		struct rec_recording_rec r = { .key = keys[i].key, .state = REC_RS_LIVE };
		struct rec_untracked u;

		if (rec_proc__find(&t->proc, r.key) || bpf_map_lookup_elem(ufd, &keys[i], &u))
			continue;
		r.recorder = u.recorder;
		r.cap = u.cap;
		r.seq = r.dropped = u.seen;
		r.untracked = u.reason;
		rec_proc__ingest_recording(&t->proc, &r);
	}
	free(keys);
}

/* The BPF side's rows of t's limits: the recordings table, and t's share of it. */
static void refresh_limits(struct rec_session *s, struct target *t)
{
	struct rec_limit_use *all = &t->proc.use[REC_L_RECORDINGS];
	struct rec_limit_use *own = &t->proc.use[REC_L_PROC_RECORDINGS];
	__u32 tgid = t->proc.pid;
	struct rec_pstat ps;
	__u64 rel = 0;

	t->proc.bpf_recordings = recording_keys(bpf_map__fd(s->skel->maps.recordings), tgid,
						NULL, &all->used);
	rec_proc__limits(&t->proc);
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.traced), &tgid, &ps))
		return;
	bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.released), &tgid, &rel);
	own->used = ps.created - rel;
	own->over = ps.over_quota;
	own->events = ps.over_quota_events;
	all->over = ps.table_full;
	all->events = ps.table_full_events;
}

/* Brings the model up to date: pending records, live counters, span stacks. */
void session__refresh(struct rec_session *s, struct target *t)
{
	struct rec_thread_stack *v = NULL;
	size_t n = 0, cap = 0;
	int iter_fd;

	rec_ring__consume(s->rb);
	refresh_recordings(s, t);
	read_counters(s, t->proc.counters);
	refresh_limits(s, t);
	if (!t->proc.alive)
		return;
	s->skel->bss->iter_tgid = t->proc.pid;
	iter_fd = bpf_iter_create(bpf_link__fd(s->iter_link));
	if (iter_fd < 0)
		return;
	for (;;) {
		struct {
			struct rec_stack_hdr h;
			struct rec_frame f[REC_MAX_DEPTH];
		} r;
		size_t got = 0;
		ssize_t m;

		while (got < sizeof(r)) {
			m = read(iter_fd, (char *)&r + got, sizeof(r) - got);
			if (m <= 0)
				break;
			got += m;
		}
		if (got < sizeof(r))
			break;
		if (n == cap) {
			struct rec_thread_stack *nv;

			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*nv));
			if (!nv)
				break;
			v = nv;
		}
		v[n].tid = r.h.tid;
		v[n].depth = r.h.depth < REC_MAX_DEPTH ? r.h.depth : REC_MAX_DEPTH;
		v[n].overflow = r.h.overflow;
		memcpy(v[n].frames, r.f, sizeof(r.f));
		n++;
	}
	close(iter_fd);
	rec_proc__set_stacks(&t->proc, v, n);
}

/*
 * Gives every thread of t that sleeps inside spans its stack now, read from its
 * rec__current (bpf seed_stacks). Needs the executable to define rec__current,
 * which every program that includes the header does. Run after the probes are
 * attached: from then on the probes keep the stacks right.
 */
void session__seed_stacks(struct rec_session *s, struct target *t)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = { 0 };
	char exe[64], buf[64];
	struct bpf_link *link;
	int64_t off;
	int fd;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)t->proc.pid);
	if (rec_elf__tls_offset(exe, "rec__current", &off) || !off)
		return;
	s->skel->bss->iter_tgid = t->proc.pid;
	s->skel->bss->tls_current_off = off;
	/* Only this process's threads (the program also checks the tgid). */
	linfo.task.pid = t->proc.pid;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(s->skel->progs.seed_stacks, &opts);
	if (!link) {
		/* Optional: without it, a stack shows from the thread's next probe. */
		if (s->opts.verbose)
			fprintf(stderr, "recorder-attach: no stack seeding for pid %d: %s\n",
				(int)t->proc.pid, strerror(errno));
		return;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	bpf_link__destroy(link);
	if (fd < 0)
		return;
	/* The program writes nothing; reading runs it over every task. */
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	/*
	 * Their recordings may be older than the attach, and nothing announces
	 * them until a thread emits: learn them from the target now, while it
	 * lives, so that the stacks (and the black box) have their subjects.
	 */
	session__refresh(s, t);
	for (size_t i = 0; i < t->proc.nstacks; i++) {
		const struct rec_thread_stack *ts = &t->proc.stacks[i];

		for (uint32_t d = 0; d < ts->depth && d < REC_MAX_DEPTH; d++)
			if (ts->frames[d].recording && !rec_proc__find(&t->proc, ts->frames[d].recording))
				rec_proc__learn_recording(&t->proc, ts->frames[d].span);
	}
}

/*
 * Removes a process that is gone from the BPF recordings table and frees its
 * slots, and from the untracked and released tables, so that a long --binary
 * session does not fill them with the dead.
 */
void session__forget_recordings(struct rec_session *s, __u32 tgid)
{
	int fd = bpf_map__fd(s->skel->maps.recordings);
	int ufd = bpf_map__fd(s->skel->maps.untracked);
	struct rec_rkey *keys;
	size_t n = recording_keys(fd, tgid, &keys, NULL);

	for (size_t i = 0; i < n; i++) {
		struct rec_rval v = { 0 };

		/* The table's own value: it names the slot, if any. */
		bpf_map_lookup_elem(fd, &keys[i], &v);
		forget_recording(s, &keys[i], &v, false);
	}
	free(keys);
	n = recording_keys(ufd, tgid, &keys, NULL);
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(ufd, &keys[i]);
	free(keys);
	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.released), &tgid);
}
