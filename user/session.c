// SPDX-License-Identifier: MIT
/*
 * The session's life: loading the BPF programs, attaching to processes (by pid,
 * by --binary, by adoption, by rescan), the main loop, and a target's end.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "recorder.skel.h"

#include "control.h"
#include "dump.h"
#include "reaper.h"
#include "proc.h"
#include "output/names.h"
#include "ring.h"
#include "session.h"
#include "session_int.h"
#include "compat/usdt_multi.h"
#include "target/elf.h"
#include "target/target.h"
#include "usdt.h"

static int verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	/* libbpf's own chatter, warnings included, shows only with -v. */
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static void target_free_objs(struct target *t)
{
	for (size_t i = 0; i < t->nobjs; i++)
		free(t->objs[i].path);
	free(t->objs);
	t->objs = NULL;
	t->nobjs = 0;
}

struct target *session__target_of(struct rec_session *s, pid_t pid)
{
	for (size_t i = 0; i < s->ntargets; i++)
		if (s->targets[i]->proc.pid == pid && !s->targets[i]->done)
			return s->targets[i];
	return NULL;
}

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
	struct rec_session *s;
	sigset_t mask;
	int err;

	verbose = opts->verbose;
	libbpf_set_print(libbpf_print);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->epfd = s->sigfd = -1;
	/* A limit left at 0 takes its default. */
	{
		const struct rec_limits d = REC_LIMITS_DEFAULT;
		struct rec_limits *l = &s->opts.limits;

		l->max_recordings = l->max_recordings ?: d.max_recordings;
		l->max_recordings_per_process = l->max_recordings_per_process ?:
						l->max_recordings / 4 ?: 1;
		l->keep_retired = l->keep_retired ?: d.keep_retired;
		l->max_callsites = l->max_callsites ?: d.max_callsites;
		l->max_literals = l->max_literals ?: d.max_literals;
		l->max_dead_stacks = l->max_dead_stacks ?: d.max_dead_stacks;
		l->max_forgotten_recorders = l->max_forgotten_recorders ?:
					     d.max_forgotten_recorders;
	}

	s->skel = recorder_bpf__open();
	if (!s->skel) {
		err = -errno;
		goto fail;
	}
	/* Read-only config goes in before load. */
	s->skel->rodata->wakeup_bytes = opts->ring_bytes / 4;
	s->skel->rodata->follow_new = !!opts->follow_binaries;
	err = bpf_map__set_max_entries(s->skel->maps.events, opts->ring_bytes);
	if (err)
		goto fail;
	/* The recordings table, and as many refused recordings listed as it holds. */
	s->skel->rodata->max_per_process = s->opts.limits.max_recordings_per_process;
	err = bpf_map__set_max_entries(s->skel->maps.recordings, s->opts.limits.max_recordings) ?:
	      bpf_map__set_max_entries(s->skel->maps.untracked, s->opts.limits.max_recordings);
	if (err)
		goto fail;
	/* Attached with uprobe_multi links (compat/usdt_multi.h), not libbpf's per-site uprobes. */
	err = rec_usdt_multi__prepare(s->skel->obj) ?: recorder_bpf__load(s->skel) ?:
	      rec_usdt_multi__init(&s->specs, s->skel->obj);
	if (err)
		goto fail;
	s->iter_link = bpf_program__attach_iter(s->skel->progs.dump_stacks, NULL);
	if (!s->iter_link) {
		err = -errno;
		goto fail;
	}
	s->exit_link = bpf_program__attach(s->skel->progs.on_sched_exit);
	if (!s->exit_link) {
		err = -errno;
		goto fail;
	}
	s->rb = rec_ring__new(bpf_map__fd(s->skel->maps.events), session__on_record, s);
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
	err = session__watch_add(s, rec_ring__fd(s->rb), &s->w_ring, W_RING, NULL);
	if (!err)
		err = session__watch_add(s, s->sigfd, &s->w_signal, W_SIGNAL, NULL);
	if (err)
		goto fail;
	*sp = s;
	return 0;
fail:
	rec_session__free(s);
	return err < 0 ? err : -err;
}

struct probe_prog {
	const char *name;
	struct bpf_program *prog;
};

static size_t probe_progs(struct rec_session *s, struct probe_prog *v)
{
	/* "attached" comes last: once its semaphore is armed, every other probe is too. */
	struct probe_prog all[] = {
		{ "recording_new", s->skel->progs.on_recording_new },
		{ "recording_span", s->skel->progs.on_recording_span },
		{ "recording_free", s->skel->progs.on_recording_free },
		{ "span_enter", s->skel->progs.on_span_enter },
		{ "span_exit", s->skel->progs.on_span_exit },
		{ "event", s->skel->progs.on_event },
		{ "attached", s->skel->progs.on_attached },
	};

	memcpy(v, all, sizeof(all));
	return sizeof(all) / sizeof(all[0]);
}

struct object {
	char path[4096];		/* to open it by */
	const char *mpath;		/* as the maps name it */
	uint64_t inode;
	struct rec_probe_names names;
};

/* The path to open for a mapping: its own if it is the same file here, else via /proc. */
static void object_path(char *buf, size_t len, pid_t pid, const struct rec_mapping *m)
{
	struct stat st;

	if (stat(m->path, &st) == 0 && st.st_ino == m->inode)
		snprintf(buf, len, "%s", m->path);
	else
		snprintf(buf, len, "/proc/%d/root%s", (int)pid, m->path);
}

static int object_known(const struct target *t, const struct rec_mapping *m)
{
	for (size_t i = 0; i < t->nobjs; i++)
		if (t->objs[i].inode == m->inode && strcmp(t->objs[i].path, m->path) == 0)
			return 1;
	return 0;
}

static int remember_object(struct target *t, const struct rec_mapping *m)
{
	struct object_id *v = realloc(t->objs, (t->nobjs + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	t->objs = v;
	v[t->nobjs].inode = m->inode;
	v[t->nobjs].path = strdup(m->path);
	if (!v[t->nobjs].path)
		return -ENOMEM;
	t->nobjs++;
	return 0;
}

/* The executable objects in maps that have recorder probes and are not attached yet. */
static int find_objects(struct target *t, const struct rec_maps *maps, struct object **objsp,
			size_t *nobjs)
{
	struct object *objs = NULL;
	size_t n = 0;
	int err;

	for (size_t i = 0; i < maps->n; i++) {
		const struct rec_mapping *m = &maps->v[i];
		struct object *o;

		if (!m->exec || object_known(t, m))
			continue;
		/* Seen now, probes or not: scan each file once. */
		err = remember_object(t, m);
		if (err)
			goto fail;
		o = realloc(objs, (n + 1) * sizeof(*o));
		if (!o) {
			err = -ENOMEM;
			goto fail;
		}
		objs = o;
		object_path(objs[n].path, sizeof(objs[n].path), t->proc.pid, m);
		objs[n].inode = m->inode;
		objs[n].mpath = m->path;
		/* Not ELF, unreadable, or no notes: not ours to trace. */
		if (rec_usdt__scan(objs[n].path, "recorder", &objs[n].names) || !objs[n].names.sites)
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

static int add_link(int **links, size_t *n, int fd)
{
	int *v = realloc(*links, (*n + 1) * sizeof(*v));

	if (!v) {
		close(fd);
		return -ENOMEM;
	}
	*links = v;
	v[(*n)++] = fd;
	return 0;
}

/*
 * One link for every site of provider "recorder", probe name, in the file at
 * path; the sites attached go into *nsites. Sites with an argument spec we do
 * not support are left out and reported through opts.on_skipped.
 */
static int attach_probe(struct rec_session *s, int **links, size_t *nlinks,
			struct bpf_program *prog, const char *path, const char *name, pid_t pid,
			unsigned int *nsites)
{
	struct rec_usdt_multi_skipped skipped;
	int fd;

	*nsites = 0;
	fd = rec_usdt_multi__attach(&s->specs, bpf_program__fd(prog), path, "recorder", name, pid,
				    nsites, &skipped);
	if (skipped.n && s->opts.on_skipped)
		s->opts.on_skipped(pid, path, name, skipped.n, skipped.spec, s->opts.ctx);
	if (fd == -ENOENT && skipped.n)
		return 0;
	if (fd < 0)
		return fd;
	return add_link(links, nlinks, fd);
}

/* Whether a library is attached for every process already (a --binary process's). */
static int bin_lib_known(const struct rec_session *s, const struct object *o)
{
	for (size_t i = 0; i < s->nbin_libs; i++)
		if (s->bin_libs[i].inode == o->inode && strcmp(s->bin_libs[i].path, o->mpath) == 0)
			return 1;
	return 0;
}

/*
 * Attaches every probe of the objects in maps not attached yet, "attached" last.
 * Counts sites and objects into info. A --binary process's libraries are
 * attached for every process that maps them, once per session, like the
 * executable: a child it forks may run their sites and exit before anyone
 * could attach them for its pid (BPF ignores processes of other executables).
 */
static int attach_objects(struct rec_session *s, struct target *t, const struct rec_maps *maps,
			  struct rec_attach_info *info)
{
	struct probe_prog progs[8];
	size_t nprogs = probe_progs(s, progs), nobjs = 0;
	struct object *objs = NULL;
	pid_t pid = t->adopted ? 0 : t->proc.pid;
	int **links = t->adopted ? &s->bin_links : &t->links;
	size_t *nlinks = t->adopted ? &s->nbin_links : &t->nlinks;
	int err;

	err = find_objects(t, maps, &objs, &nobjs);
	if (err)
		return err;
	for (size_t o = 0; t->adopted && o < nobjs; o++) {
		struct object_id *v;

		if (bin_lib_known(s, &objs[o])) {
			objs[o--] = objs[--nobjs];
			continue;
		}
		v = realloc(s->bin_libs, (s->nbin_libs + 1) * sizeof(*v));
		if (!v) {
			err = -ENOMEM;
			goto out;
		}
		s->bin_libs = v;
		v[s->nbin_libs].inode = objs[o].inode;
		v[s->nbin_libs].path = strdup(objs[o].mpath);
		if (!v[s->nbin_libs].path) {
			err = -ENOMEM;
			goto out;
		}
		s->nbin_libs++;
	}
	for (size_t p = 0; p < nprogs; p++) {
		for (size_t o = 0; o < nobjs; o++) {
			for (size_t i = 0; i < objs[o].names.n; i++) {
				unsigned int nsites;

				if (strcmp(objs[o].names.v[i].name, progs[p].name) != 0)
					continue;
				err = attach_probe(s, links, nlinks, progs[p].prog, objs[o].path,
						   progs[p].name, pid, &nsites);
				if (err)
					goto out;
				info->sites += nsites;
			}
		}
	}
	info->objects += nobjs;
out:
	free(objs);
	return err;
}

/* Stops reporting tgid's exit and forgets its count of recordings (struct rec_pstat). */
static void untrace(struct rec_session *s, __u32 tgid)
{
	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.traced), &tgid);
	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.released), &tgid);
}

static void target_discard(struct rec_session *s, struct target *t)
{
	__u32 tgid = t->proc.pid;

	untrace(s, tgid);
	rec_reaper__close_links(t->links, t->nlinks);
	free(t->links);
	if (t->pidfd >= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
		close(t->pidfd);
	}
	/* The socket and the lock are removed only if they are ours. */
	if (t->listen_fd >= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->listen_fd, NULL);
		close(t->listen_fd);
		unlink(t->sock_path);
	}
	rec_control__unlock(t->lock_fd, t->lock_path);
	target_free_objs(t);
	rec_proc__fini(&t->proc);
	rec_target__close(&t->target);
	free(t);
}

/*
 * Opens pid as a target (t->target) and gives its model a reader of it.
 * Returns 0 or a negative errno (-ESRCH if it is gone), t usable either way.
 */
static int target_init(struct target *t, pid_t pid)
{
	struct rec_reader reader;
	int err;

	err = rec_target__open(&t->target, pid);
	rec_target__reader(&t->target, &reader);
	rec_proc__init(&t->proc, pid, &reader);
	t->proc.ns_pid = t->target.ns_pid;
	t->proc.uid = t->target.uid;
	return err;
}

/* A process to trace: its model, and its exit reported by the BPF side. */
static int target_open(struct rec_session *s, pid_t pid, struct target **tp)
{
	struct rec_pstat zero = { 0 };
	__u32 tgid = pid;
	struct target *t;
	int err;

	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->pidfd = t->listen_fd = t->lock_fd = -1;
	err = target_init(t, pid);
	t->proc.limits = s->opts.limits;
	/*
	 * Before the probes: the exit of a process that dies right away is seen.
	 * An adopted process has its entry (and its count of recordings) already.
	 */
	if (!err && bpf_map_update_elem(bpf_map__fd(s->skel->maps.traced), &tgid, &zero,
					BPF_NOEXIST) && errno != EEXIST)
		err = -errno;
	if (err) {
		rec_proc__fini(&t->proc);
		rec_target__close(&t->target);
		free(t);
		return err;
	}
	*tp = t;
	return 0;
}

/*
 * Starts watching t's exit and serving its control socket, once its lock is
 * ours: one recorder-attach per process. -EBUSY sets *holder (see
 * rec_control__lock). A process that is gone already (reaped) has neither: the
 * loop ends it once its records are in.
 */
static int target_serve(struct rec_session *s, struct target *t, pid_t *holder)
{
	struct target **targets;
	int err;

	targets = realloc(s->targets, (s->ntargets + 1) * sizeof(*targets));
	if (!targets)
		return -ENOMEM;
	s->targets = targets;
	t->pidfd = syscall(SYS_pidfd_open, t->proc.pid, 0);
	if (t->pidfd < 0 && errno == ESRCH && t->adopted) {
		t->proc.alive = 0;
		s->targets[s->ntargets++] = t;
		return 0;
	}
	if (t->pidfd < 0)
		return -errno;
	err = rec_control__path(t->sock_path, sizeof(t->sock_path), s->opts.sock_dir,
				t->proc.pid);
	if (err)
		return err;
	t->lock_fd = rec_control__lock(t->sock_path, t->lock_path, sizeof(t->lock_path), holder);
	if (t->lock_fd < 0)
		return t->lock_fd;
	t->listen_fd = rec_control__listen(t->sock_path, t->proc.uid);
	if (t->listen_fd < 0)
		return t->listen_fd;
	err = session__watch_add(s, t->pidfd, &t->w_pidfd, W_PIDFD, t);
	if (!err)
		err = session__watch_add(s, t->listen_fd, &t->w_listen, W_LISTEN, t);
	if (err)
		return err;
	s->targets[s->ntargets++] = t;
	return 0;
}

int rec_session__attach(struct rec_session *s, pid_t pid, struct rec_attach_info *info)
{
	struct target *t;
	int err;

	memset(info, 0, sizeof(*info));
	err = target_open(s, pid, &t);
	if (err)
		return err;
	err = attach_objects(s, t, &t->target.maps, info);
	if (!err && info->objects == 0)
		err = -ENOENT;
	if (!err)
		err = target_serve(s, t, &info->lock_holder);
	/* Once t is served: the records the seeding drains must find their target. */
	if (!err)
		session__seed_stacks(s, t);
	info->uid = t->proc.uid;
	snprintf(info->sock_path, sizeof(info->sock_path), "%s", t->sock_path);
	snprintf(info->lock_path, sizeof(info->lock_path), "%s", t->lock_path);
	if (err) {
		target_discard(s, t);
		return err;
	}
	return 0;
}

/* The kernel's encoding of a device number (major << 20 | minor), as BPF reads s_dev. */
static uint64_t kernel_dev(dev_t dev)
{
	return ((uint64_t)major(dev) << 20) | minor(dev);
}

/* The --binary file pid runs, or NULL. */
static const struct object_id *binary_of(struct rec_session *s, pid_t pid)
{
	char exe[64];
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
static const struct object_id *binary_of_hello(struct rec_session *s,
					       const struct rec_hello_rec *hello)
{
	for (size_t i = 0; i < s->nbins; i++)
		if (s->bins[i].inode == hello->exe_ino && kernel_dev(s->bin_devs[i]) == hello->exe_dev)
			return &s->bins[i];
	return NULL;
}

/* Whether a process whose executable is loaded at start_code was forked by parent, not exec'd. */
static int forked_from(const struct target *parent, const struct object_id *bin,
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
static int complete_maps(struct rec_session *s, const struct object_id *bin,
			 const struct rec_hello_rec *hello, struct target *t)
{
	struct target *parent = session__target_of(s, (pid_t)hello->ppid);

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
 * A process running a --binary file: its probes in that file are attached for
 * every process already, so only its libraries are left to the rescans. It is
 * adopted even if it is gone: a child that ran a few sites and exited before
 * its hello was read still gets its black box.
 */
struct target *session__adopt(struct rec_session *s, pid_t pid, const struct rec_hello_rec *hello)
{
	const struct object_id *bin;
	struct rec_mapping m = {};
	struct target *t;
	pid_t holder;
	int err;

	/* Asked once per process: its records keep coming, the answer won't change. */
	if (rec_u64map__get(&s->rejected, (uint64_t)pid + 1))
		return NULL;
	bin = hello ? binary_of_hello(s, hello) : binary_of(s, pid);
	if (!bin)
		goto reject;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto reject;
	t->pidfd = t->listen_fd = t->lock_fd = -1;
	t->adopted = 1;
	err = target_init(t, pid);
	if (err == -ESRCH && hello)
		err = 0;
	/* Gone, or a zombie: no maps, no memory left to read. */
	if (!err && !t->target.maps.n)
		t->proc.alive = 0;
	if (!err && hello)
		err = complete_maps(s, bin, hello, t);
	if (err) {
		rec_proc__fini(&t->proc);
		rec_target__close(&t->target);
		free(t);
		goto reject;
	}
	m.inode = bin->inode;
	for (size_t i = 0; i < t->target.maps.n; i++)
		if (t->target.maps.v[i].inode == bin->inode && t->target.maps.v[i].exec)
			m.path = t->target.maps.v[i].path;
	if ((m.path && remember_object(t, &m)) || target_serve(s, t, &holder)) {
		target_discard(s, t);
		goto reject;
	}
	t->seed_pending = t->proc.alive;
	if (s->opts.on_adopt)
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
	struct probe_prog progs[8];
	size_t nprogs = probe_progs(s, progs);
	struct rec_probe_names names;
	struct rec_binary_key bk;
	char real[4096];
	struct stat st;
	__u8 one = 1;
	DIR *proc;
	int err;

	memset(info, 0, sizeof(*info));
	if (!realpath(path, real) || stat(real, &st))
		return -errno;
	if (s->nbins == REC_MAX_BINARIES)
		return -E2BIG;
	err = rec_usdt__scan(real, "recorder", &names);
	if (err)
		return err;
	if (!names.sites)
		return -ENOENT;
	/* Before the probes: BPF adopts only the processes of these files. */
	bk.ino = st.st_ino;
	bk.dev = kernel_dev(st.st_dev);
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.binaries), &bk, &one, BPF_ANY))
		return -errno;
	s->bins[s->nbins].inode = st.st_ino;
	s->bins[s->nbins].path = strdup(real);
	if (!s->bins[s->nbins].path)
		return -ENOMEM;
	s->bin_devs[s->nbins++] = st.st_dev;
	/* No pid: every process that maps the file, now or later, through fork and exec. */
	for (size_t p = 0; p < nprogs; p++) {
		for (size_t i = 0; i < names.n; i++) {
			unsigned int nsites;

			if (strcmp(names.v[i].name, progs[p].name) != 0)
				continue;
			err = attach_probe(s, &s->bin_links, &s->nbin_links, progs[p].prog, real,
					   progs[p].name, 0, &nsites);
			if (err)
				return err;
			info->sites += nsites;
		}
	}
	info->objects = 1;
	/* Those running it already; later ones are adopted by their first record. */
	proc = opendir("/proc");
	for (struct dirent *de; proc && (de = readdir(proc));) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		struct target *t;

		if (pid > 0 && !session__target_of(s, pid) && (t = session__adopt(s, pid, NULL))) {
			/* Not inside the ring callback: seed it now. */
			t->seed_pending = 0;
			session__seed_stacks(s, t);
		}
	}
	if (proc)
		closedir(proc);
	return 0;
}

/*
 * Libraries loaded after the attach (dlopen) have probes too: look for new
 * objects and attach them. The maps snapshot grows, so callsites of a library
 * that was unloaded can still be read from its file.
 */
static void rescan(struct rec_session *s, struct target *t)
{
	struct rec_attach_info info = {};
	struct rec_maps maps;

	if (rec_maps__read(&maps, t->proc.pid))
		return;
	attach_objects(s, t, &maps, &info);
	rec_target__add_maps(&t->target, &maps);
	rec_maps__free(&maps);
}

/* Writes t's black box into the dump directory; the path goes into path. */
int session__write_dump(struct rec_session *s, struct target *t, char *path, size_t len)
{
	struct rec_dump_counters counters;

	if (!s->opts.dump_dir)
		return -ENOENT;
	memcpy(counters.v, t->proc.counters, sizeof(counters.v));
	return rec_dump__write_file(s->opts.dump_dir, &t->proc, &counters, path, len);
}

static void target_done(struct rec_session *s, struct target *t, struct rec_exit_info *info)
{
	__u32 tgid = t->proc.pid;

	/* Gone, or about to be let go: its stacks are the ones it died in, not live ones. */
	t->proc.alive = 0;
	/* Everything the process emitted before it died is in the ring now. */
	session__refresh(s, t);
	rec_proc__died(&t->proc);
	untrace(s, tgid);
	if (info) {
		info->pid = t->proc.pid;
		rec_names__end(t->proc.end, t->proc.end_code, t->proc.end_core, info->how,
			       sizeof(info->how));
		info->dump_err = session__write_dump(s, t, info->dump_path,
						     sizeof(info->dump_path));
	}
	session__forget_recordings(s, tgid);
	session__clients_target_done(s, t);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->listen_fd, NULL);
	close(t->listen_fd);
	t->listen_fd = -1;
	unlink(t->sock_path);
	rec_control__unlock(t->lock_fd, t->lock_path);
	t->lock_fd = -1;
	t->done = 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* How often the targets' maps are looked at for newly loaded libraries. */
#define RESCAN_MS 200

/* t has ended: drain and report it, then let its links go (detaching takes a while). */
static void end_target(struct rec_session *s, struct target *t,
		       void (*on_exit)(const struct rec_exit_info *info, void *ctx), void *ctx)
{
	struct rec_exit_info info;

	target_done(s, t, &info);
	if (on_exit)
		on_exit(&info, ctx);
	rec_reaper__close_links(t->links, t->nlinks);
	t->nlinks = 0;
}

/*
 * After a batch of ring records: the processes it adopted get their stacks
 * seeded now (never inside the ring callback, which must not consume the ring
 * again), and those that were gone already when adopted are ended.
 */
static void settle_adopted(struct rec_session *s,
			   void (*on_exit)(const struct rec_exit_info *info, void *ctx), void *ctx)
{
	for (size_t i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];

		if (t->done)
			continue;
		if (t->seed_pending) {
			t->seed_pending = 0;
			session__seed_stacks(s, t);
		}
		if (t->pidfd < 0)
			end_target(s, t, on_exit, ctx);
	}
}

int rec_session__run(struct rec_session *s,
		     void (*on_exit)(const struct rec_exit_info *info, void *ctx), void *ctx)
{
	struct epoll_event evs[16];
	int64_t last_scan = now_ms();

	for (;;) {
		size_t live = 0;
		int n;

		for (size_t i = 0; i < s->ntargets; i++)
			live += !s->targets[i]->done;
		/*
		 * With --binary, processes come and go until we are stopped. The
		 * clients still open get what was queued for them (each within its
		 * deadline) before we go.
		 */
		if (!live && !s->nbins && !s->nclients)
			return 0;
		n = epoll_wait(s->epfd, evs, 16, s->opts.drain_ms);
		if (n < 0 && errno != EINTR)
			return -errno;
		rec_ring__consume(s->rb);
		settle_adopted(s, on_exit, ctx);
		if (now_ms() - last_scan >= RESCAN_MS) {
			for (size_t i = 0; i < s->ntargets; i++)
				if (!s->targets[i]->done)
					rescan(s, s->targets[i]);
			last_scan = now_ms();
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
				end_target(s, w->ptr, on_exit, ctx);
				break;
			case W_LISTEN:
				session__accept_clients(s, w->ptr);
				break;
			case W_CLIENT:
				session__client_ready(s, w->ptr, evs[i].events);
				break;
			}
		}
		session__clients_tick(s);
	}
}

void rec_session__free(struct rec_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ntargets; i++)
		if (!s->targets[i]->done)
			target_done(s, s->targets[i], NULL);
	session__clients_free(s);
	for (size_t i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];

		rec_reaper__close_links(t->links, t->nlinks);
		target_free_objs(t);
		if (t->pidfd >= 0)
			close(t->pidfd);
		free(t->links);
		rec_proc__fini(&t->proc);
		rec_target__close(&t->target);
		free(t);
	}
	free(s->targets);
	rec_reaper__close_links(s->bin_links, s->nbin_links);
	free(s->bin_links);
	for (size_t i = 0; i < s->nbin_libs; i++)
		free(s->bin_libs[i].path);
	free(s->bin_libs);
	for (size_t i = 0; i < s->nbins; i++)
		free(s->bins[i].path);
	rec_u64map__free(&s->rejected);
	rec_usdt_multi__fini(&s->specs);
	rec_ring__free(s->rb);
	bpf_link__destroy(s->iter_link);
	bpf_link__destroy(s->exit_link);
	recorder_bpf__destroy(s->skel);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->sigfd >= 0)
		close(s->sigfd);
	free(s);
}
