// SPDX-License-Identifier: MIT
/*
 * The clients of the control sockets: accepting one, answering its query, and
 * the followers that keep receiving a target's events until they hang up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "control.h"
#include "query.h"
#include "session_int.h"

void session__flush_followers(struct rec_session *s)
{
	for (struct client *c = s->followers; c; c = c->next)
		fflush(c->out);
}

void session__follow_event(struct rec_session *s, struct target *t, const struct rec_rstate *rs,
			   const struct rec_decoded *d)
{
	for (struct client *c = s->followers; c; c = c->next)
		if (c->t == t && rec_query__match(&c->q, rs))
			rec_query__event(c->out, &t->proc, rs, d, &c->q);
}

void session__client_close(struct rec_session *s, struct client *c)
{
	struct client **pp;

	for (pp = &s->followers; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (c->out)
		fclose(c->out);
	else
		close(c->fd);
	free(c);
}

void session__serve_client(struct rec_session *s, struct target *t)
{
	struct timeval tv = { .tv_sec = 2 };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct client *c;
	int fd, err;

	fd = accept4(t->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->t = t;
	/* Root only, whatever the socket's mode says. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.uid != 0) {
		dprintf(fd, "1recorder-attach: only root may read pid %d\n", (int)t->proc.pid);
		goto done;
	}
	err = rec_control__recv(fd, &c->q);
	if (err) {
		dprintf(fd, "1recorder-attach: malformed request: %s\n", strerror(-err));
		goto done;
	}
	c->out = fdopen(fd, "w");
	if (!c->out)
		goto done;
	session__refresh(s, t);
	if (c->q.flags & REC_Q_DUMP) {
		char path[4096];

		err = session__write_dump(s, t, path, sizeof(path));
		if (err)
			fprintf(c->out, "1recorder-attach: failed to write the dump of pid %d into "
					"%s: %s\n", (int)t->proc.pid,
				s->opts.dump_dir ? s->opts.dump_dir : "(no --dump-dir)",
				strerror(-err));
		else
			fprintf(c->out, "0%s\n", path);
		goto done;
	}
	fputc('0', c->out);
	rec_query__answer(c->out, &t->proc, &c->q);
	if (fflush(c->out) == 0 && (c->q.flags & REC_Q_FOLLOW) &&
	    !(c->q.flags & (REC_Q_LIST | REC_Q_STACKS)) &&
	    session__watch_add(s, fd, &c->w, W_CLIENT, c) == 0) {
		c->next = s->followers;
		s->followers = c;
		return;
	}
done:
	if (c->out)
		fclose(c->out);
	else
		close(fd);
	free(c);
}
