/* SPDX-License-Identifier: MIT */
/*
 * The control socket between recorder-attach and recorder-tail: a unix stream
 * socket per traced process, /run/recorder/PID.sock, in a directory only root
 * may enter. The client sends one struct rec_request; the server answers with a
 * status byte ('0' ok, '1' error) and then text: the output, or the error.
 */
#ifndef REC_CONTROL_H
#define REC_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

#include "query.h"

#define REC_CONTROL_DIR "/run/recorder"
#define REC_REQUEST_MAGIC 0x31515152u	/* "RQQ1" */

struct rec_request {
	uint32_t magic;
	uint32_t size;		/* sizeof(struct rec_request) */
	struct rec_query q;
};

/* The socket path for pid under dir (NULL = REC_CONTROL_DIR). Returns 0 or -ENAMETOOLONG. */
int rec_control__path(char *buf, size_t len, const char *dir, pid_t pid);
/* Creates dir (0700) and a listening socket at path (0600). Returns the fd or -errno. */
int rec_control__listen(const char *path);
/* Connects to path. Returns the fd or -errno (-ENOENT: nobody serves it). */
int rec_control__connect(const char *path);
/* Sends q. Returns 0 or -errno. */
int rec_control__send(int fd, const struct rec_query *q);
/* Reads and validates a request. Returns 0, -EPROTO if malformed, or -errno. */
int rec_control__recv(int fd, struct rec_query *q);

#endif /* REC_CONTROL_H */
