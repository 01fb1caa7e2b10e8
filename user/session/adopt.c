// SPDX-License-Identifier: MIT
/*
 * --binary (private.h): every process that runs one of the named files,
 * adopted as it says hello, as it forks, or as it is found at the attach.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "target/elf.h"
#include "target/maps.h"
#include "session/private.h"

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
const struct rec_object_id *adopt__binary_of_hello(struct rec_session *s,
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
	struct traced *parent = traced__of(s, (pid_t)hello->ppid);

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
struct traced *adopt__process(struct rec_session *s, pid_t pid, const struct rec_hello_rec *hello)
{
	const struct rec_object_id *bin;
	struct rec_mapping m = {};
	struct traced *t;
	int err;

	/* Asked once per process: its records keep coming, the answer won't change. */
	if (rec_u64map__get(&s->rejected, (uint64_t)pid + 1))
		return NULL;
	bin = hello ? adopt__binary_of_hello(s, hello) : binary_of(s, pid);
	if (!bin)
		goto reject;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto reject;
	t->adopted = 1;
	t->binary = bin->path;
	err = traced__init(t, pid, s->opts.triggers, s->opts.sched);
	if (err == -ESRCH && hello)
		err = 0;
	/* Gone, or a zombie: no maps, no memory left to read. */
	if (!err && !t->target.maps.n)
		t->proc.alive = 0;
	if (!err && hello)
		err = complete_maps(s, bin, hello, t);
	if (err) {
		traced__free(t);
		goto reject;
	}
	m.inode = bin->inode;
	for (size_t i = 0; i < t->target.maps.n; i++)
		if (t->target.maps.v[i].inode == bin->inode && t->target.maps.v[i].exec)
			m.path = t->target.maps.v[i].path;
	if ((m.path && rec_attach__seen(&t->att, &m)) || traced__serve(s, t)) {
		traced__end(s, t, false);
		traced__free(t);
		goto reject;
	}
	/* BPF makes it ready as it adopts it, unless that came first (bpf ready_bits). */
	if (s->bin_ready[bin - s->bins])
		rec_bpfstate__ready(s->bs, pid);
	t->seed_pending = t->proc.alive;
	/* One it waits for is said to be traced once it is taken over. */
	export__start(s, t);
	if (s->opts.on_adopt && !t->waiting)
		s->opts.on_adopt(pid, bin->path, s->opts.ctx);
	return t;
reject:
	/* Still marked traced in BPF: its records count as foreign until it exits. */
	rec_u64map__put(&s->rejected, (uint64_t)pid + 1, s);
	return NULL;
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
		tracer__tell_attached(s, s->traced[i]);
	}
	/*
	 * Those running it already; later ones are adopted by their hello (exec,
	 * fork). Only its own: adopt__process() rejects any other for good, and a process
	 * of a later --binary would never be adopted.
	 */
	proc = opendir("/proc");
	for (struct dirent *de; proc && (de = readdir(proc));) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		struct traced *t;

		if (pid <= 0 || traced__of(s, pid) || binary_of(s, pid) != &s->bins[s->nbins - 1])
			continue;
		/* Rejected while no --binary named its file: asked again. */
		rec_u64map__del(&s->rejected, (uint64_t)pid + 1);
		if ((t = adopt__process(s, pid, NULL))) {
			/* Not inside the ring callback: seed it now. */
			t->seed_pending = 0;
			tracer__tell_attached(s, t);
			tracer__seed_stacks(s, t, true);
		}
	}
	if (proc)
		closedir(proc);
	return 0;
}

/*
 * After a batch of ring records: the processes it adopted get their stacks
 * seeded now (never inside the ring callback, which must not consume the ring
 * again), those that were gone already when adopted are ended, and those that
 * exec'd a file no --binary names before any recording are let go.
 */
void adopt__settle(struct rec_session *s)
{
	for (size_t i = 0; i < s->ntraced; i++) {
		struct traced *t = s->traced[i];

		if (t->done)
			continue;
		if (t->seed_pending) {
			t->seed_pending = 0;
			tracer__tell_attached(s, t);
			tracer__seed_stacks(s, t, false);
		}
		if (t->exec_away) {
			t->exec_away = 0;
			/* One with recordings keeps them until it exits: its black box has them. */
			if (!snapshots__recordings_of(&t->proc)) {
				traced__handover(s, t, REC_HANDOVER_EXEC, NULL, 0);
				traced__end(s, t, false);
				continue;
			}
		}
		if (t->pidfd < 0 && !t->exited)
			traced__end(s, t, true);
	}
}
