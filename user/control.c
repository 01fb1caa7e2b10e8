// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"

int rec_control__path(char *buf, size_t len, const char *dir, pid_t pid)
{
	int n = snprintf(buf, len, "%s/%d.sock", dir ? dir : REC_CONTROL_DIR, (int)pid);

	return n < 0 || (size_t)n >= len || (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path)
		       ? -ENAMETOOLONG
		       : 0;
}

static int make_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (stat(dir, &st))
		return -errno;
	/* The socket exposes the target's data: only root may reach it. */
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		if (chown(dir, geteuid(), getegid()) || chmod(dir, 0700))
			return -errno;
	return 0;
}

int rec_control__listen(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, err;

	err = make_dir(path);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	unlink(path);
	old = umask(077);
	err = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (err || listen(fd, 16)) {
		err = -errno;
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

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

int rec_control__send(int fd, const struct rec_query *q)
{
	struct rec_request req = { .magic = REC_REQUEST_MAGIC, .size = sizeof(req), .q = *q };

	return write_all(fd, &req, sizeof(req));
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
	if (req.magic != REC_REQUEST_MAGIC || req.size != sizeof(req))
		return -EPROTO;
	*q = req.q;
	q->subject[sizeof(q->subject) - 1] = '\0';
	return 0;
}
