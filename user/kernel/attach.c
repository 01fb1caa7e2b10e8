// SPDX-License-Identifier: MIT
/* Attaching the recorder probes (attach.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "kernel/attach.h"
#include "kernel/bpfstate.h"
#include "usdt/usdt_multi.h"
#include "target/elf.h"
#include "kernel/reaper.h"
#include "recorder_abi.h"

/* The USDT provider of include/recorder.h. */
#define PROVIDER "recorder"

/*
 * The probes, in the order they are attached in the files of one attach:
 * "attached" comes last, since once its semaphore is armed in an image
 * (rec_is_attached()), every other probe must be too.
 */
static const char *const probe_names[] = {
	"recording_new", "recording_span", "recording_free", "span_enter", "span_exit",
	"event",	 "batch",	   "trigger",	     "attached",
};

#define NPROBES (sizeof(probe_names) / sizeof(probe_names[0]))

struct rec_attach {
	int prog_fds[NPROBES]; /* the BPF program of each probe */
	struct rec_usdt_multi um;
	struct rec_attach_opts opts;
	struct rec_attach_set every; /* --binary files and their libraries, every process */
};

/* A file of a process's maps with probes, not attached yet, or not all of them. */
struct rec_attach_object {
	char path[PATH_MAX]; /* to open it by */
	const char *mpath;   /* as the maps name it (while they are read) */
	uint64_t inode;
	struct rec_probe_names names;
	pid_t link_pid;	    /* the process its links are for, 0 = every process */
	size_t next;	    /* the first of probe_names not attached yet */
	int err;	    /* why the last try failed, 0 if it did not */
	unsigned int tries; /* the tries that failed */
};

int rec_attach__new(struct rec_attach **ap, const struct rec_bpfstate *bs,
		    const struct rec_attach_opts *opts)
{
	struct rec_attach *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return -ENOMEM;
	a->opts = *opts;
	for (size_t p = 0; p < NPROBES; p++) {
		char name[REC_PROBE_NAME_MAX + 3];
		struct bpf_program *prog;

		snprintf(name, sizeof(name), "on_%s", probe_names[p]);
		prog = rec_bpfstate__program(bs, name);
		if (!prog) {
			free(a);
			return -ENOENT;
		}
		a->prog_fds[p] = bpf_program__fd(prog);
	}
	err = rec_usdt_multi__init(&a->um, rec_bpfstate__object(bs));
	if (err) {
		free(a);
		return err;
	}
	*ap = a;
	return 0;
}

void rec_attach__free(struct rec_attach *a)
{
	if (!a)
		return;
	rec_attach__release(&a->every);
	rec_usdt_multi__fini(&a->um);
	free(a);
}

/* The path to open for a mapping: its own if it is the same file here, else via /proc. */
static void object_path(char *buf, size_t len, pid_t pid, const struct rec_mapping *m)
{
	struct stat st;

	if (stat(m->path, &st) == 0 && st.st_ino == m->inode)
		snprintf(buf, len, "%s", m->path);
	else
		snprintf(buf, len, "/proc/%d/root%s", (int)pid, m->path);
}

static int set_has(const struct rec_attach_set *set, uint64_t inode, const char *path)
{
	for (size_t i = 0; i < set->nobjs; i++)
		if (set->objs[i].inode == inode && strcmp(set->objs[i].path, path) == 0)
			return 1;
	return 0;
}

static int set_add(struct rec_attach_set *set, uint64_t inode, const char *path)
{
	struct rec_object_id *v = realloc(set->objs, (set->nobjs + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	set->objs = v;
	v[set->nobjs].inode = inode;
	v[set->nobjs].path = strdup(path);
	if (!v[set->nobjs].path)
		return -ENOMEM;
	set->nobjs++;
	return 0;
}

int rec_attach__seen(struct rec_attach_set *set, const struct rec_mapping *m)
{
	return set_add(set, m->inode, m->path);
}

/*
 * The executable files in maps, the maps of pid, that have recorder probes and
 * set has not seen; their links will be for link_pid.
 */
static int find_objects(struct rec_attach_set *set, pid_t pid, pid_t link_pid,
			const struct rec_maps *maps, struct rec_attach_object **objsp,
			size_t *nobjs)
{
	struct rec_attach_object *objs = NULL;
	size_t n = 0;
	int err;

	for (size_t i = 0; i < maps->n; i++) {
		const struct rec_mapping *m = &maps->v[i];
		struct rec_attach_object *o;

		if (!m->exec || set_has(set, m->inode, m->path))
			continue;
		/* Seen now, probes or not: scan each file once. */
		err = set_add(set, m->inode, m->path);
		if (err)
			goto fail;
		o = realloc(objs, (n + 1) * sizeof(*o));
		if (!o) {
			err = -ENOMEM;
			goto fail;
		}
		objs = o;
		memset(&objs[n], 0, sizeof(objs[n]));
		object_path(objs[n].path, sizeof(objs[n].path), pid, m);
		objs[n].inode = m->inode;
		objs[n].mpath = m->path;
		objs[n].link_pid = link_pid;
		/* Not ELF, unreadable, or no notes: not ours to trace. */
		if (rec_usdt__scan(objs[n].path, PROVIDER, &objs[n].names) || !objs[n].names.sites)
			continue;
		n++;
	}
	*objsp = objs;
	*nobjs = n;
	return 0;
fail:
	free(objs);
	return err;
}

static int add_link(struct rec_attach_set *set, int fd)
{
	int *v = realloc(set->links, (set->nlinks + 1) * sizeof(*v));

	if (!v) {
		close(fd);
		return -ENOMEM;
	}
	set->links = v;
	v[set->nlinks++] = fd;
	return 0;
}

/*
 * One link into set for every site of probe p in the file at path; the sites
 * attached go into *nsites. Sites with an argument spec we do not support are
 * left out and reported through opts.on_skipped.
 */
static int attach_probe(struct rec_attach *a, struct rec_attach_set *set, size_t p,
			const char *path, pid_t pid, unsigned int *nsites)
{
	struct rec_usdt_multi_skipped skipped;
	int fd;

	*nsites = 0;
	fd = rec_usdt_multi__attach(&a->um, a->prog_fds[p], path, PROVIDER, probe_names[p], pid,
				    nsites, &skipped);
	if (skipped.n && a->opts.on_skipped)
		a->opts.on_skipped(pid, path, probe_names[p], skipped.n, skipped.spec, a->opts.ctx);
	if (fd == -ENOENT && skipped.n)
		return 0;
	if (fd < 0)
		return fd;
	return add_link(set, fd);
}

struct word_find {
	uint64_t sema_off;
};

static int first_sema(const struct rec_usdt_site *site, void *ctx)
{
	struct word_find *f = ctx;

	f->sema_off = site->sema_off;
	return 1;
}

int rec_attach__tracer_word(const char *path, uint64_t *off)
{
	struct word_find f = { 0 };
	uint16_t marker = 0;
	Elf *elf;
	int fd, err;

	err = rec_elf__open(path, &fd, &elf);
	if (err)
		return err;
	err = rec_usdt__for_each_site(elf, PROVIDER, "attached", first_sema, &f);
	elf_end(elf);
	if (err < 0 || !f.sema_off) {
		close(fd);
		return err < 0 ? err : -ENOENT;
	}
	/* The marker sits in the file after the semaphore: a header without it has another word there. */
	if (pread(fd, &marker, sizeof(marker), (off_t)(f.sema_off + 2)) != sizeof(marker))
		marker = 0;
	close(fd);
	/* Any block: this one reads the recordings' records and takes the big buffers. */
	if (marker != REC_ATTACH_MARKER && marker != REC_ATTACH_MARKER_REC &&
	    marker != REC_ATTACH_MARKER_BIG)
		return -ENOENT;
	*off = f.sema_off + 4;
	return 0;
}

/* Keeps the tracer word of ob, attached whole, in set (an image without one is left out). */
static void add_word(struct rec_attach_set *set, const struct rec_attach_object *ob)
{
	struct rec_tracer_word *v;
	uint64_t off;

	if (rec_attach__tracer_word(ob->path, &off))
		return;
	v = realloc(set->words, (set->nwords + 1) * sizeof(*v));
	if (!v)
		return;
	set->words = v;
	v[set->nwords].inode = ob->inode;
	v[set->nwords++].off = off;
}

const struct rec_attach_set *rec_attach__every(const struct rec_attach *a)
{
	return &a->every;
}

/* Whether names has probe p. */
static int has_probe(const struct rec_probe_names *names, size_t p)
{
	for (size_t i = 0; i < names->n; i++)
		if (strcmp(names->v[i].name, probe_names[p]) == 0)
			return 1;
	return 0;
}

/*
 * Attaches the probes of the nobjs objects into set, each from its next one:
 * probe by probe, each in every object, so that "attached" goes on last
 * everywhere. An object whose probe fails to attach stops there (its err and
 * next say where); with keep_going the others go on, else the error is
 * returned at once. Counts what it attached into *count.
 */
static int attach_objects(struct rec_attach *a, struct rec_attach_set *set,
			  struct rec_attach_object *objs, size_t nobjs, bool keep_going,
			  struct rec_attach_count *count)
{
	for (size_t p = 0; p < NPROBES; p++) {
		for (size_t o = 0; o < nobjs; o++) {
			struct rec_attach_object *ob = &objs[o];
			unsigned int nsites;
			int err;

			if (ob->err || p < ob->next || !has_probe(&ob->names, p))
				continue;
			/* The probe that turns the batch path on (include/recorder.h). */
			if (a->opts.per_event && strcmp(probe_names[p], "batch") == 0)
				continue;
			err = attach_probe(a, set, p, ob->path, ob->link_pid, &nsites);
			if (err && !keep_going)
				return err;
			if (err) {
				ob->err = err;
				ob->next = p;
				continue;
			}
			count->sites += nsites;
		}
	}
	for (size_t o = 0; o < nobjs; o++) {
		if (objs[o].err)
			continue;
		/* Told to the processes by the session, once each: see rec_attach__tracer_word. */
		if (objs[o].next != NPROBES)
			add_word(set, &objs[o]);
		objs[o].next = NPROBES;
		count->objects++;
	}
	return 0;
}

/*
 * The objects of maps (pid's) that set has not seen, with every those that
 * every process's set has not seen either, which it has from now on.
 */
static int new_objects(struct rec_attach *a, struct rec_attach_set *set, pid_t pid, bool every,
		       const struct rec_maps *maps, struct rec_attach_object **objsp,
		       size_t *nobjsp)
{
	struct rec_attach_object *objs = NULL;
	size_t nobjs = 0;
	int err;

	err = find_objects(set, pid, every ? 0 : pid, maps, &objs, &nobjs);
	if (err)
		return err;
	/* Every process's: each library once per session. */
	for (size_t o = 0; every && o < nobjs; o++) {
		if (set_has(&a->every, objs[o].inode, objs[o].mpath)) {
			objs[o--] = objs[--nobjs];
			continue;
		}
		err = set_add(&a->every, objs[o].inode, objs[o].mpath);
		if (err) {
			free(objs);
			return err;
		}
	}
	*objsp = objs;
	*nobjsp = nobjs;
	return 0;
}

int rec_attach__maps(struct rec_attach *a, struct rec_attach_set *set, pid_t pid, bool every,
		     const struct rec_maps *maps, struct rec_attach_count *count)
{
	struct rec_attach_object *objs;
	size_t nobjs;
	int err;

	err = new_objects(a, set, pid, every, maps, &objs, &nobjs);
	if (err)
		return err;
	err = attach_objects(a, every ? &a->every : set, objs, nobjs, false, count);
	free(objs);
	return err;
}

static void report_late(struct rec_attach *a, enum rec_late_library what,
			const struct rec_attach_object *ob, unsigned int tries)
{
	if (a->opts.on_late)
		a->opts.on_late(what, ob->link_pid, ob->path, ob->err, tries, a->opts.ctx);
}

void rec_attach__rescan(struct rec_attach *a, struct rec_attach_set *set, pid_t pid, bool every,
			const struct rec_maps *maps)
{
	struct rec_attach_set *dst = every ? &a->every : set;
	struct rec_attach_count count = { 0 };
	struct rec_attach_object *objs;
	size_t nobjs;

	if (new_objects(a, set, pid, every, maps, &objs, &nobjs))
		return;
	attach_objects(a, dst, objs, nobjs, true, &count);
	for (size_t o = 0; o < nobjs; o++) {
		struct rec_attach_object *ob = &objs[o], *v;

		if (!ob->err)
			continue;
		ob->tries = 1;
		ob->mpath = NULL;
		dst->late.failed++;
		report_late(a, REC_LATE_FAILED, ob, ob->tries);
		v = realloc(dst->pending, (dst->npending + 1) * sizeof(*v));
		if (!v) {
			dst->late.given_up++;
			report_late(a, REC_LATE_GAVE_UP, ob, ob->tries);
			continue;
		}
		dst->pending = v;
		v[dst->npending++] = *ob;
		dst->late.retrying++;
	}
	free(objs);
}

void rec_attach__retry(struct rec_attach *a, struct rec_attach_set *set)
{
	struct rec_attach_set *dst = set ? set : &a->every;
	struct rec_attach_count count = { 0 };

	if (!dst->npending)
		return;
	for (size_t i = 0; i < dst->npending; i++)
		dst->pending[i].err = 0;
	attach_objects(a, dst, dst->pending, dst->npending, true, &count);
	for (size_t i = 0; i < dst->npending;) {
		struct rec_attach_object *ob = &dst->pending[i];

		if (!ob->err) {
			dst->late.attached_later++;
			report_late(a, REC_LATE_ATTACHED, ob, ob->tries + 1);
		} else if (++ob->tries == REC_ATTACH_TRIES) {
			dst->late.given_up++;
			report_late(a, REC_LATE_GAVE_UP, ob, ob->tries);
		} else {
			i++;
			continue;
		}
		dst->late.retrying--;
		dst->pending[i] = dst->pending[--dst->npending];
	}
}

const struct rec_late_counts *rec_attach__late(const struct rec_attach *a,
					       const struct rec_attach_set *set)
{
	return set ? &set->late : &a->every.late;
}

int rec_attach__probes_of(const char *path, struct rec_probe_names *names)
{
	int err = rec_usdt__scan(path, PROVIDER, names);

	if (err)
		return err;
	return names->sites ? 0 : -ENOENT;
}

int rec_attach__binary(struct rec_attach *a, const char *path, const struct rec_probe_names *names,
		       struct rec_attach_count *count)
{
	struct rec_attach_object *o = calloc(1, sizeof(*o));
	struct stat st;
	int err;

	if (!o)
		return -ENOMEM;
	snprintf(o->path, sizeof(o->path), "%s", path);
	if (stat(path, &st) == 0)
		o->inode = st.st_ino;
	o->mpath = o->path;
	o->names = *names;
	/* No pid: every process that maps the file, now or later, through fork and exec. */
	o->link_pid = 0;
	err = attach_objects(a, &a->every, o, 1, false, count);
	free(o);
	return err;
}

void rec_attach__detach(struct rec_attach_set *set)
{
	rec_reaper__close_links(set->links, set->nlinks);
	set->nlinks = 0;
	/* Its process is gone: nothing left to try again. */
	set->late.retrying -= set->npending;
	set->late.given_up += set->npending;
	free(set->pending);
	set->pending = NULL;
	set->npending = 0;
}

void rec_attach__release(struct rec_attach_set *set)
{
	rec_attach__detach(set);
	free(set->links);
	set->links = NULL;
	for (size_t i = 0; i < set->nobjs; i++)
		free(set->objs[i].path);
	free(set->objs);
	set->objs = NULL;
	set->nobjs = 0;
	free(set->words);
	set->words = NULL;
	set->nwords = 0;
}
