// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the callsite parser (user/wire/callsite.c). The input is the
 * bytes read at a callsite's address in the target: any bytes, any length, not
 * NUL-terminated, maybe with trailing bytes. Checked beyond memory safety: a
 * parsed callsite has a valid kind, level and field count, every string lies
 * NUL-terminated inside the blob_len bytes it used, and parsing those bytes
 * alone gives the same callsite; a refused one is left zeroed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "wire/callsite.h"
#include "model/names.h"
#include "fuzz.h"

/* s is a NUL-terminated string inside cs's blob_len bytes. */
static bool in_blob(const struct rec_callsite *cs, const char *s)
{
	const char *end = cs->blob + cs->blob_len;

	return s && s >= cs->blob && s < end && memchr(s, '\0', (size_t)(end - s));
}

/* The same strings, at the same offsets into each one's blob. */
static bool same_str(const struct rec_callsite *a, const char *sa, const struct rec_callsite *b,
		     const char *sb)
{
	return sa - a->blob == sb - b->blob && strcmp(sa, sb) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rec_callsite cs, again;
	int rc;

	rc = rec_callsite__parse(&cs, data, size);
	if (rc) {
		FUZZ_CHECK(rc == -EINVAL, "parse returned %d", rc);
		for (size_t i = 0; i < sizeof(cs); i++)
			FUZZ_CHECK(((unsigned char *)&cs)[i] == 0,
				   "a refused blob left byte %zu set", i);
		return 0;
	}
	FUZZ_CHECK(cs.kind == 'E' || cs.kind == 'S', "kind %d", cs.kind);
	/* A level that names itself, or an event site whose events carry theirs. */
	FUZZ_CHECK((cs.level <= REC_LEVEL_ERROR && rec_names__level(cs.level)[0] != '?' &&
		    rec_names__level_letter(cs.level) != '?') ||
			   (cs.level == REC_LEVEL_RUNTIME && cs.kind == 'E'),
		   "level %d of kind %c", (int)cs.level, cs.kind);
	FUZZ_CHECK(cs.nfields <= REC_MAX_FIELDS, "nfields %u", cs.nfields);
	FUZZ_CHECK(cs.blob_len <= size && cs.blob_len <= REC_CALLSITE_MAX, "blob_len %zu of %zu",
		   cs.blob_len, size);
	FUZZ_CHECK(memcmp(cs.blob, data, cs.blob_len) == 0, "the blob is not the input's bytes");
	FUZZ_CHECK(in_blob(&cs, cs.name) && in_blob(&cs, cs.target) && in_blob(&cs, cs.file) &&
			   in_blob(&cs, cs.message),
		   "a string outside the blob");
	for (uint32_t i = 0; i < cs.nfields; i++)
		FUZZ_CHECK(in_blob(&cs, cs.field_names[i]) && cs.field_names[i][0], "field name %u",
			   i);
	for (uint32_t i = cs.nfields; i < REC_MAX_FIELDS; i++)
		FUZZ_CHECK(!cs.field_names[i], "field name %u past nfields", i);

	/* The bytes it used are a callsite on their own, the very same one. */
	rc = rec_callsite__parse(&again, cs.blob, cs.blob_len);
	FUZZ_CHECK(rc == 0, "its own %zu bytes do not parse", cs.blob_len);
	FUZZ_CHECK(again.kind == cs.kind && again.level == cs.level && again.line == cs.line &&
			   again.nfields == cs.nfields && again.blob_len == cs.blob_len &&
			   same_str(&cs, cs.name, &again, again.name) &&
			   same_str(&cs, cs.target, &again, again.target) &&
			   same_str(&cs, cs.file, &again, again.file) &&
			   same_str(&cs, cs.message, &again, again.message),
		   "parsed differently");
	for (uint32_t i = 0; i < cs.nfields; i++)
		FUZZ_CHECK(same_str(&cs, cs.field_names[i], &again, again.field_names[i]),
			   "field name %u parsed differently", i);
	return 0;
}
