// SPDX-License-Identifier: MIT
/* One comparison of an event's field with a value (cond.h). */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "incidents/cond.h"
#include "output/output.h"

/* What a comparison gives when one side is a NaN: only != holds. */
#define UNORDERED 2

static const char *const op_names[] = {
	[REC_COND_EQ] = "=",  [REC_COND_NE] = "!=", [REC_COND_LT] = "<",
	[REC_COND_LE] = "<=", [REC_COND_GT] = ">",  [REC_COND_GE] = ">=",
};

/* Longest first: "<=" before "<"; "==" is "=". */
static const struct {
	const char *text;
	enum rec_cond_op op;
} op_texts[] = {
	{ "==", REC_COND_EQ }, { "!=", REC_COND_NE }, { "<=", REC_COND_LE }, { ">=", REC_COND_GE },
	{ "=", REC_COND_EQ },  { "<", REC_COND_LT },  { ">", REC_COND_GT },
};

#define OPS_EXPECTED "expected one of = != < <= > >="

static bool is_blank(char ch)
{
	return isspace((unsigned char)ch);
}

static bool is_op_char(char ch)
{
	return ch && strchr("=!<>", ch);
}

static bool is_quote(char ch)
{
	return ch == '\'' || ch == '"';
}

int rec_cond__fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Whether tok (n bytes) is a number; *is_float says whether it has a '.' or an exponent. */
static bool number_shape(const char *tok, size_t n, bool *is_float)
{
	size_t i = 0, digits = 0;

	*is_float = false;
	if (i < n && (tok[i] == '+' || tok[i] == '-'))
		i++;
	if (n - i >= 2 && tok[i] == '0' && (tok[i + 1] == 'x' || tok[i + 1] == 'X')) {
		for (i += 2; i < n && isxdigit((unsigned char)tok[i]); i++)
			digits++;
		return digits && i == n;
	}
	for (; i < n && isdigit((unsigned char)tok[i]); i++)
		digits++;
	if (i < n && tok[i] == '.') {
		*is_float = true;
		for (i++; i < n && isdigit((unsigned char)tok[i]); i++)
			digits++;
	}
	if (!digits)
		return false;
	if (i < n && (tok[i] == 'e' || tok[i] == 'E')) {
		*is_float = true;
		i++;
		if (i < n && (tok[i] == '+' || tok[i] == '-'))
			i++;
		if (i == n || !isdigit((unsigned char)tok[i]))
			return false;
		while (i < n && isdigit((unsigned char)tok[i]))
			i++;
	}
	return i == n;
}

/* Sets c's number from s, which number_shape() accepted. Returns 0 or -ERANGE. */
static int parse_number(const char *s, bool is_float, struct rec_cond *c)
{
	bool neg = s[0] == '-';
	unsigned long long mag;
	const char *digits;
	char *end;
	int base = 10;

	errno = 0;
	if (is_float) {
		c->type = REC_TYPE_F64;
		c->f64 = strtod(s, &end);
		return isinf(c->f64) ? -ERANGE : 0;
	}
	digits = s + (s[0] == '-' || s[0] == '+');
	if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
		digits += 2;
		base = 16;
	}
	mag = strtoull(digits, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (!neg || mag == 0) {
		c->type = REC_TYPE_U64;
		c->u64 = mag;
		return 0;
	}
	if (mag > (uint64_t)INT64_MAX + 1)
		return -ERANGE;
	c->type = REC_TYPE_I64;
	c->i64 = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	return 0;
}

/* Sets c's value from the bare word tok (n bytes, no blanks): a number, a boolean or a string. */
static int parse_bare(const char *tok, size_t n, struct rec_cond *c, const char *text, int tlen,
		      char *err, size_t errlen)
{
	bool is_float;

	if (n >= REC_COND_STR_MAX)
		return rec_cond__fail(err, errlen, "value in '%.*s' is longer than %d bytes", tlen,
				      text, REC_COND_STR_MAX - 1);
	memcpy(c->str, tok, n);
	c->str[n] = 0;
	if (number_shape(tok, n, &is_float)) {
		if (parse_number(c->str, is_float, c))
			return rec_cond__fail(err, errlen, "number '%s' is out of range", c->str);
		c->str[0] = 0;
		return 0;
	}
	if (!strcmp(c->str, "true") || !strcmp(c->str, "false")) {
		c->type = REC_TYPE_BOOL;
		c->b = c->str[0] == 't';
		c->str[0] = 0;
		return 0;
	}
	c->type = REC_TYPE_STR;
	return 0;
}

int rec_cond__parse(const char *text, struct rec_cond *c, char *err, size_t errlen)
{
	const char *p = text, *start, *tok;
	size_t i, n;
	int tlen;

	*c = (struct rec_cond){ 0 };
	if (errlen)
		err[0] = 0;
	/* The text as messages quote it: without the blanks around it. */
	while (is_blank(*p))
		p++;
	text = p;
	tlen = (int)strlen(text);
	while (tlen && is_blank(text[tlen - 1]))
		tlen--;
	if (!*p)
		return rec_cond__fail(err, errlen, "empty condition: expected FIELD OP VALUE");

	start = p;
	if (is_op_char(*p))
		return rec_cond__fail(err, errlen, "'%.*s' has no field name", tlen, text);
	if (!isalpha((unsigned char)*p) && *p != '_')
		return rec_cond__fail(
			err, errlen,
			"bad field name in '%.*s': expected a letter or _, then letters, "
			"digits, _ or .",
			tlen, text);
	while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
		p++;
	n = (size_t)(p - start);
	if (n >= REC_COND_FIELD_MAX)
		return rec_cond__fail(err, errlen, "field name '%.*s' is longer than %d bytes",
				      (int)n, start, REC_COND_FIELD_MAX - 1);
	memcpy(c->field, start, n);

	while (is_blank(*p))
		p++;
	for (i = 0; i < sizeof(op_texts) / sizeof(op_texts[0]); i++)
		if (!strncmp(p, op_texts[i].text, strlen(op_texts[i].text)))
			break;
	if (i == sizeof(op_texts) / sizeof(op_texts[0]))
		return rec_cond__fail(err, errlen, "bad operator in '%.*s': " OPS_EXPECTED, tlen,
				      text);
	c->op = op_texts[i].op;
	p += strlen(op_texts[i].text);
	/* a=>5, a<>5, a===5: not an operator and a string that starts with one. */
	if (is_op_char(*p))
		return rec_cond__fail(err, errlen, "bad operator in '%.*s': " OPS_EXPECTED, tlen,
				      text);

	while (is_blank(*p))
		p++;
	if (!*p)
		return rec_cond__fail(err, errlen, "'%.*s' has no value", tlen, text);
	if (is_quote(*p)) {
		const char *close = strchr(p + 1, *p);

		if (!close)
			return rec_cond__fail(err, errlen, "unterminated quote %c in '%.*s'", *p,
					      tlen, text);
		n = (size_t)(close - p - 1);
		if (n >= REC_COND_STR_MAX)
			return rec_cond__fail(err, errlen,
					      "string in '%.*s' is longer than %d bytes", tlen,
					      text, REC_COND_STR_MAX - 1);
		memcpy(c->str, p + 1, n);
		c->type = REC_TYPE_STR;
		p = close + 1;
	} else {
		int ret;

		for (tok = p; *p && !is_blank(*p); p++)
			;
		ret = parse_bare(tok, (size_t)(p - tok), c, text, tlen, err, errlen);
		if (ret)
			return ret;
	}
	while (is_blank(*p))
		p++;
	if (*p)
		return rec_cond__fail(err, errlen, "unexpected '%.*s' after the value in '%.*s'",
				      (int)(text + tlen - p), p, tlen, text);

	if (c->op != REC_COND_EQ && c->op != REC_COND_NE) {
		if (c->type == REC_TYPE_STR)
			return rec_cond__fail(err, errlen, "'%s' does not apply to a string ('%s')",
					      op_names[c->op], c->str);
		if (c->type == REC_TYPE_BOOL)
			return rec_cond__fail(err, errlen, "'%s' does not apply to a boolean (%s)",
					      op_names[c->op], c->b ? "true" : "false");
	}
	return 0;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_i64_u64(int64_t a, uint64_t b)
{
	return a < 0 ? -1 : cmp_u64((uint64_t)a, b);
}

/* Exact: a's integer part, then its fraction (a double's integer part is a double). */
static int cmp_f64_u64(double a, uint64_t b)
{
	uint64_t t;

	if (isnan(a))
		return UNORDERED;
	if (a < 0)
		return -1;
	if (a >= 0x1p64)
		return 1;
	t = (uint64_t)a;
	if (t != b)
		return cmp_u64(t, b);
	return a > (double)t;
}

static int cmp_f64_i64(double a, int64_t b)
{
	int64_t t;

	if (isnan(a))
		return UNORDERED;
	if (b >= 0)
		return cmp_f64_u64(a, (uint64_t)b);
	if (a >= 0)
		return 1;
	if (a < -0x1p63)
		return -1;
	t = (int64_t)a;
	if (t != b)
		return cmp_i64(t, b);
	return a < (double)t ? -1 : 0;
}

static int cmp_f64(double a, double b)
{
	if (isnan(a) || isnan(b))
		return UNORDERED;
	return a < b ? -1 : a > b;
}

static int flip(int r)
{
	return r == UNORDERED ? r : -r;
}

/* a against b, both numbers (REC_TYPE_I64, U64 or F64): -1, 0, 1 or UNORDERED. */
static int cmp_number(const struct rec_value *a, const struct rec_value *b)
{
	switch (a->type) {
	case REC_TYPE_I64:
		if (b->type == REC_TYPE_I64)
			return cmp_i64(a->i64, b->i64);
		if (b->type == REC_TYPE_U64)
			return cmp_i64_u64(a->i64, b->u64);
		return flip(cmp_f64_i64(b->f64, a->i64));
	case REC_TYPE_U64:
		if (b->type == REC_TYPE_I64)
			return flip(cmp_i64_u64(b->i64, a->u64));
		if (b->type == REC_TYPE_U64)
			return cmp_u64(a->u64, b->u64);
		return flip(cmp_f64_u64(b->f64, a->u64));
	default:
		if (b->type == REC_TYPE_I64)
			return cmp_f64_i64(a->f64, b->i64);
		if (b->type == REC_TYPE_U64)
			return cmp_f64_u64(a->f64, b->u64);
		return cmp_f64(a->f64, b->f64);
	}
}

static bool holds(enum rec_cond_op op, int r)
{
	if (r == UNORDERED)
		return op == REC_COND_NE;
	switch (op) {
	case REC_COND_EQ:
		return r == 0;
	case REC_COND_NE:
		return r != 0;
	case REC_COND_LT:
		return r < 0;
	case REC_COND_LE:
		return r <= 0;
	case REC_COND_GT:
		return r > 0;
	case REC_COND_GE:
		return r >= 0;
	}
	return false;
}

static bool is_number(enum rec_field_type t)
{
	return t == REC_TYPE_I64 || t == REC_TYPE_U64 || t == REC_TYPE_F64;
}

/* A string field against the glob: 0 if it matches, 1 if not, -1 if its bytes were not read. */
static int cmp_glob(const char *glob, const struct rec_value *v)
{
	char s[REC_STR_AREA + 1];
	uint32_t len = v->str.len;

	if (v->str.status != REC_STR_OK && v->str.status != REC_STR_TRUNCATED)
		return -1;
	if (len && !v->str.ptr)
		return -1;
	if (len > REC_STR_AREA)
		len = REC_STR_AREA;
	if (len)
		memcpy(s, v->str.ptr, len);
	s[len] = 0;
	return fnmatch(glob, s, 0) == 0 ? 0 : 1;
}

bool rec_cond__match(const struct rec_cond *c, uint32_t nfields, const char *const *names,
		     const struct rec_value *values)
{
	const struct rec_value *v = NULL;
	struct rec_value want;
	int r;

	for (uint32_t i = 0; i < nfields; i++)
		if (names[i] && !strcmp(names[i], c->field)) {
			v = &values[i];
			break;
		}
	if (!v)
		return false;
	switch (c->type) {
	case REC_TYPE_STR:
		if (v->type != REC_TYPE_STR)
			return false;
		r = cmp_glob(c->str, v);
		return r >= 0 && holds(c->op, r);
	case REC_TYPE_BOOL:
		return v->type == REC_TYPE_BOOL && holds(c->op, v->b != c->b);
	case REC_TYPE_I64:
	case REC_TYPE_U64:
	case REC_TYPE_F64:
		if (!is_number(v->type))
			return false;
		want = (struct rec_value){ .type = c->type };
		if (c->type == REC_TYPE_I64)
			want.i64 = c->i64;
		else if (c->type == REC_TYPE_U64)
			want.u64 = c->u64;
		else
			want.f64 = c->f64;
		return holds(c->op, cmp_number(v, &want));
	default:
		return false;
	}
}

bool rec_cond__match_event(const struct rec_cond *c, size_t n, const struct rec_event_view *ev)
{
	char bufs[REC_MAX_FIELDS][REC_OUTPUT_FIELD_NAME_MAX];
	const char *names[1 + REC_MAX_FIELDS];
	struct rec_value values[1 + REC_MAX_FIELDS];
	uint32_t nfields = ev->nfields < REC_MAX_FIELDS ? ev->nfields : REC_MAX_FIELDS, m = 0;
	const char *msg = NULL;

	if (!n)
		return true;
	if (!ev->cs)
		return false;
	/* The fields as JSON lines show them: the callsite's message first, as "message". */
	if (ev->cs->message && ev->cs->message[0])
		msg = ev->cs->message;
	if (msg) {
		names[m] = "message";
		values[m++] = (struct rec_value){
			.type = REC_TYPE_STR,
			.str = { .ptr = msg, .len = (uint32_t)strlen(msg), .status = REC_STR_OK },
		};
	}
	for (uint32_t i = 0; i < nfields; i++) {
		names[m] = rec_output__field_name(ev, i, bufs[i]);
		values[m++] = ev->values[i];
	}
	for (size_t k = 0; k < n; k++)
		if (!rec_cond__match(&c[k], m, names, values))
			return false;
	return true;
}

/* Whether a and b, both from rec_cond__parse(), are the same condition. */
static bool same_cond(const struct rec_cond *a, const struct rec_cond *b)
{
	if (strcmp(a->field, b->field) || a->op != b->op || a->type != b->type)
		return false;
	switch (a->type) {
	case REC_TYPE_I64:
		return a->i64 == b->i64;
	case REC_TYPE_U64:
		return a->u64 == b->u64;
	case REC_TYPE_F64:
		return a->f64 == b->f64;
	case REC_TYPE_BOOL:
		return a->b == b->b;
	default:
		return !strcmp(a->str, b->str);
	}
}

int rec_cond__check(const struct rec_cond *c)
{
	char text[REC_COND_TEXT_MAX];
	struct rec_cond back;
	unsigned char b;

	if (!memchr(c->field, 0, sizeof(c->field)) || !memchr(c->str, 0, sizeof(c->str)))
		return -EINVAL;
	/* A bool of another byte than 0 or 1 must not be read as one. */
	memcpy(&b, &c->b, 1);
	if (c->type == REC_TYPE_BOOL && b > 1)
		return -EINVAL;
	switch (c->type) {
	case REC_TYPE_I64:
	case REC_TYPE_U64:
	case REC_TYPE_F64:
	case REC_TYPE_BOOL:
	case REC_TYPE_STR:
		break;
	default:
		return -EINVAL;
	}
	/* The one parser judges the rest: field name, operator, value (a NaN reads back as text). */
	if (rec_cond__format(c, text, sizeof(text)) || rec_cond__parse(text, &back, NULL, 0))
		return -EINVAL;
	return same_cond(c, &back) ? 0 : -EINVAL;
}

/* The shortest text strtod() reads back as v, with a '.' or an exponent: it stays a float. */
static void format_f64(double v, char *buf, size_t len)
{
	if (v > -1e15 && v < 1e15 && v == (double)(int64_t)v) {
		snprintf(buf, len, "%.1f", v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".e"))
		strncat(buf, ".0", len - strlen(buf) - 1);
}

int rec_cond__format(const struct rec_cond *c, char *buf, size_t len)
{
	const char *quote = "";
	const char *value = "";
	char num[40];
	int n;

	switch (c->type) {
	case REC_TYPE_I64:
		snprintf(num, sizeof(num), "%" PRId64, c->i64);
		value = num;
		break;
	case REC_TYPE_U64:
		snprintf(num, sizeof(num), "%" PRIu64, c->u64);
		value = num;
		break;
	case REC_TYPE_F64:
		format_f64(c->f64, num, sizeof(num));
		value = num;
		break;
	case REC_TYPE_BOOL:
		value = c->b ? "true" : "false";
		break;
	default:
		value = c->str;
		/* A string with both quotes was written bare: it can be again. */
		quote = !strchr(c->str, '\'') ? "'" : !strchr(c->str, '"') ? "\"" : "";
		break;
	}
	n = snprintf(buf, len, "%s%s%s%s%s", c->field,
		     (unsigned int)c->op < sizeof(op_names) / sizeof(op_names[0]) ? op_names[c->op]
										  : "?",
		     quote, value, quote);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}
