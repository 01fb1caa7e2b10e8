/* SPDX-License-Identifier: MIT */
/*
 * Callsite metadata: the pointer-free blob that include/recorder.h places in
 * the target's .rodata for every event and span site (docs/probe-abi.md):
 *
 *	"RCS1" NUL kind NUL level NUL name NUL target NUL file NUL line NUL
 *	message NUL nfields NUL field-name NUL ... (nfields names)
 *
 * kind is "E" (event) or "S" (span); level and line and nfields are decimal.
 */
#ifndef REC_CALLSITE_H
#define REC_CALLSITE_H

#include <stddef.h>
#include <stdint.h>

#include "recorder_abi.h"

struct rec_callsite {
	char kind; /* 'E' or 'S' */
	enum rec_level level;
	const char *name;
	const char *target;
	const char *file;
	uint32_t line;
	const char *message;
	uint32_t nfields;
	uint32_t left_out; /* fields past the 8th the site has, not carried ("8+M") */
	const char *field_names[REC_MAX_FIELDS];
	size_t blob_len;	     /* bytes of the blob used, last NUL included */
	char blob[REC_CALLSITE_MAX]; /* the strings above point in here */
};

/*
 * Parses the first len bytes of blob (which need not be NUL-terminated and may
 * hold trailing bytes) into *cs. Returns 0, or -EINVAL if the blob is not a
 * valid v1 callsite (bad magic, kind, level, line, nfields > 8, or a string
 * that runs past len).
 */
int rec_callsite__parse(struct rec_callsite *cs, const void *blob, size_t len);

#endif /* REC_CALLSITE_H */
