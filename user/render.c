/* SPDX-License-Identifier: MIT */
/*
 * Rendering of events as glog-style text or JSON lines (render.h). Every string
 * that came from the target (subject, callsite strings, string fields) is
 * escaped, so that one event is always one line.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/names.h"
#include "render.h"

#define NSEC_PER_SEC 1000000000LL

/* Writes the escape of the control character c (below 0x20, or DEL) as in JSON; its length. */
static size_t put_control(FILE *out, unsigned char c)
{
	const char *named = NULL;

	switch (c) {
	case '\n':
		named = "\\n";
		break;
	case '\t':
		named = "\\t";
		break;
	case '\r':
		named = "\\r";
		break;
	case '\b':
		named = "\\b";
		break;
	case '\f':
		named = "\\f";
		break;
	}
	if (named) {
		fputs(named, out);
		return 2;
	}
	fprintf(out, "\\u%04x", c);
	return 6;
}

/*
 * The one escaping of text that came from the target, for glog (json false) or
 * inside a JSON string (json true): control bytes (below 0x20 and DEL) and the
 * C1 controls in UTF-8 (U+0080..U+009F, bytes c2 80..c2 9f) become "\n",
 * "\u001b" and so on; quotes and backslashes are escaped for JSON only. Every
 * other byte is written as it is. Returns the number of bytes written.
 */
static size_t put_text(FILE *out, const char *s, size_t len, bool json)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned char next = i + 1 < len ? (unsigned char)s[i + 1] : 0;

		if (json && (c == '"' || c == '\\')) {
			fputc('\\', out);
			fputc(c, out);
			n += 2;
		} else if (c < 0x20 || c == 0x7f) {
			n += put_control(out, c);
		} else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
			fprintf(out, "\\u%04x", next);
			n += 6;
			i++;
		} else {
			fputc(c, out);
			n++;
		}
	}
	return n;
}

size_t rec_text__escape(FILE *out, const char *s, size_t len)
{
	return put_text(out, s, len, false);
}

/* Writes s (len bytes, may hold NULs) as a JSON string literal, quotes included. */
void rec_json__string(FILE *out, const char *s, size_t len)
{
	fputc('"', out);
	put_text(out, s, len, true);
	fputc('"', out);
}

/* Writes the NUL-terminated s as a JSON string literal; NULL as "". */
static void json_cstr(FILE *out, const char *s)
{
	rec_json__string(out, s ? s : "", s ? strlen(s) : 0);
}

/* "0x" followed by lower-case hex without padding, into buf (at least 19 bytes). */
const char *rec_key__format(uint64_t key, char *buf)
{
	snprintf(buf, 19, "0x%" PRIx64, key);
	return buf;
}

/* Writes a string field's text and its marker, escaped for glog. */
static void put_str_value(FILE *out, const struct rec_value *v)
{
	const char *marker = rec_names__str_mark(v->str.status);

	put_text(out, v->str.ptr, v->str.len, false);
	put_text(out, marker, strlen(marker), false);
}

/* Writes a string field as JSON: the bytes read (the first of a truncated one), else null. */
static void json_str_value(FILE *out, const struct rec_value *v)
{
	if (v->str.status == REC_STR_OK || v->str.status == REC_STR_TRUNCATED)
		rec_json__string(out, v->str.ptr, v->str.len);
	else
		fputs("null", out);
}

/* Splits time_ns (since the epoch, may be negative) into seconds and microseconds. */
static void split_time(int64_t time_ns, time_t *sec, long *usec)
{
	int64_t s = time_ns / NSEC_PER_SEC, ns = time_ns % NSEC_PER_SEC;

	if (ns < 0) {
		ns += NSEC_PER_SEC;
		s--;
	}
	*sec = (time_t)s;
	*usec = (long)(ns / 1000);
}

/* The name of field i of ev: its callsite's, or "field<i>" written into buf. */
static const char *field_name(const struct rec_event_view *ev, uint32_t i, char *buf,
			      size_t size)
{
	if (ev->cs && i < ev->cs->nfields && i < REC_MAX_FIELDS && ev->cs->field_names[i])
		return ev->cs->field_names[i];
	snprintf(buf, size, "field%u", i);
	return buf;
}

/*
 * The message of ev: the callsite's if non-empty, else the string field named
 * "message", whose index goes to *msg_field (-1 if none). Returns NULL when the
 * message comes from that field or there is none.
 */
static const char *event_message(const struct rec_event_view *ev, int *msg_field)
{
	uint32_t i;

	*msg_field = -1;
	if (!ev->cs)
		return NULL;
	if (ev->cs->message && ev->cs->message[0])
		return ev->cs->message;
	for (i = 0; i < ev->nfields && i < ev->cs->nfields && i < REC_MAX_FIELDS; i++) {
		const char *name = ev->cs->field_names[i];

		if (ev->values[i].type == REC_TYPE_STR && name && !strcmp(name, "message")) {
			*msg_field = (int)i;
			break;
		}
	}
	return NULL;
}

/* Writes the message of ev escaped for glog. */
static void put_message(FILE *out, const struct rec_event_view *ev, const char *msg,
			int msg_field)
{
	if (!ev->cs)
		fprintf(out, "<callsite 0x%" PRIx64 ">", ev->meta);
	else if (msg)
		put_text(out, msg, strlen(msg), false);
	else if (msg_field >= 0)
		put_str_value(out, &ev->values[msg_field]);
}

/* Writes the message of ev as a JSON value: a string, or null for an unread message field. */
static void json_message(FILE *out, const struct rec_event_view *ev, const char *msg,
			 int msg_field)
{
	char buf[32];

	if (!ev->cs) {
		snprintf(buf, sizeof(buf), "<callsite 0x%" PRIx64 ">", ev->meta);
		json_cstr(out, buf);
	} else if (msg) {
		json_cstr(out, msg);
	} else if (msg_field >= 0) {
		json_str_value(out, &ev->values[msg_field]);
	} else {
		json_cstr(out, "");
	}
}

/* Writes a glog field value. */
static void glog_value(FILE *out, const struct rec_value *v)
{
	switch (v->type) {
	case REC_TYPE_STR:
		put_str_value(out, v);
		break;
	case REC_TYPE_I64:
		fprintf(out, "%" PRId64, v->i64);
		break;
	case REC_TYPE_U64:
		fprintf(out, "%" PRIu64, v->u64);
		break;
	case REC_TYPE_F64:
		fprintf(out, "%g", v->f64);
		break;
	case REC_TYPE_BOOL:
		fputs(v->b ? "true" : "false", out);
		break;
	default:
		fputs("?", out);
	}
}

const char *rec_path__base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * One glog-style line, newline included:
 *	I1202 14:03:12.123456 4242 server.c:88] <actor[0]> handled request, id: 7, ok: true
 * The time is local time; when there is no message, the fields follow the subject
 * directly ("id: 7, ok: true").
 */
void rec_render__glog(FILE *out, const struct rec_event_view *ev)
{
	const struct rec_callsite *cs = ev->cs;
	const char *file = "?", *base, *msg;
	bool first = true;
	char name_buf[16];
	int msg_field;
	struct tm tm;
	time_t sec;
	long usec;
	uint32_t i;

	split_time(ev->time_ns, &sec, &usec);
	if (!localtime_r(&sec, &tm))
		memset(&tm, 0, sizeof(tm));
	if (cs && cs->file)
		file = cs->file;
	base = rec_path__base(file);

	fprintf(out, "%c%02d%02d %02d:%02d:%02d.%06ld %" PRIu32 " ",
		cs ? rec_names__level_letter(cs->level) : '?', tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		tm.tm_min, tm.tm_sec, usec, ev->tid);
	put_text(out, base, strlen(base), false);
	fprintf(out, ":%" PRIu32 "] ", cs ? cs->line : 0);
	if (ev->subject && ev->subject[0]) {
		fputc('<', out);
		put_text(out, ev->subject, strlen(ev->subject), false);
		fputs("> ", out);
	}

	msg = event_message(ev, &msg_field);
	if (!cs || msg || msg_field >= 0) {
		put_message(out, ev, msg, msg_field);
		first = false;
	}
	for (i = 0; i < ev->nfields; i++) {
		const char *name = field_name(ev, i, name_buf, sizeof(name_buf));

		if ((int)i == msg_field)
			continue;
		if (!first)
			fputs(", ", out);
		first = false;
		put_text(out, name, strlen(name), false);
		fputs(": ", out);
		glog_value(out, &ev->values[i]);
	}
	fputc('\n', out);
}

void rec_json__f64(FILE *out, double v)
{
	char buf[40];

	if (isnan(v)) {
		fputs("\"nan\"", out);
		return;
	}
	if (isinf(v)) {
		fputs(v < 0 ? "\"-inf\"" : "\"inf\"", out);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".e"))
		strcat(buf, ".0");
	fputs(buf, out);
}

/* Writes a JSON field value. */
static void json_value(FILE *out, const struct rec_value *v)
{
	switch (v->type) {
	case REC_TYPE_STR:
		json_str_value(out, v);
		break;
	case REC_TYPE_I64:
		fprintf(out, "%" PRId64, v->i64);
		break;
	case REC_TYPE_U64:
		fprintf(out, "%" PRIu64, v->u64);
		break;
	case REC_TYPE_F64:
		rec_json__f64(out, v->f64);
		break;
	case REC_TYPE_BOOL:
		fputs(v->b ? "true" : "false", out);
		break;
	default:
		fputs("null", out);
	}
}

/*
 * Writes ',"field_status":{name: status, ...}' for the string fields of ev that
 * were not read whole, the message field included; nothing if there are none.
 */
static void json_field_status(FILE *out, const struct rec_event_view *ev)
{
	char name_buf[16];
	bool first = true;
	uint32_t i;

	for (i = 0; i < ev->nfields; i++) {
		const struct rec_value *v = &ev->values[i];

		if (v->type != REC_TYPE_STR || v->str.status == REC_STR_OK)
			continue;
		fputs(first ? ",\"field_status\":{" : ",", out);
		first = false;
		json_cstr(out, field_name(ev, i, name_buf, sizeof(name_buf)));
		fputc(':', out);
		json_cstr(out, rec_names__str_status(v->str.status));
	}
	if (!first)
		fputc('}', out);
}

/*
 * One JSON object per line (see render.h). With cs NULL, level, target and name
 * are "?", file is "?", line is 0 and the message is "<callsite 0x…>". The
 * "message" key is always present, empty when the event has no message.
 */
void rec_render__json(FILE *out, const struct rec_event_view *ev)
{
	const struct rec_callsite *cs = ev->cs;
	char key[19], name_buf[16];
	const char *msg;
	int msg_field;
	struct tm tm;
	time_t sec;
	long usec;
	uint32_t i;

	split_time(ev->time_ns, &sec, &usec);
	if (!gmtime_r(&sec, &tm))
		memset(&tm, 0, sizeof(tm));

	fprintf(out, "{\"pid\":%" PRIu32, ev->pid);
	if (ev->ns_pid)
		fprintf(out, ",\"ns_pid\":%" PRIu32, ev->ns_pid);
	fprintf(out, ",\"tid\":%" PRIu32, ev->tid);
	fprintf(out, ",\"recording\":\"%s\"", rec_key__format(ev->recording, key));
	fprintf(out, ",\"recorder\":\"%s\"", rec_key__format(ev->recorder, key));
	fputs(",\"subject\":", out);
	json_cstr(out, ev->subject);
	fprintf(out, ",\"seq\":%" PRIu64, ev->seq);
	fprintf(out, ",\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ\"", tm.tm_year + 1900,
		tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, usec);
	fputs(",\"level\":", out);
	json_cstr(out, cs ? rec_names__level(cs->level) : "?");
	fputs(",\"target\":", out);
	json_cstr(out, cs ? cs->target : "?");
	fputs(",\"name\":", out);
	json_cstr(out, cs ? cs->name : "?");
	fputs(",\"file\":", out);
	json_cstr(out, cs ? cs->file : "?");
	fprintf(out, ",\"line\":%" PRIu32, cs ? cs->line : 0);

	msg = event_message(ev, &msg_field);
	fputs(",\"fields\":{\"message\":", out);
	json_message(out, ev, msg, msg_field);
	for (i = 0; i < ev->nfields; i++) {
		if ((int)i == msg_field)
			continue;
		fputc(',', out);
		json_cstr(out, field_name(ev, i, name_buf, sizeof(name_buf)));
		fputc(':', out);
		json_value(out, &ev->values[i]);
	}
	fputc('}', out);
	json_field_status(out, ev);
	fputs("}\n", out);
}
