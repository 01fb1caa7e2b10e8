/* SPDX-License-Identifier: MIT */
/*
 * Incidents of one traced process (issue 23): its trigger rules (a copy of
 * recorder-attach's --trigger rules, with their counts and limiter), and the
 * snapshots that rules fired and admitted, each due --trigger-after later.
 * Pure bookkeeping: the session matches what it ingests against the rules,
 * asks here whether a firing is admitted, and writes what is due.
 */
#ifndef REC_INCIDENT_H
#define REC_INCIDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trigger.h"

/* What a fired trigger said it was, for the snapshot and the stderr line. */
#define REC_INCIDENT_WHAT_MAX 192

/* The rule of a pending snapshot whose rule was removed since. */
#define REC_INCIDENT_NO_RULE (~0u)

/* A snapshot a rule fired and its limiter admitted, to be written when due. */
struct rec_incident_pending {
	unsigned int rule; /* its index in the rule set; REC_INCIDENT_NO_RULE: removed */
	uint32_t rule_id;
	char rule_text[REC_TRIGGER_TEXT_MAX];
	uint64_t recording; /* the recording it fired in; 0: none */
	int64_t fired_ns;   /* CLOCK_MONOTONIC: when recorder-attach saw it fire */
	int64_t at_ns;	    /* CLOCK_MONOTONIC: its event's or span's own time */
	int64_t due_ns;	    /* CLOCK_MONOTONIC: fired_ns + --trigger-after */
	/* Its signature (trigger.h): the key it fired on, and its short id and text once named. */
	uint64_t sig_key;
	uint64_t sig_id;
	char sig_text[REC_TRIGGER_SIG_TEXT_MAX];
	char what[REC_INCIDENT_WHAT_MAX];
};

/* The most snapshots waiting for their --trigger-after at once; past it a firing is capped. */
#define REC_INCIDENT_PENDING_MAX 64
/* The open spans remembered as fired already (a span fires once while open). */
#define REC_INCIDENT_OPEN_FIRED_MAX 256

/* The recordings an --otlp-keep rule fired on, exported when due (at most this many waiting). */
#define REC_INCIDENT_KEEP_MAX 1024

struct rec_incident_keep {
	uint64_t recording;
	int64_t due_ns;
	uint64_t sig_key; /* the signature that kept it (trigger.h), for the export to name */
	uint32_t rule_id;
};

struct rec_incident {
	/* What every event touches first, together. */
	struct rec_trigger_set *rules; /* NULL: no rules */
	bool span_rules, event_rules, code_rules;
	/* The last callsite's events asked of (rec_incident__event_rules): most come in runs. */
	uint64_t cs_meta;
	uint64_t cs_mask;
	uint64_t cs_sure; /* of cs_mask, the rules its callsite alone fires */
	size_t npending;
	struct rec_incident_pending pending[REC_INCIDENT_PENDING_MAX];
	uint64_t open_fired[REC_INCIDENT_OPEN_FIRED_MAX]; /* span ids, a ring */
	size_t open_next;
	/* --otlp-keep: recordings waiting to be exported, and the counts of the export. */
	struct rec_incident_keep keep[REC_INCIDENT_KEEP_MAX];
	size_t nkeep;
	uint64_t kept;	       /* recordings exported */
	uint64_t keep_dropped; /* recordings a keep rule fired on that did not fit in keep */
	uint64_t kept_keys[REC_INCIDENT_OPEN_FIRED_MAX]; /* the last ones, not kept twice */
	size_t kept_next;
};

/*
 * Sets in up with a copy of rules (NULL or empty: none). Returns 0 or -ENOMEM.
 */
int rec_incident__init(struct rec_incident *in, const struct rec_trigger_set *rules);
void rec_incident__fini(struct rec_incident *in);

/*
 * The level and event rules that an event of callsite cs (at address meta; NULL
 * if it could not be read) may fire, as a mask of rule indexes: a rule whose
 * level or message glob its callsite rules out is left out, so that most
 * events cost one compare. *sure gets those of them that the callsite alone
 * fires (a fixed level; a literal message and no condition): only the other
 * bits ask for the event's own fields.
 */
uint64_t rec_incident__event_rules(struct rec_incident *in, uint64_t meta,
				   const struct rec_callsite *cs, uint64_t *sure);

/*
 * The answer rec_incident__event_rules() gave for the callsite at meta, if it
 * was the last one asked of (most events come in runs of one callsite): then
 * *mask and *sure get it without a look at the callsite, and it returns true.
 */
static inline bool rec_incident__cached_rules(const struct rec_incident *in, uint64_t meta,
					      uint64_t *mask, uint64_t *sure)
{
	if (!meta || meta != in->cs_meta)
		return false;
	*mask = in->cs_mask;
	*sure = in->cs_sure;
	return true;
}

/*
 * Rule i fired in recording at now_ns, on key (its signature, trigger.h), an
 * event or span of its own time at_ns: asks its limiter (and, with
 * REC_INCIDENT_PENDING_MAX snapshots waiting, counts it capped). *sig gets the
 * signature (NULL: none), for the caller to name if new (id 0). Returns the
 * snapshot now pending, due after_ns later, for the caller to say in its what
 * on what it fired and to copy the signature's name into; NULL if none is. A
 * storm of firings costs a count each: only an admitted one is described.
 */
struct rec_incident_pending *rec_incident__fire(struct rec_incident *in, unsigned int i,
						uint64_t key, uint64_t recording, int64_t now_ns,
						int64_t at_ns, int64_t after_ns,
						struct rec_trigger_sig **sig);

/* Whether the open span id fired already; with remember, it has from now on. */
bool rec_incident__open_fired(struct rec_incident *in, uint64_t id, bool remember);

/*
 * Takes the first pending snapshot due at now_ns (all of them with all) into
 * *out. Returns false if none is.
 */
bool rec_incident__take_due(struct rec_incident *in, int64_t now_ns, bool all,
			    struct rec_incident_pending *out);

/*
 * Adds rule text to in (its first rule makes a set with cooldown_ns and
 * per_hour). Returns the rule's id, or -EINVAL (err says why), -EEXIST,
 * -ENOSPC or -ENOMEM.
 */
int rec_incident__add(struct rec_incident *in, const char *text, int64_t cooldown_ns,
		      unsigned int per_hour, char *err, size_t errlen);

/*
 * Removes the rule whose id (a decimal number) or canonical text is text; its
 * pending snapshots are still written. Returns 0, -ENOENT or -EINVAL.
 */
int rec_incident__remove(struct rec_incident *in, const char *text, char *err, size_t errlen);

/*
 * An --otlp-keep rule (rule_id) fired in recording at now_ns, on the
 * signature of sig_key: it is to be exported after_ns later, once. Returns true if it was not waiting or kept already.
 */
bool rec_incident__keep(struct rec_incident *in, uint64_t recording, int64_t now_ns,
			int64_t after_ns, uint32_t rule_id, uint64_t sig_key);

/* Takes the first recording to export due at now_ns (all with all) into *out. */
bool rec_incident__take_keep(struct rec_incident *in, int64_t now_ns, bool all,
			     struct rec_incident_keep *out);

/* Whether recording has a snapshot pending (its recording is pinned until then). */
bool rec_incident__pins(const struct rec_incident *in, uint64_t recording);

#endif /* REC_INCIDENT_H */
