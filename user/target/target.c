// SPDX-License-Identifier: MIT
/* A traced process seen from outside, and reading its memory (target.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "model/proc.h"
#include "target/target.h"

/* process_vm_readv fails whole when a range crosses into an unmapped page. */
#define TARGET_PAGE_SIZE 4096

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

int rec_target__open(struct rec_target *t, pid_t pid)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->ns_pid = ns_pid_of(pid);
	t->uid = owner_of(pid);
	return rec_maps__read(&t->maps, pid);
}

void rec_target__close(struct rec_target *t)
{
	rec_maps__free(&t->maps);
}

int rec_target__add_maps(struct rec_target *t, struct rec_maps *maps)
{
	for (size_t i = 0; i < maps->n; i++) {
		struct rec_mapping *m = &maps->v[i], *v;

		if (rec_maps__find(&t->maps, m->start))
			continue;
		v = realloc(t->maps.v, (t->maps.n + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->maps.v = v;
		v[t->maps.n++] = *m;
		m->path = NULL;
	}
	return 0;
}

static ssize_t read_live(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	/* Page by page: a read that crosses into an unmapped page fails whole. */
	while (got < len) {
		size_t chunk = TARGET_PAGE_SIZE - ((addr + got) & (TARGET_PAGE_SIZE - 1));
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

/* struct rec_reader's read: live first (if from allows), then the file mapped there. */
static int target_read(void *ctx, uint64_t addr, char *buf, size_t len, unsigned int from,
		       rec_take_fn take, void *out)
{
	struct rec_target *t = ctx;
	ssize_t n = from & REC_READ_LIVE ? read_live(t->pid, addr, buf, len) : -1;

	if (n > 0 && take(buf, (size_t)n, out) == 0)
		return 0;
	if (!(from & REC_READ_FILE))
		return -EFAULT;
	n = read_file(&t->maps, addr, buf, len);
	return n > 0 && take(buf, (size_t)n, out) == 0 ? 0 : -EFAULT;
}

int rec_target__write_u32(pid_t pid, const struct rec_maps *maps, uint64_t inode, uint64_t off,
			  uint32_t value)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct rec_mapping *m = &maps->v[i];
		struct iovec local = { .iov_base = &value, .iov_len = sizeof(value) };
		struct iovec remote;

		if (m->inode != inode || !m->path || off < m->offset ||
		    off + sizeof(value) > m->offset + (m->end - m->start))
			continue;
		remote.iov_base = (void *)(uintptr_t)(m->start + (off - m->offset));
		remote.iov_len = sizeof(value);
		/* A read-only mapping of the file (EFAULT): its writable one may come next. */
		if (process_vm_writev(pid, &local, 1, &remote, 1, 0) == sizeof(value))
			return 0;
		if (errno != EFAULT)
			return -errno;
	}
	return -ENOENT;
}

void rec_target__reader(struct rec_target *t, struct rec_reader *r)
{
	r->read = target_read;
	r->ctx = t;
}
