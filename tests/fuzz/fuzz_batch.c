// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the batch record reader (user/batch.c). The input is
 * one REC_RT_BATCH ring record: any bytes, any length. Its records were
 * written by the target, so nothing in them is trusted. Checked beyond memory
 * safety:
 *  - rec_batch__begin() refuses a record whose header disagrees with its length;
 *  - every event rec_batch__next() gives out is a REC_RT_EVENT record of the
 *    size its header says, at most REC_BATCH_EVENT_MAX, with the batch's thread;
 *  - it ends (0 or -EINVAL) within as many calls as the batch has 8-byte words;
 *  - rec_event__decode() takes each event or refuses it with -EINVAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "event.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_batch_iter it;
	struct rec_batch_rec b;
	struct rec_decoded d;
	unsigned char *out;
	size_t calls = 0;
	int n, rc;

	if (rec_batch__begin(&it, data, size))
		return 0;
	FUZZ_CHECK(size >= sizeof(b), "a %zu-byte record was accepted", size);
	memcpy(&b, data, sizeof(b));
	FUZZ_CHECK(b.hdr.size == size && b.end == size - sizeof(b) && b.start <= b.end,
		   "a header that disagrees with the length was accepted");
	/* Exact size: a write past REC_BATCH_EVENT_MAX is an ASan report. */
	out = malloc(REC_BATCH_EVENT_MAX);
	if (!out)
		abort();
	while ((n = rec_batch__next(&it, out)) > 0) {
		struct rec_hdr h;

		FUZZ_CHECK(++calls <= size / 8, "more events than the batch has words");
		FUZZ_CHECK((size_t)n <= REC_BATCH_EVENT_MAX &&
				   (size_t)n >= sizeof(struct rec_event_rec),
			   "an event of %d bytes", n);
		memcpy(&h, out, sizeof(h));
		FUZZ_CHECK(h.type == REC_RT_EVENT && h.size == n && h.tgid == b.hdr.tgid &&
				   h.tid == b.hdr.tid,
			   "an event whose header is not the batch's");
		rc = rec_event__decode(out, (size_t)n, &d);
		FUZZ_CHECK(rc == 0 || rc == -EINVAL, "decode returned %d", rc);
	}
	FUZZ_CHECK(n == 0 || n == -EINVAL, "next returned %d", n);
	free(out);
	return 0;
}
