// SPDX-License-Identifier: MIT
/* Unit tests of the one table of names (user/model/names.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "model/names.h"

/* Every signal glibc has an abbreviation for is named as it names it, and only those. */
static void test_signals_as_glibc_names_them(void **state)
{
	char want[32];

	(void)state;
	for (int sig = -1; sig <= 128; sig++) {
		const char *abbrev = sigabbrev_np(sig);

		if (!abbrev) {
			assert_null(rec_names__signal(sig));
			continue;
		}
		snprintf(want, sizeof(want), "SIG%s", abbrev);
		assert_non_null(rec_names__signal(sig));
		assert_string_equal(rec_names__signal(sig), want);
	}
	assert_string_equal(rec_names__signal(SIGKILL), "SIGKILL");
	assert_string_equal(rec_names__signal(SIGALRM), "SIGALRM");
	assert_null(rec_names__signal(SIGRTMIN));
}

static void test_end(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(rec_names__end(REC_END_RUNNING, 0, 0, buf, sizeof(buf)), "running");
	assert_string_equal(rec_names__end(REC_END_EXIT, 7, 0, buf, sizeof(buf)),
			    "exited with status 7");
	assert_string_equal(rec_names__end(REC_END_SIGNAL, SIGKILL, 0, buf, sizeof(buf)),
			    "killed by SIGKILL");
	assert_string_equal(rec_names__end(REC_END_SIGNAL, SIGSEGV, 1, buf, sizeof(buf)),
			    "killed by SIGSEGV (core dumped)");
	assert_string_equal(rec_names__end(REC_END_SIGNAL, 40, 1, buf, sizeof(buf)),
			    "killed by signal 40 (core dumped)");
	assert_string_equal(rec_names__end(REC_END_UNKNOWN, 0, 0, buf, sizeof(buf)),
			    "ended (how was not seen)");
	assert_ptr_equal(rec_names__end(REC_END_EXIT, 0, 0, buf, sizeof(buf)), buf);
}

/* What the dump writer writes, the reader parses back to the same value; nothing else. */
static void test_parse_inverts_name(void **state)
{
	enum rec_str_status st;
	enum rec_field_type ft;
	enum rec_end end;
	int v;

	(void)state;
	for (int i = REC_STR_OK; i <= REC_STR_NOSPACE; i++) {
		assert_int_equal(rec_names__parse_str_status(rec_names__str_status(i), &st), 0);
		assert_int_equal(st, i);
	}
	assert_int_equal(rec_names__parse_str_status("?", &st), -EINVAL);
	assert_int_equal(rec_names__parse_str_status("OK", &st), -EINVAL);
	for (int i = REC_TYPE_STR; i <= REC_TYPE_BOOL; i++) {
		assert_int_equal(rec_names__parse_field_type(rec_names__field_type(i), &ft), 0);
		assert_int_equal(ft, i);
	}
	assert_string_equal(rec_names__field_type(REC_TYPE_NONE), "?");
	assert_string_equal(rec_names__field_type(REC_TYPE_STR_LIT), "?");
	assert_int_equal(rec_names__parse_field_type("?", &ft), -EINVAL);
	assert_int_equal(rec_names__parse_field_type("", &ft), -EINVAL);
	for (int i = REC_UT_OVER_QUOTA; i <= REC_UT_TABLE_FULL; i++) {
		assert_int_equal(rec_names__parse_untracked(rec_names__untracked(i), &v), 0);
		assert_int_equal(v, i);
	}
	assert_int_equal(rec_names__parse_untracked("", &v), -EINVAL);
	for (int i = 0; i <= 1; i++) {
		assert_int_equal(rec_names__parse_retired(rec_names__retired(i), &v), 0);
		assert_int_equal(v, i);
	}
	assert_int_equal(rec_names__parse_retired("over-quota", &v), -EINVAL);
	for (int i = REC_END_RUNNING; i <= REC_END_UNKNOWN; i++) {
		assert_int_equal(rec_names__parse_end_how(rec_names__end_how(i), &end), 0);
		assert_int_equal(end, i);
	}
	assert_int_equal(rec_names__parse_end_how("killed", &end), -EINVAL);
	for (int i = REC_LEVEL_TRACE; i <= REC_LEVEL_ERROR; i++) {
		enum rec_level level;

		assert_int_equal(rec_names__parse_level(rec_names__level(i), &level), 0);
		assert_int_equal(level, i);
	}
	{
		enum rec_level level;

		assert_int_equal(rec_names__parse_level("warn", &level), 0);
		assert_int_equal(level, REC_LEVEL_WARN);
		assert_int_equal(rec_names__parse_level("Error", &level), 0);
		assert_int_equal(level, REC_LEVEL_ERROR);
		assert_int_equal(rec_names__parse_level("W", &level), -EINVAL);
		assert_int_equal(rec_names__parse_level("warning", &level), -EINVAL);
		assert_int_equal(rec_names__parse_level("", &level), -EINVAL);
	}
}

static void test_names_and_fallbacks(void **state)
{
	(void)state;
	assert_string_equal(rec_names__counter(REC_C_RING_FULL), "ring_full");
	assert_string_equal(rec_names__counter(REC_C_TABLE_FULL), "table_full");
	assert_string_equal(rec_names__counter(REC_C_BATCH_BAD), "batch_bad");
	assert_string_equal(rec_names__counter(REC_C_BATCH_FAULT), "batch_fault");
	for (int c = 0; c < REC_C_MAX; c++)
		assert_string_not_equal(rec_names__counter(c), "unknown");
	assert_string_equal(rec_names__counter(REC_C_MAX), "unknown");
	assert_string_equal(rec_names__counter((enum rec_counter) - 1), "unknown");
	assert_string_equal(rec_names__limit(REC_L_PROC_RECORDINGS), "recordings_per_process");
	for (int l = 0; l < REC_L_MAX; l++)
		assert_string_not_equal(rec_names__limit(l), "unknown");
	assert_string_equal(rec_names__limit(REC_L_MAX), "unknown");
	assert_string_equal(rec_names__str_status(REC_STR_TRUNCATED), "truncated");
	assert_string_equal(rec_names__str_status((enum rec_str_status)9), "?");
	assert_string_equal(rec_names__str_mark(REC_STR_OK), "");
	assert_string_equal(rec_names__str_mark(REC_STR_TRUNCATED), "\xe2\x80\xa6[truncated]");
	assert_string_equal(rec_names__str_mark(REC_STR_FAULT), "<unreadable>");
	assert_string_equal(rec_names__str_mark(REC_STR_NULL), "(null)");
	assert_string_equal(rec_names__str_mark(REC_STR_NOSPACE), "<no space>");
	assert_string_equal(rec_names__str_mark((enum rec_str_status)9), "<?>");
	assert_string_equal(rec_names__untracked(0), "");
	assert_string_equal(rec_names__untracked(3), "");
	assert_string_equal(rec_names__recording_state(0, 0), "live");
	assert_string_equal(rec_names__recording_state(1, 0), "retired");
	assert_string_equal(rec_names__recording_state(1, REC_UT_OVER_QUOTA), "retired");
	assert_string_equal(rec_names__recording_state(0, REC_UT_OVER_QUOTA), "over-quota");
	assert_string_equal(rec_names__recording_state(0, REC_UT_TABLE_FULL), "table-full");
	assert_string_equal(rec_names__end_how((enum rec_end)7), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signals_as_glibc_names_them),
		cmocka_unit_test(test_end),
		cmocka_unit_test(test_parse_inverts_name),
		cmocka_unit_test(test_names_and_fallbacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
