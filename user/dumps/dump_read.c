// SPDX-License-Identifier: MIT
/*
 * Reading black-box dumps (dump.h, docs/dump-format.md). The dump is walked
 * with the pull reader of json_read.h, which builds nothing: the only memory
 * that grows is the model itself, and a 64 KiB window on the file. Every
 * callsite blob and every event record is rebuilt byte for byte and handed to
 * the same parser and decoder as live data, so a dump is never trusted more
 * than a target is.
 *
 * Each object of the dump has a table of the members this version knows
 * (enum + names below). One walk of the object finds them, skipping any other
 * member without reading it; they are then read in the order the checks need,
 * wherever they are in the file. A new member is one more entry in a table.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/dump.h"
#include "base/json_read.h"
#include "model/names.h"
#include "base/text.h"

_Static_assert(REC_DUMP_READ_MAX_STACKS >= REC_MAX_DEAD_STACKS_LIMIT,
	       "a dump must hold every dead-thread stack kept");
_Static_assert(REC_DUMP_READ_MAX_RECORDINGS >= REC_DUMP_MAX_RECORDINGS &&
		       REC_DUMP_READ_MAX_STACKS >= REC_DUMP_MAX_STACKS,
	       "the reader must take what the writer writes");

/*
 * Room for the name of a place in a dump, by depth: "recordings[1]",
 * "recordings[1].events[2]", "recordings[1].events[2].values[3]". Each holds its
 * parent plus the longest index.
 */
#define REC_DUMP_PATH1 64
#define REC_DUMP_PATH2 128
#define REC_DUMP_PATH3 192
/* Room for a member's name: longer names are no member this version knows. */
#define REC_DUMP_KEY_MAX 32

struct reader {
	struct rec_json_read *jr;
	char *err;
	size_t errlen;
};

/* Sets the message "<path>.<key>: <fmt...>" (key may be NULL). */
__attribute__((format(printf, 4, 5))) static void set_error(struct reader *r, const char *path,
							    const char *key, const char *fmt, ...)
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

/* An error of the JSON reader: not JSON (-EINVAL), or a failed read (its errno). */
static int fail_input(struct reader *r, int err)
{
	if (err == -EINVAL)
		return fail_at(r, "", NULL, "not JSON: %s", rec_json_read__error(r->jr));
	if (err == -ENOMEM)
		return fail_nomem(r);
	if (r->err && r->errlen)
		snprintf(r->err, r->errlen, "%s", strerror(-err));
	return err;
}

/* ---- objects and their members ---- */

/* An object of the dump and the members of it that this version knows. */
struct object {
	const char *path;	 /* its name in messages: "", "ended", "recordings[2]" */
	const char *const *keys; /* the names of the members it knows */
	size_t nkeys;
	struct rec_json_value *m; /* m[i] is member keys[i]; type REC_JSON_NONE if absent */
};

/*
 * Finds o's members in the object v, in one walk. A member this version does
 * not know is skipped without being read; one it knows twice is refused.
 */
static int scan_object(struct reader *r, const struct rec_json_value *v, struct object *o)
{
	struct rec_json_value m;
	struct rec_json_iter it;
	char key[REC_DUMP_KEY_MAX];
	size_t keylen, i;
	int ret;

	for (i = 0; i < o->nkeys; i++)
		o->m[i].type = REC_JSON_NONE;
	ret = rec_json_read__iter(r->jr, v, &it);
	if (ret)
		return fail_input(r, ret);
	while ((ret = rec_json_read__next(r->jr, &it, &m, key, sizeof(key), &keylen)) > 0) {
		if (keylen >= sizeof(key))
			continue;
		for (i = 0; i < o->nkeys; i++)
			if (keylen == strlen(o->keys[i]) && !memcmp(key, o->keys[i], keylen))
				break;
		if (i == o->nkeys)
			continue;
		if (o->m[i].type != REC_JSON_NONE)
			return fail_at(r, o->path, NULL, "\"%s\" appears twice", o->keys[i]);
		o->m[i] = m;
	}
	return ret ? fail_input(r, ret) : 0;
}

/* o's member i, which must be there. */
static int get_member(struct reader *r, const struct object *o, int i,
		      const struct rec_json_value **v)
{
	if (o->m[i].type == REC_JSON_NONE)
		return fail_at(r, o->path, NULL, "missing \"%s\"", o->keys[i]);
	*v = &o->m[i];
	return 0;
}

/* Checks that v (named path.key) is an unsigned integer in [min, max] and stores it. */
static int as_u64(struct reader *r, const struct rec_json_value *v, const char *path,
		  const char *key, uint64_t min, uint64_t max, uint64_t *out)
{
	struct rec_json_number n;
	int err;

	if (v->type != REC_JSON_NUMBER)
		return fail_at(r, path, key, "expected an unsigned integer");
	err = rec_json_read__number(r->jr, v, &n);
	if (err)
		return fail_input(r, err);
	/* -0 is 0. */
	if (!n.integer || (n.negative && (n.overflow || n.magnitude)))
		return fail_at(r, path, key, "expected an unsigned integer");
	if (n.overflow)
		return fail_at(r, path, key, "%s is out of range (%" PRIu64 "..%" PRIu64 ")",
			       n.text, min, max);
	if (n.magnitude < min || n.magnitude > max)
		return fail_at(r, path, key,
			       "%" PRIu64 " is out of range (%" PRIu64 "..%" PRIu64 ")",
			       n.magnitude, min, max);
	*out = n.magnitude;
	return 0;
}

static int get_u64(struct reader *r, const struct object *o, int i, uint64_t min, uint64_t max,
		   uint64_t *out)
{
	const struct rec_json_value *v;

	return get_member(r, o, i, &v) ?: as_u64(r, v, o->path, o->keys[i], min, max, out);
}

static int get_u32(struct reader *r, const struct object *o, int i, uint32_t *out)
{
	uint64_t v;
	int err = get_u64(r, o, i, 0, UINT32_MAX, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

/* Checks that v is an integer that fits int64_t and stores it. */
static int as_i64(struct reader *r, const struct rec_json_value *v, const char *path,
		  const char *key, int64_t *out)
{
	struct rec_json_number n;
	int err;

	if (v->type != REC_JSON_NUMBER)
		return fail_at(r, path, key, "expected an integer");
	err = rec_json_read__number(r->jr, v, &n);
	if (err)
		return fail_input(r, err);
	if (!n.integer)
		return fail_at(r, path, key, "expected an integer");
	if (n.overflow || n.magnitude > (uint64_t)INT64_MAX + n.negative)
		return fail_at(r, path, key, "%s is out of range for a signed integer", n.text);
	/* Through unsigned arithmetic: -2^63 has no positive twin. */
	*out = n.negative ? (int64_t)(0 - n.magnitude) : (int64_t)n.magnitude;
	return 0;
}

/*
 * Checks that v is a string and reads it into buf (size bytes, see
 * rec_json_read__string: a longer one is cut, *info has its whole length).
 */
static int as_str(struct reader *r, const struct rec_json_value *v, const char *path,
		  const char *key, char *buf, size_t size, struct rec_json_str *info)
{
	int err;

	if (v->type != REC_JSON_STRING)
		return fail_at(r, path, key, "expected a string");
	err = rec_json_read__string(r->jr, v, buf, size, info);
	return err ? fail_input(r, err) : 0;
}

/* A string member without NUL bytes, of at most max bytes, into buf (max + 1 bytes). */
static int get_cstr(struct reader *r, const struct object *o, int i, size_t max, char *buf)
{
	const struct rec_json_value *v;
	struct rec_json_str info;
	int err;

	err = get_member(r, o, i, &v) ?: as_str(r, v, o->path, o->keys[i], buf, max + 1, &info);
	if (err)
		return err;
	if (info.has_nul)
		return fail_at(r, o->path, o->keys[i], "contains a NUL byte");
	if (info.len > max)
		return fail_at(r, o->path, o->keys[i], "longer than %zu bytes", max);
	return 0;
}

/* Parses a "0x…" key: 1 to 16 hex digits. */
static int as_key(struct reader *r, const struct rec_json_value *v, const char *path,
		  const char *key, uint64_t *out)
{
	struct rec_json_str info;
	char s[20];
	uint64_t k = 0;

	if (as_str(r, v, path, key, s, sizeof(s), &info))
		return -EINVAL;
	if (info.len < 3 || info.len > 18 || s[0] != '0' || s[1] != 'x')
		goto bad;
	for (size_t i = 2; i < info.len; i++) {
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

static int get_key(struct reader *r, const struct object *o, int i, uint64_t *out)
{
	const struct rec_json_value *v;

	return get_member(r, o, i, &v) ?: as_key(r, v, o->path, o->keys[i], out);
}

/* An array member of at most max elements. */
static int get_array(struct reader *r, const struct object *o, int i, uint64_t max,
		     const struct rec_json_value **v)
{
	int err = get_member(r, o, i, v);

	if (err)
		return err;
	if ((*v)->type != REC_JSON_ARRAY)
		return fail_at(r, o->path, o->keys[i], "expected an array");
	if ((*v)->count > max)
		return fail_at(r, o->path, o->keys[i], "%" PRIu64 " elements, more than %" PRIu64,
			       (*v)->count, max);
	return 0;
}

static int get_object(struct reader *r, const struct object *o, int i,
		      const struct rec_json_value **v)
{
	int err = get_member(r, o, i, v);

	if (!err && (*v)->type != REC_JSON_OBJECT)
		return fail_at(r, o->path, o->keys[i], "expected an object");
	return err;
}

static int get_bool(struct reader *r, const struct object *o, int i, int *out)
{
	const struct rec_json_value *v;
	int err = get_member(r, o, i, &v);

	if (err)
		return err;
	if (v->type != REC_JSON_TRUE && v->type != REC_JSON_FALSE)
		return fail_at(r, o->path, o->keys[i], "expected true or false");
	*out = v->type == REC_JSON_TRUE;
	return 0;
}

/* Reads one element of an array: elem, named path, the index-th. */
typedef int (*element_fn)(struct reader *r, const struct rec_json_value *elem, const char *path,
			  size_t index, void *ctx);

/*
 * Calls fn for each element of arr, o's member i (at most arr->count of them,
 * which get_array checked), naming each "<o's path>.<key>[<i>]" in path (size
 * bytes). Each must be an object.
 */
static int each_object(struct reader *r, const struct object *o, int i,
		       const struct rec_json_value *arr, char *path, size_t size, element_fn fn,
		       void *ctx)
{
	struct rec_json_value elem;
	struct rec_json_iter it;
	size_t n = 0;
	int ret;

	ret = rec_json_read__iter(r->jr, arr, &it);
	if (ret)
		return fail_input(r, ret);
	while ((ret = rec_json_read__next(r->jr, &it, &elem, NULL, 0, NULL)) > 0) {
		/* Only if the file changed since it was checked. */
		if (n == arr->count)
			return fail_at(r, o->path, o->keys[i], "changed while it was read");
		snprintf(path, size, "%s%s%s[%zu]", o->path, *o->path ? "." : "", o->keys[i], n);
		if (elem.type != REC_JSON_OBJECT)
			return fail_at(r, path, NULL, "expected an object");
		ret = fn(r, &elem, path, n++, ctx);
		if (ret)
			return ret;
	}
	return ret ? fail_input(r, ret) : 0;
}

/* ---- the parts of a dump ---- */

enum {
	ENDED_HOW,
	ENDED_CODE,
	ENDED_SIGNAL,
	ENDED_CORE_DUMPED,
	ENDED_TIME_NS,
	ENDED_N
};
static const char *const ended_keys[ENDED_N] = {
	[ENDED_HOW] = "how",	     [ENDED_CODE] = "code",
	[ENDED_SIGNAL] = "signal",   [ENDED_CORE_DUMPED] = "core_dumped",
	[ENDED_TIME_NS] = "time_ns",
};

static int read_ended(struct reader *r, const struct rec_json_value *v, struct rec_proc *p)
{
	struct rec_json_value m[ENDED_N];
	struct object o = { "ended", ended_keys, ENDED_N, m };
	enum rec_end end;
	uint64_t code;
	char how[17];
	int err;

	err = scan_object(r, v, &o) ?: get_cstr(r, &o, ENDED_HOW, 16, how);
	if (err)
		return err;
	if (rec_names__parse_end_how(how, &end))
		return fail_at(r, "ended", "how",
			       "expected \"exit\", \"signal\", \"running\" or \"unknown\"");
	p->end = end;
	switch (end) {
	case REC_END_EXIT:
		err = get_u64(r, &o, ENDED_CODE, 0, 255, &code);
		p->end_code = (int)code;
		break;
	case REC_END_SIGNAL:
		err = get_u64(r, &o, ENDED_SIGNAL, 1, 127, &code)
			      ?: get_bool(r, &o, ENDED_CORE_DUMPED, &p->end_core);
		p->end_code = (int)code;
		break;
	default:
		break;
	}
	/* Optional: when it died. */
	if (!err && (end == REC_END_EXIT || end == REC_END_SIGNAL) &&
	    m[ENDED_TIME_NS].type != REC_JSON_NONE)
		err = get_u64(r, &o, ENDED_TIME_NS, 0, UINT64_MAX, &p->ended_ns);
	return err;
}

/* The counters go to p->counters (for --stats) and, if not NULL, to counters. */
static int read_counters(struct reader *r, const struct rec_json_value *v, struct rec_proc *p,
			 struct rec_dump_counters *counters)
{
	const char *names[REC_C_MAX];
	struct rec_json_value m[REC_C_MAX];
	struct object o = { "counters", names, REC_C_MAX, m };
	int err;

	for (int c = 0; c < REC_C_MAX; c++)
		names[c] = rec_names__counter(c);
	err = scan_object(r, v, &o);
	for (int c = 0; !err && c < REC_C_MAX; c++) {
		uint64_t val = 0;

		/* A counter this dump does not have reads as zero. */
		if (m[c].type == REC_JSON_NONE)
			continue;
		err = as_u64(r, &m[c], "counters", names[c], 0, UINT64_MAX, &val);
		p->counters[c] = val;
		if (counters)
			counters->v[c] = val;
	}
	return err;
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

enum {
	CS_ADDR,
	CS_KIND,
	CS_LEVEL,
	CS_NAME,
	CS_TARGET,
	CS_FILE,
	CS_LINE,
	CS_MESSAGE,
	CS_FIELDS,
	CS_N
};
static const char *const callsite_keys[CS_N] = {
	[CS_ADDR] = "addr", [CS_KIND] = "kind",	      [CS_LEVEL] = "level",
	[CS_NAME] = "name", [CS_TARGET] = "target",   [CS_FILE] = "file",
	[CS_LINE] = "line", [CS_MESSAGE] = "message", [CS_FIELDS] = "fields",
};

/* The strings of a callsite being read: each may take the whole blob, no more. */
struct callsite_strings {
	char kind[2], name[REC_CALLSITE_MAX + 1], target[REC_CALLSITE_MAX + 1];
	char file[REC_CALLSITE_MAX + 1], message[REC_CALLSITE_MAX + 1];
	char field[REC_CALLSITE_MAX + 1];
	struct blob b;
};

static int read_callsite(struct reader *r, const struct rec_json_value *v, const char *path,
			 size_t index, void *ctx)
{
	struct rec_proc *p = ctx;
	struct rec_json_value m[CS_N], fv;
	struct object o = { path, callsite_keys, CS_N, m };
	const struct rec_json_value *fields;
	struct callsite_strings *s;
	struct rec_callsite *cs;
	struct rec_json_iter it;
	uint64_t addr, level, line;
	char fpath[REC_DUMP_PATH2];
	size_t n = 0;
	int err;

	(void)index;
	s = calloc(1, sizeof(*s));
	if (!s)
		return fail_nomem(r);
	err = scan_object(r, v, &o) ?:
	      get_key(r, &o, CS_ADDR, &addr) ?:
	      get_cstr(r, &o, CS_KIND, 1, s->kind) ?:
	      get_u64(r, &o, CS_LEVEL, REC_LEVEL_TRACE, REC_LEVEL_RUNTIME, &level) ?:
	      get_cstr(r, &o, CS_NAME, REC_CALLSITE_MAX, s->name) ?:
	      get_cstr(r, &o, CS_TARGET, REC_CALLSITE_MAX, s->target) ?:
	      get_cstr(r, &o, CS_FILE, REC_CALLSITE_MAX, s->file) ?:
	      get_u64(r, &o, CS_LINE, 0, UINT32_MAX, &line) ?:
	      get_cstr(r, &o, CS_MESSAGE, REC_CALLSITE_MAX, s->message) ?:
	      get_array(r, &o, CS_FIELDS, REC_MAX_FIELDS, &fields);
	if (err)
		goto out;
	if (addr == 0 || addr == UINT64_MAX) {
		err = fail_at(r, path, "addr", "0x%" PRIx64 " is not a callsite address", addr);
		goto out;
	}
	if (rec_u64map__get(&p->callsites, addr)) {
		err = fail_at(r, path, "addr", "duplicate 0x%" PRIx64, addr);
		goto out;
	}
	if (strcmp(s->kind, "E") != 0 && strcmp(s->kind, "S") != 0) {
		err = fail_at(r, path, "kind", "expected \"E\" or \"S\"");
		goto out;
	}

	blob_add(&s->b, "RCS1");
	blob_add(&s->b, s->kind);
	blob_add_u64(&s->b, level);
	blob_add(&s->b, s->name);
	blob_add(&s->b, s->target);
	blob_add(&s->b, s->file);
	blob_add_u64(&s->b, line);
	blob_add(&s->b, s->message);
	blob_add_u64(&s->b, fields->count);
	err = rec_json_read__iter(r->jr, fields, &it);
	while (!err && (err = rec_json_read__next(r->jr, &it, &fv, NULL, 0, NULL)) > 0) {
		struct rec_json_str info;

		snprintf(fpath, sizeof(fpath), "%s.fields[%zu]", path, n++);
		err = as_str(r, &fv, fpath, NULL, s->field, sizeof(s->field), &info);
		if (err)
			goto out;
		if (!info.len) {
			err = fail_at(r, fpath, NULL, "empty field name");
			goto out;
		}
		if (info.has_nul) {
			err = fail_at(r, fpath, NULL, "contains a NUL byte");
			goto out;
		}
		if (info.len > REC_CALLSITE_MAX)
			s->b.overflow = 1;
		blob_add(&s->b, s->field);
	}
	if (err) {
		err = fail_input(r, err);
		goto out;
	}
	/* Only if the file changed since it was checked. */
	if (n != fields->count) {
		err = fail_at(r, path, "fields", "changed while it was read");
		goto out;
	}
	if (s->b.overflow) {
		err = fail_at(r, path, NULL, "longer than the %d bytes a callsite may take",
			      REC_CALLSITE_MAX);
		goto out;
	}

	cs = malloc(sizeof(*cs));
	if (!cs) {
		err = fail_nomem(r);
		goto out;
	}
	if (rec_callsite__parse(cs, s->b.buf, s->b.len) != 0) {
		free(cs);
		err = fail_at(r, path, NULL, "not a valid callsite");
		goto out;
	}
	/* Cached compactly; a model read from a dump has no limit on it. */
	if (rec_proc__add_callsite(p, addr, cs))
		err = fail_nomem(r);
	free(cs);
out:
	free(s);
	return err;
}

/* A string being packed into an event's string area, as the BPF side packs it. */
struct str_area {
	char *base;   /* REC_STR_AREA bytes */
	uint32_t off; /* next free byte */
};

enum {
	VAL_TYPE,
	VAL_VALUE,
	VAL_STATUS,
	VAL_N
};
static const char *const value_keys[VAL_N] = {
	[VAL_TYPE] = "type",
	[VAL_VALUE] = "value",
	[VAL_STATUS] = "status",
};

static int read_str_value(struct reader *r, const struct object *o, const struct rec_json_value *v,
			  struct str_area *area, uint64_t *slot)
{
	enum rec_str_status st;
	struct rec_json_str info;
	char s[REC_STR_MAX], status[17];

	if (as_str(r, v, o->path, "value", s, sizeof(s), &info) ||
	    get_cstr(r, o, VAL_STATUS, 16, status))
		return -EINVAL;
	if (rec_names__parse_str_status(status, &st))
		return fail_at(r, o->path, "status",
			       "expected \"ok\", \"truncated\", \"fault\", "
			       "\"null\" or \"nospace\"");
	if (st != REC_STR_OK && st != REC_STR_TRUNCATED) {
		if (info.len)
			return fail_at(r, o->path, "value",
				       "must be \"\" when the status is \"%s\"", status);
		*slot = REC_STR_SLOT(0, 0, st);
		return 0;
	}
	if (info.len > REC_STR_MAX - 1)
		return fail_at(r, o->path, "value", "string longer than %d bytes", REC_STR_MAX - 1);
	/* Each string is followed by its NUL, as bpf_probe_read_user_str() leaves it. */
	if (info.len + 1 > REC_STR_AREA - area->off)
		return fail_at(r, o->path, "value",
			       "the event's strings take more than the %d bytes of its string area",
			       REC_STR_AREA);
	memcpy(area->base + area->off, s, info.len);
	*slot = REC_STR_SLOT(area->off, info.len, st);
	area->off += (uint32_t)info.len + 1;
	return 0;
}

static int read_f64_value(struct reader *r, const struct rec_json_value *v, const char *path,
			  uint64_t *raw)
{
	struct rec_json_number n;
	struct rec_json_str info;
	char s[8];
	double d;
	int err;

	if (v->type == REC_JSON_NUMBER) {
		err = rec_json_read__number(r->jr, v, &n);
		if (err)
			return fail_input(r, err);
		/* Any JSON number: strtod() rounds it to the nearest double, as written. */
		d = strtod(n.text, NULL);
		if (isinf(d))
			return fail_at(r, path, "value", "%s is out of range for a double", n.text);
	} else if (v->type == REC_JSON_STRING) {
		err = rec_json_read__string(r->jr, v, s, sizeof(s), &info);
		if (err)
			return fail_input(r, err);
		if (info.len == 3 && !strcmp(s, "nan"))
			d = NAN;
		else if (info.len == 3 && !strcmp(s, "inf"))
			d = INFINITY;
		else if (info.len == 4 && !strcmp(s, "-inf"))
			d = -INFINITY;
		else
			goto bad;
	} else {
		goto bad;
	}
	memcpy(raw, &d, sizeof(*raw));
	return 0;
bad:
	return fail_at(r, path, "value", "expected a number, \"nan\", \"inf\" or \"-inf\"");
}

/* Reads one value into its type and raw value slot. */
static int read_value(struct reader *r, const struct rec_json_value *v, const char *path,
		      struct str_area *area, unsigned int *type, uint64_t *raw)
{
	struct rec_json_value m[VAL_N];
	struct object o = { path, value_keys, VAL_N, m };
	const struct rec_json_value *val;
	enum rec_field_type ft;
	char t[9];
	int64_t i;
	int err;

	err = scan_object(r, v, &o) ?: get_cstr(r, &o, VAL_TYPE, 8, t) ?:
	      get_member(r, &o, VAL_VALUE, &val);
	if (err)
		return err;
	if (rec_names__parse_field_type(t, &ft))
		return fail_at(r, path, "type",
			       "expected \"str\", \"i64\", \"u64\", \"f64\" or \"bool\"");
	*type = ft;
	switch (ft) {
	case REC_TYPE_STR:
		return read_str_value(r, &o, val, area, raw);
	case REC_TYPE_I64:
		err = as_i64(r, val, path, "value", &i);
		*raw = (uint64_t)i;
		return err;
	case REC_TYPE_U64:
		return as_u64(r, val, path, "value", 0, UINT64_MAX, raw);
	case REC_TYPE_F64:
		return read_f64_value(r, val, path, raw);
	default:
		/* REC_TYPE_BOOL: the table parses no other type. */
		if (val->type != REC_JSON_TRUE && val->type != REC_JSON_FALSE)
			return fail_at(r, path, "value", "expected true or false");
		*raw = val->type == REC_JSON_TRUE;
		return 0;
	}
}

/* The event record being rebuilt, exactly as the ring buffer would deliver it. */
struct event_build {
	struct str_area area;
	int has_str;
	union {
		struct rec_event_rec e;
		unsigned char bytes[REC_EVENT_REC_MAX];
	} rec; /* last: struct rec_event_rec ends with a flexible array */
};

static int read_one_value(struct reader *r, const struct rec_json_value *v, const char *path,
			  size_t i, void *ctx)
{
	struct event_build *b = ctx;
	unsigned int type;
	uint64_t raw;
	int err;

	err = read_value(r, v, path, &b->area, &type, &raw);
	if (err)
		return err;
	b->rec.e.values[i] = raw;
	b->rec.e.types |= (uint64_t)type << (4 * i);
	b->has_str |= type == REC_TYPE_STR;
	return 0;
}

enum {
	EV_SEQ,
	EV_TID,
	EV_TIME_NS,
	EV_CALLSITE,
	EV_VALUES,
	EV_LEVEL, /* optional: the event's own level (REC_EVENT_LEVEL) */
	EV_N
};
static const char *const event_keys[EV_N] = {
	[EV_SEQ] = "seq",	    [EV_TID] = "tid",	    [EV_TIME_NS] = "time_ns",
	[EV_CALLSITE] = "callsite", [EV_VALUES] = "values", [EV_LEVEL] = "level",
};

struct recording_ctx {
	struct rec_proc *p;
	struct rec_rstate *rs;
	uint64_t next_seq; /* events are oldest first: each seq is at least this */
};

static int read_event(struct reader *r, const struct rec_json_value *v, const char *path,
		      size_t index, void *ctx)
{
	struct recording_ctx *rc = ctx;
	struct rec_rstate *rs = rc->rs;
	struct rec_json_value m[EV_N];
	struct object o = { path, event_keys, EV_N, m };
	const struct rec_json_value *values;
	struct event_build b;
	struct rec_event_rec *e = &b.rec.e;
	struct rec_decoded d;
	char vpath[REC_DUMP_PATH3];
	uint64_t seq, tid, time_ns, meta, level = 0;
	size_t size;
	int err;

	(void)index;
	memset(&b, 0, sizeof(b));
	b.area.base = (char *)b.rec.bytes + sizeof(*e);
	err = scan_object(r, v, &o) ?:
	      get_u64(r, &o, EV_SEQ, 0, UINT64_MAX, &seq) ?:
	      get_u64(r, &o, EV_TID, 0, UINT32_MAX, &tid) ?:
	      get_u64(r, &o, EV_TIME_NS, 0, UINT64_MAX, &time_ns) ?:
	      get_key(r, &o, EV_CALLSITE, &meta) ?:
	      get_array(r, &o, EV_VALUES, REC_MAX_FIELDS, &values);
	if (!err && m[EV_LEVEL].type != REC_JSON_NONE)
		err = get_u64(r, &o, EV_LEVEL, 0, REC_LEVEL_ERROR, &level);
	if (err)
		return err;
	if (seq >= rs->produced)
		return fail_at(r, path, "seq", "%" PRIu64 " is not below seen (%" PRIu64 ")", seq,
			       rs->produced);
	/*
	 * Oldest first, as written: each is stored at the new end of the spool,
	 * so a dump of any order cannot make reading it quadratic.
	 */
	if (seq + 1 == rc->next_seq)
		return fail_at(r, path, "seq", "duplicate seq %" PRIu64, seq);
	if (seq < rc->next_seq)
		return fail_at(r, path, "seq",
			       "%" PRIu64 " comes after seq %" PRIu64 " (events are oldest first)",
			       seq, rc->next_seq - 1);
	rc->next_seq = seq + 1;
	err = each_object(r, &o, EV_VALUES, values, vpath, sizeof(vpath), read_one_value, &b);
	if (err)
		return err;
	/* The string area trimmed to the bytes used, as rec_event__normalize() leaves it. */
	size = sizeof(*e) + (b.has_str ? b.area.off : 0);
	e->hdr.type = REC_RT_EVENT;
	e->hdr.size = (uint16_t)size;
	e->hdr.tgid = (uint32_t)rc->p->pid;
	e->hdr.tid = (uint32_t)tid;
	e->hdr.time_ns = time_ns;
	e->recording = rs->key;
	e->seq = seq;
	e->meta = meta;
	e->types |= level << REC_TYPES_LEVEL_SHIFT;

	if (rec_event__decode(b.rec.bytes, size, &d) != 0)
		return fail_at(r, path, NULL, "not a valid event record");
	err = rec_spool__push(rs->spool, d.seq, b.rec.bytes, size);
	if (err == -EEXIST)
		return fail_at(r, path, "seq", "duplicate seq %" PRIu64, d.seq);
	if (err == -ESTALE)
		return fail_at(r, path, "seq",
			       "seq %" PRIu64 " is older than the last %" PRIu64 " (cap) events",
			       d.seq, rs->cap);
	if (err == -ENOMEM)
		return fail_nomem(r);
	if (err)
		return fail_at(r, path, "seq", "cannot be stored (%s)", strerror(-err));
	return 0;
}

enum {
	RS_KEY,
	RS_RECORDER,
	RS_SUBJECT,
	RS_CAP,
	RS_STATE,
	RS_SEEN,
	RS_KEPT,
	RS_DROPPED,
	RS_STALE,
	RS_EVENTS,
	RS_INVALID,
	RS_UNTRACKED,
	RS_SPANS_SEEN,
	RS_SPANS_DROPPED,
	RS_SPANS_AGED,
	RS_SPANS_LOST,
	RS_SPANS,
	RS_ASKED_CAP,
	RS_N
};
static const char *const recording_keys[RS_N] = {
	[RS_KEY] = "key",
	[RS_RECORDER] = "recorder",
	[RS_SUBJECT] = "subject",
	[RS_CAP] = "cap",
	[RS_STATE] = "state",
	[RS_SEEN] = "seen",
	[RS_KEPT] = "kept",
	[RS_DROPPED] = "dropped",
	[RS_STALE] = "stale",
	[RS_EVENTS] = "events",
	[RS_INVALID] = "invalid",
	[RS_UNTRACKED] = "untracked",
	[RS_SPANS_SEEN] = "spans_seen",
	[RS_SPANS_DROPPED] = "spans_dropped",
	[RS_SPANS_AGED] = "spans_aged",
	[RS_SPANS_LOST] = "spans_lost",
	[RS_SPANS] = "spans",
	[RS_ASKED_CAP] = "asked_cap",
};

enum {
	SP_ID,
	SP_PARENT,
	SP_TID,
	SP_CALLSITE,
	SP_ENTER,
	SP_EXIT,
	SP_CPU,
	SP_BLOCKED,
	SP_RUNQ,
	SP_SWITCHES,
	SP_BLOCKED_BY,
	SP_PARTIAL,
	SP_OFF_CPU,
	SP_OFF_CPU_OMITTED,
	SP_N
};
static const char *const span_keys[SP_N] = {
	[SP_ID] = "id",
	[SP_PARENT] = "parent",
	[SP_TID] = "tid",
	[SP_CALLSITE] = "callsite",
	[SP_ENTER] = "enter_ns",
	[SP_EXIT] = "exit_ns",
	[SP_CPU] = "cpu_ns",
	[SP_BLOCKED] = "blocked_ns",
	[SP_RUNQ] = "runq_ns",
	[SP_SWITCHES] = "switches",
	[SP_BLOCKED_BY] = "blocked_by",
	[SP_PARTIAL] = "sched_partial",
	[SP_OFF_CPU] = "off_cpu",
	[SP_OFF_CPU_OMITTED] = "off_cpu_omitted",
};

enum {
	SL_OFF,
	SL_WAKE,
	SL_ON,
	SL_CAUSE,
	SL_N
};
static const char *const slice_keys[SL_N] = {
	[SL_OFF] = "off_ns",
	[SL_WAKE] = "wake_ns",
	[SL_ON] = "on_ns",
	[SL_CAUSE] = "cause",
};

/* One of a span's longest intervals off the CPU (version 3): inside the span, in order. */
static int read_slice(struct reader *r, const struct rec_json_value *v, const char *path,
		      size_t index, void *ctx)
{
	struct rec_kept_span *s = ctx;
	struct rec_sched_slice *sl = &s->sched.slices[index];
	struct rec_json_value m[SL_N];
	struct object o = { path, slice_keys, SL_N, m };
	char cause[32];
	int err;

	err = scan_object(r, v, &o) ?:
	      get_u64(r, &o, SL_OFF, s->enter, s->exit, &sl->off) ?:
	      get_u64(r, &o, SL_WAKE, sl->off, s->exit, &sl->wake) ?:
	      get_u64(r, &o, SL_ON, sl->wake, s->exit, &sl->on) ?:
	      get_cstr(r, &o, SL_CAUSE, sizeof(cause) - 1, cause);
	if (err)
		return err;
	if (rec_names__parse_offcpu_cause(cause, &sl->cause))
		return fail_at(r, path, "cause", "\"%s\" is not a cause", cause);
	if (index && sl->off < s->sched.slices[index - 1].off)
		return fail_at(r, path, "off_ns", "before the one before it");
	s->sched.nslices = (uint32_t)index + 1;
	return 0;
}

/*
 * A span's blocked_by (version 3): cause name -> ns, at most REC_SCHED_TOP
 * causes the most first, then "other"; they add up to its blocked_ns.
 */
static int read_blocked_by(struct reader *r, const struct rec_json_value *v, const char *path,
			   struct rec_sched_figs *f)
{
	struct rec_json_value m;
	struct rec_json_iter it;
	char key[32];
	size_t keylen;
	uint64_t ns, sum = 0;
	unsigned int n = 0;
	int32_t cause;
	int ret;

	ret = rec_json_read__iter(r->jr, v, &it);
	if (ret)
		return fail_input(r, ret);
	while ((ret = rec_json_read__next(r->jr, &it, &m, key, sizeof(key), &keylen)) > 0) {
		if (keylen >= sizeof(key))
			return fail_at(r, path, "blocked_by", "a cause name is too long");
		ret = as_u64(r, &m, path, "blocked_by", 1, UINT64_MAX, &ns);
		if (ret)
			return ret;
		if (!strcmp(key, "other")) {
			f->other_ns = ns;
		} else if (rec_names__parse_offcpu_cause(key, &cause)) {
			return fail_at(r, path, "blocked_by", "\"%s\" is not a cause", key);
		} else if (n == REC_SCHED_TOP) {
			return fail_at(r, path, "blocked_by", "more than %d causes", REC_SCHED_TOP);
		} else {
			f->top[n].cause = cause;
			f->top[n++].ns = ns;
		}
		sum += ns;
	}
	if (ret)
		return fail_input(r, ret);
	if (sum != f->blocked_ns)
		return fail_at(r, path, "blocked_by", "adds up to %" PRIu64 ", not blocked_ns",
			       sum);
	return 0;
}

/* A span's kernel time (version 3, optional): cpu + blocked + runq = its duration. */
static int read_span_sched(struct reader *r, const struct object *o, struct rec_kept_span *s)
{
	struct rec_sched_figs *f = &s->sched;
	const struct rec_json_value *v;
	int partial = 0, err;

	if (o->m[SP_CPU].type == REC_JSON_NONE)
		return 0;
	err = get_u64(r, o, SP_CPU, 0, UINT64_MAX, &f->cpu_ns) ?:
	      get_u64(r, o, SP_BLOCKED, 0, UINT64_MAX, &f->blocked_ns) ?:
	      get_u64(r, o, SP_RUNQ, 0, UINT64_MAX, &f->runq_ns) ?:
	      get_u32(r, o, SP_SWITCHES, &f->switches) ?:
	      get_object(r, o, SP_BLOCKED_BY, &v) ?:
	      read_blocked_by(r, v, o->path, f);
	if (!err && o->m[SP_PARTIAL].type != REC_JSON_NONE)
		err = get_bool(r, o, SP_PARTIAL, &partial);
	if (!err && o->m[SP_OFF_CPU_OMITTED].type != REC_JSON_NONE)
		err = get_u32(r, o, SP_OFF_CPU_OMITTED, &f->slices_omitted);
	if (!err && s->enter && o->m[SP_OFF_CPU].type != REC_JSON_NONE) {
		char spath[REC_DUMP_PATH2];

		err = get_array(r, o, SP_OFF_CPU, REC_SCHED_SLICES, &v)
			      ?: each_object(r, o, SP_OFF_CPU, v, spath, sizeof(spath), read_slice,
					     s);
	}
	if (err)
		return err;
	if (!s->enter || f->cpu_ns > s->exit - s->enter ||
	    f->blocked_ns > s->exit - s->enter - f->cpu_ns ||
	    f->runq_ns != s->exit - s->enter - f->cpu_ns - f->blocked_ns)
		return fail_at(r, o->path, "cpu_ns",
			       "cpu_ns + blocked_ns + runq_ns is not exit_ns - enter_ns");
	f->flags = REC_SCHED_KNOWN | (partial ? REC_SCHED_PARTIAL : 0);
	return 0;
}

/* A span of a recording (version 2), kept as it was. */
static int read_span(struct reader *r, const struct rec_json_value *v, const char *path,
		     size_t index, void *ctx)
{
	struct rec_rstate *rs = ctx;
	struct rec_json_value m[SP_N];
	struct object o = { path, span_keys, SP_N, m };
	struct rec_kept_span s = { 0 };
	int err;

	(void)index;
	err = scan_object(r, v, &o) ?:
	      get_key(r, &o, SP_ID, &s.id) ?:
	      get_key(r, &o, SP_PARENT, &s.parent) ?:
	      get_u32(r, &o, SP_TID, &s.tid) ?:
	      get_key(r, &o, SP_CALLSITE, &s.meta) ?:
	      get_u64(r, &o, SP_ENTER, 0, UINT64_MAX, &s.enter) ?:
	      get_u64(r, &o, SP_EXIT, 1, UINT64_MAX, &s.exit);
	if (err)
		return err;
	if (!s.id)
		return fail_at(r, path, "id", "0x0 is not a span id");
	if (s.enter > s.exit)
		return fail_at(r, path, "enter_ns", "after its exit_ns");
	err = read_span_sched(r, &o, &s);
	if (err)
		return err;
	if (rec_spans__add(&rs->spans, 0, &s))
		return fail_nomem(r);
	return 0;
}

/*
 * A recording's spans (version 2, optional): spans_seen = the spans kept +
 * spans_dropped, which is spans_aged + spans_lost (each optional, missing: 0).
 * A dump that predates those two says only spans_dropped: aging and loss were
 * not told apart then, and its spans_dropped reads as lost.
 */
static int read_spans(struct reader *r, const struct object *o, struct rec_rstate *rs)
{
	const struct rec_json_value *spans;
	uint64_t seen, dropped, aged = 0, lost = 0;
	char spath[REC_DUMP_PATH2];
	int err;

	if (o->m[RS_SPANS].type == REC_JSON_NONE && o->m[RS_SPANS_SEEN].type == REC_JSON_NONE &&
	    o->m[RS_SPANS_DROPPED].type == REC_JSON_NONE)
		return 0;
	err = get_u64(r, o, RS_SPANS_SEEN, 0, UINT64_MAX, &seen) ?:
	      get_u64(r, o, RS_SPANS_DROPPED, 0, seen, &dropped) ?:
	      get_array(r, o, RS_SPANS, REC_SPAN_CAP_MAX, &spans);
	if (!err && o->m[RS_SPANS_AGED].type != REC_JSON_NONE)
		err = get_u64(r, o, RS_SPANS_AGED, 0, dropped, &aged);
	if (!err && o->m[RS_SPANS_LOST].type != REC_JSON_NONE)
		err = get_u64(r, o, RS_SPANS_LOST, 0, dropped, &lost);
	if (err)
		return err;
	if (spans->count != seen - dropped)
		return fail_at(r, o->path, "spans_seen",
			       "%" PRIu64 " is not the %zu spans kept plus spans_dropped %" PRIu64,
			       seen, (size_t)spans->count, dropped);
	if (o->m[RS_SPANS_AGED].type == REC_JSON_NONE && o->m[RS_SPANS_LOST].type == REC_JSON_NONE)
		lost = dropped;
	else if (aged + lost != dropped)
		return fail_at(r, o->path, "spans_dropped",
			       "%" PRIu64 " is not spans_aged %" PRIu64 " plus spans_lost %" PRIu64,
			       dropped, aged, lost);
	err = each_object(r, o, RS_SPANS, spans, spath, sizeof(spath), read_span, rs);
	if (err)
		return err;
	rs->spans.seen = seen;
	rs->spans.aged = aged;
	rs->spans.lost = lost;
	return 0;
}

static int read_recording(struct reader *r, const struct rec_json_value *v, const char *path,
			  size_t index, void *ctx)
{
	struct rec_proc *p = ctx;
	struct rec_json_value m[RS_N];
	struct object o = { path, recording_keys, RS_N, m };
	uint64_t key, recorder, cap, seen, kept, dropped, stale, invalid = 0, asked = 0;
	const struct rec_json_value *events;
	char subject[REC_SUBJECT_MAX], state[17], why[17];
	int untracked = 0, retired;
	char epath[REC_DUMP_PATH2];
	struct recording_ctx rc = { .p = p };
	int err;

	(void)index;
	err = scan_object(r, v, &o) ?:
	      get_key(r, &o, RS_KEY, &key) ?:
	      get_key(r, &o, RS_RECORDER, &recorder) ?:
	      get_cstr(r, &o, RS_SUBJECT, REC_SUBJECT_MAX - 1, subject) ?:
	      get_u64(r, &o, RS_CAP, 2, REC_CAP_MAX, &cap) ?:
	      get_cstr(r, &o, RS_STATE, 16, state) ?:
	      get_u64(r, &o, RS_SEEN, 0, UINT64_MAX, &seen) ?:
	      get_u64(r, &o, RS_KEPT, 0, UINT64_MAX, &kept) ?:
	      get_u64(r, &o, RS_DROPPED, 0, UINT64_MAX, &dropped) ?:
	      get_u64(r, &o, RS_STALE, 0, UINT64_MAX, &stale) ?:
	      get_array(r, &o, RS_EVENTS, cap, &events);
	if (err)
		return err;
	if (key == 0 || key == UINT64_MAX)
		return fail_at(r, path, "key", "0x%" PRIx64 " is not a recording key", key);
	if (rec_proc__find(p, key))
		return fail_at(r, path, "key", "duplicate 0x%" PRIx64, key);
	if (rec_names__parse_retired(state, &retired))
		return fail_at(r, path, "state", "expected \"live\" or \"retired\"");
	/* Optional (newer dumps): the dropped events that failed validation, why untracked. */
	if (m[RS_INVALID].type != REC_JSON_NONE &&
	    (err = get_u64(r, &o, RS_INVALID, 0, dropped, &invalid)))
		return err;
	if (m[RS_UNTRACKED].type != REC_JSON_NONE) {
		if (get_cstr(r, &o, RS_UNTRACKED, 16, why) ||
		    rec_names__parse_untracked(why, &untracked))
			return fail_at(r, path, "untracked",
				       "expected \"over-quota\" or \"table-full\"");
	}

	/* Optional: the cap the program asked for, when --min-cap or --max-cap changed it. */
	if (m[RS_ASKED_CAP].type != REC_JSON_NONE &&
	    (err = get_u64(r, &o, RS_ASKED_CAP, 0, UINT64_MAX, &asked)))
		return err;
	rc.rs = rec_proc__get(p, key, recorder, cap);
	if (!rc.rs)
		return fail_nomem(r);
	rc.rs->asked_cap = m[RS_ASKED_CAP].type != REC_JSON_NONE ? asked : cap;
	strcpy(rc.rs->subject, subject);
	rc.rs->retired = retired;
	rc.rs->untracked = untracked;
	rc.rs->produced = seen;
	rc.rs->received = kept;
	rc.rs->dropped = dropped - invalid;
	rc.rs->invalid = invalid;
	rc.rs->stale = stale;
	return each_object(r, &o, RS_EVENTS, events, epath, sizeof(epath), read_event, &rc)
		       ?: read_spans(r, &o, rc.rs);
}

enum {
	FR_SPAN,
	FR_CALLSITE,
	FR_RECORDING,
	FR_ID,
	FR_ENTER,
	FR_UNCERTAIN,
	FR_N
};
static const char *const frame_keys[FR_N] = {
	[FR_SPAN] = "span", [FR_CALLSITE] = "callsite", [FR_RECORDING] = "recording",
	[FR_ID] = "id",	    [FR_ENTER] = "enter_ns",	[FR_UNCERTAIN] = "uncertain",
};

static int read_frame(struct reader *r, const struct rec_json_value *v, const char *path,
		      size_t index, void *ctx)
{
	struct rec_thread_stack *ts = ctx;
	struct rec_json_value m[FR_N];
	struct object o = { path, frame_keys, FR_N, m };
	uint64_t span, meta, recording, id = 0, enter = 0;
	int err, uncertain = 0;

	err = scan_object(r, v, &o) ?:
	      get_key(r, &o, FR_SPAN, &span) ?:
	      get_key(r, &o, FR_CALLSITE, &meta) ?:
	      get_key(r, &o, FR_RECORDING, &recording);
	/* Version 2, optional: the span's id and enter time. */
	if (!err && m[FR_ID].type != REC_JSON_NONE)
		err = get_key(r, &o, FR_ID, &id);
	if (!err && m[FR_ENTER].type != REC_JSON_NONE)
		err = get_u64(r, &o, FR_ENTER, 0, UINT64_MAX, &enter);
	/* Optional: true if it was read again from the thread's chain (enter not known). */
	if (!err && m[FR_UNCERTAIN].type != REC_JSON_NONE)
		err = get_bool(r, &o, FR_UNCERTAIN, &uncertain);
	if (err)
		return err;
	ts->frames[index] = (struct rec_frame){ .span = span,
						.meta = meta,
						.recording = recording,
						.id = id,
						.enter = enter,
						.flags = uncertain ? REC_FF_UNCERTAIN : 0 };
	ts->depth = (uint32_t)index + 1;
	return 0;
}

enum {
	ST_TID,
	ST_OVERFLOW,
	ST_FRAMES,
	ST_N
};
static const char *const stack_keys[ST_N] = {
	[ST_TID] = "tid",
	[ST_OVERFLOW] = "overflow",
	[ST_FRAMES] = "frames",
};

static int read_stack(struct reader *r, const struct rec_json_value *v, const char *path,
		      size_t index, void *ctx)
{
	struct rec_thread_stack *ts = (struct rec_thread_stack *)ctx + index;
	struct rec_json_value m[ST_N];
	struct object o = { path, stack_keys, ST_N, m };
	const struct rec_json_value *frames;
	char fpath[REC_DUMP_PATH2];

	return scan_object(r, v, &o) ?:
	       get_u32(r, &o, ST_TID, &ts->tid) ?:
	       get_u32(r, &o, ST_OVERFLOW, &ts->overflow) ?:
	       get_array(r, &o, ST_FRAMES, REC_MAX_DEPTH, &frames) ?:
	       each_object(r, &o, ST_FRAMES, frames, fpath, sizeof(fpath), read_frame, ts);
}

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
static const char *const top_keys[TOP_N] = {
	[TOP_FORMAT] = "format",
	[TOP_VERSION] = "version",
	[TOP_PID] = "pid",
	[TOP_NS_PID] = "ns_pid",
	[TOP_ENDED] = "ended",
	[TOP_DUMPED_AT] = "dumped_at",
	[TOP_CLOCK_OFFSET_NS] = "clock_offset_ns",
	[TOP_COUNTERS] = "counters",
	[TOP_MALFORMED] = "malformed",
	[TOP_ORPHANS] = "orphans",
	[TOP_SPAN_ORPHANS] = "span_orphans",
	[TOP_SCHED] = "sched",
	[TOP_CALLSITES] = "callsites",
	[TOP_RECORDINGS] = "recordings",
	[TOP_STACKS] = "stacks",
	[TOP_LIMITS] = "limits",
	[TOP_FORGOTTEN] = "forgotten",
	[TOP_RECORDINGS_OMITTED] = "recordings_omitted",
	[TOP_STACKS_OMITTED] = "stacks_omitted",
	[TOP_SCOPE] = "scope",
	[TOP_TRIGGER] = "trigger",
	[TOP_TRIGGERS_PENDING] = "triggers_pending",
	[TOP_ATTACHED_NS] = "attached_ns",
	[TOP_SPANS_BEFORE_ATTACH] = "spans_before_attach",
	[TOP_FIELDS_LEFT_OUT] = "fields_left_out",
};

enum {
	FG_RECORDER,
	FG_RECORDINGS,
	FG_SEEN,
	FG_KEPT,
	FG_DROPPED,
	FG_N
};
static const char *const forgotten_keys[FG_N] = {
	[FG_RECORDER] = "recorder", [FG_RECORDINGS] = "recordings", [FG_SEEN] = "seen",
	[FG_KEPT] = "kept",	    [FG_DROPPED] = "dropped",
};

/* One row of the tally of recordings forgotten to make room ("forgotten"). */
static int read_forgotten(struct reader *r, const struct rec_json_value *v, const char *path,
			  size_t index, void *ctx)
{
	struct rec_proc *p = ctx;
	struct rec_json_value m[FG_N];
	struct object o = { path, forgotten_keys, FG_N, m };
	uint64_t recorder, recordings, seen, kept, dropped;
	int err;

	(void)index;
	err = scan_object(r, v, &o) ?:
	      get_key(r, &o, FG_RECORDER, &recorder) ?:
	      get_u64(r, &o, FG_RECORDINGS, 1, UINT64_MAX, &recordings) ?:
	      get_u64(r, &o, FG_SEEN, 0, UINT64_MAX, &seen) ?:
	      get_u64(r, &o, FG_KEPT, 0, seen, &kept) ?:
	      get_u64(r, &o, FG_DROPPED, 0, seen - kept, &dropped);
	if (err)
		return err;
	rec_proc__forget(p, recorder, recordings, seen, kept, dropped);
	return 0;
}

enum {
	LU_LIMIT,
	LU_USED,
	LU_OVER,
	LU_EVENTS,
	LU_N
};
static const char *const limit_keys[LU_N] = {
	[LU_LIMIT] = "limit",
	[LU_USED] = "used",
	[LU_OVER] = "over",
	[LU_EVENTS] = "events",
};

/* "limits": each limit of the process, its use and what did not fit (see --stats). */
static int read_limits(struct reader *r, const struct rec_json_value *v, struct rec_proc *p)
{
	const char *names[REC_L_MAX];
	struct rec_json_value m[REC_L_MAX], lm[LU_N];
	struct object o = { "limits", names, REC_L_MAX, m };
	char path[REC_DUMP_PATH1];
	int err;

	for (int l = 0; l < REC_L_MAX; l++)
		names[l] = rec_names__limit(l);
	err = scan_object(r, v, &o);
	for (int l = 0; !err && l < REC_L_MAX; l++) {
		struct rec_limit_use *u = &p->use[l];
		struct object lo = { path, limit_keys, LU_N, lm };

		/* A limit this dump does not have keeps its defaults. */
		if (m[l].type == REC_JSON_NONE)
			continue;
		snprintf(path, sizeof(path), "limits.%s", names[l]);
		if (m[l].type != REC_JSON_OBJECT)
			return fail_at(r, path, NULL, "expected an object");
		err = scan_object(r, &m[l], &lo) ?:
		      get_u64(r, &lo, LU_LIMIT, 0, UINT64_MAX, &u->limit) ?:
		      get_u64(r, &lo, LU_USED, 0, UINT64_MAX, &u->used) ?:
		      get_u64(r, &lo, LU_OVER, 0, UINT64_MAX, &u->over) ?:
		      get_u64(r, &lo, LU_EVENTS, 0, UINT64_MAX, &u->events);
	}
	return err;
}

enum {
	SC_INTERVALS,
	SC_LOST,
	SC_FORGOTTEN,
	SC_THREADS_FULL,
	SC_PARTIAL,
	SC_N
};
static const char *const sched_keys[SC_N] = {
	[SC_INTERVALS] = "intervals",	    [SC_LOST] = "lost",	      [SC_FORGOTTEN] = "forgotten",
	[SC_THREADS_FULL] = "threads_full", [SC_PARTIAL] = "partial",
};

/* The counts of the kernel time per span (version 3, "sched"): it was on. */
static int read_sched_counts(struct reader *r, const struct rec_json_value *v, struct rec_proc *p)
{
	struct rec_offcpu_counts *c = &p->sched.count;
	struct rec_json_value m[SC_N];
	struct object o = { "sched", sched_keys, SC_N, m };

	p->sched.since_ns = 1;
	return scan_object(r, v, &o) ?:
	       get_u64(r, &o, SC_INTERVALS, 0, UINT64_MAX, &c->intervals) ?:
	       get_u64(r, &o, SC_LOST, 0, UINT64_MAX, &c->lost) ?:
	       get_u64(r, &o, SC_FORGOTTEN, 0, UINT64_MAX, &c->forgotten) ?:
	       get_u64(r, &o, SC_THREADS_FULL, 0, UINT64_MAX, &c->threads_full) ?:
	       get_u64(r, &o, SC_PARTIAL, 0, UINT64_MAX, &c->partial);
}

/*
 * The optional keys of the limits (newer dumps): "recordings_omitted",
 * "stacks_omitted", "forgotten", then "limits", last because the tally of the
 * forgotten also counts into the retired row.
 */
static int read_limit_keys(struct reader *r, const struct object *o, struct rec_proc *p)
{
	const struct rec_json_value *v;
	char path[REC_DUMP_PATH1];
	int err = 0;

	if (o->m[TOP_RECORDINGS_OMITTED].type != REC_JSON_NONE)
		err = get_u64(r, o, TOP_RECORDINGS_OMITTED, 0, UINT64_MAX,
			      &p->dump_omitted_recordings);
	if (!err && o->m[TOP_STACKS_OMITTED].type != REC_JSON_NONE)
		err = get_u64(r, o, TOP_STACKS_OMITTED, 0, UINT64_MAX, &p->dump_omitted_stacks);
	if (!err && o->m[TOP_FORGOTTEN].type != REC_JSON_NONE)
		err = get_array(r, o, TOP_FORGOTTEN, 1u << 20, &v)
			      ?: each_object(r, o, TOP_FORGOTTEN, v, path, sizeof(path),
					     read_forgotten, p);
	if (!err && o->m[TOP_LIMITS].type != REC_JSON_NONE)
		err = get_object(r, o, TOP_LIMITS, &v) ?: read_limits(r, v, p);
	return err;
}

enum {
	RC_ID,
	RC_RULE,
	RC_FIRED,
	RC_SAVED,
	RC_COOLDOWN,
	RC_CAPPED,
	RC_FAILED,
	RC_N
};
static const char *const rule_counts_keys[RC_N] = {
	[RC_ID] = "id",		[RC_RULE] = "rule",	    [RC_FIRED] = "fired",
	[RC_SAVED] = "saved",	[RC_COOLDOWN] = "cooldown", [RC_CAPPED] = "capped",
	[RC_FAILED] = "failed",
};

/* One row of a trigger's "counts", into the next row of p->trigger_counts. */
static int read_rule_counts(struct reader *r, const struct rec_json_value *v, const char *path,
			    size_t index, void *ctx)
{
	struct rec_dump_rule_counts *c = (struct rec_dump_rule_counts *)ctx + index;
	struct rec_json_value m[RC_N];
	struct object o = { path, rule_counts_keys, RC_N, m };

	return scan_object(r, v, &o) ?:
	       get_u32(r, &o, RC_ID, &c->id) ?:
	       get_cstr(r, &o, RC_RULE, REC_DUMP_RULE_MAX - 1, c->rule) ?:
	       get_u64(r, &o, RC_FIRED, 0, UINT64_MAX, &c->fired) ?:
	       get_u64(r, &o, RC_SAVED, 0, UINT64_MAX, &c->saved) ?:
	       get_u64(r, &o, RC_COOLDOWN, 0, UINT64_MAX, &c->cooldown) ?:
	       get_u64(r, &o, RC_CAPPED, 0, UINT64_MAX, &c->capped) ?:
	       get_u64(r, &o, RC_FAILED, 0, UINT64_MAX, &c->failed);
}

enum {
	TG_RULE,
	TG_RULE_ID,
	TG_KIND,
	TG_TIME,
	TG_RECORDING,
	TG_SUBJECT,
	TG_WHAT,
	TG_AFTER_NS,
	TG_COUNTS,
	TG_OCCURRED,
	TG_SIGNATURE_ID,
	TG_SIGNATURE,
	TG_SIGNATURES,
	TG_SIGNATURES_MAX,
	TG_SIGNATURES_FOLDED,
	TG_SIGNATURES_NEW_CAPPED,
	TG_N
};
static const char *const trigger_keys[TG_N] = {
	[TG_RULE] = "rule",
	[TG_RULE_ID] = "rule_id",
	[TG_KIND] = "kind",
	[TG_TIME] = "time",
	[TG_RECORDING] = "recording",
	[TG_SUBJECT] = "subject",
	[TG_WHAT] = "what",
	[TG_AFTER_NS] = "after_ns",
	[TG_COUNTS] = "counts",
	[TG_OCCURRED] = "occurred",
	[TG_SIGNATURE_ID] = "signature_id",
	[TG_SIGNATURE] = "signature",
	[TG_SIGNATURES] = "signatures",
	[TG_SIGNATURES_MAX] = "signatures_max",
	[TG_SIGNATURES_FOLDED] = "signatures_folded",
	[TG_SIGNATURES_NEW_CAPPED] = "signatures_new_capped",
};

/* An optional u64 member i of o into *out (left as it is if absent). */
static int opt_u64(struct reader *r, const struct object *o, int i, uint64_t *out)
{
	return o->m[i].type == REC_JSON_NONE ? 0 : get_u64(r, o, i, 0, UINT64_MAX, out);
}

/*
 * The optional keys of a trigger that issue 35 added: its own time
 * ("occurred"), its signature and the process's signature counts.
 */
static int read_trigger_signature(struct reader *r, const struct object *o, const char *path,
				  struct rec_dump_trigger *t)
{
	char time[33], id[17], *end;
	int err;

	if (o->m[TG_OCCURRED].type != REC_JSON_NONE) {
		err = get_cstr(r, o, TG_OCCURRED, 32, time);
		if (err)
			return err;
		err = rec_text__parse_rfc3339(time, &t->at_ns);
		if (err || t->at_ns <= 0)
			return fail_at(r, path, "occurred",
				       "expected an RFC 3339 UTC time with microseconds, "
				       "1970 to 2262");
	}
	if (o->m[TG_SIGNATURE_ID].type != REC_JSON_NONE) {
		err = get_cstr(r, o, TG_SIGNATURE_ID, 16, id);
		if (err)
			return err;
		errno = 0;
		t->signature_id = strtoull(id, &end, 16);
		if (strlen(id) != 12 || *end || errno || !t->signature_id)
			return fail_at(r, path, "signature_id",
				       "expected 12 lower-case hex digits, not all 0");
		err = get_cstr(r, o, TG_SIGNATURE, REC_DUMP_SIGNATURE_MAX - 1, t->signature);
		if (err)
			return err;
	}
	return opt_u64(r, o, TG_SIGNATURES, &t->signatures) ?:
	       opt_u64(r, o, TG_SIGNATURES_MAX, &t->signatures_max) ?:
	       opt_u64(r, o, TG_SIGNATURES_FOLDED, &t->signatures_folded) ?:
	       opt_u64(r, o, TG_SIGNATURES_NEW_CAPPED, &t->signatures_new_capped);
}

/*
 * A trigger that fired ("trigger", or one of "triggers_pending") into t; the
 * rows of its counts are added to p->trigger_counts, and t->counts is set by
 * read_triggers() once they all are (the array moves as it grows).
 */
static int read_trigger(struct reader *r, const struct rec_json_value *v, const char *path,
			size_t index, void *ctx)
{
	struct rec_proc *p = ctx;
	struct rec_dump_trigger *t = index == SIZE_MAX ? p->trigger : &p->triggers_pending[index];
	struct rec_json_value m[TG_N];
	struct object o = { path, trigger_keys, TG_N, m };
	const struct rec_json_value *counts;
	struct rec_dump_rule_counts *rows;
	char kind[17], time[33], cpath[REC_DUMP_PATH2];
	size_t have = 0;
	int err, k;

	err = scan_object(r, v, &o) ?:
	      get_cstr(r, &o, TG_RULE, REC_DUMP_RULE_MAX - 1, t->rule) ?:
	      get_u32(r, &o, TG_RULE_ID, &t->rule_id) ?:
	      get_cstr(r, &o, TG_KIND, 16, kind) ?:
	      get_cstr(r, &o, TG_TIME, 32, time) ?:
	      get_key(r, &o, TG_RECORDING, &t->recording) ?:
	      get_cstr(r, &o, TG_SUBJECT, REC_SUBJECT_MAX - 1, t->subject) ?:
	      get_cstr(r, &o, TG_WHAT, REC_DUMP_WHAT_MAX - 1, t->what) ?:
	      get_u64(r, &o, TG_AFTER_NS, 0, UINT64_MAX, &t->after_ns) ?:
	      get_array(r, &o, TG_COUNTS, REC_DUMP_MAX_RULES, &counts);
	if (err)
		return err;
	if (rec_names__parse_trigger_kind(kind, &k))
		return fail_at(r, path, "kind",
			       "expected \"level\", \"span\", \"event\" or \"code\"");
	t->kind = (enum rec_dump_trigger_kind)k;
	err = rec_text__parse_rfc3339(time, &t->time_ns);
	if (err == -EINVAL)
		return fail_at(r, path, "time",
			       "expected an RFC 3339 UTC time with microseconds "
			       "(\"2026-12-02T14:03:12.123456Z\")");
	if (err || t->time_ns < 0)
		return fail_at(r, path, "time", "%s is out of range (1970 to 2262)", time);
	err = read_trigger_signature(r, &o, path, t);
	if (err)
		return err;

	if (!counts->count)
		return 0;
	/* At most REC_DUMP_MAX_RULES a trigger, each row at least 80 bytes of the file. */
	if (p->trigger)
		have = p->trigger->ncounts;
	for (size_t i = 0; index != SIZE_MAX && i < index; i++)
		have += p->triggers_pending[i].ncounts;
	rows = realloc(p->trigger_counts, (have + counts->count) * sizeof(*rows));
	if (!rows)
		return fail_nomem(r);
	p->trigger_counts = rows;
	memset(rows + have, 0, counts->count * sizeof(*rows));
	err = each_object(r, &o, TG_COUNTS, counts, cpath, sizeof(cpath), read_rule_counts,
			  rows + have);
	if (!err)
		t->ncounts = counts->count;
	return err;
}

/*
 * The optional "scope", "trigger" and "triggers_pending" (a snapshot's, or a
 * black box's): into p, the counts of each trigger pointing into
 * p->trigger_counts.
 */
static int read_triggers(struct reader *r, const struct object *o, struct rec_proc *p)
{
	const struct rec_json_value *v;
	struct rec_dump_rule_counts *row;
	char scope[17], path[REC_DUMP_PATH1];
	int err = 0;

	if (o->m[TOP_SCOPE].type != REC_JSON_NONE) {
		if (get_cstr(r, o, TOP_SCOPE, 16, scope) ||
		    rec_names__parse_scope(scope, &p->dump_one_recording))
			return fail_at(r, "", "scope", "expected \"process\" or \"recording\"");
	}
	if (o->m[TOP_TRIGGER].type != REC_JSON_NONE) {
		err = get_object(r, o, TOP_TRIGGER, &v);
		if (err)
			return err;
		p->trigger = calloc(1, sizeof(*p->trigger));
		if (!p->trigger)
			return fail_nomem(r);
		err = read_trigger(r, v, "trigger", SIZE_MAX, p);
		if (err)
			return err;
	}
	if (o->m[TOP_TRIGGERS_PENDING].type != REC_JSON_NONE) {
		err = get_array(r, o, TOP_TRIGGERS_PENDING, REC_DUMP_MAX_TRIGGERS_PENDING, &v);
		if (err || !v->count)
			return err;
		p->triggers_pending = calloc(v->count, sizeof(*p->triggers_pending));
		if (!p->triggers_pending)
			return fail_nomem(r);
		p->ntriggers_pending = v->count;
		err = each_object(r, o, TOP_TRIGGERS_PENDING, v, path, sizeof(path), read_trigger,
				  p);
		if (err)
			return err;
	}
	/* Now that the rows have stopped moving: each trigger's own, in the order read. */
	row = p->trigger_counts;
	/* No rows at all: row is NULL, and moves nowhere (NULL + 0 is undefined). */
	if (p->trigger) {
		p->trigger->counts = p->trigger->ncounts ? row : NULL;
		if (p->trigger->ncounts)
			row += p->trigger->ncounts;
	}
	for (size_t i = 0; i < p->ntriggers_pending; i++) {
		p->triggers_pending[i].counts = p->triggers_pending[i].ncounts ? row : NULL;
		if (p->triggers_pending[i].ncounts)
			row += p->triggers_pending[i].ncounts;
	}
	return 0;
}

static int read_stacks(struct reader *r, const struct object *o, struct rec_proc *p)
{
	const struct rec_json_value *arr;
	struct rec_thread_stack *v;
	char path[REC_DUMP_PATH1];
	int err;

	err = get_array(r, o, TOP_STACKS, REC_DUMP_READ_MAX_STACKS, &arr);
	if (err || !arr->count)
		return err;
	/* At most REC_DUMP_READ_MAX_STACKS, and each took at least 30 bytes of the file. */
	v = calloc(arr->count, sizeof(*v));
	if (!v)
		return fail_nomem(r);
	err = each_object(r, o, TOP_STACKS, arr, path, sizeof(path), read_stack, v);
	if (err) {
		free(v);
		return err;
	}
	rec_proc__set_stacks(p, v, arr->count);
	return 0;
}

static int read_dump(struct reader *r, const struct rec_json_value *root, struct rec_proc *p,
		     struct rec_dump_counters *counters)
{
	struct rec_json_value m[TOP_N];
	struct object o = { "", top_keys, TOP_N, m };
	const struct rec_json_value *v;
	struct rec_json_str info;
	uint64_t version, pid, ns_pid;
	char path[REC_DUMP_PATH1], format[16], dumped_at[65];
	int err;

	if (root->type != REC_JSON_OBJECT)
		return fail_at(r, "", NULL, "not a recorder dump: expected a JSON object");
	err = scan_object(r, root, &o);
	if (err)
		return err;
	if (m[TOP_FORMAT].type == REC_JSON_NONE)
		return fail_at(r, "", NULL, "not a recorder dump: missing \"format\"");
	if (m[TOP_FORMAT].type != REC_JSON_STRING ||
	    (err = rec_json_read__string(r->jr, &m[TOP_FORMAT], format, sizeof(format), &info)) ||
	    info.len != strlen("recorder-dump") || strcmp(format, "recorder-dump") != 0) {
		if (err)
			return fail_input(r, err);
		return fail_at(r, "", NULL,
			       "not a recorder dump: \"format\" is not \"recorder-dump\"");
	}
	err = get_u64(r, &o, TOP_VERSION, 0, UINT64_MAX, &version);
	if (err)
		return err;
	if (version < 1 || version > REC_DUMP_VERSION)
		return fail_at(r, "", NULL,
			       "version %" PRIu64
			       " is not supported (this build reads versions 1 to %d)",
			       version, REC_DUMP_VERSION);

	err = get_u64(r, &o, TOP_PID, 1, INT_MAX, &pid)
		      ?: get_u64(r, &o, TOP_NS_PID, 0, INT_MAX, &ns_pid);
	if (err)
		return err;
	p->pid = (pid_t)pid;
	p->ns_pid = (pid_t)ns_pid;
	p->alive = 0;
	p->uid = (uid_t)-1;
	err = get_object(r, &o, TOP_ENDED, &v) ?: read_ended(r, v, p);
	if (err)
		return err;
	err = get_cstr(r, &o, TOP_DUMPED_AT, 64, dumped_at) ?:
	      get_member(r, &o, TOP_CLOCK_OFFSET_NS, &v) ?:
	      as_i64(r, v, "", "clock_offset_ns", &p->clock_offset_ns);
	if (err)
		return err;
	/* When it was written: what the ages of its stacks' frames are measured at. */
	if (rec_text__parse_rfc3339(dumped_at, &p->dumped_at_ns))
		p->dumped_at_ns = 0;
	/* Optional: a dump written without counters reads as all zero. */
	if (m[TOP_COUNTERS].type != REC_JSON_NONE) {
		err = get_object(r, &o, TOP_COUNTERS, &v) ?: read_counters(r, v, p, counters);
		if (err)
			return err;
	}
	err = get_u64(r, &o, TOP_MALFORMED, 0, UINT64_MAX, &p->malformed) ?:
	      get_u64(r, &o, TOP_ORPHANS, 0, UINT64_MAX, &p->orphans) ?:
	      read_limit_keys(r, &o, p);
	if (err)
		return err;
	err = read_triggers(r, &o, p);
	if (err)
		return err;
	/* Optional (version 2): a dump without it had none. */
	if (m[TOP_SPAN_ORPHANS].type != REC_JSON_NONE) {
		err = get_u64(r, &o, TOP_SPAN_ORPHANS, 0, UINT64_MAX, &p->span_orphans);
		if (err)
			return err;
	}
	/* Optional: when it was attached, and the spans of recordings older than that. */
	if (m[TOP_ATTACHED_NS].type != REC_JSON_NONE) {
		err = get_u64(r, &o, TOP_ATTACHED_NS, 0, UINT64_MAX, &p->attached_ns);
		if (err)
			return err;
	}
	if (m[TOP_SPANS_BEFORE_ATTACH].type != REC_JSON_NONE) {
		err = get_u64(r, &o, TOP_SPANS_BEFORE_ATTACH, 0, UINT64_MAX,
			      &p->spans_before_attach);
		if (err)
			return err;
	}
	/* Optional: events' fields past their callsite's 8th (the Rust layer's). */
	if (m[TOP_FIELDS_LEFT_OUT].type != REC_JSON_NONE) {
		err = get_u64(r, &o, TOP_FIELDS_LEFT_OUT, 0, UINT64_MAX, &p->fields_left_out);
		if (err)
			return err;
	}
	/* Optional (version 3): kept with --sched only. */
	if (m[TOP_SCHED].type != REC_JSON_NONE) {
		err = get_object(r, &o, TOP_SCHED, &v) ?: read_sched_counts(r, v, p);
		if (err)
			return err;
	}

	/* No limit on callsites but the file's size: each takes over 90 bytes of it. */
	err = get_array(r, &o, TOP_CALLSITES, UINT64_MAX, &v)
		      ?: each_object(r, &o, TOP_CALLSITES, v, path, sizeof(path), read_callsite, p);
	if (err)
		return err;
	err = get_array(r, &o, TOP_RECORDINGS, REC_DUMP_READ_MAX_RECORDINGS, &v)
		      ?: each_object(r, &o, TOP_RECORDINGS, v, path, sizeof(path), read_recording,
				     p);
	if (err)
		return err;
	return read_stacks(r, &o, p);
}

/* Reads the dump jr holds, as rec_dump__read() promises. */
static int read_input(struct rec_json_read *jr, struct rec_proc *p,
		      struct rec_dump_counters *counters, char *err, size_t errlen)
{
	struct reader r = { .jr = jr, .err = err, .errlen = errlen };
	struct rec_json_value root;
	int ret;

	ret = rec_json_read__check(jr, &root);
	if (ret)
		return fail_input(&r, ret);
	ret = read_dump(&r, &root, p, counters);
	if (ret) {
		rec_proc__fini(p);
		memset(p, 0, sizeof(*p));
		if (counters)
			memset(counters, 0, sizeof(*counters));
	}
	return ret;
}

static void start(struct rec_proc *p, struct rec_dump_counters *counters, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (counters)
		memset(counters, 0, sizeof(*counters));
	if (err && errlen)
		err[0] = '\0';
}

int rec_dump__read_mem(const char *buf, size_t len, struct rec_proc *p,
		       struct rec_dump_counters *counters, char *err, size_t errlen)
{
	struct rec_json_read *jr;
	int ret;

	start(p, counters, err, errlen);
	ret = rec_json_read__new_mem(&jr, buf, len);
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return ret;
	}
	ret = read_input(jr, p, counters, err, errlen);
	rec_json_read__free(jr);
	return ret;
}

/* What a file that is not a regular file is, for a message. */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a regular file";
}

/*
 * Opens path for reading if it is a regular file, and measures it. Anything
 * else is refused before it is opened (a FIFO would block the open, a device
 * would never end), and what was opened must be the file that was looked at.
 * Returns the descriptor, or a negative errno with a message in err.
 */
static int open_regular(const char *path, uint64_t *size, char *err, size_t errlen)
{
	struct stat before, st;
	int fd, ret;

	if (stat(path, &before)) {
		ret = -errno;
		goto fail;
	}
	if (!S_ISREG(before.st_mode)) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s, not a regular file", path,
				 file_kind(before.st_mode));
		return -ENOTSUP;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_dev != before.st_dev || st.st_ino != before.st_ino) {
		close(fd);
		if (err && errlen)
			snprintf(err, errlen, "%s: replaced while it was being opened", path);
		return -EAGAIN;
	}
	*size = (uint64_t)st.st_size;
	return fd;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
	return ret;
}

int rec_dump__read(const char *path, struct rec_proc *p, struct rec_dump_counters *counters,
		   char *err, size_t errlen)
{
	struct rec_json_read *jr;
	uint64_t size;
	int fd, ret;

	start(p, counters, err, errlen);
	fd = open_regular(path, &size, err, errlen);
	if (fd < 0)
		return fd;
	ret = rec_json_read__new_fd(&jr, fd, size);
	if (ret) {
		close(fd);
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return ret;
	}
	ret = read_input(jr, p, counters, err, errlen);
	rec_json_read__free(jr);
	close(fd);
	/* A failed read names the file. */
	if (ret && ret != -EINVAL && ret != -ENOMEM && err && errlen)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
	return ret;
}
