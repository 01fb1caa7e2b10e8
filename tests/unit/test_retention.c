// SPDX-License-Identifier: MIT
/*
 * rec_retention__select(): which black boxes go; rec_retention__apply_prefix():
 * black boxes and snapshots, each by its own policy, never the other's files;
 * rec_retention__write_making_room(): a black box that does not fit takes the
 * room of the oldest snapshots, never of another black box.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dumps/retention.h"

#define F(n, sz, t)                                                                                \
	{                                                                                          \
		.name = (n), .size = (sz), .mtime_ns = (t)                                         \
	}

/* The names marked for removal, in age order, joined by spaces. */
static const char *removed(struct rec_dump_file *v, size_t n)
{
	static char buf[256];

	buf[0] = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].remove) {
			strcat(buf, buf[0] ? " " : "");
			strcat(buf, v[i].name);
		}
	return buf;
}

static void keep_n_removes_the_oldest(void **state)
{
	struct rec_dump_file v[] = { F("c", 1, 30), F("a", 1, 10), F("d", 1, 40), F("b", 1, 20) };

	(void)state;
	assert_int_equal(rec_retention__select(v, 4, 2, 0), 2);
	assert_string_equal(removed(v, 4), "a b");
}

static void max_bytes_removes_the_oldest_until_under(void **state)
{
	struct rec_dump_file v[] = { F("a", 100, 1), F("b", 100, 2), F("c", 100, 3) };

	(void)state;
	assert_int_equal(rec_retention__select(v, 3, 0, 250), 1);
	assert_string_equal(removed(v, 3), "a");
	assert_int_equal(rec_retention__select(v, 3, 0, 100), 2);
	assert_string_equal(removed(v, 3), "a b");
}

static void both_limits_apply(void **state)
{
	struct rec_dump_file v[] = { F("a", 10, 1), F("b", 500, 2), F("c", 10, 3), F("d", 10, 4) };

	(void)state;
	/* 3 may stay, but not 520 bytes: b goes too. */
	assert_int_equal(rec_retention__select(v, 4, 3, 100), 2);
	assert_string_equal(removed(v, 4), "a b");
}

static void the_dump_just_written_stays_even_alone_over_the_limit(void **state)
{
	struct rec_dump_file v[] = { F("old", 10, 1), F("new", 5000, 2) };

	(void)state;
	v[1].keep = true;
	assert_int_equal(rec_retention__select(v, 2, 1, 1000), 1);
	assert_string_equal(removed(v, 2), "old");
}

static void no_limit_removes_nothing(void **state)
{
	struct rec_dump_file v[] = { F("a", 1ULL << 40, 1), F("b", 1, 2) };

	(void)state;
	assert_int_equal(rec_retention__select(v, 2, 0, 0), 0);
	assert_int_equal(rec_retention__select(v, 2, 5, 0), 0);
}

static void same_time_goes_by_name(void **state)
{
	struct rec_dump_file v[] = { F("recorder-2-x.json", 1, 7), F("recorder-1-x.json", 1, 7) };

	(void)state;
	rec_retention__select(v, 2, 1, 0);
	assert_string_equal(removed(v, 2), "recorder-1-x.json");
}

static void only_finished_dumps_count(void **state)
{
	(void)state;
	assert_true(rec_retention__is_dump("recorder-42-20261203T101010Z.json"));
	assert_false(rec_retention__is_dump("recorder-42-20261203T101010Z.json.tmp"));
	assert_false(rec_retention__is_dump("recorder-.json"));
	assert_false(rec_retention__is_dump("notes.json"));
	assert_false(rec_retention__is_dump("recorder-1.txt"));
}

static void snapshots_are_not_dumps(void **state)
{
	(void)state;
	assert_true(rec_retention__is_named("snapshot-42-20261203T101010.000001Z.json",
					    REC_RETENTION_SNAPSHOT));
	assert_false(rec_retention__is_named("snapshot-42-20261203T101010.000001Z.json.tmp",
					     REC_RETENTION_SNAPSHOT));
	assert_false(rec_retention__is_dump("snapshot-42-20261203T101010.000001Z.json"));
	assert_false(rec_retention__is_named("recorder-42-20261203T101010.000001Z.json",
					     REC_RETENTION_SNAPSHOT));
}

/* Creates dir/name with size bytes, modified at mtime seconds. */
static void make_file(const char *dir, const char *name, size_t size, time_t mtime)
{
	struct timespec times[2] = { { .tv_sec = mtime }, { .tv_sec = mtime } };
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < size; i++)
		fputc('x', f);
	fclose(f);
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

static bool exists(const char *dir, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void remove_file(const char *dir, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

static const char *const dir_files[] = {
	"recorder-1-a.json", "recorder-2-b.json", "recorder-3-c.json",
	"snapshot-1-a.json", "snapshot-2-b.json", "snapshot-3-c.json",
};

/* A directory of three black boxes and three snapshots, the oldest of each first. */
static void make_dir(char *dir)
{
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < 6; i++)
		make_file(dir, dir_files[i], 100, 1000 + (time_t)i);
}

static void clean_dir(const char *dir)
{
	for (size_t i = 0; i < 6; i++)
		remove_file(dir, dir_files[i]);
	assert_int_equal(rmdir(dir), 0);
}

/*
 * The policy of black boxes never counts or removes a snapshot, and that of
 * snapshots never a black box: even the newest snapshots do not push out a
 * black box, nor the bytes of the black boxes a snapshot.
 */
static void black_boxes_and_snapshots_keep_apart(void **state)
{
	struct rec_retention_count count = { 0 };
	char dir[] = "/tmp/test_retention.XXXXXX";

	(void)state;
	make_dir(dir);
	assert_int_equal(rec_retention__apply(dir, 1, 0, "recorder-3-c.json", &count), 0);
	assert_int_equal(count.removed, 2);
	assert_int_equal(count.removed_bytes, 200);
	assert_false(exists(dir, "recorder-1-a.json"));
	assert_false(exists(dir, "recorder-2-b.json"));
	assert_true(exists(dir, "recorder-3-c.json"));
	for (size_t i = 3; i < 6; i++)
		assert_true(exists(dir, dir_files[i]));
	clean_dir(dir);

	memset(&count, 0, sizeof(count));
	strcpy(dir, "/tmp/test_retention.XXXXXX");
	make_dir(dir);
	assert_int_equal(rec_retention__apply_prefix(dir, REC_RETENTION_SNAPSHOT, 2, 0,
						     "snapshot-3-c.json", &count),
			 0);
	assert_int_equal(count.removed, 1);
	assert_false(exists(dir, "snapshot-1-a.json"));
	assert_true(exists(dir, "snapshot-2-b.json"));
	assert_true(exists(dir, "snapshot-3-c.json"));
	for (size_t i = 0; i < 3; i++)
		assert_true(exists(dir, dir_files[i]));
	/* By bytes too: 300 bytes of black boxes do not count against 150 of snapshots. */
	assert_int_equal(rec_retention__apply_prefix(dir, REC_RETENTION_SNAPSHOT, 0, 150,
						     "snapshot-3-c.json", &count),
			 0);
	assert_int_equal(count.removed, 2);
	assert_false(exists(dir, "snapshot-2-b.json"));
	assert_true(exists(dir, "snapshot-3-c.json"));
	for (size_t i = 0; i < 3; i++)
		assert_true(exists(dir, dir_files[i]));
	assert_int_equal(rec_retention__apply(dir, 0, 150, NULL, &count), 0);
	assert_int_equal(count.removed, 4);
	assert_true(exists(dir, "snapshot-3-c.json"));
	assert_true(exists(dir, "recorder-3-c.json"));
	clean_dir(dir);
}

/* A directory that holds room bytes: a write of need bytes fails with ENOSPC past it. */
struct full_dir {
	const char *dir;
	uint64_t room, need;
	unsigned int tries;
	int other_err; /* returned instead of -ENOSPC when set */
};

static uint64_t bytes_in(const char *dir)
{
	uint64_t n = 0;

	for (size_t i = 0; i < 6; i++) {
		char path[256];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, dir_files[i]);
		if (!stat(path, &st))
			n += (uint64_t)st.st_size;
	}
	return n;
}

static int write_in_full_dir(void *ctx)
{
	struct full_dir *f = ctx;

	f->tries++;
	if (bytes_in(f->dir) + f->need <= f->room)
		return 0;
	return f->other_err ? f->other_err : -ENOSPC;
}

/*
 * A black box of 250 bytes in a directory that holds 650, with 600 in it
 * (three black boxes and three snapshots of 100): the two oldest snapshots go,
 * one at a time, each followed by a try; the black boxes and the newest
 * snapshot stay.
 */
static void a_black_box_takes_the_room_of_the_oldest_snapshots(void **state)
{
	struct rec_retention_count count = { 0 };
	char dir[] = "/tmp/test_retention.XXXXXX";
	struct full_dir f = { .dir = dir, .room = 650, .need = 250 };

	(void)state;
	make_dir(dir);
	assert_int_equal(rec_retention__write_making_room(dir, write_in_full_dir, &f, &count), 0);
	assert_int_equal(f.tries, 3);
	assert_int_equal(count.removed, 2);
	assert_int_equal(count.removed_bytes, 200);
	assert_int_equal(count.failed, 0);
	assert_false(exists(dir, "snapshot-1-a.json"));
	assert_false(exists(dir, "snapshot-2-b.json"));
	assert_true(exists(dir, "snapshot-3-c.json"));
	for (size_t i = 0; i < 3; i++)
		assert_true(exists(dir, dir_files[i]));
	clean_dir(dir);
}

/* It fits at once: nothing is removed, one try. */
static void a_black_box_that_fits_removes_nothing(void **state)
{
	struct rec_retention_count count = { 0 };
	char dir[] = "/tmp/test_retention.XXXXXX";
	struct full_dir f = { .dir = dir, .room = 1000, .need = 250 };

	(void)state;
	make_dir(dir);
	assert_int_equal(rec_retention__write_making_room(dir, write_in_full_dir, &f, &count), 0);
	assert_int_equal(f.tries, 1);
	assert_int_equal(count.removed, 0);
	for (size_t i = 0; i < 6; i++)
		assert_true(exists(dir, dir_files[i]));
	clean_dir(dir);
}

/*
 * Too big even with every snapshot gone: they all go, the black boxes stay,
 * and the write's last error comes back.
 */
static void never_a_black_box_for_another(void **state)
{
	struct rec_retention_count count = { 0 };
	char dir[] = "/tmp/test_retention.XXXXXX";
	struct full_dir f = { .dir = dir, .room = 600, .need = 400 };

	(void)state;
	make_dir(dir);
	assert_int_equal(rec_retention__write_making_room(dir, write_in_full_dir, &f, &count),
			 -ENOSPC);
	assert_int_equal(f.tries, 4);
	assert_int_equal(count.removed, 3);
	assert_int_equal(count.removed_bytes, 300);
	for (size_t i = 0; i < 3; i++)
		assert_true(exists(dir, dir_files[i]));
	for (size_t i = 3; i < 6; i++)
		assert_false(exists(dir, dir_files[i]));
	clean_dir(dir);
}

/* Only a want of room (ENOSPC, EDQUOT) takes snapshots away: EIO does not. */
static void only_a_want_of_room_removes(void **state)
{
	struct rec_retention_count count = { 0 };
	char dir[] = "/tmp/test_retention.XXXXXX";
	struct full_dir f = { .dir = dir, .room = 600, .need = 250, .other_err = -EIO };

	(void)state;
	make_dir(dir);
	assert_int_equal(rec_retention__write_making_room(dir, write_in_full_dir, &f, &count),
			 -EIO);
	assert_int_equal(f.tries, 1);
	assert_int_equal(count.removed, 0);
	f = (struct full_dir){ .dir = dir, .room = 600, .need = 1000, .other_err = -EDQUOT };
	assert_int_equal(rec_retention__write_making_room(dir, write_in_full_dir, &f, &count),
			 -EDQUOT);
	assert_int_equal(count.removed, 3);
	clean_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keep_n_removes_the_oldest),
		cmocka_unit_test(max_bytes_removes_the_oldest_until_under),
		cmocka_unit_test(both_limits_apply),
		cmocka_unit_test(the_dump_just_written_stays_even_alone_over_the_limit),
		cmocka_unit_test(no_limit_removes_nothing),
		cmocka_unit_test(same_time_goes_by_name),
		cmocka_unit_test(only_finished_dumps_count),
		cmocka_unit_test(snapshots_are_not_dumps),
		cmocka_unit_test(black_boxes_and_snapshots_keep_apart),
		cmocka_unit_test(a_black_box_takes_the_room_of_the_oldest_snapshots),
		cmocka_unit_test(a_black_box_that_fits_removes_nothing),
		cmocka_unit_test(never_a_black_box_for_another),
		cmocka_unit_test(only_a_want_of_room_removes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
