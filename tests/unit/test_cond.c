// SPDX-License-Identifier: MIT
/* rec_cond (cond.h): parsing, matching across types, errors, the canonical text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "incidents/cond.h"
#include "output/output.h"

static struct rec_value vi(int64_t v)
{
	return (struct rec_value){ .type = REC_TYPE_I64, .i64 = v };
}

static struct rec_value vu(uint64_t v)
{
	return (struct rec_value){ .type = REC_TYPE_U64, .u64 = v };
}

static struct rec_value vf(double v)
{
	return (struct rec_value){ .type = REC_TYPE_F64, .f64 = v };
}

static struct rec_value vb(bool v)
{
	return (struct rec_value){ .type = REC_TYPE_BOOL, .b = v };
}

/* A string field of len bytes at s, which need not end there. */
static struct rec_value vsn(const char *s, uint32_t len)
{
	return (struct rec_value){ .type = REC_TYPE_STR, .str = { .ptr = s, .len = len } };
}

static struct rec_value vs(const char *s)
{
	return vsn(s, (uint32_t)strlen(s));
}

static struct rec_cond parse_ok(const char *text)
{
	struct rec_cond c;
	char err[256];

	if (rec_cond__parse(text, &c, err, sizeof(err)))
		fail_msg("'%s' did not parse: %s", text, err);
	return c;
}

/* Whether text holds on an event whose only field is named x and holds v. */
static bool match_x(const char *text, struct rec_value v)
{
	struct rec_cond c = parse_ok(text);
	const char *names[] = { "x" };

	return rec_cond__match(&c, 1, names, &v);
}

static void parse_err(const char *text, const char *want)
{
	struct rec_cond c;
	char err[1024];

	assert_int_equal(rec_cond__parse(text, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, want);
}

static void values_are_typed_by_their_spelling(void **state)
{
	struct rec_cond c;

	(void)state;
	c = parse_ok("status>=500");
	assert_string_equal(c.field, "status");
	assert_int_equal(c.op, REC_COND_GE);
	assert_int_equal(c.type, REC_TYPE_U64);
	assert_int_equal(c.u64, 500);
	c = parse_ok("t<-3");
	assert_int_equal(c.type, REC_TYPE_I64);
	assert_int_equal(c.i64, -3);
	c = parse_ok("x=0x1f");
	assert_int_equal(c.type, REC_TYPE_U64);
	assert_int_equal(c.u64, 31);
	c = parse_ok("x=-0x10");
	assert_int_equal(c.type, REC_TYPE_I64);
	assert_int_equal(c.i64, -16);
	c = parse_ok("x=+7");
	assert_int_equal(c.u64, 7);
	c = parse_ok("x=-0");
	assert_int_equal(c.type, REC_TYPE_U64);
	assert_int_equal(c.u64, 0);
	c = parse_ok("x=18446744073709551615");
	assert_true(c.type == REC_TYPE_U64 && c.u64 == UINT64_MAX);
	c = parse_ok("x=-9223372036854775808");
	assert_true(c.type == REC_TYPE_I64 && c.i64 == INT64_MIN);
	c = parse_ok("x=1.5");
	assert_true(c.type == REC_TYPE_F64 && c.f64 == 1.5);
	c = parse_ok("x=-2e3");
	assert_true(c.type == REC_TYPE_F64 && c.f64 == -2000.0);
	c = parse_ok("x=.5");
	assert_true(c.type == REC_TYPE_F64 && c.f64 == 0.5);
	c = parse_ok("hit=false");
	assert_true(c.type == REC_TYPE_BOOL && !c.b);
	c = parse_ok("hit!=true");
	assert_true(c.type == REC_TYPE_BOOL && c.b && c.op == REC_COND_NE);
	c = parse_ok("key=user:*");
	assert_int_equal(c.type, REC_TYPE_STR);
	assert_string_equal(c.str, "user:*");
	/* Quoted, a number or a boolean is a string. */
	c = parse_ok("key='500'");
	assert_int_equal(c.type, REC_TYPE_STR);
	assert_string_equal(c.str, "500");
	c = parse_ok("key=\"true\"");
	assert_int_equal(c.type, REC_TYPE_STR);
	assert_string_equal(c.str, "true");
	c = parse_ok("key='a b'");
	assert_string_equal(c.str, "a b");
	c = parse_ok("key=''");
	assert_true(c.type == REC_TYPE_STR && c.str[0] == 0);
	/* Not quite a number, or not quite a boolean: a string. */
	c = parse_ok("v=1.2.3");
	assert_string_equal(c.str, "1.2.3");
	c = parse_ok("v=5xx");
	assert_string_equal(c.str, "5xx");
	c = parse_ok("v=nan");
	assert_string_equal(c.str, "nan");
	c = parse_ok("v=True");
	assert_string_equal(c.str, "True");
	c = parse_ok("v=0x");
	assert_string_equal(c.str, "0x");
	c = parse_ok("v=it's");
	assert_string_equal(c.str, "it's");
	/* == is =; blanks around the operator and the whole. */
	c = parse_ok("  x == 5  ");
	assert_true(c.op == REC_COND_EQ && c.u64 == 5);
	assert_string_equal(c.field, "x");
	c = parse_ok("req.user_id2 != 0");
	assert_string_equal(c.field, "req.user_id2");
	assert_int_equal(c.op, REC_COND_NE);
	c = parse_ok("_x<=1");
	assert_int_equal(c.op, REC_COND_LE);
	c = parse_ok("x>1");
	assert_int_equal(c.op, REC_COND_GT);
}

static const char *const ops[] = { "=", "!=", "<", "<=", ">", ">=" };

/* How the field compares to the value. */
enum {
	LESS,
	EQUAL,
	GREATER,
	UNORD
};
/* Whether each operator of ops holds, by how the field compares. */
static const bool holds[4][6] = {
	[LESS] = { false, true, true, true, false, false },
	[EQUAL] = { true, false, false, true, false, true },
	[GREATER] = { false, true, false, false, true, true },
	[UNORD] = { false, true, false, false, false, false },
};

/* Every operator, with the value rhs, on field v, which compares to rhs as rel. */
static void all_ops(const char *rhs, struct rec_value v, int rel)
{
	char text[128];

	for (size_t i = 0; i < 6; i++) {
		snprintf(text, sizeof(text), "x%s%s", ops[i], rhs);
		if (match_x(text, v) != holds[rel][i])
			fail_msg("'%s' on a field of type %d: expected %s", text, v.type,
				 holds[rel][i] ? "a match" : "none");
	}
}

static void every_operator_on_every_number_type(void **state)
{
	(void)state;
	/* An i64 value. */
	all_ops("-5", vi(-6), LESS);
	all_ops("-5", vi(-5), EQUAL);
	all_ops("-5", vi(-4), GREATER);
	all_ops("-5", vu(0), GREATER);
	all_ops("-5", vf(-5.5), LESS);
	all_ops("-5", vf(-5.0), EQUAL);
	all_ops("-5", vf(-4.5), GREATER);
	/* A u64 value. */
	all_ops("5", vi(4), LESS);
	all_ops("5", vi(5), EQUAL);
	all_ops("5", vi(6), GREATER);
	all_ops("5", vi(-5), LESS);
	all_ops("5", vu(4), LESS);
	all_ops("5", vu(5), EQUAL);
	all_ops("5", vu(6), GREATER);
	all_ops("5", vf(4.5), LESS);
	all_ops("5", vf(5.0), EQUAL);
	all_ops("5", vf(5.5), GREATER);
	/* An f64 value. */
	all_ops("2.5", vi(2), LESS);
	all_ops("2.5", vi(3), GREATER);
	all_ops("2.5", vu(2), LESS);
	all_ops("2.5", vu(3), GREATER);
	all_ops("2.5", vf(2.0), LESS);
	all_ops("2.5", vf(2.5), EQUAL);
	all_ops("2.5", vf(3.0), GREATER);
	all_ops("2.0", vu(2), EQUAL);
	all_ops("-2e3", vi(-2000), EQUAL);
}

static void numbers_compare_exactly_at_the_edges(void **state)
{
	(void)state;
	all_ops("18446744073709551615", vu(UINT64_MAX), EQUAL);
	all_ops("18446744073709551615", vi(-1), LESS);
	all_ops("18446744073709551615", vi(INT64_MAX), LESS);
	all_ops("-1", vu(UINT64_MAX), GREATER);
	all_ops("-1", vu(0), GREATER);
	all_ops("-1", vi(-1), EQUAL);
	all_ops("0", vi(-1), LESS);
	all_ops("-9223372036854775808", vi(INT64_MIN), EQUAL);
	all_ops("-9223372036854775808", vu(0), GREATER);
	all_ops("-9223372036854775807", vi(INT64_MIN), LESS);
	all_ops("9223372036854775807", vu((uint64_t)INT64_MAX + 1), GREATER);
	all_ops("9223372036854775807", vi(INT64_MAX), EQUAL);
	/* 0.5 against integers, either side. */
	all_ops("0.5", vu(0), LESS);
	all_ops("0.5", vu(1), GREATER);
	all_ops("0.5", vi(0), LESS);
	all_ops("0.5", vi(-1), LESS);
	all_ops("-0.5", vi(-1), LESS);
	all_ops("-0.5", vi(0), GREATER);
	all_ops("0", vf(0.5), GREATER);
	all_ops("1", vf(0.5), LESS);
	all_ops("-1", vf(-0.5), GREATER);
	all_ops("0", vf(-0.0), EQUAL);
	/* (double)UINT64_MAX is 2^64: a conversion would call these equal. */
	all_ops("18446744073709551615", vf(0x1p64), GREATER);
	all_ops("18446744073709551616.0", vu(UINT64_MAX), LESS);
	all_ops("9007199254740993", vf(0x1p53), LESS);
	all_ops("-9223372036854775808", vf(-0x1p63), EQUAL);
	all_ops("-9223372036854775807", vf(-0x1p63), LESS);
	all_ops("-9223372036854775808", vf(-0x1p64), LESS);
	all_ops("1e300", vu(UINT64_MAX), LESS);
	all_ops("-1e300", vi(INT64_MIN), GREATER);
	all_ops("1e-300", vu(0), LESS);
	/* A NaN field is unordered: only != holds. */
	all_ops("1", vf(NAN), UNORD);
	all_ops("-1", vf(NAN), UNORD);
	all_ops("1.5", vf(NAN), UNORD);
}

static void booleans_match_only_booleans(void **state)
{
	(void)state;
	assert_true(match_x("x=false", vb(false)));
	assert_false(match_x("x=false", vb(true)));
	assert_true(match_x("x!=false", vb(true)));
	assert_false(match_x("x!=false", vb(false)));
	assert_true(match_x("x=true", vb(true)));
	/* Another kind of field: no match, != neither. */
	assert_false(match_x("x=false", vu(0)));
	assert_false(match_x("x!=true", vu(0)));
	assert_false(match_x("x=false", vs("false")));
	assert_false(match_x("x=1", vb(true)));
	assert_false(match_x("x!=1", vb(true)));
	assert_true(match_x("x='false'", vs("false")));
}

static void strings_are_globs(void **state)
{
	const char *buf = "user:42XYZ";
	struct rec_value v;

	(void)state;
	assert_true(match_x("x=user:*", vs("user:42")));
	assert_false(match_x("x=user:*", vs("admin")));
	assert_true(match_x("x!=user:*", vs("admin")));
	assert_false(match_x("x!=user:*", vs("user:1")));
	assert_true(match_x("x=a?c", vs("abc")));
	assert_false(match_x("x=a?c", vs("abbc")));
	assert_true(match_x("x=[ab]x", vs("bx")));
	assert_false(match_x("x=[ab]x", vs("cx")));
	assert_true(match_x("x='a b*'", vs("a bc")));
	assert_true(match_x("x=''", vs("")));
	assert_false(match_x("x=''", vs("a")));
	/* Not NUL-terminated: only len bytes count. */
	assert_true(match_x("x=user:42", vsn(buf, 7)));
	assert_false(match_x("x=user:42X*", vsn(buf, 7)));
	/* A number against a string, a string against a number: no match. */
	assert_true(match_x("x='500'", vs("500")));
	assert_false(match_x("x=500", vs("500")));
	assert_false(match_x("x!=500", vs("500")));
	assert_false(match_x("x='500'", vu(500)));
	assert_false(match_x("x!='5*'", vu(600)));
	/* A truncated string matches on its bytes; one not read matches nothing. */
	v = vs("abc");
	v.str.status = REC_STR_TRUNCATED;
	assert_true(match_x("x=ab*", v));
	v.str.status = REC_STR_FAULT;
	assert_false(match_x("x=*", v));
	assert_false(match_x("x!=zzz", v));
	v = (struct rec_value){ .type = REC_TYPE_STR, .str = { .status = REC_STR_NULL } };
	assert_false(match_x("x=*", v));
}

static void a_missing_field_never_matches(void **state)
{
	const char *names[] = { NULL, "x", "y", "x" };
	struct rec_value values[] = { vu(9), vu(1), vs("a"), vu(2) };
	struct rec_cond c;

	(void)state;
	c = parse_ok("nope=1");
	assert_false(rec_cond__match(&c, 4, names, values));
	c = parse_ok("nope!=1");
	assert_false(rec_cond__match(&c, 4, names, values));
	c = parse_ok("nope!=''");
	assert_false(rec_cond__match(&c, 4, names, values));
	/* Of two fields named x, the first. */
	c = parse_ok("x=1");
	assert_true(rec_cond__match(&c, 4, names, values));
	c = parse_ok("x=2");
	assert_false(rec_cond__match(&c, 4, names, values));
	/* Only the first nfields count. */
	c = parse_ok("y=a");
	assert_true(rec_cond__match(&c, 3, names, values));
	assert_false(rec_cond__match(&c, 2, names, values));
	assert_false(rec_cond__match(&c, 0, names, values));
}

static void errors_name_the_bad_part(void **state)
{
	char big[600], err[1024], small[8];
	struct rec_cond c;

	(void)state;
	parse_err("", "empty condition: expected FIELD OP VALUE");
	parse_err("   ", "empty condition: expected FIELD OP VALUE");
	parse_err("status~500", "bad operator in 'status~500': expected one of = != < <= > >=");
	parse_err("status", "bad operator in 'status': expected one of = != < <= > >=");
	parse_err("a=>5", "bad operator in 'a=>5': expected one of = != < <= > >=");
	parse_err("a<>5", "bad operator in 'a<>5': expected one of = != < <= > >=");
	parse_err("a===5", "bad operator in 'a===5': expected one of = != < <= > >=");
	parse_err("status>=", "'status>=' has no value");
	parse_err(" status>=  ", "'status>=' has no value");
	parse_err("=5", "'=5' has no field name");
	parse_err("9x=1",
		  "bad field name in '9x=1': expected a letter or _, then letters, digits, _ or .");
	parse_err("key<user:*", "'<' does not apply to a string ('user:*')");
	parse_err("key>='500'", "'>=' does not apply to a string ('500')");
	parse_err("hit>true", "'>' does not apply to a boolean (true)");
	parse_err("hit<=false", "'<=' does not apply to a boolean (false)");
	parse_err("k='abc", "unterminated quote ' in 'k='abc'");
	parse_err("k=\"abc'", "unterminated quote \" in 'k=\"abc''");
	parse_err("x=18446744073709551616", "number '18446744073709551616' is out of range");
	parse_err("x=-9223372036854775809", "number '-9223372036854775809' is out of range");
	parse_err("x=0x10000000000000000", "number '0x10000000000000000' is out of range");
	parse_err("x=1e999", "number '1e999' is out of range");
	parse_err("x=1 2", "unexpected '2' after the value in 'x=1 2'");
	parse_err("x='a'b", "unexpected 'b' after the value in 'x='a'b'");

	memset(big, 'f', 64);
	strcpy(big + 64, "=1");
	snprintf(err, sizeof(err), "field name '%.64s' is longer than 63 bytes", big);
	parse_err(big, err);
	big[63] = '=';
	big[64] = '1';
	big[65] = 0;
	parse_ok(big);

	strcpy(big, "k='");
	memset(big + 3, 'v', 256);
	strcpy(big + 3 + 256, "'");
	snprintf(err, sizeof(err), "string in '%s' is longer than 255 bytes", big);
	parse_err(big, err);
	strcpy(big + 3 + 255, "'");
	assert_int_equal(strlen(parse_ok(big).str), 255);
	/* Bare, too. */
	memset(big + 2, 'v', 256);
	big[258] = 0;
	snprintf(err, sizeof(err), "value in '%s' is longer than 255 bytes", big);
	parse_err(big, err);
	big[257] = 0;
	assert_int_equal(strlen(parse_ok(big).str), 255);

	/* A short err is cut, and still a string. */
	assert_int_equal(rec_cond__parse("status~500", &c, small, sizeof(small)), -EINVAL);
	assert_string_equal(small, "bad ope");
	assert_int_equal(rec_cond__parse("status~500", &c, NULL, 0), -EINVAL);
}

/* format(parse(text)) is canon, and canon parses to the same condition. */
static void round_trip(const char *text, const char *canon)
{
	struct rec_cond a = parse_ok(text), b;
	char buf[REC_COND_TEXT_MAX];

	assert_int_equal(rec_cond__format(&a, buf, sizeof(buf)), 0);
	assert_string_equal(buf, canon);
	b = parse_ok(buf);
	assert_string_equal(b.field, a.field);
	assert_int_equal(b.op, a.op);
	assert_int_equal(b.type, a.type);
	switch (a.type) {
	case REC_TYPE_I64:
		assert_true(a.i64 == b.i64);
		break;
	case REC_TYPE_U64:
		assert_true(a.u64 == b.u64);
		break;
	case REC_TYPE_F64:
		assert_true(a.f64 == b.f64 && signbit(a.f64) == signbit(b.f64));
		break;
	case REC_TYPE_BOOL:
		assert_true(a.b == b.b);
		break;
	default:
		assert_string_equal(a.str, b.str);
	}
	assert_int_equal(rec_cond__format(&b, buf, sizeof(buf)), 0);
	assert_string_equal(buf, canon);
}

static void the_canonical_text_round_trips(void **state)
{
	struct rec_cond c;
	char buf[8];

	(void)state;
	round_trip(" status >= 500 ", "status>=500");
	round_trip("x==5", "x=5");
	round_trip("x!=5", "x!=5");
	round_trip("x<5", "x<5");
	round_trip("x<=5", "x<=5");
	round_trip("x>5", "x>5");
	round_trip("t<-3", "t<-3");
	round_trip("x=0x1f", "x=31");
	round_trip("x=18446744073709551615", "x=18446744073709551615");
	round_trip("x=-9223372036854775808", "x=-9223372036854775808");
	round_trip("x=1.5", "x=1.5");
	round_trip("x=-2e3", "x=-2000.0");
	round_trip("x=2.", "x=2.0");
	round_trip("x=-0.0", "x=-0.0");
	round_trip("x=0.1", "x=0.1");
	round_trip("x=1e300", "x=1e+300");
	round_trip("x=1e-300", "x=1e-300");
	round_trip("x=1234567890123456789.0", "x=1.2345678901234568e+18");
	/* Whole, and too big for "%.1f": its digits, and a ".0" that keeps it a float. */
	round_trip("x=1234567890123456e0", "x=1234567890123456.0");
	round_trip("x=0.30000000000000004", "x=0.30000000000000004");
	round_trip("hit=false", "hit=false");
	round_trip("hit!=true", "hit!=true");
	round_trip("key=user:*", "key='user:*'");
	round_trip("key='500'", "key='500'");
	round_trip("key=\"it's\"", "key=\"it's\"");
	round_trip("key=a'b\"c", "key=a'b\"c");
	round_trip("key=''", "key=''");
	round_trip("key='a b'", "key='a b'");

	c = parse_ok("status>=500");
	assert_int_equal(rec_cond__format(&c, buf, sizeof(buf)), -ENOSPC);
	assert_string_equal(buf, "status>");
}

/* An event of callsite cs (NULL: unread) with the n values v, as the output sees it. */
static struct rec_event_view event(const struct rec_callsite *cs, uint32_t n,
				   const struct rec_value *v)
{
	return (struct rec_event_view){ .cs = cs, .nfields = n, .values = v };
}

/* Whether every one of the n texts holds on ev, parsed as --where parses each. */
static bool all_hold(const struct rec_event_view *ev, size_t n, const char *const *texts)
{
	struct rec_cond c[8];

	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		c[i] = parse_ok(texts[i]);
	return rec_cond__match_event(c, n, ev);
}

static void an_event_satisfies_every_condition_or_none(void **state)
{
	struct rec_callsite cs = { .kind = 'E', .level = REC_LEVEL_INFO, .nfields = 3 };
	struct rec_value v[] = { vs("user:1"), vb(false), vi(500), vu(7) };
	struct rec_event_view ev;
	const char *and2[] = { "status>=500", "key=user:*" };
	const char *and3[] = { "status>=500", "key=user:*", "hit=true" };
	const char *missing[] = { "key=user:*", "nope!=1" };
	const char *unnamed[] = { "field3=7" };
	const char *mismatched[] = { "status='500'" };

	(void)state;
	cs.field_names[0] = "key";
	cs.field_names[1] = "hit";
	cs.field_names[2] = "status";
	ev = event(&cs, 4, v);
	/* No condition: every event. */
	assert_true(rec_cond__match_event(NULL, 0, &ev));
	assert_true(all_hold(&ev, 1, and2));
	assert_true(all_hold(&ev, 2, and2));
	/* One that does not hold is enough to leave it out. */
	assert_false(all_hold(&ev, 3, and3));
	assert_false(all_hold(&ev, 2, missing));
	assert_false(all_hold(&ev, 1, mismatched));
	/* A field past the callsite's names is named as the output names it. */
	assert_true(all_hold(&ev, 1, unnamed));
	/* The callsite's message is the field "message", first, as in JSON lines. */
	{
		const char *msg[] = { "message=req*", "key=user:1" };
		const char *msg_no[] = { "message=get" };
		const char *ne[] = { "message!=get" };

		cs.message = "request done";
		assert_true(all_hold(&ev, 2, msg));
		assert_false(all_hold(&ev, 1, msg_no));
		assert_true(all_hold(&ev, 1, ne));
		/* None without a message. */
		cs.message = "";
		assert_false(all_hold(&ev, 1, ne));
		/* A field named message is one, after the callsite's message. */
		cs.field_names[0] = "message";
		assert_true(all_hold(&ev, 1, (const char *[]){ "message=user:1" }));
		cs.message = "other";
		assert_false(all_hold(&ev, 1, (const char *[]){ "message=user:1" }));
		cs.message = NULL;
		cs.field_names[0] = "key";
	}
	/* An event whose callsite could not be read has no names: nothing holds. */
	ev = event(NULL, 4, v);
	assert_false(all_hold(&ev, 1, and2));
	assert_false(all_hold(&ev, 1, unnamed));
	assert_true(rec_cond__match_event(NULL, 0, &ev));
}

/* text's condition passes rec_cond__check(). */
static void check_ok(const char *text)
{
	struct rec_cond c = parse_ok(text);

	if (rec_cond__check(&c))
		fail_msg("'%s' parsed, yet its check failed", text);
}

static void a_condition_from_a_request_is_checked(void **state)
{
	static const struct {
		const char *text;
		int op, type;
	} bad_ops[] = {
		{ "n=1", 6, -1 },
		{ "n=1", -1, REC_TYPE_STR_LIT },
		{ "n=1", -1, REC_TYPE_NONE },
		{ "key=x", REC_COND_LT, -1 },
		{ "hit=true", REC_COND_GE, -1 },
	};
	struct rec_cond c;
	unsigned char byte = 2;

	(void)state;
	check_ok("status>=500");
	check_ok("delta<-3");
	check_ok("ms<=2.5");
	check_ok("hit=false");
	check_ok("key=user:*");
	check_ok("key!=\"it's\"");
	check_ok("key=a'b\"c");
	check_ok("key=''");
	check_ok("a.b_c=-9223372036854775808");

	/* Strings that fill their room. */
	c = parse_ok("key=x");
	memset(c.field, 'k', sizeof(c.field));
	assert_int_equal(rec_cond__check(&c), -EINVAL);
	c = parse_ok("key=x");
	memset(c.str, 'x', sizeof(c.str));
	assert_int_equal(rec_cond__check(&c), -EINVAL);
	/* A field name the grammar does not take. */
	c = parse_ok("key=x");
	strcpy(c.field, "9key");
	assert_int_equal(rec_cond__check(&c), -EINVAL);
	c = parse_ok("key=x");
	c.field[0] = 0;
	assert_int_equal(rec_cond__check(&c), -EINVAL);
	/* An operator or a type out of range; an ordering of a string or a boolean (-1: kept). */
	for (size_t i = 0; i < sizeof(bad_ops) / sizeof(bad_ops[0]); i++) {
		c = parse_ok(bad_ops[i].text);
		if (bad_ops[i].op >= 0)
			c.op = (enum rec_cond_op)bad_ops[i].op;
		if (bad_ops[i].type >= 0)
			c.type = (enum rec_field_type)bad_ops[i].type;
		if (rec_cond__check(&c) != -EINVAL)
			fail_msg("'%s' with op %d, type %d passed its check", bad_ops[i].text,
				 bad_ops[i].op, bad_ops[i].type);
	}
	/* A bool that is neither 0 nor 1. */
	c = parse_ok("hit=true");
	memcpy(&c.b, &byte, 1);
	assert_int_equal(rec_cond__check(&c), -EINVAL);
	/* Floats the parser never makes; a non-negative i64 (the parser makes it a u64). */
	c = parse_ok("ms=1.5");
	c.f64 = NAN;
	assert_int_equal(rec_cond__check(&c), -EINVAL);
	c.f64 = INFINITY;
	assert_int_equal(rec_cond__check(&c), -EINVAL);
	c = parse_ok("n=-1");
	c.i64 = 5;
	assert_int_equal(rec_cond__check(&c), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values_are_typed_by_their_spelling),
		cmocka_unit_test(every_operator_on_every_number_type),
		cmocka_unit_test(numbers_compare_exactly_at_the_edges),
		cmocka_unit_test(booleans_match_only_booleans),
		cmocka_unit_test(strings_are_globs),
		cmocka_unit_test(a_missing_field_never_matches),
		cmocka_unit_test(errors_name_the_bad_part),
		cmocka_unit_test(the_canonical_text_round_trips),
		cmocka_unit_test(an_event_satisfies_every_condition_or_none),
		cmocka_unit_test(a_condition_from_a_request_is_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
