// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the dump reader (user/dumps/dump_read.c), as recorder-tail --file
 * uses it. The input is a dump file: any bytes. Checked beyond memory safety,
 * leaks and undefined behaviour:
 *  - a refused dump comes with a message;
 *  - every query recorder-tail can ask (tails, lists, stacks, stats, as text
 *    and JSON, all or the last event) is answered from the model it read;
 *  - the model written back as a dump reads back, and writing that one again
 *    gives the same bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/dump.h"
#include "fuzz.h"
#include "serving/query.h"

#define NOW_NS 1796220192123456789LL

static FILE *devnull;

static const uint32_t query_flags[] = {
	0,
	REC_Q_JSON,
	REC_Q_LIST,
	REC_Q_LIST | REC_Q_JSON,
	REC_Q_STACKS,
	REC_Q_STACKS | REC_Q_JSON,
	REC_Q_STATS,
	REC_Q_STATS | REC_Q_JSON,
};

/* Writes p as a dump into a malloc'ed buffer. */
static char *write_dump(struct rec_proc *p, const struct rec_dump_counters *c, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int rc;

	if (!f)
		abort();
	rc = rec_dump__write(f, p, c, NOW_NS);
	FUZZ_CHECK(fclose(f) == 0 && rc == 0, "writing the dump back failed (%d)", rc);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rec_proc p, p2;
	static struct rec_dump_counters c, c2;
	char err[512], *first, *second;
	size_t len1, len2;
	int rc;

	if (!devnull) {
		devnull = fopen("/dev/null", "we");
		if (!devnull)
			abort();
	}
	rc = fuzz_dump__read((const char *)data, size, &p, &c, err, sizeof(err));
	if (rc) {
		FUZZ_CHECK(memchr(err, '\0', sizeof(err)) && err[0],
			   "refused (%d) without a message", rc);
		return 0;
	}

	for (size_t i = 0; i < sizeof(query_flags) / sizeof(query_flags[0]); i++) {
		for (int64_t n = 0; n <= 1; n++) {
			struct rec_query q = { .flags = query_flags[i], .n = n };

			rc = rec_query__answer(devnull, &p, &q);
			FUZZ_CHECK(rc == 0, "query 0x%x -n %lld failed (%d)", query_flags[i],
				   (long long)n, rc);
		}
	}

	first = write_dump(&p, &c, &len1);
	rc = fuzz_dump__read(first, len1, &p2, &c2, err, sizeof(err));
	FUZZ_CHECK(rc == 0, "the dump written back is refused: %s\n%.*s", err, (int)len1, first);
	second = write_dump(&p2, &c2, &len2);
	FUZZ_CHECK(len1 == len2 && memcmp(first, second, len1) == 0,
		   "written back twice, the dumps differ:\n%.*s\n----\n%.*s", (int)len1, first,
		   (int)len2, second);
	free(first);
	free(second);
	rec_proc__fini(&p2);
	rec_proc__fini(&p);
	return 0;
}
