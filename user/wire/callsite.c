/* SPDX-License-Identifier: MIT */
/* Parsing of the callsite metadata blob (callsite.h) and level names. */
#include <errno.h>
#include <string.h>

#include "wire/callsite.h"

struct blob_cursor {
	const char *p;	 /* next unread byte */
	const char *end; /* one past the last byte */
};

/* The next NUL-terminated string, or NULL if it runs past the end. */
static const char *blob_next(struct blob_cursor *c)
{
	const char *s = c->p, *nul;

	if (s >= c->end)
		return NULL;
	nul = memchr(s, '\0', c->end - s);
	if (!nul)
		return NULL;
	c->p = nul + 1;
	return s;
}

/* Parses s as a non-empty decimal number no larger than max. Returns 0 or -EINVAL. */
static int parse_decimal(const char *s, uint32_t max, uint32_t *val)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > max)
			return -EINVAL;
	}
	*val = (uint32_t)v;
	return 0;
}

/*
 * Parses the first len bytes of blob (which need not be NUL-terminated and may
 * hold trailing bytes) into *cs. Returns 0, or -EINVAL if the blob is not a
 * valid v1 callsite (bad magic, kind, level, line, nfields > 8, an empty field
 * name, or a string that runs past len). Only the first REC_CALLSITE_MAX bytes
 * are looked at.
 */
int rec_callsite__parse(struct rec_callsite *cs, const void *blob, size_t len)
{
	struct blob_cursor c;
	const char *magic, *kind, *level, *line, *nfields, *plus;
	char count[12];
	size_t n;
	uint32_t val, i;

	memset(cs, 0, sizeof(*cs));
	if (!blob)
		return -EINVAL;
	if (len > sizeof(cs->blob))
		len = sizeof(cs->blob);
	memcpy(cs->blob, blob, len);
	c.p = cs->blob;
	c.end = cs->blob + len;

	magic = blob_next(&c);
	if (!magic || strcmp(magic, "RCS1") != 0)
		goto invalid;

	kind = blob_next(&c);
	if (!kind || (strcmp(kind, "E") != 0 && strcmp(kind, "S") != 0))
		goto invalid;
	cs->kind = kind[0];

	level = blob_next(&c);
	if (!level || parse_decimal(level, REC_LEVEL_RUNTIME, &val) ||
	    (val > REC_LEVEL_ERROR && (val != REC_LEVEL_RUNTIME || cs->kind != 'E')))
		goto invalid;
	cs->level = (enum rec_level)val;

	cs->name = blob_next(&c);
	cs->target = blob_next(&c);
	cs->file = blob_next(&c);
	line = blob_next(&c);
	if (!cs->name || !cs->target || !cs->file || !line)
		goto invalid;
	if (parse_decimal(line, UINT32_MAX, &cs->line))
		goto invalid;

	cs->message = blob_next(&c);
	nfields = blob_next(&c);
	if (!cs->message || !nfields)
		goto invalid;
	/* "N", or "8+M": the site has M more fields, which its events leave out. */
	plus = strchr(nfields, '+');
	n = plus ? (size_t)(plus - nfields) : strlen(nfields);
	if (n >= sizeof(count))
		goto invalid;
	memcpy(count, nfields, n);
	count[n] = '\0';
	if (parse_decimal(count, REC_MAX_FIELDS, &cs->nfields))
		goto invalid;
	if (plus && (cs->nfields != REC_MAX_FIELDS ||
		     parse_decimal(plus + 1, UINT32_MAX, &cs->left_out) || !cs->left_out))
		goto invalid;

	for (i = 0; i < cs->nfields; i++) {
		cs->field_names[i] = blob_next(&c);
		if (!cs->field_names[i] || !cs->field_names[i][0])
			goto invalid;
	}
	cs->blob_len = (size_t)(c.p - cs->blob);
	return 0;

invalid:
	memset(cs, 0, sizeof(*cs));
	return -EINVAL;
}
