/* SPDX-License-Identifier: MIT */
/*
 * The control socket between recorder-attach and recorder-tail: a unix stream
 * socket per traced process, /run/recorder/PID.sock, beside the lock PID.lock
 * that the recorder-attach serving it holds (flock) for the process's life. The
 * client sends one struct rec_request; the server answers with a status byte
 * ('0' ok, '1' error) and then text: the output, or the error.
 *
 * Who may read: root and the process's owner. The socket file belongs to the
 * owner with mode 0600 so that the owner can connect; the server checks every
 * client's SO_PEERCRED all the same, and that check is the one that counts.
 */
#ifndef REC_CONTROL_H
#define REC_CONTROL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "serving/query.h"

#define REC_CONTROL_DIR "/run/recorder"
#define REC_REQUEST_MAGIC 0x31515152u /* "RQQ1" */

struct rec_request {
	uint32_t magic;
	uint32_t size; /* sizeof(struct rec_request) */
	struct rec_query q;
};

/* The socket path for pid under dir (NULL = REC_CONTROL_DIR). Returns 0 or -ENAMETOOLONG. */
int rec_control__path(char *buf, size_t len, const char *dir, pid_t pid);

/*
 * Makes dir (NULL = REC_CONTROL_DIR) ready to hold control sockets. A missing dir
 * is created, owned by root with mode 0711: anyone may reach a socket whose name
 * they know, nobody but root may list or change it. An existing dir is never
 * changed: it is refused with -EPERM, and why tells the reason, if anyone but
 * root could replace a socket in it (not a directory, not owned by root, or
 * writable by group or others without the sticky bit). *searchable is set to 0
 * if others may not search it (then only root can reach its sockets).
 * Returns 0, -EPERM, or another -errno.
 */
int rec_control__prepare_dir(const char *dir, char *why, size_t len, int *searchable);

/*
 * A recorder-attach that holds a process's lock, or waits for it: its pid (0
 * if unknown) and, for one that traces the process by --binary, that file
 * ("" for one run with -p).
 */
struct rec_control_peer {
	pid_t pid;
	char binary[PATH_MAX];
};

/*
 * Takes the lock of the socket at sock_path (the file beside it named
 * PID.lock, which says who holds it: this process, and binary, its --binary
 * file or NULL), held until rec_control__unlock. Returns the lock's fd; -EBUSY
 * if another process holds it, with *holder set to who (see struct
 * rec_control_peer); or another -errno. The lock path goes into lock_path.
 */
int rec_control__lock(const char *sock_path, const char *binary, char *lock_path, size_t len,
		      struct rec_control_peer *holder);

/*
 * The hand-over of a process between two recorder-attach (a -p one and a
 * --binary one): the one that waits for the lock notes so beside it, in
 * PID.wait (this process, binary as above), and takes the note back once it
 * has the lock or stops waiting. The holder reads it when it lets the process
 * go alive (to say whom it hands it back to), and removes it, whoever wrote
 * it, once the process's black box is written: a waiter that then gets the
 * lock of a process that has ended finds its note gone, and writes no second
 * box. Each returns 0 or -errno; rec_control__waiter -ENOENT if no live
 * process waits.
 */
int rec_control__note_wait(const char *sock_path, const char *binary);
int rec_control__waiter(const char *sock_path, struct rec_control_peer *waiter);
/* Removes the note: only this process's own, or with anyone, whoever wrote it. */
void rec_control__unnote_wait(const char *sock_path, bool anyone);

/* Removes the lock file at lock_path and lets go of the lock fd. */
void rec_control__unlock(int fd, const char *lock_path);

/*
 * Listens at path (the caller holds its lock). A socket file left there by a
 * server that is gone is replaced; a socket someone still serves (-EADDRINUSE)
 * and anything that is not a socket (-EEXIST) are left alone. The socket gets
 * mode 0600 and belongs to owner (left to root if owner is (uid_t)-1).
 * Returns the (non-blocking) listening fd or -errno.
 */
int rec_control__listen(const char *path, uid_t owner);

/* Connects to path. Returns the fd or -errno (-ENOENT: nobody serves it). */
int rec_control__connect(const char *path);
/* Sends q. Returns 0 or -errno (never raises SIGPIPE). */
int rec_control__send(int fd, const struct rec_query *q);
/*
 * Checks a whole request of len bytes at buf (its size, its magic, each --where
 * condition by rec_cond__check()) and takes its query. Returns 0 or -EPROTO.
 */
int rec_control__parse(const void *buf, size_t len, struct rec_query *q);
/* Reads and validates a request. Returns 0, -EPROTO if malformed, or -errno. */
int rec_control__recv(int fd, struct rec_query *q);

#endif /* REC_CONTROL_H */
