// SPDX-License-Identifier: MIT
/* The BPF side of a session (bpfstate.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "recorder.skel.h"

#include "kernel/bpfstate.h"
#include "usdt/usdt_multi.h"

/* The most CPUs whose per-CPU counters are summed. */
#define MAX_CPUS 512
/* The first capacity of an array that grows by doubling. */
#define FIRST_CAP 16

struct rec_bpfstate {
	/* The maps and the global data, loaded first with no program of its own. */
	struct recorder_bpf *skel;
	/* The programs: two copies of the object on skel's maps, each loading some. */
	struct recorder_bpf *half[2];
	struct bpf_link *iter_link; /* dump_stacks: the span stacks of a process */
	struct bpf_link *exit_link; /* sched_process_exit: stacks at death, how it ended */
	struct bpf_link *exec_link; /* exec_mm_release: batches pending at exec */
	/* --binary: processes adopted at their exec and their fork, before any probe */
	struct bpf_link *adopt_exec_link, *adopt_fork_link;
	/* --sched: the scheduler hooks (issue 26); NULL without it, so nothing runs per switch. */
	struct bpf_link *switch_link, *thread_exit_link;
};

static bool verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	/* libbpf's own chatter, warnings included, shows only with -v. */
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* Attaches prog (a tracepoint's) into *link. Returns 0 or -errno. */
static int attach_prog(struct bpf_program *prog, struct bpf_link **link)
{
	*link = prog ? bpf_program__attach(prog) : NULL;
	if (!prog)
		return -ENOENT;
	return *link ? 0 : -errno;
}

/*
 * The programs the second half loads. The verifier's time is most of an
 * attach's (about 590,000 instructions processed), and each program is
 * verified on its own: these, about half of that work, are verified in a
 * second thread while the first verifies the rest.
 */
static const char *const second_half[] = {
	"on_batch",	 "on_exec_release", "on_span_enter",	    "seed_stacks",
	"verify_stacks", "on_sched_switch", "on_sched_thread_exit",
};

static bool in_second_half(const struct bpf_program *prog)
{
	for (size_t i = 0; i < sizeof(second_half) / sizeof(second_half[0]); i++)
		if (strcmp(bpf_program__name(prog), second_half[i]) == 0)
			return true;
	return false;
}

/* Whether the session needs prog: the --binary and --sched hooks only with their option. */
static bool wanted(const struct bpf_program *prog, const struct rec_bpfstate_opts *opts)
{
	const char *name = bpf_program__name(prog);

	/* Without --binary, nobody is adopted: no hook on every exec and fork. */
	if (!strcmp(name, "on_process_exec") || !strcmp(name, "on_process_fork"))
		return opts->follow_new;
	/* Without --sched, no hook on every context switch, nor its verifying. */
	if (!strcmp(name, "on_sched_switch") || !strcmp(name, "on_sched_thread_exit"))
		return opts->sched;
	return true;
}

/* A copy of the object, configured by opts before load; which programs it loads is set apart. */
static int open_copy(struct recorder_bpf **sp, const struct rec_bpfstate_opts *opts)
{
	struct recorder_bpf *s = recorder_bpf__open();
	int err, ncpu;

	*sp = s;
	if (!s)
		return -errno;
	/* Read-only config goes in before load. */
	s->rodata->wakeup_bytes = opts->ring_bytes / 4;
	s->rodata->follow_new = opts->follow_new;
	s->rodata->max_per_process = opts->max_per_process;
	/* The recordings table, and as many refused recordings listed as it holds. */
	err = bpf_map__set_max_entries(s->maps.events, opts->ring_bytes)
		      ?: bpf_map__set_max_entries(s->maps.recordings, opts->max_recordings)
		      ?: bpf_map__set_max_entries(s->maps.untracked, opts->max_recordings);
	/* One batch scratch per CPU (bpf/maps.bpf.h): too big for a per-CPU map's value. */
	ncpu = libbpf_num_possible_cpus();
	if (!err && ncpu < 0)
		err = ncpu;
	if (!err)
		err = bpf_map__set_max_entries(s->maps.batch_scratch, (uint32_t)ncpu);
	/* Attached with uprobe_multi links (usdt/usdt_multi.h), not libbpf's per-site uprobes. */
	return err ?: rec_usdt_multi__prepare(s->obj);
}

/* Half h of the programs, on the maps of bs->skel (loaded). Returns 0 or -errno. */
static int open_half(struct rec_bpfstate *bs, int h, const struct rec_bpfstate_opts *opts)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	int err = open_copy(&bs->half[h], opts);

	if (err)
		return err;
	bpf_object__for_each_map(map, bs->half[h]->obj)
	{
		struct bpf_map *own =
			bpf_object__find_map_by_name(bs->skel->obj, bpf_map__name(map));

		err = own ? bpf_map__reuse_fd(map, bpf_map__fd(own)) : -ENOENT;
		if (err)
			return err;
	}
	bpf_object__for_each_program(prog, bs->half[h]->obj)
		bpf_program__set_autoload(prog, wanted(prog, opts) && in_second_half(prog) == h);
	return 0;
}

static void *load_half(void *arg)
{
	return (void *)(long)recorder_bpf__load(arg);
}

/*
 * Loads the maps (bs->skel, with no program), then the two halves of the
 * programs at once, the second in a thread of its own.
 */
static int load(struct rec_bpfstate *bs, const struct rec_bpfstate_opts *opts)
{
	struct bpf_program *prog;
	pthread_t thread;
	void *ret;
	int err;

	err = open_copy(&bs->skel, opts);
	if (err)
		return err;
	bpf_object__for_each_program(prog, bs->skel->obj)
		bpf_program__set_autoload(prog, false);
	err = recorder_bpf__load(bs->skel) ?: open_half(bs, 0, opts) ?: open_half(bs, 1, opts);
	if (err)
		return err;
	err = -pthread_create(&thread, NULL, load_half, bs->half[1]);
	if (err)
		return err;
	err = recorder_bpf__load(bs->half[0]);
	pthread_join(thread, &ret);
	return err ?: (int)(long)ret;
}

struct bpf_program *rec_bpfstate__program(const struct rec_bpfstate *bs, const char *name)
{
	for (int h = 0; h < 2; h++) {
		struct bpf_program *prog =
			bs->half[h] ? bpf_object__find_program_by_name(bs->half[h]->obj, name)
				    : NULL;

		if (prog && bpf_program__fd(prog) >= 0)
			return prog;
	}
	return NULL;
}

int rec_bpfstate__open(struct rec_bpfstate **bsp, const struct rec_bpfstate_opts *opts)
{
	struct rec_bpfstate *bs;
	int err;

	verbose = opts->verbose;
	libbpf_set_print(libbpf_print);
	bs = calloc(1, sizeof(*bs));
	if (!bs)
		return -ENOMEM;
	err = load(bs, opts);
	if (err)
		goto fail;
	bs->iter_link = bpf_program__attach_iter(rec_bpfstate__program(bs, "dump_stacks"), NULL);
	if (!bs->iter_link) {
		err = -errno;
		goto fail;
	}
	err = attach_prog(rec_bpfstate__program(bs, "on_sched_exit"), &bs->exit_link)
		      ?: attach_prog(rec_bpfstate__program(bs, "on_exec_release"), &bs->exec_link);
	if (!err && opts->follow_new)
		err = attach_prog(rec_bpfstate__program(bs, "on_process_exec"),
				  &bs->adopt_exec_link)
			      ?: attach_prog(rec_bpfstate__program(bs, "on_process_fork"),
					     &bs->adopt_fork_link);
	if (!err && opts->sched)
		err = attach_prog(rec_bpfstate__program(bs, "on_sched_thread_exit"),
				  &bs->thread_exit_link)
			      ?: attach_prog(rec_bpfstate__program(bs, "on_sched_switch"),
					     &bs->switch_link);
	if (err)
		goto fail;
	*bsp = bs;
	return 0;
fail:
	rec_bpfstate__free(bs);
	return err < 0 ? err : -err;
}

void rec_bpfstate__free(struct rec_bpfstate *bs)
{
	if (!bs)
		return;
	bpf_link__destroy(bs->iter_link);
	bpf_link__destroy(bs->exit_link);
	bpf_link__destroy(bs->exec_link);
	bpf_link__destroy(bs->adopt_exec_link);
	bpf_link__destroy(bs->adopt_fork_link);
	bpf_link__destroy(bs->switch_link);
	bpf_link__destroy(bs->thread_exit_link);
	recorder_bpf__destroy(bs->half[0]);
	recorder_bpf__destroy(bs->half[1]);
	recorder_bpf__destroy(bs->skel);
	free(bs);
}

struct bpf_object *rec_bpfstate__object(const struct rec_bpfstate *bs)
{
	return bs->skel->obj;
}

int rec_bpfstate__ring_fd(const struct rec_bpfstate *bs)
{
	return bpf_map__fd(bs->skel->maps.events);
}

/* Sets or clears tgid's bit in the bitmap w of n words, atomically (BPF reads it as it changes). */
static void set_pid_bit(__u64 *w, size_t n, __u32 tgid, bool on)
{
	__u64 bit = 1ull << (tgid % 64);

	if (tgid / 64 >= n)
		return;
	if (on)
		__atomic_fetch_or(&w[tgid / 64], bit, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_and(&w[tgid / 64], ~bit, __ATOMIC_SEQ_CST);
}

/* Sets or clears tgid's bit in traced_bits, the scheduler hooks' copy of traced. */
static void traced_bit(struct rec_bpfstate *bs, __u32 tgid, bool on)
{
	set_pid_bit(bs->skel->bss->traced_bits, sizeof(bs->skel->bss->traced_bits) / sizeof(__u64),
		    tgid, on);
}

/* Sets or clears tgid's bit in ready_bits: its span stacks are kept from then on. */
static void ready_bit(struct rec_bpfstate *bs, __u32 tgid, bool on)
{
	set_pid_bit(bs->skel->bss->ready_bits, sizeof(bs->skel->bss->ready_bits) / sizeof(__u64),
		    tgid, on);
}

void rec_bpfstate__ready(struct rec_bpfstate *bs, pid_t tgid)
{
	ready_bit(bs, tgid, true);
}

/* The binaries map's entry of the file (ino, dev) set to state (REC_BINARY_*). */
static int set_binary(struct rec_bpfstate *bs, uint64_t ino, uint64_t dev, __u8 state, __u64 flags)
{
	struct rec_binary_key bk = { .ino = ino, .dev = dev };

	if (bpf_map_update_elem(bpf_map__fd(bs->skel->maps.binaries), &bk, &state, flags))
		return -errno;
	return 0;
}

int rec_bpfstate__binary_ready(struct rec_bpfstate *bs, uint64_t ino, uint64_t dev)
{
	return set_binary(bs, ino, dev, REC_BINARY_READY, BPF_EXIST);
}

void rec_bpfstate__wait(struct rec_bpfstate *bs, pid_t tgid, bool on)
{
	__u32 k = tgid;
	__u8 one = 1;

	if (on)
		bpf_map_update_elem(bpf_map__fd(bs->skel->maps.waiting), &k, &one, BPF_ANY);
	else
		bpf_map_delete_elem(bpf_map__fd(bs->skel->maps.waiting), &k);
}

int rec_bpfstate__trace(struct rec_bpfstate *bs, pid_t tgid)
{
	struct rec_pstat zero = { 0 };
	__u32 k = tgid;

	if (bpf_map_update_elem(bpf_map__fd(bs->skel->maps.traced), &k, &zero, BPF_NOEXIST) &&
	    errno != EEXIST)
		return -errno;
	traced_bit(bs, k, true);
	return 0;
}

void rec_bpfstate__untrace(struct rec_bpfstate *bs, pid_t tgid)
{
	__u32 k = tgid;

	bpf_map_delete_elem(bpf_map__fd(bs->skel->maps.traced), &k);
	traced_bit(bs, k, false);
	ready_bit(bs, k, false);
	bpf_map_delete_elem(bpf_map__fd(bs->skel->maps.waiting), &k);
	bpf_map_delete_elem(bpf_map__fd(bs->skel->maps.released), &k);
}

int rec_bpfstate__add_binary(struct rec_bpfstate *bs, uint64_t ino, uint64_t dev)
{
	return set_binary(bs, ino, dev, REC_BINARY_ADDED, BPF_ANY);
}

/*
 * The BPF table's entry for recording key of p, with the counters from its
 * slot when it has one (struct rec_rslot). Returns 0 or -ENOENT.
 */
static int bpf_recording(struct rec_bpfstate *bs, const struct rec_proc *p, uint64_t key,
			 struct rec_rval *v)
{
	struct rec_rkey k = { .tgid = p->pid, .key = key };
	struct rec_rslot sl;
	__u32 i;

	if (bpf_map_lookup_elem(bpf_map__fd(bs->skel->maps.recordings), &k, v))
		return -ENOENT;
	if (!v->slot)
		return 0;
	i = v->slot - 1;
	if (bpf_map_lookup_elem(bpf_map__fd(bs->skel->maps.rslots), &i, &sl) ||
	    sl.k.tgid != k.tgid || sl.k.key != key)
		return -ENOENT;
	*v = sl.v;
	return 0;
}

/*
 * Deletes the BPF table entry k, whose value is v, and frees its slot if it has
 * one. With release, its process's quota gets the place back (struct rec_pstat).
 */
static void forget_recording(struct rec_bpfstate *bs, const struct rec_rkey *k,
			     const struct rec_rval *v, bool release)
{
	int rfd = bpf_map__fd(bs->skel->maps.released);
	struct rec_rslot free_slot = { 0 };
	__u64 n = 0;
	__u32 i;

	if (bpf_map_delete_elem(bpf_map__fd(bs->skel->maps.recordings), k))
		return;
	/* Its slot is free for the next recording once the table entry is gone. */
	if (v->slot) {
		i = v->slot - 1;
		bpf_map_update_elem(bpf_map__fd(bs->skel->maps.rslots), &i, &free_slot, BPF_ANY);
	}
	/* Only this thread writes released: a read, then a write, is enough. */
	if (release) {
		bpf_map_lookup_elem(rfd, &k->tgid, &n);
		n++;
		bpf_map_update_elem(rfd, &k->tgid, &n, BPF_ANY);
	}
}

/* Takes the final counters of a retired recording into r, then forgets it in BPF. */
static void finalize_retired(struct rec_bpfstate *bs, const struct rec_proc *p,
			     struct rec_recording_rec *r)
{
	struct rec_rkey k = { .tgid = p->pid, .key = r->key };
	struct rec_rval v;

	/* An untracked one has no entry: BPF deleted its own, its count is in r. */
	if (bpf_recording(bs, p, r->key, &v))
		return;
	if (v.seq > r->seq)
		r->seq = v.seq;
	if (v.dropped > r->dropped)
		r->dropped = v.dropped;
	if (v.spans_lost > r->spans_lost)
		r->spans_lost = v.spans_lost;
	forget_recording(bs, &k, &v, true);
}

void rec_bpfstate__take_recording(struct rec_bpfstate *bs, struct rec_proc *p,
				  struct rec_recording_rec *r)
{
	if (r->state == REC_RS_RETIRED)
		finalize_retired(bs, p, r);
	rec_proc__ingest_recording(p, r);
}

int rec_bpfstate__recover_recording(struct rec_bpfstate *bs, struct rec_proc *p, uint64_t key)
{
	struct rec_rval v;

	if (bpf_recording(bs, p, key, &v))
		return -ENOENT;
	return rec_proc__get(p, key, v.recorder, v.cap) ? 0 : -ENOMEM;
}

static void read_counters(struct rec_bpfstate *bs, uint64_t *out)
{
	int fd = bpf_map__fd(bs->skel->maps.counters), ncpu = libbpf_num_possible_cpus();
	uint64_t vals[MAX_CPUS];

	if (ncpu <= 0 || ncpu > MAX_CPUS)
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
			size_t grown = cap ? 2 * cap : FIRST_CAP;
			struct rec_rkey *v = realloc(*keys, grown * sizeof(**keys));

			if (!v)
				break;
			*keys = v;
			cap = grown;
		}
		if (keys)
			(*keys)[n] = next;
		n++;
	}
	return n;
}

/*
 * Brings p's recordings up to date with the BPF side: the live counters of the
 * tracked ones, a retirement whose record was lost (the ring was full), and
 * the untracked ones, whose announcement may have been lost too.
 */
/*
 * The spans of recording k that a full ring refused while neither BPF table
 * held it (bpf/maps.bpf.h, spans_lost_of): only looked up once the ring has
 * been full for p.
 */
static uint64_t spans_lost_of(struct rec_bpfstate *bs, const struct rec_proc *p,
			      const struct rec_rkey *k)
{
	__u64 n = 0;

	if (!p->counters[REC_C_RING_FULL] ||
	    bpf_map_lookup_elem(bpf_map__fd(bs->skel->maps.spans_lost_of), k, &n))
		return 0;
	return n;
}

static void refresh_recordings(struct rec_bpfstate *bs, struct rec_proc *p)
{
	int ufd = bpf_map__fd(bs->skel->maps.untracked);
	struct rec_recording_rec *gone = NULL;
	struct rec_rkey *keys = NULL;
	size_t n = 0, cap = 0;
	struct rec_rstate *rs;

	for (rs = p->first; rs; rs = rs->next) {
		struct rec_rkey k = { .tgid = p->pid, .key = rs->key };
		struct rec_recording_rec r = {
			.key = rs->key,
			.recorder = rs->recorder,
			.cap = rs->cap,
			.state = REC_RS_RETIRED,
			.untracked = (__u32)rs->untracked,
		};
		struct rec_untracked u;
		struct rec_rval val;

		if (rs->retired)
			continue;
		if (rs->untracked) {
			if (bpf_map_lookup_elem(ufd, &k, &u) == 0) {
				rec_rstate__update_counts(rs, u.seen, u.seen, u.spans_lost);
				continue;
			}
			/* Retired (BPF deletes it then), and that record was lost. */
			r.seq = r.dropped = rs->produced;
			r.spans_lost = rs->spans.ring_lost;
		} else if (bpf_recording(bs, p, rs->key, &val)) {
			/* Known from a stack only: the spans the ring refused are by its key. */
			rec_rstate__update_counts(rs, 0, 0, spans_lost_of(bs, p, &k));
			continue;
		} else {
			val.spans_lost += spans_lost_of(bs, p, &k);
			rec_rstate__update_counts(rs, val.seq, val.dropped, val.spans_lost);
			/* Retired, and that record was lost: its entry would stay. */
			if (val.state != REC_RS_RETIRED)
				continue;
			r.seq = val.seq;
			r.dropped = val.dropped;
			r.spans_lost = val.spans_lost;
		}
		/* Taken after the walk: retiring one may free others. */
		if (n == cap) {
			size_t grown = cap ? 2 * cap : FIRST_CAP;
			struct rec_recording_rec *v = realloc(gone, grown * sizeof(*v));

			if (!v)
				break;
			gone = v;
			cap = grown;
		}
		gone[n++] = r;
	}
	for (size_t i = 0; i < n; i++)
		rec_bpfstate__take_recording(bs, p, &gone[i]);
	free(gone);
	/* Untracked ones whose announcement was lost (the ring was full). */
	n = recording_keys(ufd, p->pid, &keys, NULL);
	for (size_t i = 0; i < n; i++) {
		struct rec_recording_rec r = { .key = keys[i].key, .state = REC_RS_LIVE };
		struct rec_untracked u;

		if (rec_proc__find(p, r.key) || bpf_map_lookup_elem(ufd, &keys[i], &u))
			continue;
		r.recorder = u.recorder;
		r.cap = u.cap;
		r.seq = r.dropped = u.seen;
		r.untracked = u.reason;
		rec_proc__ingest_recording(p, &r);
	}
	free(keys);
}

/* The BPF side's rows of p's limits: the recordings table, and p's share of it. */
static void refresh_limits(struct rec_bpfstate *bs, struct rec_proc *p)
{
	struct rec_limit_use *all = &p->use[REC_L_RECORDINGS];
	struct rec_limit_use *own = &p->use[REC_L_PROC_RECORDINGS];
	__u32 tgid = p->pid;
	struct rec_pstat ps;
	__u64 rel = 0;

	p->bpf_recordings =
		recording_keys(bpf_map__fd(bs->skel->maps.recordings), tgid, NULL, &all->used);
	rec_proc__limits(p);
	if (bpf_map_lookup_elem(bpf_map__fd(bs->skel->maps.traced), &tgid, &ps))
		return;
	bpf_map_lookup_elem(bpf_map__fd(bs->skel->maps.released), &tgid, &rel);
	own->used = ps.created - rel;
	own->over = ps.over_quota;
	own->events = ps.over_quota_events;
	all->over = ps.table_full;
	all->events = ps.table_full_events;
}

/* The span stacks of p's threads, read by the dump_stacks iterator, into p. */
static void refresh_stacks(struct rec_bpfstate *bs, struct rec_proc *p)
{
	struct rec_thread_stack *v = NULL;
	size_t n = 0, cap = 0;
	int iter_fd;

	bs->skel->bss->iter_tgid = p->pid;
	iter_fd = bpf_iter_create(bpf_link__fd(bs->iter_link));
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

			cap = cap ? cap * 2 : FIRST_CAP;
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
	rec_proc__set_stacks(p, v, n);
}

/*
 * The recordings of p that the BPF table has and p does not: those whose every
 * record the full ring refused (their new, their events, their spans). Without
 * this they would go unlisted, their losses counted only in ring_full. Looked
 * for only when ring_full has grown since the last look, and while the process
 * lives once a second at most: it walks the whole table.
 */
static void recover_unseen(struct rec_bpfstate *bs, struct rec_proc *p)
{
	struct rec_rkey *keys;
	size_t n = recording_keys(bpf_map__fd(bs->skel->maps.recordings), p->pid, &keys, NULL);

	for (size_t i = 0; i < n && keys; i++)
		if (!rec_proc__find(p, keys[i].key))
			rec_bpfstate__recover_recording(bs, p, keys[i].key);
	free(keys);
}

/* While the ring overflows, a live process's table is walked once a second at most. */
#define RECOVER_EVERY_NS 1000000000ULL

void rec_bpfstate__refresh(struct rec_bpfstate *bs, struct rec_proc *p, uint64_t now)
{
	read_counters(bs, p->counters);
	if (p->counters[REC_C_RING_FULL] != p->ring_full_seen &&
	    (!p->alive || now - p->recovered_ns >= RECOVER_EVERY_NS)) {
		p->ring_full_seen = p->counters[REC_C_RING_FULL];
		p->recovered_ns = now;
		recover_unseen(bs, p);
	}
	refresh_recordings(bs, p);
	refresh_limits(bs, p);
	if (p->alive)
		refresh_stacks(bs, p);
}

/* Runs the sleepable iterator prog over the threads of tgid. */
static int run_task_iter(struct rec_bpfstate *bs, struct bpf_program *prog, pid_t tgid)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = { 0 };
	struct bpf_link *link;
	char buf[64];
	int fd;

	bs->skel->bss->iter_tgid = tgid;
	/* Only this process's threads (the program also checks the tgid). */
	linfo.task.pid = tgid;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(prog, &opts);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		fd = -errno;
	bpf_link__destroy(link);
	if (fd < 0)
		return fd;
	/* The program writes nothing; reading runs it over every task. */
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	return 0;
}

int rec_bpfstate__seed_stacks(struct rec_bpfstate *bs, pid_t tgid, int64_t tls_off)
{
	int err;

	bs->skel->bss->tls_current_off = tls_off;
	bs->skel->bss->seed_running = 0;
	err = run_task_iter(bs, rec_bpfstate__program(bs, "seed_stacks"), tgid);
	return err ? err : (int)bs->skel->bss->seed_running;
}

int rec_bpfstate__verify_stacks(struct rec_bpfstate *bs, pid_t tgid, int64_t tls_off)
{
	int err;

	bs->skel->bss->tls_current_off = tls_off;
	bs->skel->bss->verify_skipped = 0;
	err = run_task_iter(bs, rec_bpfstate__program(bs, "verify_stacks"), tgid);
	return err ? err : (int)bs->skel->bss->verify_skipped;
}

int rec_bpfstate__collect(struct rec_bpfstate *bs, pid_t tgid)
{
	return run_task_iter(bs, rec_bpfstate__program(bs, "collect_batches"), tgid);
}

void rec_bpfstate__forget(struct rec_bpfstate *bs, pid_t tgid)
{
	int fd = bpf_map__fd(bs->skel->maps.recordings);
	int ufd = bpf_map__fd(bs->skel->maps.untracked);
	__u32 k = tgid;
	struct rec_rkey *keys;
	size_t n = recording_keys(fd, k, &keys, NULL);

	for (size_t i = 0; i < n; i++) {
		struct rec_rval v = { 0 };

		/* The table's own value: it names the slot, if any. */
		bpf_map_lookup_elem(fd, &keys[i], &v);
		forget_recording(bs, &keys[i], &v, false);
	}
	free(keys);
	n = recording_keys(ufd, k, &keys, NULL);
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(ufd, &keys[i]);
	free(keys);
	bpf_map_delete_elem(bpf_map__fd(bs->skel->maps.released), &k);
}
