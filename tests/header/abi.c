/* SPDX-License-Identifier: MIT */
/*
 * The probe ABI is written twice: include/recorder.h, which instrumented
 * programs compile, and bpf/recorder_abi_probe.h (part of bpf/recorder_abi.h),
 * which the BPF programs and recorder-attach compile. This file only compiles
 * if they agree, constant by constant and field by field (docs/probe-abi.md).
 * A macro both define (REC_MAX_FIELDS, REC_SUBJECT_MAX, REC_RECORDING_MAGIC)
 * is checked by the compiler itself: a redefinition with another value is an
 * error.
 */
#include <stddef.h>

#include "recorder.h"
#include "recorder_abi_probe.h"

#define SAME_FIELD(a, b, f)                                                                        \
	_Static_assert(offsetof(a, f) == offsetof(b, f) &&                                         \
			       sizeof(((a *)0)->f) == sizeof(((b *)0)->f),                         \
		       #a "." #f " and " #b "." #f " differ")

_Static_assert(REC_ABI_VERSION == 1, "docs/probe-abi.md describes version 1");

/* Levels, as the callsite metadata and the BPF side number them. */
_Static_assert(REC__LEVEL_TRACE == REC_LEVEL_TRACE, "TRACE");
_Static_assert(REC__LEVEL_DEBUG == REC_LEVEL_DEBUG, "DEBUG");
_Static_assert(REC__LEVEL_INFO == REC_LEVEL_INFO, "INFO");
_Static_assert(REC__LEVEL_WARN == REC_LEVEL_WARN, "WARN");
_Static_assert(REC__LEVEL_ERROR == REC_LEVEL_ERROR, "ERROR");
_Static_assert(REC__LEVEL_RUNTIME == REC_LEVEL_RUNTIME, "RUNTIME");
_Static_assert(REC__TYPES_LEVEL_SHIFT == REC_TYPES_LEVEL_SHIFT, "types level shift");

/* Field types, 4 bits each in the event probe's types argument. */
_Static_assert(REC__TYPE_STR == REC_TYPE_STR, "STR");
_Static_assert(REC__TYPE_I64 == REC_TYPE_I64, "I64");
_Static_assert(REC__TYPE_U64 == REC_TYPE_U64, "U64");
_Static_assert(REC__TYPE_F64 == REC_TYPE_F64, "F64");
_Static_assert(REC__TYPE_BOOL == REC_TYPE_BOOL, "BOOL");
_Static_assert(REC__TYPE_STR_LIT == REC_TYPE_STR_LIT, "STR_LIT");
_Static_assert(REC_MAX_FIELDS * 4 <= 64, "every field's type fits the 64-bit types argument");
/*
 * REC_STRN goes out as a copied string (no new type), and the bits that mark
 * its fields inside the header's macros lie above the runtime level, which
 * the probe and a batch record carry: they are taken off before.
 */
_Static_assert(REC__TYPEOF_STRN(0) == REC_TYPE_STR, "a REC_STRN is a copied string");
_Static_assert(REC__STRN_SHIFT >= REC_TYPES_LEVEL_SHIFT + 4 &&
		       REC__STRN_SHIFT + REC_MAX_FIELDS <= 64,
	       "REC_STRN's marks are neither field types nor the level, and fit");

/* Limits. */
_Static_assert(REC_MESSAGE_MAX == REC_STR_MAX, "a formatted message is one string field");
_Static_assert(REC_CALLSITE_MAGIC == ('R' | 'C' << 8 | 'S' << 16 | (unsigned int)'1' << 24),
	       "callsite blobs start with \"RCS1\"");

/* struct rec_recording as BPF and recorder-attach read it: a fixed part, then the subject. */
SAME_FIELD(struct rec_recording, struct rec_target_recording, magic);
SAME_FIELD(struct rec_recording, struct rec_target_recording, key);
SAME_FIELD(struct rec_recording, struct rec_target_recording, recorder_key);
SAME_FIELD(struct rec_recording, struct rec_target_recording, cap);
_Static_assert(offsetof(struct rec_recording, subject) == REC_TARGET_SUBJECT_OFF, "subject");
_Static_assert(sizeof(((struct rec_recording *)0)->subject) == REC_SUBJECT_MAX, "subject");
_Static_assert(sizeof(struct rec_recording) == REC_TARGET_SUBJECT_OFF + REC_SUBJECT_MAX,
	       "struct rec_recording");

/* struct rec_span, pointers as 64-bit addresses. */
_Static_assert(sizeof(void *) == sizeof(__u64), "a 64-bit target");
SAME_FIELD(struct rec_span, struct rec_target_span, meta);
SAME_FIELD(struct rec_span, struct rec_target_span, recording_key);
SAME_FIELD(struct rec_span, struct rec_target_span, recording);
SAME_FIELD(struct rec_span, struct rec_target_span, parent);
SAME_FIELD(struct rec_span, struct rec_target_span, prev);
SAME_FIELD(struct rec_span, struct rec_target_span, entered);
_Static_assert(sizeof(struct rec_span) == sizeof(struct rec_target_span), "struct rec_span");

int main(void)
{
	return 0;
}

/* The batch path: the thread's buffer and its records. */
_Static_assert(REC__TBUF_SIZE == REC_TBUF_SIZE && REC__TBUF_HDR == REC_TBUF_HDR, "tbuf size");
_Static_assert(REC__TBUF_MAGIC == REC_TBUF_MAGIC, "tbuf magic");
_Static_assert(REC__ATTACH_MARKER == REC_ATTACH_MARKER_BIG, "attach block marker");
_Static_assert(REC__BK_REC_NEW == REC_BK_REC_NEW && REC__BK_REC_SPAN == REC_BK_REC_SPAN &&
		       REC__BK_REC_FREE == REC_BK_REC_FREE,
	       "recording record kinds");
_Static_assert(REC__BREC_REC == sizeof(struct rec_brec_rec), "recording record size");
_Static_assert(REC__BREC_REC + REC_SUBJECT_MAX == REC_BREC_REC_SIZE(REC_BK_REC_SPAN),
	       "recording span record size");
_Static_assert(REC__TRACER_ON == REC_TRACER_ON && REC__TRACER_BATCH == REC_TRACER_BATCH,
	       "tracer word bits");
_Static_assert(offsetof(struct rec__attach_block, marker) == 2 &&
		       offsetof(struct rec__attach_block, tracer) == 4,
	       "attach block layout");
_Static_assert(sizeof(struct rec__tbuf) == REC_TBUF_SIZE, "tbuf size");
_Static_assert(offsetof(struct rec__tbuf, data) == REC_TBUF_HDR, "tbuf header");
_Static_assert(sizeof(struct rec_tbuf_hdr) == REC_TBUF_HDR, "tbuf header");
SAME_FIELD(struct rec__tbuf, struct rec_tbuf_hdr, magic);
SAME_FIELD(struct rec__tbuf, struct rec_tbuf_hdr, gen);
SAME_FIELD(struct rec__tbuf, struct rec_tbuf_hdr, len);
SAME_FIELD(struct rec__tbuf, struct rec_tbuf_hdr, clock);
SAME_FIELD(struct rec__tbuf, struct rec_tbuf_hdr, tid);
SAME_FIELD(struct rec__tbuf, struct rec_tbuf_hdr, tracer);
SAME_FIELD(struct rec__brec, struct rec_brec, kind);
SAME_FIELD(struct rec__brec, struct rec_brec, size);
SAME_FIELD(struct rec__brec, struct rec_brec, strbytes);
SAME_FIELD(struct rec__brec, struct rec_brec, nvals);
SAME_FIELD(struct rec__brec, struct rec_brec, time);
_Static_assert(sizeof(struct rec__brec) == sizeof(struct rec_brec), "brec");
_Static_assert(sizeof(struct rec_brec_enter) == 48 && sizeof(struct rec_brec_exit) == 32,
	       "span records: the sizes rec__batch_span writes");
_Static_assert(sizeof(struct rec_brec_event) == sizeof(struct rec__brec) + 40, "event record");
_Static_assert(REC__BATCH_FLUSH == REC_BATCH_FLUSH && REC__BATCH_OPEN == REC_BATCH_OPEN, "ops");
_Static_assert(REC__BCLOCK_MONO == REC_BCLOCK_MONO && REC__BCLOCK_TSC == REC_BCLOCK_TSC, "clock");
_Static_assert(REC__BK_EVENT == REC_BK_EVENT && REC__BK_ENTER == REC_BK_ENTER &&
		       REC__BK_EXIT == REC_BK_EXIT,
	       "record kinds");
_Static_assert(REC__STR_MAX == REC_STR_MAX && REC__STR_AREA == REC_STR_AREA, "strings");
_Static_assert(REC_STR_SLOT(1, 2, 3) == (1 | (2ULL << 16) | (3ULL << 32)), "string slots");
