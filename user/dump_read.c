// SPDX-License-Identifier: MIT
/*
 * Reading black-box dumps (dump.h, docs/dump-format.md). The reader parses
 * with json-c, then rebuilds every callsite blob and every event record byte
 * for byte and hands them to the same parser and decoder as live data, so a
 * dump is never trusted more than a target is.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "dump.h"
#include "query.h"
#include "render.h"

#define NSEC_PER_SEC 1000000000LL
_Static_assert(REC_DUMP_MAX_STACKS >= REC_MAX_DEAD_STACKS_LIMIT,
	       "a dump must hold every dead-thread stack kept");
/*
 * Room for the name of a place in a dump, by depth: "recordings[1]",
 * "recordings[1].events[2]", "recordings[1].events[2].values[3]". Each holds its
 * parent plus the longest index.
 */
#define REC_DUMP_PATH1 64
#define REC_DUMP_PATH2 128
#define REC_DUMP_PATH3 192

static const char *str_status_name(enum rec_str_status st)
{
	switch (st) {
	case REC_STR_OK:
		return "ok";
	case REC_STR_TRUNCATED:
		return "truncated";
	case REC_STR_FAULT:
		return "fault";
	case REC_STR_NULL:
		return "null";
	case REC_STR_NOSPACE:
		return "nospace";
	}
	return "?";
}

/* ---- reading ---- */

struct reader {
	char *err;
	size_t errlen;
};

/* Sets the message "<path>.<key>: <fmt...>" (key may be NULL). */
__attribute__((format(printf, 4, 5)))
static void set_error(struct reader *r, const char *path, const char *key, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!r->err || !r->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!*path && !key)
		snprintf(r->err, r->errlen, "%s", msg);
	else
		snprintf(r->err, r->errlen, "%s%s%s: %s", path, *path && key ? "." : "",
			 key ? key : "", msg);
}

/* set_error(), then -EINVAL (visibly to the compiler, so outputs count as set on 0). */
#define fail_at(r, path, key, ...) (set_error(r, path, key, __VA_ARGS__), -EINVAL)

static int fail_nomem(struct reader *r)
{
	if (r->err && r->errlen)
		snprintf(r->err, r->errlen, "out of memory");
	return -ENOMEM;
}

/* obj's member key, which must be there; path names obj. */
static int get_member(struct reader *r, struct json_object *obj, const char *path,
		      const char *key, struct json_object **out)
{
	if (!json_object_object_get_ex(obj, key, out))
		return fail_at(r, path, NULL, "missing \"%s\"", key);
	return 0;
}

/* Checks that v (named path.key) is an unsigned integer in [min, max] and stores it. */
static int as_u64(struct reader *r, struct json_object *v, const char *path, const char *key,
		  uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t u;

	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return fail_at(r, path, key, "expected an unsigned integer");
	u = json_object_get_uint64(v);
	if (u < min || u > max)
		return fail_at(r, path, key,
			       "%" PRIu64 " is out of range (%" PRIu64 "..%" PRIu64 ")", u, min,
			       max);
	*out = u;
	return 0;
}

static int get_u64(struct reader *r, struct json_object *obj, const char *path, const char *key,
		   uint64_t min, uint64_t max, uint64_t *out)
{
	struct json_object *v;

	return get_member(r, obj, path, key, &v) ?: as_u64(r, v, path, key, min, max, out);
}

static int get_u32(struct reader *r, struct json_object *obj, const char *path, const char *key,
		   uint32_t *out)
{
	uint64_t v;
	int err = get_u64(r, obj, path, key, 0, UINT32_MAX, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

/* Checks that v is an integer that fits int64_t and stores it. */
static int as_i64(struct reader *r, struct json_object *v, const char *path, const char *key,
		  int64_t *out)
{
	int64_t i;

	if (!json_object_is_type(v, json_type_int))
		return fail_at(r, path, key, "expected an integer");
	i = json_object_get_int64(v);
	/* json-c keeps large positive numbers as uint64 and clamps them here. */
	if (i == INT64_MAX && json_object_get_uint64(v) != (uint64_t)INT64_MAX)
		return fail_at(r, path, key, "%" PRIu64 " is out of range for a signed integer",
			       json_object_get_uint64(v));
	*out = i;
	return 0;
}

/* Checks that v is a string and stores it (NUL-terminated; *len may count inner NULs). */
static int as_str(struct reader *r, struct json_object *v, const char *path, const char *key,
		  const char **s, size_t *len)
{
	if (!json_object_is_type(v, json_type_string))
		return fail_at(r, path, key, "expected a string");
	*s = json_object_get_string(v);
	*len = (size_t)json_object_get_string_len(v);
	return 0;
}

/* A string member without NUL bytes, of at most max bytes. */
static int get_cstr(struct reader *r, struct json_object *obj, const char *path, const char *key,
		    size_t max, const char **s)
{
	struct json_object *v;
	size_t len;
	int err;

	err = get_member(r, obj, path, key, &v) ?: as_str(r, v, path, key, s, &len);
	if (err)
		return err;
	if (strlen(*s) != len)
		return fail_at(r, path, key, "contains a NUL byte");
	if (len > max)
		return fail_at(r, path, key, "longer than %zu bytes", max);
	return 0;
}

/* Parses a "0x…" key: 1 to 16 hex digits. */
static int as_key(struct reader *r, struct json_object *v, const char *path, const char *key,
		  uint64_t *out)
{
	const char *s;
	uint64_t k = 0;
	size_t len, i;

	if (as_str(r, v, path, key, &s, &len))
		return -EINVAL;
	if (len < 3 || len > 18 || s[0] != '0' || s[1] != 'x')
		goto bad;
	for (i = 2; i < len; i++) {
		char c = s[i];
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned int)(c - 'A' + 10);
		else
			goto bad;
		k = k << 4 | d;
	}
	*out = k;
	return 0;
bad:
	return fail_at(r, path, key, "expected a \"0x\" hex string of at most 16 digits");
}

static int get_key(struct reader *r, struct json_object *obj, const char *path, const char *key,
		   uint64_t *out)
{
	struct json_object *v;

	return get_member(r, obj, path, key, &v) ?: as_key(r, v, path, key, out);
}

/* An array member of at most max elements. */
static int get_array(struct reader *r, struct json_object *obj, const char *path,
		     const char *key, size_t max, struct json_object **arr, size_t *n)
{
	int err = get_member(r, obj, path, key, arr);

	if (err)
		return err;
	if (!json_object_is_type(*arr, json_type_array))
		return fail_at(r, path, key, "expected an array");
	*n = json_object_array_length(*arr);
	if (*n > max)
		return fail_at(r, path, key, "%zu elements, more than %zu", *n, max);
	return 0;
}

static int get_object(struct reader *r, struct json_object *obj, const char *path,
		      const char *key, struct json_object **out)
{
	int err = get_member(r, obj, path, key, out);

	if (!err && !json_object_is_type(*out, json_type_object))
		return fail_at(r, path, key, "expected an object");
	return err;
}

static int get_bool(struct reader *r, struct json_object *obj, const char *path, const char *key,
		    int *out)
{
	struct json_object *v;
	int err = get_member(r, obj, path, key, &v);

	if (err)
		return err;
	if (!json_object_is_type(v, json_type_boolean))
		return fail_at(r, path, key, "expected true or false");
	*out = json_object_get_boolean(v);
	return 0;
}

/* Element i of arr, which must be an object; its name goes to path (size bytes). */
static int element(struct reader *r, struct json_object *arr, size_t i, const char *parent,
		   const char *key, char *path, size_t size, struct json_object **out)
{
	snprintf(path, size, "%s%s%s[%zu]", parent, *parent ? "." : "", key, i);
	*out = json_object_array_get_idx(arr, i);
	if (!json_object_is_type(*out, json_type_object))
		return fail_at(r, path, NULL, "expected an object");
	return 0;
}

static int read_ended(struct reader *r, struct json_object *root, struct rec_proc *p)
{
	struct json_object *ended;
	const char *how;
	uint64_t v;
	int err;

	err = get_object(r, root, "", "ended", &ended) ?:
	      get_cstr(r, ended, "ended", "how", 16, &how);
	if (err)
		return err;
	if (!strcmp(how, "exit")) {
		err = get_u64(r, ended, "ended", "code", 0, 255, &v);
		p->end = REC_END_EXIT;
		p->end_code = (int)v;
	} else if (!strcmp(how, "signal")) {
		err = get_u64(r, ended, "ended", "signal", 1, 127, &v) ?:
		      get_bool(r, ended, "ended", "core_dumped", &p->end_core);
		p->end = REC_END_SIGNAL;
		p->end_code = (int)v;
	} else if (!strcmp(how, "running")) {
		p->end = REC_END_RUNNING;
	} else if (!strcmp(how, "unknown")) {
		p->end = REC_END_UNKNOWN;
	} else {
		return fail_at(r, "ended", "how",
			       "expected \"exit\", \"signal\", \"running\" or \"unknown\"");
	}
	return err;
}

/* The counters go to p->counters (for --stats) and, if not NULL, to counters. */
static int read_counters(struct reader *r, struct json_object *root, struct rec_proc *p,
			 struct rec_dump_counters *counters)
{
	struct json_object *obj, *v;
	int err;

	/* Optional: a dump written without counters reads as all zero. */
	if (!json_object_object_get_ex(root, "counters", &obj))
		return 0;
	if (!json_object_is_type(obj, json_type_object))
		return fail_at(r, "", "counters", "expected an object");
	for (int c = 0; c < REC_C_MAX; c++) {
		uint64_t val = 0;

		if (!json_object_object_get_ex(obj, rec_counter__name(c), &v))
			continue;
		err = as_u64(r, v, "counters", rec_counter__name(c), 0, UINT64_MAX, &val);
		if (err)
			return err;
		p->counters[c] = val;
		if (counters)
			counters->v[c] = val;
	}
	return 0;
}

/*
 * The optional keys of the limits (newer dumps; see --stats): "limits",
 * "forgotten", "recordings_omitted" and "stacks_omitted".
 */
static int read_limits(struct reader *r, struct json_object *root, struct rec_proc *p)
{
	struct json_object *obj, *v, *arr;
	char path[REC_DUMP_PATH1];
	size_t n;
	int err;

	if (json_object_object_get_ex(root, "recordings_omitted", &v) &&
	    as_u64(r, v, "", "recordings_omitted", 0, UINT64_MAX, &p->dump_omitted_recordings))
		return -EINVAL;
	if (json_object_object_get_ex(root, "stacks_omitted", &v) &&
	    as_u64(r, v, "", "stacks_omitted", 0, UINT64_MAX, &p->dump_omitted_stacks))
		return -EINVAL;
	n = 0;
	if (json_object_object_get_ex(root, "forgotten", &v)) {
		err = get_array(r, root, "", "forgotten", 1u << 20, &arr, &n);
		if (err)
			return err;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t recorder, recordings, seen, kept, dropped;

		err = element(r, arr, i, "", "forgotten", path, sizeof(path), &obj) ?:
		      get_key(r, obj, path, "recorder", &recorder) ?:
		      get_u64(r, obj, path, "recordings", 1, UINT64_MAX, &recordings) ?:
		      get_u64(r, obj, path, "seen", 0, UINT64_MAX, &seen) ?:
		      get_u64(r, obj, path, "kept", 0, seen, &kept) ?:
		      get_u64(r, obj, path, "dropped", 0, seen - kept, &dropped);
		if (err)
			return err;
		rec_proc__forget(p, recorder, recordings, seen, kept, dropped);
	}
	/* Last: the tally above counted into the retired row too. */
	if (json_object_object_get_ex(root, "limits", &obj)) {
		if (!json_object_is_type(obj, json_type_object))
			return fail_at(r, "", "limits", "expected an object");
		for (int l = 0; l < REC_L_MAX; l++) {
			struct rec_limit_use *u = &p->use[l];

			snprintf(path, sizeof(path), "limits.%s", rec_limit__name(l));
			if (!json_object_object_get_ex(obj, rec_limit__name(l), &v))
				continue;
			if (!json_object_is_type(v, json_type_object))
				return fail_at(r, path, NULL, "expected an object");
			err = get_u64(r, v, path, "limit", 0, UINT64_MAX, &u->limit) ?:
			      get_u64(r, v, path, "used", 0, UINT64_MAX, &u->used) ?:
			      get_u64(r, v, path, "over", 0, UINT64_MAX, &u->over) ?:
			      get_u64(r, v, path, "events", 0, UINT64_MAX, &u->events);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Appends to a callsite blob being rebuilt; overflow is remembered, not written. */
struct blob {
	char buf[REC_CALLSITE_MAX];
	size_t len;
	int overflow;
};

static void blob_add(struct blob *b, const char *s)
{
	size_t n = strlen(s) + 1;

	if (b->overflow || n > sizeof(b->buf) - b->len) {
		b->overflow = 1;
		return;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
}

static void blob_add_u64(struct blob *b, uint64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%" PRIu64, v);
	blob_add(b, num);
}

static int read_callsite(struct reader *r, struct json_object *obj, const char *path,
			 struct rec_proc *p)
{
	const char *kind, *name, *target, *file, *message, *field;
	struct json_object *fields;
	struct rec_callsite *cs;
	struct blob b = { .len = 0 };
	uint64_t addr, level, line;
	char fpath[REC_DUMP_PATH2];
	size_t n;
	int err;

	err = get_key(r, obj, path, "addr", &addr) ?:
	      get_cstr(r, obj, path, "kind", 1, &kind) ?:
	      get_u64(r, obj, path, "level", REC_LVL_TRACE, REC_LVL_ERROR, &level) ?:
	      get_cstr(r, obj, path, "name", REC_CALLSITE_MAX, &name) ?:
	      get_cstr(r, obj, path, "target", REC_CALLSITE_MAX, &target) ?:
	      get_cstr(r, obj, path, "file", REC_CALLSITE_MAX, &file) ?:
	      get_u64(r, obj, path, "line", 0, UINT32_MAX, &line) ?:
	      get_cstr(r, obj, path, "message", REC_CALLSITE_MAX, &message) ?:
	      get_array(r, obj, path, "fields", REC_NFIELDS, &fields, &n);
	if (err)
		return err;
	if (addr == 0 || addr == UINT64_MAX)
		return fail_at(r, path, "addr", "0x%" PRIx64 " is not a callsite address", addr);
	if (rec_u64map__get(&p->callsites, addr))
		return fail_at(r, path, "addr", "duplicate 0x%" PRIx64, addr);
	if (strcmp(kind, "E") != 0 && strcmp(kind, "S") != 0)
		return fail_at(r, path, "kind", "expected \"E\" or \"S\"");

	blob_add(&b, "RCS1");
	blob_add(&b, kind);
	blob_add_u64(&b, level);
	blob_add(&b, name);
	blob_add(&b, target);
	blob_add(&b, file);
	blob_add_u64(&b, line);
	blob_add(&b, message);
	blob_add_u64(&b, n);
	for (size_t i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(fields, i);
		size_t len;

		snprintf(fpath, sizeof(fpath), "%s.fields[%zu]", path, i);
		if (as_str(r, v, fpath, NULL, &field, &len))
			return -EINVAL;
		if (!len)
			return fail_at(r, fpath, NULL, "empty field name");
		if (strlen(field) != len)
			return fail_at(r, fpath, NULL, "contains a NUL byte");
		blob_add(&b, field);
	}
	if (b.overflow)
		return fail_at(r, path, NULL, "longer than the %d bytes a callsite may take",
			       REC_CALLSITE_MAX);

	cs = malloc(sizeof(*cs));
	if (!cs)
		return fail_nomem(r);
	if (rec_callsite__parse(cs, b.buf, b.len) != 0) {
		free(cs);
		return fail_at(r, path, NULL, "not a valid callsite");
	}
	/* Cached compactly; a model read from a dump has no limit on it. */
	err = rec_proc__add_callsite(p, addr, cs);
	free(cs);
	return err ? fail_nomem(r) : 0;
}

/* A string being packed into an event's string area, as the BPF side packs it. */
struct str_area {
	char *base;		/* REC_STR_AREA bytes */
	uint32_t off;		/* next free byte */
};

static int str_status_parse(const char *s, enum rec_str_status *st)
{
	static const enum rec_str_status all[] = { REC_STR_OK, REC_STR_TRUNCATED, REC_STR_FAULT,
						   REC_STR_NULL, REC_STR_NOSPACE };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (!strcmp(s, str_status_name(all[i]))) {
			*st = all[i];
			return 0;
		}
	}
	return -EINVAL;
}

static int read_str_value(struct reader *r, struct json_object *obj, const char *path,
			  struct json_object *v, struct str_area *area, uint64_t *slot)
{
	enum rec_str_status st;
	const char *s, *status;
	size_t len;

	if (as_str(r, v, path, "value", &s, &len) ||
	    get_cstr(r, obj, path, "status", 16, &status))
		return -EINVAL;
	if (str_status_parse(status, &st))
		return fail_at(r, path, "status", "expected \"ok\", \"truncated\", \"fault\", "
			       "\"null\" or \"nospace\"");
	if (st != REC_STR_OK && st != REC_STR_TRUNCATED) {
		if (len)
			return fail_at(r, path, "value", "must be \"\" when the status is \"%s\"",
				       status);
		*slot = REC_STR_SLOT(0, 0, st);
		return 0;
	}
	if (len > REC_STR_MAX - 1)
		return fail_at(r, path, "value", "string longer than %d bytes", REC_STR_MAX - 1);
	/* Each string is followed by its NUL, as bpf_probe_read_user_str() leaves it. */
	if (len + 1 > REC_STR_AREA - area->off)
		return fail_at(r, path, "value",
			       "the event's strings take more than the %d bytes of its string area",
			       REC_STR_AREA);
	memcpy(area->base + area->off, s, len);
	*slot = REC_STR_SLOT(area->off, len, st);
	area->off += (uint32_t)len + 1;
	return 0;
}

static int read_f64_value(struct reader *r, struct json_object *v, const char *path,
			  uint64_t *raw)
{
	double d;

	if (json_object_is_type(v, json_type_double)) {
		d = json_object_get_double(v);
	} else if (json_object_is_type(v, json_type_int)) {
		int64_t i;

		if (as_i64(r, v, path, "value", &i))
			return -EINVAL;
		d = (double)i;
	} else if (json_object_is_type(v, json_type_string) &&
		   !strcmp(json_object_get_string(v), "nan")) {
		d = NAN;
	} else if (json_object_is_type(v, json_type_string) &&
		   !strcmp(json_object_get_string(v), "inf")) {
		d = INFINITY;
	} else if (json_object_is_type(v, json_type_string) &&
		   !strcmp(json_object_get_string(v), "-inf")) {
		d = -INFINITY;
	} else {
		return fail_at(r, path, "value", "expected a number, \"nan\", \"inf\" or \"-inf\"");
	}
	memcpy(raw, &d, sizeof(*raw));
	return 0;
}

/* Reads one value into its type and raw value slot. */
static int read_value(struct reader *r, struct json_object *obj, const char *path,
		      struct str_area *area, unsigned int *type, uint64_t *raw)
{
	struct json_object *v;
	const char *t;
	int64_t i;
	int err;

	err = get_cstr(r, obj, path, "type", 8, &t) ?: get_member(r, obj, path, "value", &v);
	if (err)
		return err;
	if (!strcmp(t, "str")) {
		*type = REC_FT_STR;
		return read_str_value(r, obj, path, v, area, raw);
	} else if (!strcmp(t, "i64")) {
		*type = REC_FT_I64;
		err = as_i64(r, v, path, "value", &i);
		*raw = (uint64_t)i;
		return err;
	} else if (!strcmp(t, "u64")) {
		*type = REC_FT_U64;
		return as_u64(r, v, path, "value", 0, UINT64_MAX, raw);
	} else if (!strcmp(t, "f64")) {
		*type = REC_FT_F64;
		return read_f64_value(r, v, path, raw);
	} else if (!strcmp(t, "bool")) {
		*type = REC_FT_BOOL;
		if (!json_object_is_type(v, json_type_boolean))
			return fail_at(r, path, "value", "expected true or false");
		*raw = json_object_get_boolean(v) ? 1 : 0;
		return 0;
	}
	return fail_at(r, path, "type", "expected \"str\", \"i64\", \"u64\", \"f64\" or \"bool\"");
}

static int read_event(struct reader *r, struct json_object *obj, const char *path,
		      struct rec_proc *p, struct rec_rstate *rs)
{
	/* The record exactly as the ring buffer would deliver it. */
	union {
		struct rec_event_rec e;
		unsigned char bytes[REC_EVENT_REC_MAX];
	} rec;
	struct rec_event_rec *e = &rec.e;
	struct str_area area = { .base = (char *)rec.bytes + sizeof(*e) };
	struct json_object *values;
	struct rec_decoded d;
	char vpath[REC_DUMP_PATH3];
	uint64_t seq, tid, time_ns, meta;
	size_t n, size;
	int err, has_str = 0;

	memset(&rec, 0, sizeof(rec));
	err = get_u64(r, obj, path, "seq", 0, UINT64_MAX, &seq) ?:
	      get_u64(r, obj, path, "tid", 0, UINT32_MAX, &tid) ?:
	      get_u64(r, obj, path, "time_ns", 0, UINT64_MAX, &time_ns) ?:
	      get_key(r, obj, path, "callsite", &meta) ?:
	      get_array(r, obj, path, "values", REC_MAX_FIELDS, &values, &n);
	if (err)
		return err;
	if (seq >= rs->produced)
		return fail_at(r, path, "seq", "%" PRIu64 " is not below seen (%" PRIu64 ")", seq,
			       rs->produced);
	for (size_t i = 0; i < n; i++) {
		struct json_object *v;
		unsigned int type;
		uint64_t raw;

		err = element(r, values, i, path, "values", vpath, sizeof(vpath), &v) ?:
		      read_value(r, v, vpath, &area, &type, &raw);
		if (err)
			return err;
		e->values[i] = raw;
		e->types |= (uint64_t)type << (4 * i);
		has_str |= type == REC_FT_STR;
	}
	size = sizeof(*e) + (has_str ? REC_STR_AREA : 0);
	e->hdr.type = REC_RT_EVENT;
	e->hdr.size = (uint16_t)size;
	e->hdr.tgid = (uint32_t)p->pid;
	e->hdr.tid = (uint32_t)tid;
	e->hdr.time_ns = time_ns;
	e->recording = rs->key;
	e->seq = seq;
	e->meta = meta;

	if (rec_event__decode(rec.bytes, size, &d) != 0)
		return fail_at(r, path, NULL, "not a valid event record");
	err = rec_spool__push(rs->spool, d.seq, rec.bytes, size);
	if (err == -EEXIST)
		return fail_at(r, path, "seq", "duplicate seq %" PRIu64, d.seq);
	if (err == -ESTALE)
		return fail_at(r, path, "seq", "seq %" PRIu64 " is older than the last %" PRIu64
			       " (cap) events", d.seq, rs->cap);
	if (err)
		return fail_at(r, path, "seq", "cannot be stored (%s)", strerror(-err));
	return 0;
}

static int read_recording(struct reader *r, struct json_object *obj, const char *path,
			  struct rec_proc *p)
{
	uint64_t key, recorder, cap, seen, kept, dropped, stale, invalid = 0;
	struct json_object *events, *v;
	int untracked = 0;
	const char *subject, *state;
	struct rec_rstate *rs;
	char epath[REC_DUMP_PATH2];
	size_t n;
	int err;

	err = get_key(r, obj, path, "key", &key) ?:
	      get_key(r, obj, path, "recorder", &recorder) ?:
	      get_cstr(r, obj, path, "subject", REC_SUBJECT_MAX - 1, &subject) ?:
	      get_u64(r, obj, path, "cap", 2, REC_CAP_MAX, &cap) ?:
	      get_cstr(r, obj, path, "state", 16, &state) ?:
	      get_u64(r, obj, path, "seen", 0, UINT64_MAX, &seen) ?:
	      get_u64(r, obj, path, "kept", 0, UINT64_MAX, &kept) ?:
	      get_u64(r, obj, path, "dropped", 0, UINT64_MAX, &dropped) ?:
	      get_u64(r, obj, path, "stale", 0, UINT64_MAX, &stale) ?:
	      get_array(r, obj, path, "events", cap, &events, &n);
	if (err)
		return err;
	if (key == 0 || key == UINT64_MAX)
		return fail_at(r, path, "key", "0x%" PRIx64 " is not a recording key", key);
	if (rec_proc__find(p, key))
		return fail_at(r, path, "key", "duplicate 0x%" PRIx64, key);
	if (strcmp(state, "live") != 0 && strcmp(state, "retired") != 0)
		return fail_at(r, path, "state", "expected \"live\" or \"retired\"");

	/* Optional (newer dumps): the dropped events that failed validation, why untracked. */
	if (json_object_object_get_ex(obj, "invalid", &v) &&
	    as_u64(r, v, path, "invalid", 0, dropped, &invalid))
		return -EINVAL;
	if (json_object_object_get_ex(obj, "untracked", &v)) {
		const char *why = json_object_get_string(v);

		if (!json_object_is_type(v, json_type_string) ||
		    (strcmp(why, "over-quota") != 0 && strcmp(why, "table-full") != 0))
			return fail_at(r, path, "untracked",
				       "expected \"over-quota\" or \"table-full\"");
		untracked = !strcmp(why, "over-quota") ? REC_UT_OVER_QUOTA : REC_UT_TABLE_FULL;
	}

	rs = rec_proc__get(p, key, recorder, cap);
	if (!rs)
		return fail_nomem(r);
	strcpy(rs->subject, subject);
	rs->retired = !strcmp(state, "retired");
	rs->untracked = untracked;
	rs->produced = seen;
	rs->received = kept;
	rs->dropped = dropped - invalid;
	rs->invalid = invalid;
	rs->stale = stale;

	for (size_t i = 0; i < n; i++) {
		struct json_object *ev;

		err = element(r, events, i, path, "events", epath, sizeof(epath), &ev) ?:
		      read_event(r, ev, epath, p, rs);
		if (err)
			return err;
	}
	return 0;
}

static int read_stack(struct reader *r, struct json_object *obj, const char *path,
		      struct rec_thread_stack *ts)
{
	struct json_object *frames;
	char fpath[REC_DUMP_PATH2];
	size_t n;
	int err;

	err = get_u32(r, obj, path, "tid", &ts->tid) ?:
	      get_u32(r, obj, path, "overflow", &ts->overflow) ?:
	      get_array(r, obj, path, "frames", REC_MAX_DEPTH, &frames, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct json_object *fo;
		uint64_t span, meta, recording;

		err = element(r, frames, i, path, "frames", fpath, sizeof(fpath), &fo) ?:
		      get_key(r, fo, fpath, "span", &span) ?:
		      get_key(r, fo, fpath, "callsite", &meta) ?:
		      get_key(r, fo, fpath, "recording", &recording);
		if (err)
			return err;
		ts->frames[i] = (struct rec_frame){ .span = span, .meta = meta,
						    .recording = recording };
	}
	ts->depth = (uint32_t)n;
	return 0;
}

static int read_stacks(struct reader *r, struct json_object *root, struct rec_proc *p)
{
	struct rec_thread_stack *v;
	struct json_object *arr;
	char path[REC_DUMP_PATH1];
	size_t n;
	int err;

	err = get_array(r, root, "", "stacks", REC_DUMP_MAX_STACKS, &arr, &n);
	if (err || !n)
		return err;
	v = calloc(n, sizeof(*v));
	if (!v)
		return fail_nomem(r);
	for (size_t i = 0; i < n; i++) {
		struct json_object *obj;

		err = element(r, arr, i, "", "stacks", path, sizeof(path), &obj) ?:
		      read_stack(r, obj, path, &v[i]);
		if (err) {
			free(v);
			return err;
		}
	}
	rec_proc__set_stacks(p, v, n);
	return 0;
}

static int read_dump(struct reader *r, struct json_object *root, struct rec_proc *p,
		     struct rec_dump_counters *counters)
{
	struct json_object *v, *arr;
	const char *dumped_at;
	uint64_t version, pid, ns_pid;
	char path[REC_DUMP_PATH1];
	size_t n;
	int err;

	if (!json_object_is_type(root, json_type_object))
		return fail_at(r, "", NULL, "not a recorder dump: expected a JSON object");
	if (!json_object_object_get_ex(root, "format", &v))
		return fail_at(r, "", NULL, "not a recorder dump: missing \"format\"");
	if (!json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "recorder-dump") != 0)
		return fail_at(r, "", NULL,
			       "not a recorder dump: \"format\" is not \"recorder-dump\"");
	err = get_u64(r, root, "", "version", 0, UINT64_MAX, &version);
	if (err)
		return err;
	if (version != REC_DUMP_VERSION)
		return fail_at(r, "", NULL,
			       "version %" PRIu64 " is not supported (this build reads version %d)",
			       version, REC_DUMP_VERSION);

	err = get_u64(r, root, "", "pid", 1, INT_MAX, &pid) ?:
	      get_u64(r, root, "", "ns_pid", 0, INT_MAX, &ns_pid);
	if (err)
		return err;
	p->pid = (pid_t)pid;
	p->ns_pid = (pid_t)ns_pid;
	p->alive = 0;
	p->uid = (uid_t)-1;
	err = read_ended(r, root, p) ?:
	      get_cstr(r, root, "", "dumped_at", 64, &dumped_at) ?:
	      get_member(r, root, "", "clock_offset_ns", &v) ?:
	      as_i64(r, v, "", "clock_offset_ns", &p->clock_offset_ns) ?:
	      read_counters(r, root, p, counters) ?:
	      get_u64(r, root, "", "malformed", 0, UINT64_MAX, &p->malformed) ?:
	      get_u64(r, root, "", "orphans", 0, UINT64_MAX, &p->orphans);
	if (err)
		return err;

	err = read_limits(r, root, p);
	if (err)
		return err;

	err = get_array(r, root, "", "callsites", SIZE_MAX, &arr, &n);
	for (size_t i = 0; !err && i < n; i++) {
		err = element(r, arr, i, "", "callsites", path, sizeof(path), &v) ?:
		      read_callsite(r, v, path, p);
	}
	if (err)
		return err;

	err = get_array(r, root, "", "recordings", REC_DUMP_MAX_RECORDINGS, &arr, &n);
	for (size_t i = 0; !err && i < n; i++) {
		err = element(r, arr, i, "", "recordings", path, sizeof(path), &v) ?:
		      read_recording(r, v, path, p);
	}
	if (err)
		return err;

	return read_stacks(r, root, p);
}

/* Reads the whole file at path into a malloc'ed buffer. Returns 0 or -errno. */
static int slurp(const char *path, char **bufp, size_t *lenp)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	FILE *f;
	int err = 0;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	for (;;) {
		size_t got;

		if (len == cap) {
			char *nbuf;

			/* json-c takes an int length. */
			if (cap > INT_MAX / 2) {
				err = -EFBIG;
				break;
			}
			cap = cap ? cap * 2 : 65536;
			nbuf = realloc(buf, cap);
			if (!nbuf) {
				err = -ENOMEM;
				break;
			}
			buf = nbuf;
		}
		errno = 0;
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f))
				err = errno ? -errno : -EIO;
			break;
		}
	}
	fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

/* Parses buf as exactly one JSON document. */
static int parse_json(struct reader *r, const char *buf, size_t len, struct json_object **root)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	size_t end;

	tok = json_tokener_new();
	if (!tok)
		return fail_nomem(r);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	*root = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr == json_tokener_continue) {
		json_object_put(*root);
		return fail_at(r, "", NULL, "not JSON: the document ends early");
	}
	if (jerr != json_tokener_success || !*root) {
		json_object_put(*root);
		return fail_at(r, "", NULL, "not JSON: %s at byte %zu",
			       json_tokener_error_desc(jerr), end);
	}
	for (; end < len; end++) {
		if (!strchr(" \t\r\n", buf[end]) || !buf[end]) {
			json_object_put(*root);
			return fail_at(r, "", NULL, "not JSON: trailing data at byte %zu", end);
		}
	}
	return 0;
}

/*
 * Reads a dump into p (which it initializes; the caller frees it with
 * rec_proc__fini) and, if counters is not NULL, the counters. Returns 0, or
 * -EINVAL with a message in err for a malformed dump, -ENOMEM, or -errno if the
 * file can't be read. On error p is left zeroed.
 */
int rec_dump__read(const char *path, struct rec_proc *p, struct rec_dump_counters *counters,
		   char *err, size_t errlen)
{
	struct reader r = { .err = err, .errlen = errlen };
	struct json_object *root = NULL;
	char *buf = NULL;
	size_t len = 0;
	int ret;

	memset(p, 0, sizeof(*p));
	if (counters)
		memset(counters, 0, sizeof(*counters));
	if (err && errlen)
		err[0] = '\0';

	ret = slurp(path, &buf, &len);
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = parse_json(&r, buf, len, &root);
	free(buf);
	if (ret)
		return ret;
	ret = read_dump(&r, root, p, counters);
	json_object_put(root);
	if (ret) {
		rec_proc__fini(p);
		if (counters)
			memset(counters, 0, sizeof(*counters));
	}
	return ret;
}
