// SPDX-License-Identifier: MIT
/*
 * The checks every reader of a dump's parts uses (dump_reader.h): an object's
 * members found in one walk, each read as the type and range it must have,
 * and the error that names the first one that is not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "dumps/dump_reader.h"

/* Room for a member's name: longer names are no member this version knows. */
#define REC_DUMP_KEY_MAX 32

/* Sets the message "<path>.<key>: <fmt...>" (key may be NULL). */
void rec_dump_read__set_error(struct rec_dump_read *r, const char *path, const char *key,
			      const char *fmt, ...)
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

int rec_dump_read__fail_nomem(struct rec_dump_read *r)
{
	if (r->err && r->errlen)
		snprintf(r->err, r->errlen, "out of memory");
	return -ENOMEM;
}

/* An error of the JSON reader: not JSON (-EINVAL), or a failed read (its errno). */
int rec_dump_read__fail_input(struct rec_dump_read *r, int err)
{
	if (err == -EINVAL)
		return rec_dump_read__fail_at(r, "", NULL, "not JSON: %s",
					      rec_json_read__error(r->jr));
	if (err == -ENOMEM)
		return rec_dump_read__fail_nomem(r);
	if (r->err && r->errlen)
		snprintf(r->err, r->errlen, "%s", strerror(-err));
	return err;
}

/* ---- objects and their members ---- */

/*
 * Finds o's members in the object v, in one walk. A member this version does
 * not know is skipped without being read; one it knows twice is refused.
 */
int rec_dump_read__scan_object(struct rec_dump_read *r, const struct rec_json_value *v,
			       struct rec_dump_object *o)
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
		return rec_dump_read__fail_input(r, ret);
	while ((ret = rec_json_read__next(r->jr, &it, &m, key, sizeof(key), &keylen)) > 0) {
		if (keylen >= sizeof(key))
			continue;
		for (i = 0; i < o->nkeys; i++)
			if (keylen == strlen(o->keys[i]) && !memcmp(key, o->keys[i], keylen))
				break;
		if (i == o->nkeys)
			continue;
		if (o->m[i].type != REC_JSON_NONE)
			return rec_dump_read__fail_at(r, o->path, NULL, "\"%s\" appears twice",
						      o->keys[i]);
		o->m[i] = m;
	}
	return ret ? rec_dump_read__fail_input(r, ret) : 0;
}

/* o's member i, which must be there. */
int rec_dump_read__get_member(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			      const struct rec_json_value **v)
{
	if (o->m[i].type == REC_JSON_NONE)
		return rec_dump_read__fail_at(r, o->path, NULL, "missing \"%s\"", o->keys[i]);
	*v = &o->m[i];
	return 0;
}

/* Checks that v (named path.key) is an unsigned integer in [min, max] and stores it. */
int rec_dump_read__as_u64(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			  const char *key, uint64_t min, uint64_t max, uint64_t *out)
{
	struct rec_json_number n;
	int err;

	if (v->type != REC_JSON_NUMBER)
		return rec_dump_read__fail_at(r, path, key, "expected an unsigned integer");
	err = rec_json_read__number(r->jr, v, &n);
	if (err)
		return rec_dump_read__fail_input(r, err);
	/* -0 is 0. */
	if (!n.integer || (n.negative && (n.overflow || n.magnitude)))
		return rec_dump_read__fail_at(r, path, key, "expected an unsigned integer");
	if (n.overflow)
		return rec_dump_read__fail_at(r, path, key,
					      "%s is out of range (%" PRIu64 "..%" PRIu64 ")",
					      n.text, min, max);
	if (n.magnitude < min || n.magnitude > max)
		return rec_dump_read__fail_at(
			r, path, key, "%" PRIu64 " is out of range (%" PRIu64 "..%" PRIu64 ")",
			n.magnitude, min, max);
	*out = n.magnitude;
	return 0;
}

int rec_dump_read__get_u64(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			   uint64_t min, uint64_t max, uint64_t *out)
{
	const struct rec_json_value *v;

	return rec_dump_read__get_member(r, o, i, &v)
		       ?: rec_dump_read__as_u64(r, v, o->path, o->keys[i], min, max, out);
}

int rec_dump_read__get_u32(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			   uint32_t *out)
{
	uint64_t v;
	int err = rec_dump_read__get_u64(r, o, i, 0, UINT32_MAX, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

/* Checks that v is an integer that fits int64_t and stores it. */
int rec_dump_read__as_i64(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			  const char *key, int64_t *out)
{
	struct rec_json_number n;
	int err;

	if (v->type != REC_JSON_NUMBER)
		return rec_dump_read__fail_at(r, path, key, "expected an integer");
	err = rec_json_read__number(r->jr, v, &n);
	if (err)
		return rec_dump_read__fail_input(r, err);
	if (!n.integer)
		return rec_dump_read__fail_at(r, path, key, "expected an integer");
	if (n.overflow || n.magnitude > (uint64_t)INT64_MAX + n.negative)
		return rec_dump_read__fail_at(r, path, key,
					      "%s is out of range for a signed integer", n.text);
	/* Through unsigned arithmetic: -2^63 has no positive twin. */
	*out = n.negative ? (int64_t)(0 - n.magnitude) : (int64_t)n.magnitude;
	return 0;
}

/*
 * Checks that v is a string and reads it into buf (size bytes, see
 * rec_json_read__string: a longer one is cut, *info has its whole length).
 */
int rec_dump_read__as_str(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			  const char *key, char *buf, size_t size, struct rec_json_str *info)
{
	int err;

	if (v->type != REC_JSON_STRING)
		return rec_dump_read__fail_at(r, path, key, "expected a string");
	err = rec_json_read__string(r->jr, v, buf, size, info);
	return err ? rec_dump_read__fail_input(r, err) : 0;
}

/* A string member without NUL bytes, of at most max bytes, into buf (max + 1 bytes). */
int rec_dump_read__get_cstr(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			    size_t max, char *buf)
{
	const struct rec_json_value *v;
	struct rec_json_str info;
	int err;

	err = rec_dump_read__get_member(r, o, i, &v)
		      ?: rec_dump_read__as_str(r, v, o->path, o->keys[i], buf, max + 1, &info);
	if (err)
		return err;
	if (info.has_nul)
		return rec_dump_read__fail_at(r, o->path, o->keys[i], "contains a NUL byte");
	if (info.len > max)
		return rec_dump_read__fail_at(r, o->path, o->keys[i], "longer than %zu bytes", max);
	return 0;
}

/* Parses a "0x…" key: 1 to 16 hex digits. */
static int as_key(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
		  const char *key, uint64_t *out)
{
	struct rec_json_str info;
	char s[20];
	uint64_t k = 0;

	if (rec_dump_read__as_str(r, v, path, key, s, sizeof(s), &info))
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
	return rec_dump_read__fail_at(r, path, key,
				      "expected a \"0x\" hex string of at most 16 digits");
}

int rec_dump_read__get_key(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			   uint64_t *out)
{
	const struct rec_json_value *v;

	return rec_dump_read__get_member(r, o, i, &v) ?: as_key(r, v, o->path, o->keys[i], out);
}

/* An array member of at most max elements. */
int rec_dump_read__get_array(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			     uint64_t max, const struct rec_json_value **v)
{
	int err = rec_dump_read__get_member(r, o, i, v);

	if (err)
		return err;
	if ((*v)->type != REC_JSON_ARRAY)
		return rec_dump_read__fail_at(r, o->path, o->keys[i], "expected an array");
	if ((*v)->count > max)
		return rec_dump_read__fail_at(r, o->path, o->keys[i],
					      "%" PRIu64 " elements, more than %" PRIu64,
					      (*v)->count, max);
	return 0;
}

int rec_dump_read__get_object(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			      const struct rec_json_value **v)
{
	int err = rec_dump_read__get_member(r, o, i, v);

	if (!err && (*v)->type != REC_JSON_OBJECT)
		return rec_dump_read__fail_at(r, o->path, o->keys[i], "expected an object");
	return err;
}

int rec_dump_read__get_bool(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			    int *out)
{
	const struct rec_json_value *v;
	int err = rec_dump_read__get_member(r, o, i, &v);

	if (err)
		return err;
	if (v->type != REC_JSON_TRUE && v->type != REC_JSON_FALSE)
		return rec_dump_read__fail_at(r, o->path, o->keys[i], "expected true or false");
	*out = v->type == REC_JSON_TRUE;
	return 0;
}

/*
 * Calls fn for each element of arr, o's member i (at most arr->count of them,
 * which rec_dump_read__get_array checked), naming each "<o's path>.<key>[<i>]" in path (size
 * bytes). Each must be an object.
 */
int rec_dump_read__each_object(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			       const struct rec_json_value *arr, char *path, size_t size,
			       rec_dump_element_fn fn, void *ctx)
{
	struct rec_json_value elem;
	struct rec_json_iter it;
	size_t n = 0;
	int ret;

	ret = rec_json_read__iter(r->jr, arr, &it);
	if (ret)
		return rec_dump_read__fail_input(r, ret);
	while ((ret = rec_json_read__next(r->jr, &it, &elem, NULL, 0, NULL)) > 0) {
		/* Only if the file changed since it was checked. */
		if (n == arr->count)
			return rec_dump_read__fail_at(r, o->path, o->keys[i],
						      "changed while it was read");
		snprintf(path, size, "%s%s%s[%zu]", o->path, *o->path ? "." : "", o->keys[i], n);
		if (elem.type != REC_JSON_OBJECT)
			return rec_dump_read__fail_at(r, path, NULL, "expected an object");
		ret = fn(r, &elem, path, n++, ctx);
		if (ret)
			return ret;
	}
	return ret ? rec_dump_read__fail_input(r, ret) : 0;
}
