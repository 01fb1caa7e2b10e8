// SPDX-License-Identifier: MIT
/*
 * recorder-tail --triggers (incidents/table.h), pinned by golden files:
 * tests/golden/expected/triggers/{text,jsonl} hold what a fixed set of rules
 * and signatures renders to, a hostile signature's bytes escaped in the text.
 * REC_GOLDEN_UPDATE=1 rewrites them from today's output (the diff is the review).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "incidents/trigger.h"
#include "incidents/table.h"

#define SEC 1000000000LL
/* CLOCK_REALTIME minus CLOCK_MONOTONIC: monotonic 0 is 2026-12-06T04:00:00Z. */
#define OFFSET (1796529600LL * SEC)

/* Two rules: a flood, a second error, a span, a signature past the table. */
static struct rec_trigger_set *fixture(void)
{
	struct rec_trigger_set *s = calloc(1, sizeof(*s));
	struct rec_trigger_sig *g;
	int64_t t = 100 * SEC;

	assert_non_null(s);
	assert_int_equal(rec_trigger__init(s, 10 * SEC, 60), 0);
	assert_int_equal(rec_trigger__limit_signatures(s, 6), 0);
	assert_int_equal(rec_trigger__add(s, "level>=error", NULL, 0), 1);
	assert_int_equal(rec_trigger__add(s, "span:slowreq>100ms", NULL, 0), 2);
	for (int k = 0; k < 10000; k++, t += SEC / 1000) {
		rec_trigger__fire(s, 0, 0x1000, t + SEC / 100, t, false, &g);
		if (!g->id)
			rec_trigger__name_sig(s, 0, g, "'request failed' at server.c:42");
	}
	rec_trigger__report(s, 0, 0x1000, 0, "/var/lib/recorder/snapshot-4242-1.json");
	rec_trigger__fire(s, 0, 0x2000, t + SEC / 100, t, false, &g);
	/* From the target: an escape sequence in a message. */
	rec_trigger__name_sig(s, 0, g, "'disk \x1b[31mfull' at server.c:57");
	rec_trigger__report(s, 0, 0x2000, 0, "/var/lib/recorder/snapshot-4242-2.json");
	rec_trigger__fire(s, 1, 0x3000, t + 2 * SEC, t + SEC, false, &g);
	rec_trigger__name_sig(s, 1, g, "span slowreq at server.c:60");
	rec_trigger__report(s, 1, 0x3000, -EIO, NULL);
	return s;
}

static void check(const char *name, bool json)
{
	struct rec_trigger_set *s = fixture();
	char path[256], *got = NULL, *want = NULL;
	size_t len = 0, wlen = 0;
	FILE *f = open_memstream(&got, &len);

	assert_non_null(f);
	rec_table__triggers(f, s, json, OFFSET);
	fclose(f);
	snprintf(path, sizeof(path), "tests/golden/expected/triggers/%s", name);
	if (getenv("REC_GOLDEN_UPDATE")) {
		f = fopen(path, "w");
		assert_non_null(f);
		fwrite(got, 1, len, f);
		fclose(f);
	}
	f = fopen(path, "r");
	if (!f)
		fail_msg("%s is missing: REC_GOLDEN_UPDATE=1 %s writes it", path,
			 "test_trigger_output");
	want = calloc(1, 1 << 16);
	assert_non_null(want);
	wlen = fread(want, 1, (1 << 16) - 1, f);
	fclose(f);
	if (wlen != len || memcmp(want, got, len))
		fail_msg("--triggers %s differs from %s:\n%s", name, path, got);
	free(want);
	free(got);
	rec_trigger__fini(s);
	free(s);
}

static void the_text_table_lists_signatures_under_their_rule(void **state)
{
	(void)state;
	check("text", false);
}

static void the_json_lines_nest_signatures_in_their_rule(void **state)
{
	(void)state;
	check("jsonl", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_text_table_lists_signatures_under_their_rule),
		cmocka_unit_test(the_json_lines_nest_signatures_in_their_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
