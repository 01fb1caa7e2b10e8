/* SPDX-License-Identifier: MIT */
/*
 * Decoding of the event records the BPF side writes (bpf/recorder_abi.h). What
 * output shows of an event is struct rec_event_view (output/output.h).
 */
#ifndef REC_EVENT_H
#define REC_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recorder_abi.h"
#include "wire/callsite.h"

struct rec_value {
	enum rec_field_type type;
	union {
		int64_t i64;
		uint64_t u64;
		double f64;
		bool b;
		struct {
			const char *ptr; /* not NUL-terminated; len bytes */
			uint32_t len;
			enum rec_str_status status;
		} str;
	};
};

struct rec_decoded {
	uint32_t tgid;
	uint32_t tid;
	uint64_t time_ns; /* CLOCK_MONOTONIC, as recorded */
	uint64_t recording;
	uint64_t seq;
	uint64_t meta;
	enum rec_level level; /* its own level: only for a REC_LEVEL_RUNTIME callsite */
	uint32_t nfields;
	struct rec_value values[REC_MAX_FIELDS];
};

/*
 * Decodes an event record of len bytes. Never trusts it: checks the header type
 * and size, every type nibble (fields end at the first 0; a non-zero nibble after
 * it, or an unknown type, is an error), and that every string lies inside the
 * record's string area. String values point into rec. Returns 0 or -EINVAL.
 */
int rec_event__decode(const void *rec, size_t len, struct rec_decoded *out);
/*
 * The fixed part of an event record already checked (one rec_event__decode()
 * takes, such as a normalized one) into out, its values left out (nfields 0).
 */
void rec_event__head(const void *rec, struct rec_decoded *out);

/* The largest event record: the fixed part and the whole string area. */
#define REC_EVENT_MAX (sizeof(struct rec_event_rec) + REC_STR_AREA)

/*
 * Finds the bytes of the string literal at addr in the target: sets v->str
 * (ptr, len of at most REC_STR_MAX - 1, status REC_STR_OK or REC_STR_TRUNCATED)
 * and returns 0, or returns non-zero if it cannot be read. v->str.ptr need only
 * stay valid until the next call.
 */
typedef int (*rec_literal_fn)(void *ctx, uint64_t addr, struct rec_value *v);

/*
 * Rewrites the event record rec (len bytes, as the BPF side wrote it) into out,
 * which holds REC_EVENT_MAX bytes: every REC_TYPE_STR_LIT field becomes a
 * REC_TYPE_STR field with the bytes lit() finds (status REC_STR_FAULT if it finds
 * none, REC_STR_NULL for address 0, REC_STR_NOSPACE past REC_STR_AREA bytes),
 * and the string area is trimmed to the bytes its strings use. Spools and dumps
 * keep only such records, which rec_event__decode() accepts. Returns the new
 * length, or -EINVAL if rec is malformed (as rec_event__decode() judges it,
 * with literals allowed).
 */
ssize_t rec_event__normalize(const void *rec, size_t len, rec_literal_fn lit, void *ctx, void *out,
			     struct rec_decoded *d);
/*
 * The same for an event given in parts: its fixed part *ev (whose type and
 * size are not looked at; rewritten in place) and its string area, area bytes
 * at strings (NULL and 0 for none), which need not follow ev in memory.
 */
ssize_t rec_event__normalize_parts(struct rec_event_rec *ev, const char *strings, uint32_t area,
				   rec_literal_fn lit, void *ctx, void *out, struct rec_decoded *d);

/*
 * How many records this thread has decoded: by rec_event__decode(), or by a
 * normalizing, which decodes the record once. With d, a normalizing also
 * gives what rec_event__decode() of out would (string values pointing into
 * out), so that the event is never decoded again on its way to the spool,
 * the trigger rules and the followers.
 */
uint64_t rec_event__decodes(void);

#endif /* REC_EVENT_H */
