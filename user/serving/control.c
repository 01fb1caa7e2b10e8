// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "serving/control.h"

int rec_control__path(char *buf, size_t len, const char *dir, pid_t pid)
{
	int n = snprintf(buf, len, "%s/%d.sock", dir ? dir : REC_CONTROL_DIR, (int)pid);

	return n < 0 || (size_t)n >= len || (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path)
		       ? -ENAMETOOLONG
		       : 0;
}

int rec_control__prepare_dir(const char *dir, char *why, size_t len, int *searchable)
{
	struct stat st;
	int fd, err;

	dir = dir ? dir : REC_CONTROL_DIR;
	*searchable = 1;
	why[0] = '\0';
	if (mkdir(dir, 0711) == 0) {
		/* Ours: its mode is ours to set, whatever the umask took away. */
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		err = fchmod(fd, 0711) ? -errno : 0;
		close(fd);
		return err;
	}
	if (errno != EEXIST)
		return -errno;
	/* Not ours: looked at, never changed. */
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len, "it is not a directory");
		return -EPERM;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, len, "it belongs to uid %u, not to root", (unsigned int)st.st_uid);
		return -EPERM;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(why, len, "its mode %04o lets %s write to it without the sticky bit",
			 (unsigned int)(st.st_mode & 07777),
			 st.st_mode & S_IWOTH ? "others" : "its group");
		return -EPERM;
	}
	*searchable = (st.st_mode & S_IXOTH) != 0;
	return 0;
}

/* DIR/PID.sock -> DIR/PID<suffix> */
static int path_beside(const char *sock_path, const char *suffix, char *buf, size_t len)
{
	size_t n = strlen(sock_path);

	if (n < 5 || strcmp(sock_path + n - 5, ".sock") != 0)
		return -EINVAL;
	if (snprintf(buf, len, "%.*s%s", (int)(n - 5), sock_path, suffix) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* A peer's file: its pid, then its --binary (an empty line for -p). Returns 0 or -errno. */
static int write_peer(int fd, const char *binary)
{
	char buf[PATH_MAX + 32];
	int n = snprintf(buf, sizeof(buf), "%d\n%s\n", (int)getpid(), binary ? binary : "");

	if (n < 0 || (size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	if (ftruncate(fd, 0) || pwrite(fd, buf, n, 0) != n)
		return -errno;
	return 0;
}

/* What write_peer wrote into fd (pid 0 if it cannot be read). */
static void read_peer(int fd, struct rec_control_peer *peer)
{
	char buf[PATH_MAX + 32], *nl;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long v;

	memset(peer, 0, sizeof(*peer));
	if (n <= 0)
		return;
	buf[n] = '\0';
	v = strtol(buf, &nl, 10);
	peer->pid = v > 0 && v < (1L << 22) ? (pid_t)v : 0;
	if (*nl != '\n')
		return;
	snprintf(peer->binary, sizeof(peer->binary), "%s", nl + 1);
	nl = strchr(peer->binary, '\n');
	if (nl)
		*nl = '\0';
}

int rec_control__lock(const char *sock_path, const char *binary, char *lock_path, size_t len,
		      struct rec_control_peer *holder)
{
	int err;

	memset(holder, 0, sizeof(*holder));
	err = path_beside(sock_path, ".lock", lock_path, len);
	if (err)
		return err;
	for (int tries = 0; tries < 8; tries++) {
		struct stat a, b;
		int fd;

		fd = open(lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			err = errno == EWOULDBLOCK ? -EBUSY : -errno;
			if (err == -EBUSY)
				read_peer(fd, holder);
			close(fd);
			return err;
		}
		/*
		 * Its last holder removes the file before letting go: a lock taken
		 * on a file that is no longer at the path counts for nothing.
		 */
		if (fstat(fd, &a) || stat(lock_path, &b) || a.st_ino != b.st_ino ||
		    a.st_dev != b.st_dev) {
			close(fd);
			continue;
		}
		err = write_peer(fd, binary);
		if (err) {
			unlink(lock_path);
			close(fd);
			return err;
		}
		return fd;
	}
	return -EAGAIN;
}

int rec_control__note_wait(const char *sock_path, const char *binary)
{
	char path[PATH_MAX];
	int fd, err;

	err = path_beside(sock_path, ".wait", path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_peer(fd, binary);
	close(fd);
	return err;
}

int rec_control__waiter(const char *sock_path, struct rec_control_peer *waiter)
{
	char path[PATH_MAX];
	int fd, err;

	memset(waiter, 0, sizeof(*waiter));
	err = path_beside(sock_path, ".wait", path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	read_peer(fd, waiter);
	close(fd);
	if (!waiter->pid || (kill(waiter->pid, 0) && errno == ESRCH))
		return -ENOENT;
	return 0;
}

void rec_control__unnote_wait(const char *sock_path, bool anyone)
{
	struct rec_control_peer w;
	char path[PATH_MAX];

	if (path_beside(sock_path, ".wait", path, sizeof(path)))
		return;
	if (!anyone && (rec_control__waiter(sock_path, &w) || w.pid != getpid()))
		return;
	unlink(path);
}

void rec_control__unlock(int fd, const char *lock_path)
{
	if (fd < 0)
		return;
	unlink(lock_path);
	close(fd);
}

/* 1 if a server accepts connections at path, 0 if none does, or -errno if it can't tell. */
static int socket_is_served(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, err;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	err = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) ? errno : 0;
	close(fd);
	/* EAGAIN: its backlog is full, so someone listens. */
	if (err == 0 || err == EAGAIN)
		return 1;
	if (err == ECONNREFUSED || err == ENOENT)
		return 0;
	return -err;
}

int rec_control__listen(const char *path, uid_t owner)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, err;

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		err = socket_is_served(path);
		if (err)
			return err > 0 ? -EADDRINUSE : err;
		/* Left by a server that is gone. */
		if (unlink(path) && errno != ENOENT)
			return -errno;
	} else if (errno != ENOENT) {
		return -errno;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	old = umask(0177);
	err = bind(fd, (struct sockaddr *)&addr, sizeof(addr)) ? -errno : 0;
	umask(old);
	if (err) {
		close(fd);
		return err;
	}
	/* The owner may connect; SO_PEERCRED decides all the same. */
	if ((owner != (uid_t)-1 && owner != geteuid() &&
	     fchownat(AT_FDCWD, path, owner, (gid_t)-1, AT_SYMLINK_NOFOLLOW)) ||
	    listen(fd, 64)) {
		err = -errno;
		unlink(path);
		close(fd);
		return err;
	}
	return fd;
}

int rec_control__connect(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, err;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		err = errno == ECONNREFUSED ? -ENOENT : -errno;
		close(fd);
		return err;
	}
	return fd;
}

int rec_control__send(int fd, const struct rec_query *q)
{
	struct rec_request req = { .magic = REC_REQUEST_MAGIC, .size = sizeof(req), .q = *q };
	const char *p = (const char *)&req;
	size_t len = sizeof(req);

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

int rec_control__parse(const void *buf, size_t len, struct rec_query *q)
{
	struct rec_request req;

	if (len != sizeof(req))
		return -EPROTO;
	memcpy(&req, buf, sizeof(req));
	if (req.magic != REC_REQUEST_MAGIC || req.size != sizeof(req))
		return -EPROTO;
	*q = req.q;
	q->subject[sizeof(q->subject) - 1] = '\0';
	q->target[sizeof(q->target) - 1] = '\0';
	q->rule[sizeof(q->rule) - 1] = '\0';
	/* A --where the parser could not have made is no request of recorder-tail's. */
	if (q->nwhere > REC_QUERY_WHERE_MAX)
		return -EPROTO;
	for (uint32_t i = 0; i < q->nwhere; i++)
		if (rec_cond__check(&q->where[i]))
			return -EPROTO;
	return 0;
}

int rec_control__recv(int fd, struct rec_query *q)
{
	struct rec_request req;
	size_t got = 0;

	while (got < sizeof(req)) {
		ssize_t n = read(fd, (char *)&req + got, sizeof(req) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPROTO;
		got += n;
	}
	return rec_control__parse(&req, sizeof(req), q);
}
