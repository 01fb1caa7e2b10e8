/* SPDX-License-Identifier: MIT */
/*
 * The one JSON writer: every JSON that recorder writes (JSON lines, the
 * dump, the formats to come) is written through it, and no other code writes
 * JSON syntax. It streams into a FILE and holds no document: the caller
 * opens and closes objects and arrays in order, and the writer puts the
 * commas and the quotes. Compact, with line breaks only where the caller asks
 * (rec_json__newline). Write errors are the FILE's (ferror).
 *
 *	struct rec_json w;
 *
 *	rec_json__init(&w, out);
 *	rec_json__begin_object(&w);
 *	rec_json__member_u64(&w, "pid", 42);
 *	rec_json__key(&w, "fields");
 *	rec_json__begin_array(&w);
 *	rec_json__cstr(&w, "a\"b");
 *	rec_json__f64(&w, 0.5);
 *	rec_json__end_array(&w);
 *	rec_json__end_object(&w);
 *	rec_json__newline(&w);		=> {"pid":42,"fields":["a\"b",0.5]}\n
 */
#ifndef REC_JSON_H
#define REC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rec_json {
	FILE *out;
	unsigned int depth; /* objects and arrays open */
	bool comma;	    /* a value came before at this depth: the next one needs a ',' */
	bool newline;	    /* the next member or element starts a line */
};

void rec_json__init(struct rec_json *w, FILE *out);

void rec_json__begin_object(struct rec_json *w);
void rec_json__end_object(struct rec_json *w);
void rec_json__begin_array(struct rec_json *w);
void rec_json__end_array(struct rec_json *w);

/* The key of the next member of the object open: its value follows. */
void rec_json__key(struct rec_json *w, const char *name);

/*
 * s (len bytes, may hold NULs) as a string: '"' and '\' escaped, and every
 * byte that rec_text__escape() escapes, as it does (control bytes, DEL, the
 * C1 controls in UTF-8). Other bytes are written as they are.
 */
void rec_json__string(struct rec_json *w, const char *s, size_t len);
/* The NUL-terminated s as a string; NULL as "". */
void rec_json__cstr(struct rec_json *w, const char *s);
/* "0x" and lower-case hex, as a string (rec_text__key): recording keys, addresses. */
void rec_json__hex(struct rec_json *w, uint64_t v);
/* time_ns since the epoch in RFC 3339 with microseconds, as a string (rec_text__rfc3339). */
void rec_json__time(struct rec_json *w, int64_t time_ns);

void rec_json__u64(struct rec_json *w, uint64_t v);
void rec_json__i64(struct rec_json *w, int64_t v);
/*
 * v as the shortest number that reads back to the same bits, always with a
 * '.' or an exponent so that it reads back as a double ("1.0", "-0.0",
 * "1e+300"); "nan", "inf" and "-inf" as strings.
 */
void rec_json__f64(struct rec_json *w, double v);
void rec_json__bool(struct rec_json *w, bool v);
void rec_json__null(struct rec_json *w);
/*
 * ns nanoseconds as microseconds with three decimals, exactly (not through a
 * double): 1234567891 as 1234567.891, -1500 as -1.500. For trace timestamps.
 */
void rec_json__micros(struct rec_json *w, int64_t ns);
/* len bytes that another rec_json writer wrote as one whole value, as the next value. */
void rec_json__value(struct rec_json *w, const char *json, size_t len);

/* A member: rec_json__key(), then the value. */
void rec_json__member_u64(struct rec_json *w, const char *name, uint64_t v);
void rec_json__member_i64(struct rec_json *w, const char *name, int64_t v);
void rec_json__member_cstr(struct rec_json *w, const char *name, const char *s);
void rec_json__member_hex(struct rec_json *w, const char *name, uint64_t v);
void rec_json__member_bool(struct rec_json *w, const char *name, bool v);

/*
 * A line break: at the top level at once (after a document of JSON lines),
 * inside an object or array before its next member or element, after the
 * comma. One asked for where the object or array then ends is dropped.
 */
void rec_json__newline(struct rec_json *w);

#endif /* REC_JSON_H */
