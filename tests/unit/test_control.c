// SPDX-License-Identifier: MIT
/*
 * The control socket's pure parts: the request check, the lock that makes one
 * recorder-attach per process, and the socket directory policy (a missing one
 * is made 0711, an existing one is judged, never changed).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serving/control.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rec-control-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_parse_checks_the_request(void **state)
{
	struct rec_request req = { .magic = REC_REQUEST_MAGIC, .size = sizeof(req) };
	struct rec_query q;

	(void)state;
	req.q.flags = REC_Q_LIST;
	memset(req.q.subject, 'x', sizeof(req.q.subject));
	assert_int_equal(rec_control__parse(&req, sizeof(req), &q), 0);
	assert_int_equal(q.flags, REC_Q_LIST);
	/* A subject that fills the field is cut, never read past. */
	assert_int_equal(strlen(q.subject), sizeof(q.subject) - 1);
	assert_int_equal(rec_control__parse(&req, sizeof(req) - 1, &q), -EPROTO);
	req.magic++;
	assert_int_equal(rec_control__parse(&req, sizeof(req), &q), -EPROTO);
	req.magic--;
	req.size++;
	assert_int_equal(rec_control__parse(&req, sizeof(req), &q), -EPROTO);
}

/* --where conditions come parsed: each is checked before it is used. */
static void test_parse_checks_where_conditions(void **state)
{
	struct rec_request req = { .magic = REC_REQUEST_MAGIC, .size = sizeof(req) };
	struct rec_query q;
	char err[256];

	(void)state;
	assert_int_equal(rec_cond__parse("status>=500", &req.q.where[0], err, sizeof(err)), 0);
	assert_int_equal(rec_cond__parse("key=user:*", &req.q.where[1], err, sizeof(err)), 0);
	req.q.nwhere = 2;
	assert_int_equal(rec_control__parse(&req, sizeof(req), &q), 0);
	assert_int_equal(q.nwhere, 2);
	assert_string_equal(q.where[1].str, "user:*");
	/* More than fit, or one the parser could not have made. */
	req.q.nwhere = REC_QUERY_WHERE_MAX + 1;
	assert_int_equal(rec_control__parse(&req, sizeof(req), &q), -EPROTO);
	req.q.nwhere = 2;
	memset(req.q.where[1].str, 'x', sizeof(req.q.where[1].str));
	assert_int_equal(rec_control__parse(&req, sizeof(req), &q), -EPROTO);
	/* Past nwhere, nothing is looked at. */
	req.q.nwhere = 1;
	assert_int_equal(rec_control__parse(&req, sizeof(req), &q), 0);
}

static void test_lock_is_held_once(void **state)
{
	char sock[128], lock[128], lock2[128];
	struct rec_control_peer holder = { .pid = -1 };
	int fd, fd2;

	(void)state;
	assert_int_equal(rec_control__path(sock, sizeof(sock), dir, 42), 0);
	fd = rec_control__lock(sock, "/usr/bin/server", lock, sizeof(lock), &holder);
	assert_true(fd >= 0);
	assert_int_equal(holder.pid, 0);
	assert_string_equal(lock + strlen(dir), "/42.lock");
	/* Each open is a lock of its own: a second taker is refused and told who holds it. */
	assert_int_equal(rec_control__lock(sock, NULL, lock2, sizeof(lock2), &holder), -EBUSY);
	assert_int_equal(holder.pid, getpid());
	assert_string_equal(holder.binary, "/usr/bin/server");
	rec_control__unlock(fd, lock);
	assert_int_equal(access(lock, F_OK), -1);
	fd2 = rec_control__lock(sock, NULL, lock2, sizeof(lock2), &holder);
	assert_true(fd2 >= 0);
	/* A -p holder: no binary. */
	assert_int_equal(rec_control__lock(sock, NULL, lock, sizeof(lock), &holder), -EBUSY);
	assert_string_equal(holder.binary, "");
	rec_control__unlock(fd2, lock2);
	assert_int_equal(
		rec_control__lock("/tmp/no-socket-suffix", NULL, lock, sizeof(lock), &holder),
		-EINVAL);
}

/* The hand-over's note: who waits for a lock, taken back by its writer, or by anyone. */
static void test_wait_note_names_its_waiter(void **state)
{
	struct rec_control_peer w;
	char sock[128];

	(void)state;
	assert_int_equal(rec_control__path(sock, sizeof(sock), dir, 43), 0);
	assert_int_equal(rec_control__waiter(sock, &w), -ENOENT);
	assert_int_equal(rec_control__note_wait(sock, "/srv/a b"), 0);
	assert_int_equal(rec_control__waiter(sock, &w), 0);
	assert_int_equal(w.pid, getpid());
	assert_string_equal(w.binary, "/srv/a b");
	rec_control__unnote_wait(sock, false);
	assert_int_equal(rec_control__waiter(sock, &w), -ENOENT);
	assert_int_equal(rec_control__note_wait(sock, NULL), 0);
	assert_int_equal(rec_control__waiter(sock, &w), 0);
	assert_string_equal(w.binary, "");
	rec_control__unnote_wait(sock, true);
	assert_int_equal(rec_control__waiter(sock, &w), -ENOENT);
	assert_int_equal(rec_control__note_wait("/tmp/no-socket-suffix", NULL), -EINVAL);
}

static void test_missing_dir_is_made_0711(void **state)
{
	char path[128], why[128];
	struct stat st;
	mode_t old;
	int searchable = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/socks", dir);
	old = umask(077);
	assert_int_equal(rec_control__prepare_dir(path, why, sizeof(why), &searchable), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0711);
	assert_int_equal(searchable, 1);
}

/* Judges an existing directory of mode mode; returns the verdict, checks it is unchanged. */
static int judge(mode_t mode, char *why, size_t len, int *searchable)
{
	char path[128];
	struct stat st;
	int err;

	snprintf(path, sizeof(path), "%s/d%o", dir, (unsigned int)mode);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chmod(path, mode), 0);
	err = rec_control__prepare_dir(path, why, len, searchable);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, mode);
	return err;
}

static void test_existing_dir_is_judged_never_changed(void **state)
{
	char why[128], path[128];
	int searchable;
	FILE *f;

	(void)state;
	assert_int_equal(judge(0755, why, sizeof(why), &searchable), 0);
	assert_int_equal(searchable, 1);
	assert_int_equal(judge(0700, why, sizeof(why), &searchable), 0);
	assert_int_equal(searchable, 0);
	assert_int_equal(judge(01777, why, sizeof(why), &searchable), 0);
	assert_int_equal(judge(0777, why, sizeof(why), &searchable), -EPERM);
	assert_string_equal(why, "its mode 0777 lets others write to it without the sticky bit");
	assert_int_equal(judge(0770, why, sizeof(why), &searchable), -EPERM);
	assert_string_equal(why, "its mode 0770 lets its group write to it without the sticky bit");
	snprintf(path, sizeof(path), "%s/file", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(rec_control__prepare_dir(path, why, sizeof(why), &searchable), -EPERM);
	assert_string_equal(why, "it is not a directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_checks_the_request),
		cmocka_unit_test(test_parse_checks_where_conditions),
		cmocka_unit_test_setup_teardown(test_lock_is_held_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_note_names_its_waiter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_dir_is_made_0711, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_dir_is_judged_never_changed, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
