/* SPDX-License-Identifier: MIT */
/*
 * What the pieces of the dump reader share (dump_read.c: the reader, the checks
 * of an object's members, the top level; dump_read_process.c,
 * dump_read_events.c, dump_read_recordings.c, dump_read_triggers.c: the parts
 * of a dump). Private to them: the rest of the loader reads dumps through
 * model/dump.h's rec_dump__read().
 *
 * A check (rec_dump_read__get_u64() and the others) returns 0, or a negative
 * errno with a message in the reader's err, naming the place in the dump.
 */
#ifndef REC_DUMP_READ_H
#define REC_DUMP_READ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "model/dump.h"
#include "base/json_read.h"

/*
 * Room for the name of a place in a dump, by depth: "recordings[1]",
 * "recordings[1].events[2]", "recordings[1].events[2].values[3]". Each holds its
 * parent plus the longest index.
 */
#define REC_DUMP_PATH1 64
#define REC_DUMP_PATH2 128
#define REC_DUMP_PATH3 192

/* A dump being read, and where its error message goes. */
struct rec_dump_read {
	struct rec_json_read *jr;
	char *err;
	size_t errlen;
};

/* ---- errors (dump_read.c) ---- */

__attribute__((format(printf, 4, 5))) void rec_dump_read__set_error(struct rec_dump_read *r,
								    const char *path,
								    const char *key,
								    const char *fmt, ...);
/*
 * rec_dump_read__set_error(), then -EINVAL (visibly to the compiler, so outputs
 * count as set on 0).
 */
#define rec_dump_read__fail_at(r, path, key, ...)                                                  \
	(rec_dump_read__set_error(r, path, key, __VA_ARGS__), -EINVAL)
int rec_dump_read__fail_nomem(struct rec_dump_read *r);
int rec_dump_read__fail_input(struct rec_dump_read *r, int err);

/* ---- objects and their members (dump_read.c) ---- */

/* An object of the dump and the members of it that this version knows. */
struct rec_dump_object {
	const char *path;	 /* its name in messages: "", "ended", "recordings[2]" */
	const char *const *keys; /* the names of the members it knows */
	size_t nkeys;
	struct rec_json_value *m; /* m[i] is member keys[i]; type REC_JSON_NONE if absent */
};

int rec_dump_read__scan_object(struct rec_dump_read *r, const struct rec_json_value *v,
			       struct rec_dump_object *o);
int rec_dump_read__get_member(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			      const struct rec_json_value **v);
int rec_dump_read__as_u64(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			  const char *key, uint64_t min, uint64_t max, uint64_t *out);
int rec_dump_read__get_u64(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			   uint64_t min, uint64_t max, uint64_t *out);
int rec_dump_read__get_u32(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			   uint32_t *out);
int rec_dump_read__as_i64(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			  const char *key, int64_t *out);
int rec_dump_read__as_str(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			  const char *key, char *buf, size_t size, struct rec_json_str *info);
int rec_dump_read__get_cstr(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			    size_t max, char *buf);
int rec_dump_read__get_key(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			   uint64_t *out);
int rec_dump_read__get_array(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			     uint64_t max, const struct rec_json_value **v);
int rec_dump_read__get_object(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			      const struct rec_json_value **v);
int rec_dump_read__get_bool(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			    int *out);

/* Reads one element of an array: elem, named path, the index-th. */
typedef int (*rec_dump_element_fn)(struct rec_dump_read *r, const struct rec_json_value *elem,
				   const char *path, size_t index, void *ctx);

int rec_dump_read__each_object(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			       const struct rec_json_value *arr, char *path, size_t size,
			       rec_dump_element_fn fn, void *ctx);

/* ---- the parts of a dump ---- */

/* The members of the top level (top_keys in dump_read.c), which some parts read. */
enum {
	TOP_FORMAT,
	TOP_VERSION,
	TOP_PID,
	TOP_NS_PID,
	TOP_ENDED,
	TOP_DUMPED_AT,
	TOP_CLOCK_OFFSET_NS,
	TOP_COUNTERS,
	TOP_MALFORMED,
	TOP_ORPHANS,
	TOP_SPAN_ORPHANS,
	TOP_SCHED,
	TOP_CALLSITES,
	TOP_RECORDINGS,
	TOP_STACKS,
	TOP_LIMITS,
	TOP_FORGOTTEN,
	TOP_RECORDINGS_OMITTED,
	TOP_STACKS_OMITTED,
	TOP_SCOPE,
	TOP_TRIGGER,
	TOP_TRIGGERS_PENDING,
	TOP_ATTACHED_NS,
	TOP_SPANS_BEFORE_ATTACH,
	TOP_FIELDS_LEFT_OUT,
	TOP_N
};

/* dump_read_process.c: "ended", "counters", the limits' keys, "sched", "stacks". */
int rec_dump_read__ended(struct rec_dump_read *r, const struct rec_json_value *v,
			 struct rec_proc *p);
int rec_dump_read__counters(struct rec_dump_read *r, const struct rec_json_value *v,
			    struct rec_proc *p, struct rec_dump_counters *counters);
int rec_dump_read__limit_keys(struct rec_dump_read *r, const struct rec_dump_object *o,
			      struct rec_proc *p);
int rec_dump_read__sched_counts(struct rec_dump_read *r, const struct rec_json_value *v,
				struct rec_proc *p);
int rec_dump_read__stacks(struct rec_dump_read *r, const struct rec_dump_object *o,
			  struct rec_proc *p);

/* dump_read_events.c: one of "callsites" (ctx: the rec_proc), one of a recording's "events". */
int rec_dump_read__callsite(struct rec_dump_read *r, const struct rec_json_value *v,
			    const char *path, size_t index, void *ctx);

/* A recording whose events are being read (ctx of rec_dump_read__event()). */
struct rec_dump_recording_ctx {
	struct rec_proc *p;
	struct rec_rstate *rs;
	uint64_t next_seq; /* events are oldest first: each seq is at least this */
};

int rec_dump_read__event(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			 size_t index, void *ctx);

/* dump_read_recordings.c: one of "recordings" (ctx: the rec_proc), with its spans. */
int rec_dump_read__recording(struct rec_dump_read *r, const struct rec_json_value *v,
			     const char *path, size_t index, void *ctx);

/* dump_read_triggers.c: "scope", "trigger" and "triggers_pending". */
int rec_dump_read__triggers(struct rec_dump_read *r, const struct rec_dump_object *o,
			    struct rec_proc *p);

#endif /* REC_DUMP_READ_H */
