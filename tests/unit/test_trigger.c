// SPDX-License-Identifier: MIT
/* rec_trigger (trigger.h): rules, their canonical text, matching, the rule set and its limiter. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "incidents/trigger.h"

#define MS 1000000LL
#define SEC 1000000000LL

static struct rec_trigger_rule parse_ok(const char *text)
{
	struct rec_trigger_rule r;
	char err[512];

	if (rec_trigger__parse(text, &r, err, sizeof(err)))
		fail_msg("'%s' did not parse: %s", text, err);
	return r;
}

static void parse_err(const char *text, const char *want)
{
	struct rec_trigger_rule r;
	char err[1024];

	assert_int_equal(rec_trigger__parse(text, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, want);
}

static void a_part_rule_fires_on_that_part_of_a_span_left(void **state)
{
	struct rec_callsite cs = { .name = "handle" };
	struct rec_sched_figs f = {
		.flags = REC_SCHED_KNOWN, .cpu_ns = 10, .blocked_ns = 300, .runq_ns = 20
	};
	struct rec_trigger_rule blocked = parse_ok("span:hand* blocked>200ns"),
				cpu = parse_ok("span:handle cpu>200ns"),
				all = parse_ok("span:handle>200ns");

	(void)state;
	assert_true(rec_trigger__match_span_part(&blocked, &cs, &f));
	assert_false(rec_trigger__match_span_part(&cpu, &cs, &f));
	/* A part rule is not a duration rule, and the other way round. */
	assert_false(rec_trigger__match_span(&blocked, &cs, 330));
	assert_false(rec_trigger__match_span_part(&all, &cs, &f));
	assert_true(rec_trigger__match_span(&all, &cs, 330));
	/* Not known (no --sched, or an open span): never fires. */
	assert_false(rec_trigger__match_span_part(&blocked, &cs, NULL));
	f.flags = 0;
	assert_false(rec_trigger__match_span_part(&blocked, &cs, &f));
	f.flags = REC_SCHED_KNOWN;
	cs.name = "other";
	assert_false(rec_trigger__match_span_part(&blocked, &cs, &f));
}

static void every_kind_parses(void **state)
{
	struct rec_trigger_rule r;

	(void)state;
	r = parse_ok("level>=warn");
	assert_int_equal(r.kind, REC_TRIGGER_LEVEL);
	assert_int_equal(r.level, REC_LEVEL_WARN);
	assert_int_equal(parse_ok("level>=WARNING").level, REC_LEVEL_WARN);
	assert_int_equal(parse_ok("level>=Error").level, REC_LEVEL_ERROR);
	assert_int_equal(parse_ok("level>=trace").level, REC_LEVEL_TRACE);
	assert_int_equal(parse_ok("level>=debug").level, REC_LEVEL_DEBUG);
	assert_int_equal(parse_ok("level>=info").level, REC_LEVEL_INFO);

	r = parse_ok("span:db*>500ms");
	assert_int_equal(r.kind, REC_TRIGGER_SPAN);
	assert_string_equal(r.glob, "db*");
	assert_int_equal(r.duration_ns, 500 * MS);
	r = parse_ok("span:'db query'>2s");
	assert_string_equal(r.glob, "db query");
	assert_int_equal(r.duration_ns, 2 * SEC);
	/* A duration has no '>': the glob is all before the last one. */
	r = parse_ok("span:a>b>1m");
	assert_string_equal(r.glob, "a>b");
	assert_int_equal(r.duration_ns, 60 * SEC);
	assert_int_equal(parse_ok("span:x>0").duration_ns, 0);
	assert_int_equal(parse_ok("span:x>0").part, REC_TRIGGER_PART_ALL);
	r = parse_ok("span:handle blocked>200ms");
	assert_int_equal(r.part, REC_TRIGGER_PART_BLOCKED);
	assert_string_equal(r.glob, "handle");
	assert_int_equal(r.duration_ns, 200000000);
	r = parse_ok("span:'db query'  runq>1s");
	assert_int_equal(r.part, REC_TRIGGER_PART_RUNQ);
	assert_string_equal(r.glob, "db query");
	assert_int_equal(parse_ok("span:h* cpu>1s").part, REC_TRIGGER_PART_CPU);
	/* A glob that is a part's word is a glob. */
	r = parse_ok("span:blocked>1s");
	assert_int_equal(r.part, REC_TRIGGER_PART_ALL);
	assert_string_equal(r.glob, "blocked");

	r = parse_ok("event:'request done' status>=500");
	assert_int_equal(r.kind, REC_TRIGGER_EVENT);
	assert_string_equal(r.glob, "request done");
	assert_true(r.has_cond);
	assert_string_equal(r.cond.field, "status");
	assert_int_equal(r.cond.op, REC_COND_GE);
	assert_int_equal(r.cond.u64, 500);
	r = parse_ok("event:timeout*");
	assert_string_equal(r.glob, "timeout*");
	assert_false(r.has_cond);
	r = parse_ok("event:\"it's done\"   key = user:*  ");
	assert_string_equal(r.glob, "it's done");
	assert_string_equal(r.cond.str, "user:*");

	r = parse_ok("code");
	assert_int_equal(r.kind, REC_TRIGGER_CODE);
	assert_string_equal(r.glob, "*");
	r = parse_ok("  code:oom*  ");
	assert_string_equal(r.glob, "oom*");
	assert_string_equal(parse_ok("code:'out of memory'").glob, "out of memory");
}

/* format(parse(text)) is canon, which parses to itself. */
static void round_trip(const char *text, const char *canon)
{
	struct rec_trigger_rule r = parse_ok(text);
	char buf[REC_TRIGGER_TEXT_MAX];

	assert_int_equal(rec_trigger__format(&r, buf, sizeof(buf)), 0);
	assert_string_equal(buf, canon);
	r = parse_ok(buf);
	assert_int_equal(rec_trigger__format(&r, buf, sizeof(buf)), 0);
	assert_string_equal(buf, canon);
}

static void the_canonical_text_round_trips(void **state)
{
	struct rec_trigger_rule r;
	char small[8];

	(void)state;
	round_trip("level>=WARNING", "level>=warn");
	round_trip("  level>=Error ", "level>=error");
	round_trip("level>=trace", "level>=trace");
	round_trip("span:db*>1000ms", "span:db*>1s");
	round_trip("span:x>120s", "span:x>2m");
	round_trip("span:x>90s", "span:x>90s");
	round_trip("span:x>3600000ms", "span:x>1h");
	round_trip("span:x>1500us", "span:x>1500us");
	round_trip("span:x>7ns", "span:x>7ns");
	round_trip("span:x>0", "span:x>0");
	round_trip("span:x>0ms", "span:x>0");
	round_trip("span:\"db query\">2s", "span:'db query'>2s");
	round_trip("span:a>b>1s", "span:'a>b'>1s");
	round_trip("span:\"it's\">1s", "span:it's>1s");
	round_trip("span:handle   blocked>200ms", "span:handle blocked>200ms");
	round_trip("span:\"db q\" runq>1000ms", "span:'db q' runq>1s");
	round_trip("span:x cpu>0", "span:x cpu>0");
	round_trip("event:'request done'   status >= 500", "event:'request done' status>=500");
	round_trip("event:timeout*", "event:timeout*");
	round_trip("event:\"it's done\"", "event:\"it's done\"");
	round_trip("event:x key=user:*", "event:x key='user:*'");
	round_trip("event:x hit==false", "event:x hit=false");
	round_trip("event:x t<-2e3", "event:x t<-2000.0");
	round_trip("event:''", "event:''");
	round_trip("code:*", "code");
	round_trip("code", "code");
	round_trip("code:oom*", "code:oom*");
	round_trip("code:'out of memory'", "code:'out of memory'");

	r = parse_ok("level>=warn");
	assert_int_equal(rec_trigger__format(&r, small, sizeof(small)), -ENOSPC);
}

static void errors_name_the_bad_part(void **state)
{
	char big[400], want[600];

	(void)state;
	parse_err("", "empty rule: expected level>=, span:, event: or code");
	parse_err(">5", "bad rule '>5': expected level>=LEVEL, span:GLOB>DURATION, "
			"event:GLOB [COND], code or code:GLOB");
	parse_err("evnt:foo", "unknown rule kind 'evnt' in 'evnt:foo': "
			      "expected level, span, event or code");
	parse_err("Level>=warn", "unknown rule kind 'Level' in 'Level>=warn': "
				 "expected level, span, event or code");
	parse_err("codex", "unknown rule kind 'codex' in 'codex': "
			   "expected level, span, event or code");
	parse_err("level>=fatal", "unknown level 'fatal' in 'level>=fatal': "
				  "expected trace, debug, info, warn or error");
	parse_err("level>=errorerrorerror", "unknown level 'errorerrorerror' in "
					    "'level>=errorerrorerror': "
					    "expected trace, debug, info, warn or error");
	parse_err("level>=", "'level>=' has no level");
	parse_err("level=warn", "bad rule 'level=warn': expected level>=LEVEL");
	parse_err("span=x>1s", "bad rule 'span=x>1s': expected span:GLOB>DURATION");
	parse_err("span:db>5x", "bad unit 'x' in duration '5x': expected one of ns us ms s m h");
	parse_err("span:db>500", "duration '500' has no unit: expected one of ns us ms s m h");
	parse_err("span:db>-5s", "negative duration '-5s'");
	parse_err("span:db>", "'span:db>' has no duration");
	parse_err("span:db", "'span:db' has no '>DURATION'");
	parse_err("span:>1s", "'span:>1s' has no glob");
	parse_err("span:db query>1s", "glob 'db query' has blanks: quote it");
	parse_err("span:'db>1s", "unterminated quote ' in 'span:'db>1s'");
	parse_err("span:'db'1s", "'span:'db'1s' has no '>DURATION' after its glob");
	parse_err("span:'db' waiting>1s", "unexpected ' waiting' after the glob in "
					  "'span:'db' waiting>1s': expected >DURATION, or "
					  "blocked, cpu or runq before it");
	parse_err("span:db waiting>1s", "glob 'db waiting' has blanks: quote it");
	parse_err("event", "bad rule 'event': expected event:GLOB [COND]");
	parse_err("event:", "'event:' has no glob");
	parse_err("event:'request done status>=500",
		  "unterminated quote ' in 'event:'request done status>=500'");
	parse_err("event:x status~5", "bad operator in 'status~5': "
				      "expected one of = != < <= > >=");
	parse_err("event:x status>=", "'status>=' has no value");
	parse_err("event:x key<user:*", "'<' does not apply to a string ('user:*')");
	parse_err("event:'a'b", "unexpected 'b' after the glob in 'event:'a'b'");
	parse_err("code=x", "bad rule 'code=x': expected code or code:GLOB");
	parse_err("code:", "'code:' has no glob");
	parse_err("code:x y", "unexpected ' y' after the glob in 'code:x y'");

	strcpy(big, "code:'");
	memset(big + 6, 'g', 256);
	strcpy(big + 6 + 256, "'");
	snprintf(want, sizeof(want), "glob in '%s' is longer than 255 bytes", big);
	parse_err(big, want);
	strcpy(big + 6 + 255, "'");
	assert_int_equal(strlen(parse_ok(big).glob), 255);
}

static void durations(void **state)
{
	char err[256], buf[32];
	int64_t ns = -1;

	(void)state;
	assert_int_equal(rec_trigger__parse_duration("0", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(rec_trigger__parse_duration("00", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(rec_trigger__parse_duration("7ns", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 7);
	assert_int_equal(rec_trigger__parse_duration("3us", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 3000);
	assert_int_equal(rec_trigger__parse_duration("500ms", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 500 * MS);
	assert_int_equal(rec_trigger__parse_duration("2s", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 2 * SEC);
	assert_int_equal(rec_trigger__parse_duration("1m", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 60 * SEC);
	assert_int_equal(rec_trigger__parse_duration("1h", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 3600 * SEC);
	assert_int_equal(rec_trigger__parse_duration("9223372036854775807ns", &ns, err, 256), 0);
	assert_true(ns == INT64_MAX);
	assert_int_equal(rec_trigger__parse_duration("2562047h", &ns, err, sizeof(err)), 0);
	assert_true(ns == 2562047LL * 3600 * SEC);

	assert_int_equal(rec_trigger__parse_duration("9223372036854775808ns", &ns, err, 256),
			 -EINVAL);
	assert_string_equal(err, "duration '9223372036854775808ns' is too long");
	assert_int_equal(rec_trigger__parse_duration("2562048h", &ns, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "duration '2562048h' is too long");
	assert_int_equal(rec_trigger__parse_duration("99999999999999999999s", &ns, err, 256),
			 -EINVAL);
	assert_string_equal(err, "duration '99999999999999999999s' is too long");
	assert_int_equal(rec_trigger__parse_duration("-5s", &ns, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "negative duration '-5s'");
	assert_int_equal(rec_trigger__parse_duration("", &ns, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "empty duration: expected an integer and a unit (ns us ms s m h)");
	assert_int_equal(rec_trigger__parse_duration("5", &ns, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "duration '5' has no unit: expected one of ns us ms s m h");
	assert_int_equal(rec_trigger__parse_duration("5d", &ns, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad unit 'd' in duration '5d': expected one of ns us ms s m h");
	assert_int_equal(rec_trigger__parse_duration("1.5s", &ns, err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
			    "bad unit '.5s' in duration '1.5s': expected one of ns us ms s m h");
	assert_int_equal(rec_trigger__parse_duration("s", &ns, err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
			    "bad duration 's': expected an integer and a unit (ns us ms s m h)");
	assert_int_equal(rec_trigger__parse_duration("5 s", &ns, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad unit ' s' in duration '5 s': expected one of ns us ms s m h");

	assert_int_equal(rec_trigger__format_duration(0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0");
	assert_int_equal(rec_trigger__format_duration(1500 * MS, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1500ms");
	assert_int_equal(rec_trigger__format_duration(3600 * SEC, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1h");
	assert_int_equal(rec_trigger__format_duration(1, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1ns");
	assert_int_equal(rec_trigger__format_duration(INT64_MAX, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "9223372036854775807ns");
	assert_int_equal(rec_trigger__format_duration(3600 * SEC, buf, 2), -ENOSPC);
}

static struct rec_callsite callsite(char kind, enum rec_level level, const char *name,
				    const char *message, uint32_t nfields, const char *const *names)
{
	struct rec_callsite cs = { .kind = kind, .level = level, .name = name, .message = message };

	cs.nfields = nfields;
	for (uint32_t i = 0; i < nfields; i++)
		cs.field_names[i] = names[i];
	return cs;
}

static struct rec_event_view view(const struct rec_callsite *cs, enum rec_level own,
				  uint32_t nfields, const struct rec_value *values)
{
	return (struct rec_event_view){
		.cs = cs, .level = own, .nfields = nfields, .values = values
	};
}

static bool fires(const char *rule, const struct rec_event_view *ev)
{
	struct rec_trigger_rule r = parse_ok(rule);

	return rec_trigger__match_event(&r, ev);
}

static void level_rules_take_the_effective_level(void **state)
{
	struct rec_callsite warn = callsite('E', REC_LEVEL_WARN, "w", "disk low", 0, NULL);
	struct rec_callsite rt = callsite('E', REC_LEVEL_RUNTIME, "r", "dynamic", 0, NULL);
	struct rec_event_view ev;

	(void)state;
	ev = view(&warn, REC_LEVEL_TRACE, 0, NULL);
	assert_true(fires("level>=trace", &ev));
	assert_true(fires("level>=info", &ev));
	assert_true(fires("level>=warn", &ev));
	assert_false(fires("level>=error", &ev));
	/* A REC_LEVEL_RUNTIME callsite: the event's own level. */
	ev = view(&rt, REC_LEVEL_ERROR, 0, NULL);
	assert_true(fires("level>=error", &ev));
	ev = view(&rt, REC_LEVEL_DEBUG, 0, NULL);
	assert_true(fires("level>=debug", &ev));
	assert_false(fires("level>=info", &ev));
	/* Its callsite unknown: no level, no match. */
	ev = view(NULL, REC_LEVEL_ERROR, 0, NULL);
	assert_false(fires("level>=trace", &ev));
	assert_false(fires("event:*", &ev));
}

static void event_rules_match_the_message_and_the_condition(void **state)
{
	const char *names[] = { "status", "path" };
	struct rec_callsite done = callsite('E', REC_LEVEL_INFO, "d", "request done", 2, names);
	struct rec_value v[] = {
		{ .type = REC_TYPE_U64, .u64 = 503 },
		{ .type = REC_TYPE_STR, .str = { .ptr = "/api/x", .len = 6 } },
	};
	struct rec_event_view ev = view(&done, 0, 2, v);

	(void)state;
	assert_true(fires("event:'request done'", &ev));
	assert_true(fires("event:request*", &ev));
	assert_false(fires("event:request", &ev));
	assert_false(fires("event:timeout*", &ev));
	assert_true(fires("event:'request done' status>=500", &ev));
	assert_true(fires("event:* status=503", &ev));
	assert_true(fires("event:* path=/api/*", &ev));
	assert_false(fires("event:* path=/api/x?", &ev));
	assert_false(fires("event:timeout* status>=500", &ev));
	assert_false(fires("event:* missing=1", &ev));
	assert_false(fires("event:* missing!=1", &ev));
	v[0].u64 = 404;
	assert_false(fires("event:'request done' status>=500", &ev));
	assert_true(fires("event:'request done' status!=500", &ev));
	/* An event rule is not a level rule, nor the other way. */
	assert_false(fires("level>=error", &ev));
	assert_true(fires("level>=info", &ev));
}

static void a_printf_style_event_has_its_message_field(void **state)
{
	const char *names[] = { "n", "message" };
	/* Not NUL-terminated: the bytes after len are not the message's. */
	const char *text = "timeout after 5sXXXX";
	struct rec_callsite cs = callsite('E', REC_LEVEL_WARN, "p", "", 2, names);
	struct rec_value v[] = {
		{ .type = REC_TYPE_I64, .i64 = -1 },
		{ .type = REC_TYPE_STR, .str = { .ptr = text, .len = 16 } },
	};
	struct rec_event_view ev = view(&cs, 0, 2, v);
	struct rec_callsite bare = callsite('E', REC_LEVEL_WARN, "q", "", 1, names);
	struct rec_callsite unnamed = callsite('E', REC_LEVEL_WARN, "u", "tick", 0, NULL);

	(void)state;
	assert_true(fires("event:timeout*", &ev));
	assert_true(fires("event:'timeout after 5s'", &ev));
	assert_false(fires("event:'timeout after 5sX*'", &ev));
	assert_true(fires("event:timeout* n<0", &ev));
	assert_true(fires("event:* message='timeout*'", &ev));
	/* A message field not read: "". */
	v[1].str.status = REC_STR_FAULT;
	assert_false(fires("event:timeout*", &ev));
	assert_true(fires("event:''", &ev));
	/* No message at all: "". */
	ev = view(&bare, 0, 2, v);
	assert_true(fires("event:*", &ev));
	assert_false(fires("event:?*", &ev));
	/* A field without a name is field<i>, as output shows it. */
	ev = view(&unnamed, 0, 1, v);
	assert_true(fires("event:tick field0=-1", &ev));
	assert_false(fires("event:tick n=-1", &ev));
}

static void span_rules_fire_strictly_past_their_duration(void **state)
{
	struct rec_trigger_rule r = parse_ok("span:db*>500ms");
	struct rec_trigger_rule other = parse_ok("event:*");
	struct rec_callsite db = callsite('S', REC_LEVEL_INFO, "db.query", "", 0, NULL);
	struct rec_callsite http = callsite('S', REC_LEVEL_INFO, "http", "", 0, NULL);
	struct rec_callsite noname = callsite('S', REC_LEVEL_INFO, NULL, "", 0, NULL);

	(void)state;
	assert_false(rec_trigger__match_span(&r, &db, 500 * MS));
	assert_true(rec_trigger__match_span(&r, &db, 500 * MS + 1));
	assert_false(rec_trigger__match_span(&r, &db, 0));
	assert_false(rec_trigger__match_span(&r, &http, 10 * SEC));
	assert_false(rec_trigger__match_span(&r, NULL, 10 * SEC));
	assert_false(rec_trigger__match_span(&r, &noname, 10 * SEC));
	assert_false(rec_trigger__match_span(&other, &db, 10 * SEC));
	r = parse_ok("span:*>0");
	assert_true(rec_trigger__match_span(&r, &http, 1));
	assert_false(rec_trigger__match_span(&r, &http, 0));
	assert_false(rec_trigger__match_code(&r, "x"));
}

static void code_rules_match_the_reason(void **state)
{
	struct rec_trigger_rule any = parse_ok("code");
	struct rec_trigger_rule oom = parse_ok("code:oom*");
	struct rec_trigger_rule ev = parse_ok("event:*");
	struct rec_trigger_rule empty = parse_ok("code:''");

	(void)state;
	assert_true(rec_trigger__match_code(&any, "anything"));
	assert_true(rec_trigger__match_code(&any, ""));
	assert_true(rec_trigger__match_code(&any, NULL));
	assert_true(rec_trigger__match_code(&oom, "oom killer"));
	assert_false(rec_trigger__match_code(&oom, "disk full"));
	assert_false(rec_trigger__match_code(&oom, NULL));
	assert_false(rec_trigger__match_code(&ev, "oom"));
	/* No reason is "". */
	assert_true(rec_trigger__match_code(&empty, NULL));
	assert_true(rec_trigger__match_code(&empty, ""));
	assert_false(rec_trigger__match_code(&empty, "x"));
}

static void a_set_gives_ids_never_reused(void **state)
{
	struct rec_trigger_set *s = calloc(1, sizeof(*s));
	const struct rec_trigger_entry *e;
	char err[512], text[32];
	unsigned int i;

	(void)state;
	assert_non_null(s);
	assert_int_equal(rec_trigger__init(s, 0, 0), 0);
	assert_null(rec_trigger__at(s, 0));
	assert_int_equal(rec_trigger__add(s, "level>=warn", err, sizeof(err)), 1);
	assert_int_equal(rec_trigger__add(s, "span:db*>1000ms", err, sizeof(err)), 2);
	assert_int_equal(rec_trigger__add(s, "code", err, sizeof(err)), 3);
	assert_int_equal(rec_trigger__add(s, "event:x", err, sizeof(err)), 4);
	/* The same canonical text: a duplicate. */
	assert_int_equal(rec_trigger__add(s, "level>=WARNING", err, sizeof(err)), -EEXIST);
	assert_string_equal(err, "rule 'level>=warn' is already set (id 1)");
	assert_int_equal(rec_trigger__add(s, "code:*", err, sizeof(err)), -EEXIST);
	assert_int_equal(rec_trigger__add(s, "evnt:x", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown rule kind 'evnt' in 'evnt:x': "
				 "expected level, span, event or code");

	e = rec_trigger__at(s, 1);
	assert_int_equal(e->id, 2);
	assert_string_equal(e->text, "span:db*>1s");
	assert_int_equal(e->rule.kind, REC_TRIGGER_SPAN);
	assert_int_equal(rec_trigger__find(s, 3), 2);
	assert_int_equal(rec_trigger__find(s, 5), -ENOENT);

	/* Removed by id: the others keep their order; the id is not given again. */
	assert_int_equal(rec_trigger__remove(s, 2), 0);
	assert_int_equal(rec_trigger__remove(s, 2), -ENOENT);
	assert_int_equal(rec_trigger__at(s, 0)->id, 1);
	assert_int_equal(rec_trigger__at(s, 1)->id, 3);
	assert_int_equal(rec_trigger__at(s, 2)->id, 4);
	assert_null(rec_trigger__at(s, 3));
	assert_int_equal(rec_trigger__add(s, "span:db*>1s", err, sizeof(err)), 5);
	/* Removed by text, canonical or not. */
	assert_int_equal(rec_trigger__remove_text(s, "code:*"), 0);
	assert_int_equal(rec_trigger__remove_text(s, "code"), -ENOENT);
	assert_int_equal(rec_trigger__remove_text(s, "not a rule"), -ENOENT);
	assert_int_equal(rec_trigger__remove_text(s, " level>=Warning "), 0);
	assert_int_equal(rec_trigger__at(s, 0)->id, 4);
	assert_int_equal(rec_trigger__at(s, 1)->id, 5);
	assert_null(rec_trigger__at(s, 2));
	assert_int_equal(rec_trigger__add(s, "level>=warn", err, sizeof(err)), 6);

	/* Full at REC_TRIGGER_MAX_RULES. */
	for (i = 3; i < REC_TRIGGER_MAX_RULES; i++) {
		snprintf(text, sizeof(text), "code:r%u", i);
		assert_int_equal(rec_trigger__add(s, text, err, sizeof(err)), 4 + i);
	}
	assert_int_equal(s->n, REC_TRIGGER_MAX_RULES);
	assert_int_equal(rec_trigger__add(s, "code:one-more", err, sizeof(err)), -ENOSPC);
	assert_string_equal(err, "no room for rule 'code:one-more': 32 rules already");
	assert_int_equal(rec_trigger__add(s, "code:r3", err, sizeof(err)), -EEXIST);
	assert_int_equal(rec_trigger__remove(s, 5), 0);
	assert_int_equal(rec_trigger__add(s, "code:one-more", err, sizeof(err)),
			 4 + REC_TRIGGER_MAX_RULES);
	for (i = 0; (e = rec_trigger__at(s, i)); i++)
		assert_int_not_equal(e->id, 5);
	assert_int_equal(i, REC_TRIGGER_MAX_RULES);
	rec_trigger__fini(s);
	free(s);
}

static struct rec_trigger_set *new_set(int64_t cooldown_ns, unsigned int per_hour, int nrules)
{
	struct rec_trigger_set *s = calloc(1, sizeof(*s));
	char text[32], err[256];

	assert_non_null(s);
	assert_int_equal(rec_trigger__init(s, cooldown_ns, per_hour), 0);
	for (int i = 0; i < nrules; i++) {
		snprintf(text, sizeof(text), "code:rule%d", i);
		assert_int_equal(rec_trigger__add(s, text, err, sizeof(err)), i + 1);
	}
	return s;
}

static void assert_counts(const struct rec_trigger_set *s, unsigned int i, uint64_t admitted,
			  uint64_t cooldown, uint64_t capped)
{
	const struct rec_trigger_counts *c = &rec_trigger__at(s, i)->count;

	assert_int_equal(c->admitted, admitted);
	assert_int_equal(c->cooldown, cooldown);
	assert_int_equal(c->capped, capped);
	assert_int_equal(c->fired, admitted + cooldown + capped);
}

static void the_cooldown_ends_exactly_after_it(void **state)
{
	struct rec_trigger_set *s = new_set(10 * SEC, 0, 2);
	int64_t t = 100 * SEC;

	(void)state;
	assert_int_equal(rec_trigger__admit(s, 0, t), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 0, t), REC_TRIGGER_COOLDOWN);
	/* A suppressed fire does not push the cooldown on. */
	assert_int_equal(rec_trigger__admit(s, 0, t + 5 * SEC), REC_TRIGGER_COOLDOWN);
	assert_int_equal(rec_trigger__admit(s, 0, t + 10 * SEC - 1), REC_TRIGGER_COOLDOWN);
	/* Each rule has its own. */
	assert_int_equal(rec_trigger__admit(s, 1, t + 1), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 0, t + 10 * SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 0, t + 20 * SEC - 1), REC_TRIGGER_COOLDOWN);
	assert_int_equal(rec_trigger__admit(s, 1, t + 10 * SEC), REC_TRIGGER_COOLDOWN);
	assert_int_equal(rec_trigger__admit(s, 1, t + 10 * SEC + 1), REC_TRIGGER_ADMIT);
	assert_counts(s, 0, 2, 4, 0);
	assert_counts(s, 1, 2, 1, 0);
	rec_trigger__fini(s);
	free(s);

	/* No cooldown: every fire is admitted, at one time too. */
	s = new_set(0, 0, 1);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(rec_trigger__admit(s, 0, t), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 0, t - 1), REC_TRIGGER_ADMIT);
	assert_counts(s, 0, 5001, 0, 0);
	rec_trigger__fini(s);
	free(s);
}

static void the_hourly_cap_slides(void **state)
{
	struct rec_trigger_set *s = new_set(0, 3, 2);
	const int64_t hour = 3600 * SEC;

	(void)state;
	assert_int_equal(rec_trigger__admit(s, 0, 0), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 1, 10 * SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 0, 20 * SEC), REC_TRIGGER_ADMIT);
	/* Over all rules: three in the hour. */
	assert_int_equal(rec_trigger__admit(s, 1, 30 * SEC), REC_TRIGGER_CAP);
	assert_int_equal(rec_trigger__admit(s, 0, hour - 1), REC_TRIGGER_CAP);
	/* The one at 0 leaves the window at exactly an hour. */
	assert_int_equal(rec_trigger__admit(s, 0, hour), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 1, hour), REC_TRIGGER_CAP);
	assert_int_equal(rec_trigger__admit(s, 1, hour + 10 * SEC - 1), REC_TRIGGER_CAP);
	assert_int_equal(rec_trigger__admit(s, 1, hour + 10 * SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 1, hour + 15 * SEC), REC_TRIGGER_CAP);
	/* Capped fires took no room: all three places free up an hour after the last admitted. */
	assert_int_equal(rec_trigger__admit(s, 0, 2 * hour + 10 * SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 0, 2 * hour + 10 * SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 1, 2 * hour + 10 * SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 1, 2 * hour + 10 * SEC), REC_TRIGGER_CAP);
	assert_counts(s, 0, 5, 0, 1);
	assert_counts(s, 1, 3, 0, 5);
	rec_trigger__fini(s);
	free(s);
}

static void the_cooldown_is_checked_before_the_cap(void **state)
{
	struct rec_trigger_set *s = new_set(100 * SEC, 1, 2);

	(void)state;
	assert_int_equal(rec_trigger__admit(s, 0, 0), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 0, 50 * SEC), REC_TRIGGER_COOLDOWN);
	assert_int_equal(rec_trigger__admit(s, 1, 50 * SEC), REC_TRIGGER_CAP);
	/* A capped fire starts no cooldown. */
	assert_int_equal(rec_trigger__admit(s, 1, 3600 * SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 0, 3600 * SEC), REC_TRIGGER_CAP);
	assert_counts(s, 0, 1, 1, 1);
	assert_counts(s, 1, 1, 0, 1);
	rec_trigger__fini(s);
	free(s);
}

/*
 * Random fires over three rules and many hours: the verdicts are what a
 * model of the limiter says, fired = admitted + cooldown + capped, and no
 * window of an hour holds more than per_hour admitted.
 */
static void fired_is_admitted_plus_cooldown_plus_capped(void **state)
{
	const int64_t cooldown = 7 * SEC, hour = 3600 * SEC;
	const unsigned int per_hour = 5;
	struct rec_trigger_set *s = new_set(cooldown, per_hour, 3);
	uint64_t tally[3][3] = { { 0 } };
	int64_t last[3] = { -1, -1, -1 };
	static int64_t times[100000];
	size_t ntimes = 0;
	uint64_t seed = 42;
	int64_t t = 0;

	(void)state;
	for (int k = 0; k < 100000; k++) {
		unsigned int rule, in_hour = 0;
		enum rec_trigger_verdict want, got;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		rule = (unsigned int)(seed >> 33) % 3;
		t += (int64_t)((seed >> 40) % (300 * SEC / 1000)) * 1000;
		for (size_t j = ntimes; j > 0 && t - times[j - 1] < hour; j--)
			in_hour++;
		if (last[rule] >= 0 && t - last[rule] < cooldown)
			want = REC_TRIGGER_COOLDOWN;
		else if (in_hour >= per_hour)
			want = REC_TRIGGER_CAP;
		else
			want = REC_TRIGGER_ADMIT;
		got = rec_trigger__admit(s, rule, t);
		assert_int_equal(got, want);
		tally[rule][got]++;
		if (got == REC_TRIGGER_ADMIT) {
			last[rule] = t;
			times[ntimes++] = t;
			rec_trigger__report(s, rule, 0, ntimes % 4 ? 0 : -EIO, NULL);
		}
	}
	for (unsigned int i = 0; i < 3; i++) {
		const struct rec_trigger_counts *c = &rec_trigger__at(s, i)->count;

		assert_counts(s, i, tally[i][REC_TRIGGER_ADMIT], tally[i][REC_TRIGGER_COOLDOWN],
			      tally[i][REC_TRIGGER_CAP]);
		assert_int_equal(c->saved + c->failed, c->admitted);
		assert_true(c->cooldown > 0 && c->capped > 0 && c->failed > 0);
	}
	for (size_t j = per_hour; j < ntimes; j++)
		assert_true(times[j] - times[j - per_hour] >= hour);
	assert_true(ntimes > 100);
	rec_trigger__fini(s);
	free(s);
}

static void the_limits_are_checked(void **state)
{
	struct rec_trigger_set *s = calloc(1, sizeof(*s));

	(void)state;
	assert_non_null(s);
	assert_int_equal(rec_trigger__init(s, 0, REC_TRIGGER_PER_HOUR_MAX + 1), -EINVAL);
	assert_int_equal(rec_trigger__init(s, -1, 0), -EINVAL);
	assert_int_equal(rec_trigger__init(s, 0, REC_TRIGGER_PER_HOUR_MAX), 0);
	assert_int_equal(rec_trigger__add(s, "code", NULL, 0), 1);
	for (int i = 0; i < REC_TRIGGER_PER_HOUR_MAX; i++)
		assert_int_equal(rec_trigger__admit(s, 0, i), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__admit(s, 0, REC_TRIGGER_WINDOW_NS - 1), REC_TRIGGER_CAP);
	assert_int_equal(rec_trigger__admit(s, 0, REC_TRIGGER_WINDOW_NS), REC_TRIGGER_ADMIT);
	assert_counts(s, 0, REC_TRIGGER_PER_HOUR_MAX + 1, 0, 1);
	rec_trigger__report(s, 0, 0, 0, NULL);
	rec_trigger__report(s, 0, 0, -ENOSPC, NULL);
	assert_int_equal(rec_trigger__at(s, 0)->count.saved, 1);
	assert_int_equal(rec_trigger__at(s, 0)->count.failed, 1);
	rec_trigger__fini(s);
	free(s);
}

/* ---- signatures (issue 35): the limiter per rule and what it fired on ---- */

static void assert_sig(const struct rec_trigger_sig *g, uint64_t admitted, uint64_t cooldown,
		       uint64_t capped)
{
	assert_non_null(g);
	assert_int_equal(g->count.admitted, admitted);
	assert_int_equal(g->count.cooldown, cooldown);
	assert_int_equal(g->count.capped, capped);
	assert_int_equal(g->count.fired, admitted + cooldown + capped);
}

static enum rec_trigger_verdict fire(struct rec_trigger_set *s, unsigned int rule, uint64_t key,
				     int64_t t)
{
	return rec_trigger__fire(s, rule, key, t, t - MS, false, NULL);
}

/*
 * 10,000 errors of one callsite at 300 a second, then one of another, and a
 * slow span: each new signature is saved; the flood is limited on its own.
 */
static void a_flood_of_one_signature_starves_no_other(void **state)
{
	struct rec_trigger_set *s = new_set(10 * SEC, 60, 2);
	struct rec_trigger_sig *g;
	int64_t t = 1000 * SEC;
	unsigned int admitted = 0;

	(void)state;
	assert_int_equal(rec_trigger__limit_signatures(s, 6), 0);
	for (int k = 0; k < 10000; k++, t += SEC / 300)
		admitted += fire(s, 0, 0x1000, t) == REC_TRIGGER_ADMIT;
	/* One every 10 s of the 33 s it lasted. */
	assert_int_equal(admitted, 4);
	assert_int_equal(rec_trigger__fire(s, 0, 0x2000, t, t - MS, false, &g), REC_TRIGGER_ADMIT);
	assert_non_null(g);
	assert_int_equal(g->id, 0);
	assert_int_equal(fire(s, 1, 0x3000, t), REC_TRIGGER_ADMIT);
	assert_sig(rec_trigger__find_sig(s, 1, 0x1000), 4, 9996, 0);
	assert_sig(rec_trigger__find_sig(s, 1, 0x2000), 1, 0, 0);
	assert_sig(rec_trigger__find_sig(s, 2, 0x3000), 1, 0, 0);
	assert_counts(s, 0, 5, 9996, 0);
	assert_int_equal(rec_trigger__nsigs(s), 3);
	/* First and last: its own time and when it was seen. */
	g = rec_trigger__find_sig(s, 1, 0x1000);
	assert_int_equal(g->first_seen_ns, 1000 * SEC);
	assert_int_equal(g->first_ns, 1000 * SEC - MS);
	assert_int_equal(g->last_seen_ns, 1000 * SEC + 9999 * (SEC / 300));
	assert_int_equal(g->last_ns, g->last_seen_ns - MS);
	rec_trigger__fini(s);
	free(s);
}

static void the_cooldown_is_per_signature(void **state)
{
	struct rec_trigger_set *s = new_set(10 * SEC, 0, 1);
	int64_t t = 100 * SEC;

	(void)state;
	assert_int_equal(fire(s, 0, 1, t), REC_TRIGGER_ADMIT);
	assert_int_equal(fire(s, 0, 1, t + 1), REC_TRIGGER_COOLDOWN);
	assert_int_equal(fire(s, 0, 2, t + 1), REC_TRIGGER_ADMIT);
	assert_int_equal(fire(s, 0, 2, t + 2), REC_TRIGGER_COOLDOWN);
	assert_int_equal(fire(s, 0, 1, t + 10 * SEC - 1), REC_TRIGGER_COOLDOWN);
	assert_int_equal(fire(s, 0, 1, t + 10 * SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(fire(s, 0, 2, t + 10 * SEC), REC_TRIGGER_COOLDOWN);
	assert_int_equal(fire(s, 0, 2, t + 10 * SEC + 1), REC_TRIGGER_ADMIT);
	assert_sig(rec_trigger__find_sig(s, 1, 1), 2, 2, 0);
	assert_sig(rec_trigger__find_sig(s, 1, 2), 2, 2, 0);
	assert_counts(s, 0, 4, 4, 0);
	rec_trigger__fini(s);
	free(s);
}

static void each_signature_has_its_own_hourly_cap(void **state)
{
	struct rec_trigger_set *s = new_set(0, 0, 1);
	const int64_t hour = 3600 * SEC;

	(void)state;
	assert_int_equal(rec_trigger__limit_signatures(s, REC_TRIGGER_SIG_PER_HOUR_MAX + 1),
			 -EINVAL);
	assert_int_equal(rec_trigger__limit_signatures(s, 2), 0);
	assert_int_equal(fire(s, 0, 1, 0), REC_TRIGGER_ADMIT);
	assert_int_equal(fire(s, 0, 1, 10 * SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(fire(s, 0, 1, 20 * SEC), REC_TRIGGER_CAP);
	assert_int_equal(fire(s, 0, 2, 20 * SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(fire(s, 0, 1, hour - 1), REC_TRIGGER_CAP);
	assert_int_equal(fire(s, 0, 1, hour), REC_TRIGGER_ADMIT);
	assert_int_equal(fire(s, 0, 1, hour + 1), REC_TRIGGER_CAP);
	assert_int_equal(fire(s, 0, 1, hour + 10 * SEC), REC_TRIGGER_ADMIT);
	assert_sig(rec_trigger__find_sig(s, 1, 1), 4, 0, 3);
	/* A signature's cap is not the set's: no first firing was refused. */
	assert_int_equal(s->new_capped, 0);
	rec_trigger__fini(s);
	free(s);
}

static void the_overall_cap_refuses_a_new_signature_counted(void **state)
{
	struct rec_trigger_set *s = new_set(0, 2, 2);

	(void)state;
	assert_int_equal(rec_trigger__limit_signatures(s, 6), 0);
	assert_int_equal(fire(s, 0, 1, SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(fire(s, 1, 7, SEC), REC_TRIGGER_ADMIT);
	assert_int_equal(fire(s, 0, 2, SEC), REC_TRIGGER_CAP);
	assert_int_equal(s->new_capped, 1);
	/* Counted once a signature: its second firing is not a first. */
	assert_int_equal(fire(s, 0, 2, SEC), REC_TRIGGER_CAP);
	assert_int_equal(fire(s, 0, 1, SEC), REC_TRIGGER_CAP);
	assert_int_equal(s->new_capped, 1);
	/* The set's cap and the pending room: a new signature refused either way is counted. */
	assert_int_equal(rec_trigger__fire(s, 1, 8, 2 * 3600 * SEC, 0, true, NULL),
			 REC_TRIGGER_CAP);
	assert_int_equal(s->new_capped, 2);
	assert_int_equal(fire(s, 1, 8, 2 * 3600 * SEC), REC_TRIGGER_ADMIT);
	assert_sig(rec_trigger__find_sig(s, 1, 2), 0, 0, 2);
	assert_sig(rec_trigger__find_sig(s, 2, 8), 1, 0, 1);
	rec_trigger__fini(s);
	free(s);
}

/* The table holds REC_TRIGGER_SIGNATURES_MAX; the rest fold into their rule's, counted. */
static void the_table_is_bounded_and_what_does_not_fit_is_folded(void **state)
{
	struct rec_trigger_set *s = new_set(10 * SEC, 0, 2);
	struct rec_trigger_sig *g;
	int64_t t = SEC;

	(void)state;
	for (uint64_t k = 0; k < REC_TRIGGER_SIGNATURES_MAX; k++)
		assert_int_equal(fire(s, 0, 0x400000 + k, t), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__nsigs(s), REC_TRIGGER_SIGNATURES_MAX);
	assert_int_equal(s->folded, 0);
	/* Past it: one fold for the rule, limited as one signature. */
	assert_int_equal(rec_trigger__fire(s, 0, 0x900000, t, t, false, &g), REC_TRIGGER_ADMIT);
	assert_non_null(g);
	assert_true(g->key == REC_TRIGGER_SIG_FOLD);
	assert_true(g->id != 0);
	assert_non_null(strstr(g->text, "past the 1024"));
	assert_int_equal(fire(s, 0, 0x900001, t), REC_TRIGGER_COOLDOWN);
	assert_int_equal(fire(s, 0, 0x900000, t + 1), REC_TRIGGER_COOLDOWN);
	assert_int_equal(s->folded, 3);
	/* Those in the table keep their own limiter. */
	assert_int_equal(fire(s, 0, 0x400005, t + 10 * SEC), REC_TRIGGER_ADMIT);
	/* Another rule's new signature folds into its own. */
	assert_int_equal(fire(s, 1, 0x900000, t), REC_TRIGGER_ADMIT);
	assert_int_equal(s->folded, 4);
	assert_int_equal(rec_trigger__nsigs(s), REC_TRIGGER_SIGNATURES_MAX + 2);
	assert_sig(rec_trigger__find_sig(s, 1, REC_TRIGGER_SIG_FOLD), 1, 2, 0);
	assert_null(rec_trigger__find_sig(s, 1, 0x900000));
	/* A report for a folded key goes to the fold. */
	rec_trigger__report(s, 0, 0x900000, 0, "/d/snapshot-1.json");
	assert_string_equal(rec_trigger__find_sig(s, 1, REC_TRIGGER_SIG_FOLD)->first_path,
			    "/d/snapshot-1.json");
	/* Removing a rule frees its signatures' room. */
	assert_int_equal(rec_trigger__remove(s, 1), 0);
	assert_int_equal(rec_trigger__nsigs(s), 1);
	assert_int_equal(fire(s, 0, 0x900002, t), REC_TRIGGER_ADMIT);
	assert_int_equal(rec_trigger__nsigs(s), 2);
	assert_sig(rec_trigger__find_sig(s, 2, 0x900002), 1, 0, 0);
	rec_trigger__fini(s);
	free(s);
}

/* A short id that is the same for the same rule and text in any process. */
static void a_signature_is_named_stably_and_keeps_its_first_snapshot(void **state)
{
	struct rec_trigger_set *a = new_set(0, 0, 2), *b = new_set(0, 0, 1);
	struct rec_trigger_sig *ga, *gb, *gc;

	(void)state;
	fire(a, 0, 0x10, SEC);
	fire(a, 1, 0x10, SEC);
	fire(b, 0, 0x99, SEC);
	ga = rec_trigger__find_sig(a, 1, 0x10);
	gc = rec_trigger__find_sig(a, 2, 0x10);
	gb = rec_trigger__find_sig(b, 1, 0x99);
	rec_trigger__name_sig(a, 0, ga, "'request failed' at server.c:42");
	rec_trigger__name_sig(a, 1, gc, "'request failed' at server.c:42");
	rec_trigger__name_sig(b, 0, gb, "'request failed' at server.c:42");
	assert_true(ga->id == gb->id);
	assert_true(ga->id != gc->id);
	assert_true(ga->id < (1ULL << REC_TRIGGER_SIG_ID_BITS));
	assert_string_equal(ga->text, "'request failed' at server.c:42");
	rec_trigger__report(a, 0, 0x10, -EIO, "/d/1.json");
	rec_trigger__report(a, 0, 0x10, 0, "/d/2.json");
	rec_trigger__report(a, 0, 0x10, 0, "/d/3.json");
	assert_string_equal(ga->first_path, "/d/2.json");
	assert_int_equal(ga->count.saved, 2);
	assert_int_equal(ga->count.failed, 1);
	rec_trigger__fini(a);
	rec_trigger__fini(b);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_kind_parses),
		cmocka_unit_test(a_part_rule_fires_on_that_part_of_a_span_left),
		cmocka_unit_test(the_canonical_text_round_trips),
		cmocka_unit_test(errors_name_the_bad_part),
		cmocka_unit_test(durations),
		cmocka_unit_test(level_rules_take_the_effective_level),
		cmocka_unit_test(event_rules_match_the_message_and_the_condition),
		cmocka_unit_test(a_printf_style_event_has_its_message_field),
		cmocka_unit_test(span_rules_fire_strictly_past_their_duration),
		cmocka_unit_test(code_rules_match_the_reason),
		cmocka_unit_test(a_set_gives_ids_never_reused),
		cmocka_unit_test(the_cooldown_ends_exactly_after_it),
		cmocka_unit_test(the_hourly_cap_slides),
		cmocka_unit_test(the_cooldown_is_checked_before_the_cap),
		cmocka_unit_test(fired_is_admitted_plus_cooldown_plus_capped),
		cmocka_unit_test(the_limits_are_checked),
		cmocka_unit_test(a_flood_of_one_signature_starves_no_other),
		cmocka_unit_test(the_cooldown_is_per_signature),
		cmocka_unit_test(each_signature_has_its_own_hourly_cap),
		cmocka_unit_test(the_overall_cap_refuses_a_new_signature_counted),
		cmocka_unit_test(the_table_is_bounded_and_what_does_not_fit_is_folded),
		cmocka_unit_test(a_signature_is_named_stably_and_keeps_its_first_snapshot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
