/* SPDX-License-Identifier: MIT */
/*
 * One comparison of an event's field with a value, as trigger rules
 * (event:'request done' status>=500) and recorder-tail --where write it:
 *
 *	FIELD OP VALUE
 *
 * FIELD is [A-Za-z_][A-Za-z0-9_.]*. OP is = != < <= > >= (== is =); blanks may
 * stand around it. VALUE is, in this order:
 *	an integer	500, -3, +7, 0x1f, -0x10 (it must fit in an i64 or a u64)
 *	a float		1.5, -2e3, .5, 1e-3 (finite)
 *	a boolean	true, false (lower case)
 *	a string	'...' or "..." (no escapes; empty is fine), or bare: any
 *			other run of non-blank characters, not starting with = ! < >
 * A string is a glob (fnmatch(3): * ? [...], no flags); quote it to compare a
 * number's or a boolean's spelling ('500', 'true'). Only = and != apply to
 * strings and booleans.
 *
 * Matching: numbers compare by value, exactly, whatever their types (i64, u64,
 * f64: 2^64 - 1 > -1, 0.5 < 1, a NaN field is unordered and matches only !=);
 * a boolean only with a boolean field; a string only with a string field, on
 * the bytes that were read (the first 255 of a truncated one; a string that
 * could not be read matches nothing). A field the event does not have, or of
 * another kind than the value, never matches, for != too: status!=200 means
 * "has a number status that is not 200". Of two fields of one name, the first
 * counts.
 */
#ifndef REC_COND_H
#define REC_COND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recorder_abi.h"
#include "wire/event.h"

struct rec_event_view;

/*
 * The grammar in short, as a usage error prints it after naming the bad part
 * (recorder-tail --where, and the COND of a trigger rule).
 */
#define REC_COND_GRAMMAR                                                                           \
	"COND is FIELD OP VALUE: OP one of = != < <= > >=; VALUE a number, true, false or\n"       \
	"a string glob (quote it to compare a number as text). Strings and booleans take\n"        \
	"only = and !=. A field the event lacks, or of another type than VALUE, never\n"           \
	"matches, with != too.\n"

/* Room for a field name and for a string value, NUL included. */
#define REC_COND_FIELD_MAX 64
#define REC_COND_STR_MAX 256
/* Room for rec_cond__format()'s text, NUL included: field, op, quoted string. */
#define REC_COND_TEXT_MAX (REC_COND_FIELD_MAX + 2 + REC_COND_STR_MAX + 2)

enum rec_cond_op {
	REC_COND_EQ = 0,
	REC_COND_NE,
	REC_COND_LT,
	REC_COND_LE,
	REC_COND_GT,
	REC_COND_GE,
};

/* A parsed condition: fixed size, no pointers, copyable. */
struct rec_cond {
	char field[REC_COND_FIELD_MAX];
	enum rec_cond_op op;
	/*
	 * The value's type: REC_TYPE_I64 (a negative integer), REC_TYPE_U64 (any
	 * other integer), REC_TYPE_F64, REC_TYPE_BOOL or REC_TYPE_STR (in str).
	 */
	enum rec_field_type type;
	union {
		int64_t i64;
		uint64_t u64;
		double f64;
		bool b;
	};
	char str[REC_COND_STR_MAX]; /* REC_TYPE_STR: the glob */
};

/*
 * Parses text (the whole of it, blanks around it allowed) into *c. Returns 0,
 * or -EINVAL with a message naming the bad part in err (errlen bytes, always
 * NUL-terminated when errlen > 0): a bad or too long field name, a bad
 * operator, no value, an unterminated quote, a too long string, a number out
 * of range, an ordering operator on a string or boolean, text after the value.
 */
int rec_cond__parse(const char *text, struct rec_cond *c, char *err, size_t errlen);

/*
 * Whether the event whose field i is named names[i] (NULL: no name) and holds
 * values[i], for i < nfields, satisfies c (see the top of this file).
 */
bool rec_cond__match(const struct rec_cond *c, uint32_t nfields, const char *const *names,
		     const struct rec_value *values);

/*
 * Whether every one of the n conditions c[0..n) holds on the event ev (n = 0:
 * true). Its fields are those JSON lines show: "message", the callsite's
 * message (a string; none if it is empty), then each field named as the
 * output names it (its callsite's names, "fieldI" past them). An event whose
 * callsite could not be read has no names and satisfies no condition.
 */
bool rec_cond__match_event(const struct rec_cond *c, size_t n, const struct rec_event_view *ev);

/*
 * Whether *c, which came from elsewhere (a request on the control socket), is
 * a condition rec_cond__parse() could have made: its strings NUL-terminated,
 * a valid field name, operator and value, its canonical text parsed back the
 * same. Returns 0 or -EINVAL.
 */
int rec_cond__check(const struct rec_cond *c);

/*
 * Writes the message of a parse error (printf-style) into err, as every parser
 * of this grammar (conditions, trigger rules) does. Returns -EINVAL.
 */
int rec_cond__fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Writes c's canonical text into buf (len bytes; REC_COND_TEXT_MAX is always
 * enough): FIELD OP VALUE with no blanks, = for equality, integers in decimal,
 * a float with a '.' or an exponent, a string quoted with ' (" if it holds a ',
 * bare if it holds both). rec_cond__parse() gives c back. Returns 0 or
 * -ENOSPC (buf then holds a NUL-terminated prefix if len > 0).
 */
int rec_cond__format(const struct rec_cond *c, char *buf, size_t len);

#endif /* REC_COND_H */
