/* SPDX-License-Identifier: MIT */
/*
 * Decoding of the event records the BPF side writes (bpf/recorder.h), and the
 * view of an event that rendering needs.
 */
#ifndef REC_EVENT_H
#define REC_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/recorder.h"
#include "callsite.h"

struct rec_value {
	enum rec_field_type type;
	union {
		int64_t i64;
		uint64_t u64;
		double f64;
		bool b;
		struct {
			const char *ptr;	/* not NUL-terminated; len bytes */
			uint32_t len;
			enum rec_str_status status;
		} str;
	};
};

struct rec_decoded {
	uint32_t tgid;
	uint32_t tid;
	uint64_t time_ns;	/* CLOCK_MONOTONIC, as recorded */
	uint64_t recording;
	uint64_t seq;
	uint64_t meta;
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

/* Everything needed to print one event. */
struct rec_event_view {
	uint32_t pid;
	uint32_t ns_pid;	/* pid in the target's namespace, 0 = same */
	uint32_t tid;
	uint64_t recording;
	uint64_t recorder;
	const char *subject;
	uint64_t seq;
	int64_t time_ns;	/* CLOCK_REALTIME, nanoseconds since the epoch */
	const struct rec_callsite *cs;	/* NULL if the callsite could not be read */
	uint64_t meta;		/* callsite address, shown when cs is NULL */
	uint32_t nfields;
	const struct rec_value *values;
};

#endif /* REC_EVENT_H */
