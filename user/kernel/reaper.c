// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "kernel/reaper.h"

/*
 * Each uprobe detach waits for a grace period (about 100 ms here), one site after
 * the other, so a few hundred sites take seconds. A forked child keeps the last
 * references and pays for that; our own closes then return at once.
 */
struct fd_closer {
	int *fds;
	size_t n;
	size_t next; /* atomic */
};

static void *close_fds(void *arg)
{
	struct fd_closer *c = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED)) < c->n)
		close(c->fds[i]);
	return NULL;
}

/*
 * In the reaper: closes every file it inherited from many threads at once. A
 * uprobe site is held by a perf event and its bpf_link; whichever reference goes
 * last does the slow part, and closed together those waits overlap.
 */
static void close_all_fds(void)
{
	struct fd_closer c = {};
	pthread_t tids[32];
	size_t started = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");

	while (d && (de = readdir(d))) {
		int fd = atoi(de->d_name);

		if (fd <= 2 || fd == dirfd(d))
			continue;
		if (c.n == cap) {
			int *v = realloc(c.fds, (cap = cap ? cap * 2 : 256) * sizeof(*v));

			if (!v)
				break;
			c.fds = v;
		}
		c.fds[c.n++] = fd;
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < 32 && i < c.n; i++)
		if (pthread_create(&tids[started], NULL, close_fds, &c) == 0)
			started++;
	close_fds(&c);
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	free(c.fds);
}

void rec_reaper__close_links(int *links, size_t n)
{
	pid_t pid;

	if (!n)
		return;
	pid = fork();
	if (pid == 0) {
		close_all_fds();
		_exit(0);
	}
	for (size_t i = 0; i < n; i++)
		close(links[i]);
}
