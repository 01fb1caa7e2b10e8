// SPDX-License-Identifier: MIT
/* The trigger rules and their counts (triggers.h). */
#include <inttypes.h>
#include <string.h>

#include "output/json.h"
#include "output/text.h"
#include "output/triggers.h"

void rec_output__triggers(FILE *out, const struct rec_trigger_set *set, bool json)
{
	unsigned int n = set ? set->n : 0;

	if (!json)
		fprintf(out, "%-4s %10s %8s %10s %8s %8s  %s\n", "ID", "FIRED", "SAVED", "COOLDOWN",
			"CAPPED", "FAILED", "RULE");
	for (unsigned int i = 0; i < n; i++) {
		const struct rec_trigger_entry *e = rec_trigger__at(set, i);
		const struct rec_trigger_counts *c = &e->count;
		struct rec_json w;

		if (!json) {
			fprintf(out,
				"%-4" PRIu32 " %10" PRIu64 " %8" PRIu64 " %10" PRIu64 " %8" PRIu64
				" %8" PRIu64 "  ",
				e->id, c->fired, c->saved, c->cooldown, c->capped, c->failed);
			/* A rule's text came from a user, but may hold any byte. */
			rec_text__escape(out, e->text, strlen(e->text));
			fputc('\n', out);
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
		rec_json__end_object(&w);
		fputc('\n', out);
	}
	if (!json && set)
		fprintf(out, "cooldown %" PRId64 " ms per rule; at most %u snapshots an hour%s\n",
			set->cooldown_ns / 1000000, set->per_hour,
			set->per_hour ? "" : " (no cap)");
}
