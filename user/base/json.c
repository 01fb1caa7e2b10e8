// SPDX-License-Identifier: MIT
/*
 * The streaming JSON writer (json.h). It keeps one flag for the commas, as
 * bpftool's json_writer does: a value sets it, opening an object or array or
 * writing a key clears it, so nesting needs no stack.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"

/*
 * The bytes go out with the unlocked calls: each FILE a writer writes is its
 * thread's alone (a dump's, a client's, stdout of recorder-tail), and a dump
 * is written mostly a few bytes at a time.
 */
static inline void put_char(FILE *out, char c)
{
	putc_unlocked(c, out);
}

static inline void put_bytes(FILE *out, const char *s, size_t n)
{
	/* A few bytes (a number, a key): a call to fwrite costs more than they do. */
	if (n > 16) {
		fwrite_unlocked(s, 1, n, out);
		return;
	}
	for (size_t i = 0; i < n; i++)
		putc_unlocked(s[i], out);
}

/* v in decimal into the end of buf (21 bytes); where it starts. */
static char *decimal(uint64_t v, char *end)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void rec_json__init(struct rec_json *w, FILE *out)
{
	*w = (struct rec_json){ .out = out };
}

/* Before a value or a key: the comma after the one before, and the line break asked for. */
static void before(struct rec_json *w)
{
	if (w->comma && w->depth)
		put_char(w->out, ',');
	if (w->newline)
		put_char(w->out, '\n');
	w->comma = false;
	w->newline = false;
}

static void begin(struct rec_json *w, char c)
{
	before(w);
	put_char(w->out, c);
	w->depth++;
}

static void end(struct rec_json *w, char c)
{
	if (w->depth)
		w->depth--;
	put_char(w->out, c);
	w->comma = true;
	w->newline = false;
}

void rec_json__begin_object(struct rec_json *w)
{
	begin(w, '{');
}

void rec_json__end_object(struct rec_json *w)
{
	end(w, '}');
}

void rec_json__begin_array(struct rec_json *w)
{
	begin(w, '[');
}

void rec_json__end_array(struct rec_json *w)
{
	end(w, ']');
}

/*
 * The bytes a string may hold that are written otherwise: '"' and '\\', and
 * those rec_text__escape() may escape (controls, DEL, and 0xc2, which starts
 * a C1 control in UTF-8).
 */
static bool is_special(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\' || c == 0x7f || c == 0xc2;
}

/* Writes s quoted and escaped. */
static void put_string(FILE *out, const char *s, size_t len)
{
	size_t from = 0, i = 0;

	put_char(out, '"');
	/* Most strings have nothing to escape: they go out in one write. */
	while (i < len && !is_special((unsigned char)s[i]))
		i++;
	if (i == len) {
		put_bytes(out, s, len);
		put_char(out, '"');
		return;
	}
	for (; i < len; i++) {
		if (s[i] != '"' && s[i] != '\\')
			continue;
		rec_text__escape(out, s + from, i - from);
		put_char(out, '\\');
		put_char(out, s[i]);
		from = i + 1;
	}
	rec_text__escape(out, s + from, len - from);
	put_char(out, '"');
}

void rec_json__key(struct rec_json *w, const char *name)
{
	before(w);
	put_string(w->out, name, strlen(name));
	put_char(w->out, ':');
}

void rec_json__string(struct rec_json *w, const char *s, size_t len)
{
	before(w);
	put_string(w->out, s, len);
	w->comma = true;
}

void rec_json__cstr(struct rec_json *w, const char *s)
{
	rec_json__string(w, s ? s : "", s ? strlen(s) : 0);
}

/* rec_text__key()'s spelling, which needs no escape. */
void rec_json__hex(struct rec_json *w, uint64_t v)
{
	char buf[REC_TEXT_KEY_MAX];

	before(w);
	put_char(w->out, '"');
	put_bytes(w->out, buf, strlen(rec_text__key(v, buf)));
	put_char(w->out, '"');
	w->comma = true;
}

void rec_json__time(struct rec_json *w, int64_t time_ns)
{
	char buf[REC_TEXT_TIME_MAX];

	rec_json__cstr(w, rec_text__rfc3339(time_ns, buf));
}

void rec_json__u64(struct rec_json *w, uint64_t v)
{
	char buf[24], *end = buf + sizeof(buf), *at = decimal(v, end);

	before(w);
	put_bytes(w->out, at, (size_t)(end - at));
	w->comma = true;
}

void rec_json__i64(struct rec_json *w, int64_t v)
{
	/* In unsigned arithmetic: -INT64_MIN does not fit an int64_t. */
	char buf[24], *end = buf + sizeof(buf),
		      *at = decimal(v < 0 ? 0 - (uint64_t)v : (uint64_t)v, end);

	if (v < 0)
		*--at = '-';
	before(w);
	put_bytes(w->out, at, (size_t)(end - at));
	w->comma = true;
}

void rec_json__f64(struct rec_json *w, double v)
{
	char buf[40];

	if (isnan(v)) {
		rec_json__cstr(w, "nan");
		return;
	}
	if (isinf(v)) {
		rec_json__cstr(w, v < 0 ? "-inf" : "inf");
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".e"))
		strcat(buf, ".0");
	before(w);
	fputs(buf, w->out);
	w->comma = true;
}

void rec_json__bool(struct rec_json *w, bool v)
{
	before(w);
	fputs(v ? "true" : "false", w->out);
	w->comma = true;
}

void rec_json__null(struct rec_json *w)
{
	before(w);
	fputs("null", w->out);
	w->comma = true;
}

void rec_json__micros(struct rec_json *w, int64_t ns)
{
	/* In unsigned arithmetic: -INT64_MIN does not fit an int64_t. */
	uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;

	before(w);
	fprintf(w->out, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", mag / 1000,
		(unsigned int)(mag % 1000));
	w->comma = true;
}

void rec_json__value(struct rec_json *w, const char *json, size_t len)
{
	before(w);
	fwrite(json, 1, len, w->out);
	w->comma = true;
}

void rec_json__member_u64(struct rec_json *w, const char *name, uint64_t v)
{
	rec_json__key(w, name);
	rec_json__u64(w, v);
}

void rec_json__member_i64(struct rec_json *w, const char *name, int64_t v)
{
	rec_json__key(w, name);
	rec_json__i64(w, v);
}

void rec_json__member_cstr(struct rec_json *w, const char *name, const char *s)
{
	rec_json__key(w, name);
	rec_json__cstr(w, s);
}

void rec_json__member_hex(struct rec_json *w, const char *name, uint64_t v)
{
	rec_json__key(w, name);
	rec_json__hex(w, v);
}

void rec_json__member_bool(struct rec_json *w, const char *name, bool v)
{
	rec_json__key(w, name);
	rec_json__bool(w, v);
}

void rec_json__newline(struct rec_json *w)
{
	if (w->depth)
		w->newline = true;
	else
		put_char(w->out, '\n');
}
