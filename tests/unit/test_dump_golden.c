// SPDX-License-Identifier: MIT
/*
 * The dump writer, pinned by the golden black boxes (tests/golden/dumps/): each
 * one, written by a real recorder-attach, is read and written back, and the
 * writer must give exactly its bytes. Only "dumped_at" is the writer's own
 * (the time of the dump): it is given the one the file holds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/dump.h"

#define GOLDEN_DUMPS "tests/golden/dumps/*.json"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len > 0);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* The "dumped_at" of a dump's text ("2026-12-03T09:36:24.895330Z") in ns since the epoch. */
static int64_t dumped_at(const char *text, const char *path)
{
	const char *at = strstr(text, "\"dumped_at\":\"");
	struct tm tm = { 0 };
	long usec;

	if (!at)
		fail_msg("%s: no dumped_at", path);
	if (sscanf(at + strlen("\"dumped_at\":\""), "%d-%d-%dT%d:%d:%d.%6ldZ", &tm.tm_year,
		   &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &usec) != 7)
		fail_msg("%s: bad dumped_at", path);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000000000LL + usec * 1000;
}

/*
 * A golden dump of version 2 (every one: none has kernel time) is written back
 * as the current version with nothing else changed: its "version" in text is
 * made the current one.
 */
static void written_as_current(char *text, const char *path)
{
	char *at = strstr(text, "\"version\":");

	if (!at || (at[10] != '2' && at[10] != '0' + REC_DUMP_VERSION) || at[11] != ',')
		fail_msg("%s: not a version 2 or %d dump", path, REC_DUMP_VERSION);
	at[10] = '0' + REC_DUMP_VERSION;
}

static void test_golden_dumps_are_written_back_byte_for_byte(void **state)
{
	glob_t g;

	(void)state;
	assert_int_equal(glob(GOLDEN_DUMPS, 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 10);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		char *want = slurp(path), *got = NULL, err[512];
		struct rec_dump_counters counters;
		size_t len = 0;
		struct rec_proc p;
		FILE *out;

		if (rec_dump__read(path, &p, &counters, err, sizeof(err)))
			fail_msg("%s: %s", path, err);
		written_as_current(want, path);
		out = open_memstream(&got, &len);
		assert_non_null(out);
		assert_int_equal(rec_dump__write(out, &p, &counters, dumped_at(want, path)), 0);
		fclose(out);
		if (strcmp(want, got)) {
			size_t at = 0;

			while (want[at] == got[at])
				at++;
			fail_msg("%s: written back differently at byte %zu:\n  want: %.80s\n"
				 "  got:  %.80s",
				 path, at, want + at, got + at);
		}
		printf("PASS golden dump: %s\n", path);
		free(want);
		free(got);
		rec_proc__fini(&p);
	}
	globfree(&g);
}

/*
 * A version 1 dump (tests/golden/dumps-v1/) is read, and written back as
 * the current version with nothing else changed: it had no spans, and its
 * frames no ids.
 */
static void test_version_1_dump_is_read_and_written_as_current(void **state)
{
	const char *path = "tests/golden/dumps-v1/killed.json";
	char *v1 = slurp(path), *got = NULL, err[512], *at;
	struct rec_dump_counters counters;
	size_t len = 0;
	struct rec_proc p;
	FILE *out;

	(void)state;
	at = strstr(v1, "\"version\":1,");
	assert_non_null(at);
	if (rec_dump__read(path, &p, &counters, err, sizeof(err)))
		fail_msg("%s: %s", path, err);
	out = open_memstream(&got, &len);
	assert_non_null(out);
	assert_int_equal(rec_dump__write(out, &p, &counters, dumped_at(v1, path)), 0);
	fclose(out);
	at[strlen("\"version\":")] = '0' + REC_DUMP_VERSION;
	assert_string_equal(v1, got);
	free(v1);
	free(got);
	rec_proc__fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_dumps_are_written_back_byte_for_byte),
		cmocka_unit_test(test_version_1_dump_is_read_and_written_as_current),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
