// SPDX-License-Identifier: MIT
/*
 * What the control socket's clients ask of a traced process (private.h,
 * serving/clients.h): its rules, a fresh model, its black box now, its counts.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "incidents/table.h"
#include "session/private.h"

/* The rules' counts that --stats's live triggers share. */
static struct rec_dump_rule_counts live_counts[REC_TRIGGER_MAX_RULES];

/* The clients' callbacks (clients.h): the owner of a client's target is its struct traced. */

/* --triggers, --add-trigger and --remove-trigger of recorder-tail, for t. */
void answers__triggers(void *ctx, void *owner, const struct rec_query *q, FILE *out)
{
	struct rec_session *s = ctx;
	struct traced *t = owner;
	const struct rec_trigger_set *d = s->opts.triggers;
	char err[256] = "";
	int r;

	if (q->flags & REC_Q_ADD_TRIGGER) {
		r = rec_incident__add(&t->inc, q->rule,
				      d ? d->cooldown_ns : REC_TRIGGER_COOLDOWN_NS,
				      d ? d->per_hour : REC_TRIGGER_PER_HOUR, err, sizeof(err));
		if (r > 0)
			rec_trigger__limit_signatures(t->inc.rules, d ? d->sig_per_hour
								      : REC_TRIGGER_SIG_PER_HOUR);
		if (r > 0)
			fprintf(out, "0added trigger %d: %s\n", r,
				rec_trigger__at(t->inc.rules, t->inc.rules->n - 1)->text);
		else
			fprintf(out, "1recorder-attach: cannot add trigger '%s' to pid %d: %s\n",
				q->rule, (int)t->proc.pid,
				r == -EEXIST   ? "it is there already"
				: r == -ENOSPC ? "the most rules a process may have are there"
				: r == -EINVAL ? err
					       : strerror(-r));
		return;
	}
	if (q->flags & REC_Q_REMOVE_TRIGGER) {
		r = rec_incident__remove(&t->inc, q->rule, err, sizeof(err));
		if (r)
			fprintf(out, "1recorder-attach: cannot remove trigger '%s' of pid %d: %s\n",
				q->rule, (int)t->proc.pid, err);
		else
			fprintf(out, "0removed trigger '%s'\n", q->rule);
		return;
	}
	fputc('0', out);
	rec_incident__flush(&t->inc);
	rec_table__triggers(out, t->inc.rules, !!(q->flags & REC_Q_JSON), t->proc.clock_offset_ns);
}

int answers__refresh(void *ctx, void *owner)
{
	struct traced *t = owner;

	if (t->done)
		return 0;
	tracer__refresh(ctx, t);
	/* --stats shows its trigger rules' counts as they are now. */
	t->proc.live_triggers = NULL;
	if (t->inc.rules && t->inc.rules->n) {
		struct rec_incident_pending none = { 0 };

		incidents__dump_trigger_of(ctx, t, &none, &t->live, live_counts);
		t->live.rule_id = 0;
		t->proc.live_triggers = &t->live;
	}
	return 1;
}

int answers__write_dump(void *ctx, void *owner, char *path, size_t len)
{
	return snapshots__write_dump(ctx, owner, NULL, 0, path, len);
}

void answers__target_stats(void *ctx, void *owner, struct rec_clients_target_stats *st)
{
	struct rec_session *s = ctx;
	struct traced *t = owner;
	/* An adopted process's libraries are attached for every process. */
	const struct rec_late_counts *k = rec_attach__late(s->att, t->adopted ? NULL : &t->att);

	st->libraries_failed = k->failed;
	st->libraries_retrying = k->retrying;
	st->libraries_attached_later = k->attached_later;
	st->libraries_given_up = k->given_up;
	st->dumps_removed = s->dumps.removed;
	st->dumps_removed_bytes = s->dumps.removed_bytes;
	st->snapshots_failed = t->snapshots_failed;
	st->snapshots_removed = s->snapshots.removed;
	st->snapshots_removed_bytes = s->snapshots.removed_bytes;
	st->snapshots_made_room = s->room.removed;
	st->snapshots_made_room_bytes = s->room.removed_bytes;
	st->attach_pid = getpid();
	st->binary = t->binary;
}
