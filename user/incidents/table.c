// SPDX-License-Identifier: MIT
/* The trigger rules, their counts and signatures (triggers.h). */
#include <inttypes.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"
#include "incidents/table.h"
#include "wire/clock.h"

/* A CLOCK_MONOTONIC time as RFC 3339 (CLOCK_REALTIME: plus offset_ns) in buf. */
static const char *wall(int64_t mono_ns, int64_t offset_ns, char *buf)
{
	return rec_text__rfc3339(rec_clock__realtime((uint64_t)mono_ns, offset_ns), buf);
}

/* The signatures of rule id, as rows under it. */
static void text_sigs(FILE *out, const struct rec_trigger_set *set, uint32_t id, int64_t offset_ns)
{
	char first[REC_TEXT_TIME_MAX], last[REC_TEXT_TIME_MAX];
	const struct rec_trigger_sig *g;

	for (size_t k = 0; (g = rec_trigger__sig_at(set, k)); k++) {
		if (g->rule_id != id)
			continue;
		fprintf(out, "     %012" PRIx64 " %10" PRIu64 " %8" PRIu64 "  %s  %s  ", g->id,
			g->count.fired, g->count.saved, wall(g->first_ns, offset_ns, first),
			wall(g->last_ns, offset_ns, last));
		/* What it fired on came from the target: a name, a file, a reason. */
		rec_text__escape(out, g->text, strlen(g->text));
		fputc('\n', out);
		if (g->first_path[0]) {
			fprintf(out, "     %12s first snapshot: ", "");
			rec_text__escape(out, g->first_path, strlen(g->first_path));
			fputc('\n', out);
		}
	}
}

static void json_sigs(struct rec_json *w, const struct rec_trigger_set *set, uint32_t id,
		      int64_t offset_ns)
{
	char buf[REC_TEXT_TIME_MAX];
	const struct rec_trigger_sig *g;

	rec_json__key(w, "signatures");
	rec_json__begin_array(w);
	for (size_t k = 0; (g = rec_trigger__sig_at(set, k)); k++) {
		char sid[24];

		if (g->rule_id != id)
			continue;
		snprintf(sid, sizeof(sid), "%012" PRIx64, g->id);
		rec_json__begin_object(w);
		rec_json__member_cstr(w, "id", sid);
		rec_json__member_cstr(w, "signature", g->text);
		rec_json__member_bool(w, "folded", g->key == REC_TRIGGER_SIG_FOLD);
		rec_json__member_u64(w, "fired", g->count.fired);
		rec_json__member_u64(w, "saved", g->count.saved);
		rec_json__member_u64(w, "cooldown", g->count.cooldown);
		rec_json__member_u64(w, "capped", g->count.capped);
		rec_json__member_u64(w, "failed", g->count.failed);
		rec_json__member_cstr(w, "first", wall(g->first_ns, offset_ns, buf));
		rec_json__member_cstr(w, "first_seen", wall(g->first_seen_ns, offset_ns, buf));
		rec_json__member_cstr(w, "last", wall(g->last_ns, offset_ns, buf));
		rec_json__member_cstr(w, "last_seen", wall(g->last_seen_ns, offset_ns, buf));
		rec_json__key(w, "snapshot");
		if (g->first_path[0])
			rec_json__cstr(w, g->first_path);
		else
			rec_json__null(w);
		rec_json__end_object(w);
	}
	rec_json__end_array(w);
}

/* How many signatures rule id has, and the firings folded into its fold. */
static size_t sigs_of(const struct rec_trigger_set *set, uint32_t id, uint64_t *folded)
{
	const struct rec_trigger_sig *g;
	size_t n = 0;

	*folded = 0;
	for (size_t k = 0; (g = rec_trigger__sig_at(set, k)); k++) {
		if (g->rule_id != id)
			continue;
		n++;
		if (g->key == REC_TRIGGER_SIG_FOLD)
			*folded = g->count.fired;
	}
	return n;
}

void rec_table__triggers(FILE *out, const struct rec_trigger_set *set, bool json, int64_t offset_ns)
{
	unsigned int n = set ? set->n : 0;

	if (!json)
		fprintf(out, "%-4s %10s %8s %10s %8s %8s  %s\n", "ID", "FIRED", "SAVED", "COOLDOWN",
			"CAPPED", "FAILED", "RULE");
	if (!json && n)
		fprintf(out, "     %-12s %10s %8s  %-27s  %-27s  %s\n", "SIGNATURE", "FIRED",
			"SAVED", "FIRST", "LAST", "ON");
	for (unsigned int i = 0; i < n; i++) {
		const struct rec_trigger_entry *e = rec_trigger__at(set, i);
		const struct rec_trigger_counts *c = &e->count;
		struct rec_json w;
		uint64_t folded;
		size_t nsigs = sigs_of(set, e->id, &folded);

		if (!json) {
			fprintf(out,
				"%-4" PRIu32 " %10" PRIu64 " %8" PRIu64 " %10" PRIu64 " %8" PRIu64
				" %8" PRIu64 "  ",
				e->id, c->fired, c->saved, c->cooldown, c->capped, c->failed);
			/* A rule's text came from a user, but may hold any byte. */
			rec_text__escape(out, e->text, strlen(e->text));
			fputc('\n', out);
			text_sigs(out, set, e->id, offset_ns);
			continue;
		}
		rec_json__init(&w, out);
		rec_json__begin_object(&w);
		rec_json__member_u64(&w, "id", e->id);
		rec_json__member_cstr(&w, "rule", e->text);
		rec_json__member_u64(&w, "fired", c->fired);
		rec_json__member_u64(&w, "saved", c->saved);
		rec_json__member_u64(&w, "cooldown", c->cooldown);
		rec_json__member_u64(&w, "capped", c->capped);
		rec_json__member_u64(&w, "failed", c->failed);
		rec_json__member_u64(&w, "new_capped", c->new_capped);
		rec_json__member_u64(&w, "folded", folded);
		rec_json__member_u64(&w, "nsignatures", nsigs);
		json_sigs(&w, set, e->id, offset_ns);
		rec_json__end_object(&w);
		fputc('\n', out);
	}
	if (!json && set) {
		fprintf(out,
			"cooldown %" PRId64 " ms per signature; at most %u snapshots a signature%s "
			"and %u a process%s an hour\n",
			set->cooldown_ns / 1000000, set->sig_per_hour,
			set->sig_per_hour ? "" : " (no cap)", set->per_hour,
			set->per_hour ? "" : " (no cap)");
		fprintf(out,
			"signatures: %zu of %d (folded: %" PRIu64 " firings past them; new ones "
			"capped: %" PRIu64 "); times are the events' and spans' own\n",
			rec_trigger__nsigs(set), REC_TRIGGER_SIGNATURES_MAX, set->folded,
			set->new_capped);
	}
}
