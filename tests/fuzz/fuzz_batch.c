// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the batch record reader (user/wire/batch.c). The input is
 * one REC_RT_BATCH ring record: any bytes, any length. Its records were
 * written by the target, so nothing in them is trusted. Checked beyond memory
 * safety:
 *  - rec_batch__begin() refuses a record whose header disagrees with its length;
 *  - it gives out span enters only when asked (it.enters);
 *  - every event rec_batch__next() gives out is a REC_RT_EVENT record of the
 *    size its header says, with the batch's thread, whose string area lies
 *    inside the batch record; every recording a REC_RT_RECORDING record of
 *    the batch's thread, its subject NUL-terminated;
 *  - it ends (0 or -EINVAL) within as many calls as the batch has 8-byte words;
 *  - rec_event__normalize_parts() takes each event (and rec_event__decode()
 *    what it makes) or refuses it with -EINVAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire/batch.h"
#include "wire/event.h"
#include "fuzz.h"

/* Literals are read from the target; here, none can be. */
static int no_literal(void *ctx, uint64_t addr, struct rec_value *v)
{
	(void)ctx;
	(void)addr;
	(void)v;
	return -EFAULT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_event_rec ev;
	const char *strings;
	uint32_t area;
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
	/* Span enters asked for or not, as the batch's thread id says. */
	it.enters = b.hdr.tid & 1;
	FUZZ_CHECK(b.hdr.size == size && b.end == size - sizeof(b) && b.start <= b.end,
		   "a header that disagrees with the length was accepted");
	/* Exact size: a write past REC_EVENT_MAX is an ASan report. */
	out = malloc(REC_EVENT_MAX);
	if (!out)
		abort();
	while ((n = rec_batch__next(&it, &ev, &strings, &area)) > 0) {
		ssize_t len;

		FUZZ_CHECK(n == REC_BATCH_EVENT || n == REC_BATCH_RECORDING ||
				   (n == REC_BATCH_ENTER && it.enters),
			   "next returned %d", n);
		FUZZ_CHECK(++calls <= size / 8, "more events than the batch has words");
		if (n == REC_BATCH_ENTER)
			continue;
		if (n == REC_BATCH_RECORDING) {
			FUZZ_CHECK(it.recording.hdr.type == REC_RT_RECORDING &&
					   it.recording.hdr.size == sizeof(it.recording) &&
					   it.recording.hdr.tgid == b.hdr.tgid &&
					   it.recording.hdr.tid == b.hdr.tid,
				   "a recording whose header is not the batch's");
			FUZZ_CHECK(!it.recording.has_subject ||
					   memchr(it.recording.subject, 0, REC_SUBJECT_MAX),
				   "a subject without its NUL");
			continue;
		}
		FUZZ_CHECK(ev.hdr.type == REC_RT_EVENT && ev.hdr.size == sizeof(ev) + area &&
				   ev.hdr.tgid == b.hdr.tgid && ev.hdr.tid == b.hdr.tid,
			   "an event whose header is not the batch's");
		FUZZ_CHECK(area == 0 || ((const uint8_t *)strings >= data &&
					 (const uint8_t *)strings + area <= data + size),
			   "a string area outside the batch");
		len = rec_event__normalize_parts(&ev, strings, area, no_literal, NULL, out, NULL);
		FUZZ_CHECK(len == -EINVAL ||
				   (len >= (ssize_t)sizeof(ev) && len <= (ssize_t)REC_EVENT_MAX),
			   "normalize returned %zd", len);
		if (len > 0) {
			rc = rec_event__decode(out, (size_t)len, &d);
			FUZZ_CHECK(rc == 0, "a normalized event does not decode: %d", rc);
		}
	}
	FUZZ_CHECK(n == 0 || n == -EINVAL, "next returned %d", n);
	free(out);
	return 0;
}
