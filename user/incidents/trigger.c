// SPDX-License-Identifier: MIT
/*
 * Incident triggers (trigger.h): a rule, its text (parsed and written back) and
 * what it matches. A set of rules, their signatures and the limiter are
 * trigger_set.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "incidents/trigger.h"
#include "model/names.h"

static const struct {
	const char *unit;
	int64_t ns;
} units[] = {
	/* Largest first: rec_trigger__format_duration() takes the first that divides. */
	{ "h", 3600000000000LL }, { "m", 60000000000LL }, { "s", 1000000000LL },
	{ "ms", 1000000LL },	  { "us", 1000LL },	  { "ns", 1LL },
};

#define UNITS "ns us ms s m h"
#define NUNITS (sizeof(units) / sizeof(units[0]))

static bool is_blank(char ch)
{
	return isspace((unsigned char)ch);
}

static bool is_quote(char ch)
{
	return ch == '\'' || ch == '"';
}

int rec_trigger__parse_duration(const char *text, int64_t *ns, char *err, size_t errlen)
{
	const char *p = text;
	int64_t v = 0;

	if (errlen)
		err[0] = 0;
	if (!text || !*text)
		return rec_cond__fail(err, errlen,
				      "empty duration: expected an integer and a unit (" UNITS ")");
	if (*p == '-')
		return rec_cond__fail(err, errlen, "negative duration '%s'", text);
	if (!isdigit((unsigned char)*p))
		return rec_cond__fail(
			err, errlen,
			"bad duration '%s': expected an integer and a unit (" UNITS ")", text);
	for (; isdigit((unsigned char)*p); p++) {
		int d = *p - '0';

		if (v > (INT64_MAX - d) / 10)
			return rec_cond__fail(err, errlen, "duration '%s' is too long", text);
		v = v * 10 + d;
	}
	if (!*p) {
		if (v)
			return rec_cond__fail(err, errlen,
					      "duration '%s' has no unit: expected one of " UNITS,
					      text);
		*ns = 0;
		return 0;
	}
	for (size_t i = 0; i < NUNITS; i++) {
		if (strcmp(p, units[i].unit))
			continue;
		if (v > INT64_MAX / units[i].ns)
			return rec_cond__fail(err, errlen, "duration '%s' is too long", text);
		*ns = v * units[i].ns;
		return 0;
	}
	return rec_cond__fail(err, errlen, "bad unit '%s' in duration '%s': expected one of " UNITS,
			      p, text);
}

int rec_trigger__format_duration(int64_t ns, char *buf, size_t len)
{
	int n;

	if (ns == 0) {
		n = snprintf(buf, len, "0");
	} else {
		size_t i = 0;

		while (ns % units[i].ns)
			i++;
		n = snprintf(buf, len, "%" PRId64 "%s", ns / units[i].ns, units[i].unit);
	}
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/*
 * Reads a glob at *p: quoted ('...' or "..."), or bare up to the first blank
 * or up to end. Sets *p past it. text is the rule, for messages.
 */
static int parse_glob(const char **p, const char *end, char glob[REC_TRIGGER_GLOB_MAX],
		      const char *text, char *err, size_t errlen)
{
	const char *s = *p, *close;
	size_t n;

	if (s < end && is_quote(*s)) {
		close = memchr(s + 1, *s, (size_t)(end - s - 1));
		if (!close)
			return rec_cond__fail(err, errlen, "unterminated quote %c in '%s'", *s,
					      text);
		s++;
		*p = close + 1;
	} else {
		for (close = s; close < end && !is_blank(*close); close++)
			;
		*p = close;
		if (close == s)
			return rec_cond__fail(err, errlen, "'%s' has no glob", text);
	}
	n = (size_t)(close - s);
	if (n >= REC_TRIGGER_GLOB_MAX)
		return rec_cond__fail(err, errlen, "glob in '%s' is longer than %d bytes", text,
				      REC_TRIGGER_GLOB_MAX - 1);
	memcpy(glob, s, n);
	glob[n] = 0;
	return 0;
}

static int parse_level(const char *p, const char *end, struct rec_trigger_rule *r, const char *text,
		       char *err, size_t errlen)
{
	char name[16];
	size_t n = (size_t)(end - p);

	if (strncmp(p, ">=", 2))
		return rec_cond__fail(err, errlen, "bad rule '%s': expected level>=LEVEL", text);
	p += 2;
	n -= 2;
	if (!n)
		return rec_cond__fail(err, errlen, "'%s' has no level", text);
	if (n < sizeof(name)) {
		memcpy(name, p, n);
		name[n] = 0;
		if (!strcasecmp(name, "warning")) {
			r->level = REC_LEVEL_WARN;
			return 0;
		}
		if (!rec_names__parse_level(name, &r->level))
			return 0;
	}
	return rec_cond__fail(
		err, errlen,
		"unknown level '%.*s' in '%s': expected trace, debug, info, warn or error", (int)n,
		p, text);
}

/* The words of enum rec_trigger_part after a span rule's glob, indexed by part. */
static const char *const part_words[] = { "", "cpu", "blocked", "runq" };

/*
 * A span rule's part (" blocked>" after its glob): if [p, gt) ends in blanks
 * and a part's word, sets r->part and returns where the blanks begin; else gt.
 */
static const char *parse_part(const char *p, const char *gt, struct rec_trigger_rule *r)
{
	for (size_t i = 1; i < sizeof(part_words) / sizeof(part_words[0]); i++) {
		size_t n = strlen(part_words[i]);
		const char *w = gt - n;

		if (w - p < 2 || strncmp(w, part_words[i], n) || !is_blank(w[-1]))
			continue;
		while (w > p && is_blank(w[-1]))
			w--;
		r->part = (enum rec_trigger_part)i;
		return w;
	}
	return gt;
}

static int parse_span(const char *p, const char *end, struct rec_trigger_rule *r, const char *text,
		      char *err, size_t errlen)
{
	char duration[32];
	const char *gt, *glob_end;
	size_t n;
	int ret;

	if (p < end && is_quote(*p)) {
		ret = parse_glob(&p, end, r->glob, text, err, errlen);
		if (ret)
			return ret;
		for (gt = p; gt < end && *gt != '>'; gt++)
			;
		if (gt == end)
			return rec_cond__fail(err, errlen, "'%s' has no '>DURATION' after its glob",
					      text);
		if (parse_part(p - 1, gt, r) != p)
			return rec_cond__fail(err, errlen,
					      "unexpected '%.*s' after the glob in '%s': expected "
					      ">DURATION, or blocked, cpu or runq before it",
					      (int)(gt - p), p, text);
	} else {
		/* A duration has no '>': the glob is all before the last. */
		for (gt = end; gt > p && gt[-1] != '>'; gt--)
			;
		if (gt == p)
			return rec_cond__fail(err, errlen, "'%s' has no '>DURATION'", text);
		gt--;
		glob_end = parse_part(p, gt, r);
		if (glob_end == p)
			return rec_cond__fail(err, errlen, "'%s' has no glob", text);
		for (const char *s = p; s < glob_end; s++)
			if (is_blank(*s))
				return rec_cond__fail(err, errlen,
						      "glob '%.*s' has blanks: quote it",
						      (int)(glob_end - p), p);
		ret = parse_glob(&p, glob_end, r->glob, text, err, errlen);
		if (ret)
			return ret;
	}
	n = (size_t)(end - gt - 1);
	if (!n)
		return rec_cond__fail(err, errlen, "'%s' has no duration", text);
	if (n >= sizeof(duration))
		return rec_cond__fail(err, errlen, "duration '%.*s' is too long", (int)n, gt + 1);
	memcpy(duration, gt + 1, n);
	duration[n] = 0;
	return rec_trigger__parse_duration(duration, &r->duration_ns, err, errlen);
}

static int parse_event(const char *p, const char *end, struct rec_trigger_rule *r, const char *text,
		       char *err, size_t errlen)
{
	int ret = parse_glob(&p, end, r->glob, text, err, errlen);

	if (ret)
		return ret;
	if (p == end)
		return 0;
	if (!is_blank(*p))
		return rec_cond__fail(err, errlen, "unexpected '%.*s' after the glob in '%s'",
				      (int)(end - p), p, text);
	r->has_cond = true;
	/* The condition is the rest; end is the end of text but for blanks, which it allows. */
	return rec_cond__parse(p, &r->cond, err, errlen);
}

static int parse_code(const char *p, const char *end, struct rec_trigger_rule *r, const char *text,
		      char *err, size_t errlen)
{
	int ret;

	if (p == end) {
		strcpy(r->glob, "*");
		return 0;
	}
	if (*p != ':')
		return rec_cond__fail(err, errlen, "bad rule '%s': expected code or code:GLOB",
				      text);
	p++;
	ret = parse_glob(&p, end, r->glob, text, err, errlen);
	if (ret)
		return ret;
	if (p != end)
		return rec_cond__fail(err, errlen, "unexpected '%.*s' after the glob in '%s'",
				      (int)(end - p), p, text);
	return 0;
}

int rec_trigger__parse(const char *text, struct rec_trigger_rule *r, char *err, size_t errlen)
{
	char trimmed[REC_TRIGGER_TEXT_MAX + 64];
	const char *p, *end, *word;
	size_t n;

	*r = (struct rec_trigger_rule){ 0 };
	if (errlen)
		err[0] = 0;
	while (is_blank(*text))
		text++;
	n = strlen(text);
	while (n && is_blank(text[n - 1]))
		n--;
	if (!n)
		return rec_cond__fail(err, errlen,
				      "empty rule: expected level>=, span:, event: or code");
	if (n >= sizeof(trimmed))
		return rec_cond__fail(err, errlen, "rule '%.40s...' is longer than %zu bytes", text,
				      sizeof(trimmed) - 1);
	/* Messages quote the rule without the blanks around it. */
	memcpy(trimmed, text, n);
	trimmed[n] = 0;
	p = trimmed;
	end = trimmed + n;

	for (word = p; p < end && (isalnum((unsigned char)*p) || *p == '_'); p++)
		;
	n = (size_t)(p - word);
	if (!n)
		return rec_cond__fail(err, errlen,
				      "bad rule '%s': expected level>=LEVEL, span:GLOB>DURATION, "
				      "event:GLOB [COND], code or code:GLOB",
				      trimmed);
	if (n == 5 && !strncmp(word, "level", n)) {
		r->kind = REC_TRIGGER_LEVEL;
		return parse_level(p, end, r, trimmed, err, errlen);
	}
	if (n == 4 && !strncmp(word, "code", n)) {
		r->kind = REC_TRIGGER_CODE;
		return parse_code(p, end, r, trimmed, err, errlen);
	}
	if (n == 4 && !strncmp(word, "span", n)) {
		r->kind = REC_TRIGGER_SPAN;
		if (*p != ':')
			return rec_cond__fail(
				err, errlen, "bad rule '%s': expected span:GLOB>DURATION", trimmed);
		return parse_span(p + 1, end, r, trimmed, err, errlen);
	}
	if (n == 5 && !strncmp(word, "event", n)) {
		r->kind = REC_TRIGGER_EVENT;
		if (*p != ':')
			return rec_cond__fail(err, errlen,
					      "bad rule '%s': expected event:GLOB [COND]", trimmed);
		return parse_event(p + 1, end, r, trimmed, err, errlen);
	}
	return rec_cond__fail(
		err, errlen,
		"unknown rule kind '%.*s' in '%s': expected level, span, event or code", (int)n,
		word, trimmed);
}

/* The quotes glob needs to read back the same: none if it can be bare ("" too if it must). */
static const char *glob_quote(const char *glob, bool span)
{
	bool bare = glob[0] && !is_quote(glob[0]) && (!span || !strchr(glob, '>'));

	for (const char *s = glob; *s && bare; s++)
		bare = !is_blank(*s);
	if (bare)
		return "";
	if (!strchr(glob, '\''))
		return "'";
	if (!strchr(glob, '"'))
		return "\"";
	/* Both quotes: parsed bare, so it has no blank and can be bare again. */
	return "";
}

int rec_trigger__format(const struct rec_trigger_rule *r, char *buf, size_t len)
{
	char level[8], duration[32], cond[REC_COND_TEXT_MAX];
	const char *q = glob_quote(r->glob, r->kind == REC_TRIGGER_SPAN);
	size_t i;
	int n;

	switch (r->kind) {
	case REC_TRIGGER_LEVEL:
		snprintf(level, sizeof(level), "%s", rec_names__level(r->level));
		for (i = 0; level[i]; i++)
			level[i] = (char)tolower((unsigned char)level[i]);
		n = snprintf(buf, len, "level>=%s", level);
		break;
	case REC_TRIGGER_SPAN:
		if (rec_trigger__format_duration(r->duration_ns, duration, sizeof(duration)))
			return -ENOSPC;
		n = snprintf(buf, len, "span:%s%s%s%s%s>%s", q, r->glob, q, r->part ? " " : "",
			     part_words[r->part], duration);
		break;
	case REC_TRIGGER_EVENT:
		cond[0] = 0;
		if (r->has_cond && rec_cond__format(&r->cond, cond, sizeof(cond)))
			return -ENOSPC;
		n = snprintf(buf, len, "event:%s%s%s%s%s", q, r->glob, q, r->has_cond ? " " : "",
			     cond);
		break;
	case REC_TRIGGER_CODE:
		if (!strcmp(r->glob, "*"))
			n = snprintf(buf, len, "code");
		else
			n = snprintf(buf, len, "code:%s%s%s", q, r->glob, q);
		break;
	default:
		return -EINVAL;
	}
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* The message of ev (see rec_trigger__match_event()), NUL-terminated in buf if need be. */
static const char *event_message(const struct rec_event_view *ev, char *buf, size_t len)
{
	const struct rec_value *v;
	int field;
	const char *msg = rec_output__message(ev, &field);
	size_t n;

	if (msg)
		return msg;
	if (field < 0)
		return "";
	v = &ev->values[field];
	if ((v->str.status != REC_STR_OK && v->str.status != REC_STR_TRUNCATED) ||
	    (v->str.len && !v->str.ptr))
		return "";
	n = v->str.len < len - 1 ? v->str.len : len - 1;
	if (n)
		memcpy(buf, v->str.ptr, n);
	buf[n] = 0;
	return buf;
}

bool rec_trigger__match_event(const struct rec_trigger_rule *r, const struct rec_event_view *ev)
{
	char msg[REC_STR_AREA + 1];
	int level;

	if (!ev->cs)
		return false;
	switch (r->kind) {
	case REC_TRIGGER_LEVEL:
		level = rec_output__level(ev);
		return level >= (int)r->level; /* an unknown level is -1 */
	case REC_TRIGGER_EVENT:
		if (fnmatch(r->glob, event_message(ev, msg, sizeof(msg)), 0))
			return false;
		return rec_cond__match_event(&r->cond, r->has_cond, ev);
	default:
		return false;
	}
}

bool rec_trigger__match_span(const struct rec_trigger_rule *r, const struct rec_callsite *cs,
			     int64_t duration_ns)
{
	return r->kind == REC_TRIGGER_SPAN && !r->part && cs && cs->name &&
	       duration_ns > r->duration_ns && fnmatch(r->glob, cs->name, 0) == 0;
}

bool rec_trigger__match_span_part(const struct rec_trigger_rule *r, const struct rec_callsite *cs,
				  const struct rec_sched_figs *f)
{
	uint64_t ns;

	if (r->kind != REC_TRIGGER_SPAN || !r->part || !f || !f->flags || !cs || !cs->name)
		return false;
	ns = r->part == REC_TRIGGER_PART_CPU	   ? f->cpu_ns
	     : r->part == REC_TRIGGER_PART_BLOCKED ? f->blocked_ns
						   : f->runq_ns;
	return ns > (uint64_t)r->duration_ns && fnmatch(r->glob, cs->name, 0) == 0;
}

bool rec_trigger__match_code(const struct rec_trigger_rule *r, const char *reason)
{
	return r->kind == REC_TRIGGER_CODE && fnmatch(r->glob, reason ? reason : "", 0) == 0;
}
