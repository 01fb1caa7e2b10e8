// SPDX-License-Identifier: MIT
/*
 * Reading a dump (dump_read.c): its callsites and its recordings' events,
 * each rebuilt byte for byte as the target and the BPF side write them, for the
 * same parser and decoder as live data.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dumps/dump_reader.h"
#include "model/names.h"

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

int rec_dump_read__callsite(struct rec_dump_read *r, const struct rec_json_value *v,
			    const char *path, size_t index, void *ctx)
{
	struct rec_proc *p = ctx;
	struct rec_json_value m[CS_N], fv;
	struct rec_dump_object o = { path, callsite_keys, CS_N, m };
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
		return rec_dump_read__fail_nomem(r);
	err = rec_dump_read__scan_object(r, v, &o) ?:
	      rec_dump_read__get_key(r, &o, CS_ADDR, &addr) ?:
	      rec_dump_read__get_cstr(r, &o, CS_KIND, 1, s->kind) ?:
	      rec_dump_read__get_u64(r, &o, CS_LEVEL, REC_LEVEL_TRACE, REC_LEVEL_RUNTIME, &level) ?:
	      rec_dump_read__get_cstr(r, &o, CS_NAME, REC_CALLSITE_MAX, s->name) ?:
	      rec_dump_read__get_cstr(r, &o, CS_TARGET, REC_CALLSITE_MAX, s->target) ?:
	      rec_dump_read__get_cstr(r, &o, CS_FILE, REC_CALLSITE_MAX, s->file) ?:
	      rec_dump_read__get_u64(r, &o, CS_LINE, 0, UINT32_MAX, &line) ?:
	      rec_dump_read__get_cstr(r, &o, CS_MESSAGE, REC_CALLSITE_MAX, s->message) ?:
	      rec_dump_read__get_array(r, &o, CS_FIELDS, REC_MAX_FIELDS, &fields);
	if (err)
		goto out;
	if (addr == 0 || addr == UINT64_MAX) {
		err = rec_dump_read__fail_at(r, path, "addr",
					     "0x%" PRIx64 " is not a callsite address", addr);
		goto out;
	}
	if (rec_u64map__get(&p->callsites, addr)) {
		err = rec_dump_read__fail_at(r, path, "addr", "duplicate 0x%" PRIx64, addr);
		goto out;
	}
	if (strcmp(s->kind, "E") != 0 && strcmp(s->kind, "S") != 0) {
		err = rec_dump_read__fail_at(r, path, "kind", "expected \"E\" or \"S\"");
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
		err = rec_dump_read__as_str(r, &fv, fpath, NULL, s->field, sizeof(s->field), &info);
		if (err)
			goto out;
		if (!info.len) {
			err = rec_dump_read__fail_at(r, fpath, NULL, "empty field name");
			goto out;
		}
		if (info.has_nul) {
			err = rec_dump_read__fail_at(r, fpath, NULL, "contains a NUL byte");
			goto out;
		}
		if (info.len > REC_CALLSITE_MAX)
			s->b.overflow = 1;
		blob_add(&s->b, s->field);
	}
	if (err) {
		err = rec_dump_read__fail_input(r, err);
		goto out;
	}
	/* Only if the file changed since it was checked. */
	if (n != fields->count) {
		err = rec_dump_read__fail_at(r, path, "fields", "changed while it was read");
		goto out;
	}
	if (s->b.overflow) {
		err = rec_dump_read__fail_at(r, path, NULL,
					     "longer than the %d bytes a callsite may take",
					     REC_CALLSITE_MAX);
		goto out;
	}

	cs = malloc(sizeof(*cs));
	if (!cs) {
		err = rec_dump_read__fail_nomem(r);
		goto out;
	}
	if (rec_callsite__parse(cs, s->b.buf, s->b.len) != 0) {
		free(cs);
		err = rec_dump_read__fail_at(r, path, NULL, "not a valid callsite");
		goto out;
	}
	/* Cached compactly; a model read from a dump has no limit on it. */
	if (rec_proc__add_callsite(p, addr, cs))
		err = rec_dump_read__fail_nomem(r);
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

static int read_str_value(struct rec_dump_read *r, const struct rec_dump_object *o,
			  const struct rec_json_value *v, struct str_area *area, uint64_t *slot)
{
	enum rec_str_status st;
	struct rec_json_str info;
	char s[REC_STR_MAX], status[17];

	if (rec_dump_read__as_str(r, v, o->path, "value", s, sizeof(s), &info) ||
	    rec_dump_read__get_cstr(r, o, VAL_STATUS, 16, status))
		return -EINVAL;
	if (rec_names__parse_str_status(status, &st))
		return rec_dump_read__fail_at(r, o->path, "status",
					      "expected \"ok\", \"truncated\", \"fault\", "
					      "\"null\" or \"nospace\"");
	if (st != REC_STR_OK && st != REC_STR_TRUNCATED) {
		if (info.len)
			return rec_dump_read__fail_at(r, o->path, "value",
						      "must be \"\" when the status is \"%s\"",
						      status);
		*slot = REC_STR_SLOT(0, 0, st);
		return 0;
	}
	if (info.len > REC_STR_MAX - 1)
		return rec_dump_read__fail_at(r, o->path, "value", "string longer than %d bytes",
					      REC_STR_MAX - 1);
	/* Each string is followed by its NUL, as bpf_probe_read_user_str() leaves it. */
	if (info.len + 1 > REC_STR_AREA - area->off)
		return rec_dump_read__fail_at(
			r, o->path, "value",
			"the event's strings take more than the %d bytes of its string area",
			REC_STR_AREA);
	memcpy(area->base + area->off, s, info.len);
	*slot = REC_STR_SLOT(area->off, info.len, st);
	area->off += (uint32_t)info.len + 1;
	return 0;
}

static int read_f64_value(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
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
			return rec_dump_read__fail_input(r, err);
		/* Any JSON number: strtod() rounds it to the nearest double, as written. */
		d = strtod(n.text, NULL);
		if (isinf(d))
			return rec_dump_read__fail_at(r, path, "value",
						      "%s is out of range for a double", n.text);
	} else if (v->type == REC_JSON_STRING) {
		err = rec_json_read__string(r->jr, v, s, sizeof(s), &info);
		if (err)
			return rec_dump_read__fail_input(r, err);
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
	return rec_dump_read__fail_at(r, path, "value",
				      "expected a number, \"nan\", \"inf\" or \"-inf\"");
}

/* Reads one value into its type and raw value slot. */
static int read_value(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
		      struct str_area *area, unsigned int *type, uint64_t *raw)
{
	struct rec_json_value m[VAL_N];
	struct rec_dump_object o = { path, value_keys, VAL_N, m };
	const struct rec_json_value *val;
	enum rec_field_type ft;
	char t[9];
	int64_t i;
	int err;

	err = rec_dump_read__scan_object(r, v, &o) ?:
	      rec_dump_read__get_cstr(r, &o, VAL_TYPE, 8, t) ?:
	      rec_dump_read__get_member(r, &o, VAL_VALUE, &val);
	if (err)
		return err;
	if (rec_names__parse_field_type(t, &ft))
		return rec_dump_read__fail_at(
			r, path, "type", "expected \"str\", \"i64\", \"u64\", \"f64\" or \"bool\"");
	*type = ft;
	switch (ft) {
	case REC_TYPE_STR:
		return read_str_value(r, &o, val, area, raw);
	case REC_TYPE_I64:
		err = rec_dump_read__as_i64(r, val, path, "value", &i);
		*raw = (uint64_t)i;
		return err;
	case REC_TYPE_U64:
		return rec_dump_read__as_u64(r, val, path, "value", 0, UINT64_MAX, raw);
	case REC_TYPE_F64:
		return read_f64_value(r, val, path, raw);
	default:
		/* REC_TYPE_BOOL: the table parses no other type. */
		if (val->type != REC_JSON_TRUE && val->type != REC_JSON_FALSE)
			return rec_dump_read__fail_at(r, path, "value", "expected true or false");
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

static int read_one_value(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
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

int rec_dump_read__event(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			 size_t index, void *ctx)
{
	struct rec_dump_recording_ctx *rc = ctx;
	struct rec_rstate *rs = rc->rs;
	struct rec_json_value m[EV_N];
	struct rec_dump_object o = { path, event_keys, EV_N, m };
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
	err = rec_dump_read__scan_object(r, v, &o) ?:
	      rec_dump_read__get_u64(r, &o, EV_SEQ, 0, UINT64_MAX, &seq) ?:
	      rec_dump_read__get_u64(r, &o, EV_TID, 0, UINT32_MAX, &tid) ?:
	      rec_dump_read__get_u64(r, &o, EV_TIME_NS, 0, UINT64_MAX, &time_ns) ?:
	      rec_dump_read__get_key(r, &o, EV_CALLSITE, &meta) ?:
	      rec_dump_read__get_array(r, &o, EV_VALUES, REC_MAX_FIELDS, &values);
	if (!err && m[EV_LEVEL].type != REC_JSON_NONE)
		err = rec_dump_read__get_u64(r, &o, EV_LEVEL, 0, REC_LEVEL_ERROR, &level);
	if (err)
		return err;
	if (seq >= rs->produced)
		return rec_dump_read__fail_at(r, path, "seq",
					      "%" PRIu64 " is not below seen (%" PRIu64 ")", seq,
					      rs->produced);
	/*
	 * Oldest first, as written: each is stored at the new end of the spool,
	 * so a dump of any order cannot make reading it quadratic.
	 */
	if (seq + 1 == rc->next_seq)
		return rec_dump_read__fail_at(r, path, "seq", "duplicate seq %" PRIu64, seq);
	if (seq < rc->next_seq)
		return rec_dump_read__fail_at(r, path, "seq",
					      "%" PRIu64 " comes after seq %" PRIu64
					      " (events are oldest first)",
					      seq, rc->next_seq - 1);
	rc->next_seq = seq + 1;
	err = rec_dump_read__each_object(r, &o, EV_VALUES, values, vpath, sizeof(vpath),
					 read_one_value, &b);
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
		return rec_dump_read__fail_at(r, path, NULL, "not a valid event record");
	err = rec_spool__push(rs->spool, d.seq, b.rec.bytes, size);
	if (err == -EEXIST)
		return rec_dump_read__fail_at(r, path, "seq", "duplicate seq %" PRIu64, d.seq);
	if (err == -ESTALE)
		return rec_dump_read__fail_at(r, path, "seq",
					      "seq %" PRIu64 " is older than the last %" PRIu64
					      " (cap) events",
					      d.seq, rs->cap);
	if (err == -ENOMEM)
		return rec_dump_read__fail_nomem(r);
	if (err)
		return rec_dump_read__fail_at(r, path, "seq", "cannot be stored (%s)",
					      strerror(-err));
	return 0;
}
