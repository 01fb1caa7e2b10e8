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

#include "incidents/trigger.h"

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

/*
 * Callsites whose event rules rec_incident__cached_rules() answers without a
 * look: 2^REC_INCIDENT_CS_SET_BITS sets of 2 entries.
 */
#define REC_INCIDENT_CS_SET_BITS 11
#define REC_INCIDENT_CS_CACHE (2u << REC_INCIDENT_CS_SET_BITS)
/* The rules (the first two) whose signature of a callsite its cache entry remembers. */
#define REC_INCIDENT_CS_SIGS 2

/*
 * A rule's signature of a callsite, and its firings held back: while the
 * signature's limiter would say the same again (rec_trigger__quiet_until()),
 * a storm's firing is a count here, and the rules' counts get them at
 * rec_incident__flush() (before anyone reads them) or when it ends.
 */
struct rec_incident_quiet {
	uint32_t sig;		       /* the hint of rec_trigger__fire_hint(); 0: none yet */
	uint16_t verdict;	       /* enum rec_trigger_verdict of those held back */
	uint32_t n;		       /* firings held back */
	int64_t until;		       /* seen: a firing before it is held back */
	int64_t last_ns, last_seen_ns; /* the last held back: its own time, seen */
};

/*
 * What rec_incident.cs holds of a callsite: one cache line. An event of a
 * storm that its first rule holds back reads and writes that line and no
 * other, whichever of thousands of callsites it is of (rule 1's state is in
 * rec_incident.cs_quiet1, beside).
 */
struct rec_incident_cs {
	uint64_t meta; /* 0: empty */
	uint64_t mask;
	uint64_t sure;			 /* of mask, the rules its callsite alone fires */
	struct rec_incident_quiet quiet; /* rule 0's */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct rec_incident_cs) == 64, "a callsite's entry is one cache line");
_Static_assert(REC_INCIDENT_CS_SIGS == 2, "rule 0's state is in the entry, rule 1's beside it");

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
	/*
	 * The answers of rec_incident__event_rules() by callsite, direct-mapped
	 * (NULL until the first): most events come in runs of one callsite, or
	 * cycle through a few (a server's error sites, issue 35).
	 */
	/* The last callsite's answer, here: most events come in runs of one callsite. */
	uint64_t last_meta; /* 0: none */
	uint64_t last_mask, last_sure;
	struct rec_incident_cs *cs;
	struct rec_incident_quiet *cs_quiet1; /* rule 1's of entry cs[k], at k */
	struct rec_incident_cs *cs_last;      /* the last entry found; NULL: none */
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
 * The first of the two slots of rec_incident.cs that the callsite at meta may
 * take (two-way: a few callsites of one set seldom push each other out). The
 * product's top bits: callsites a few dozen bytes apart (one binary's
 * .rodata) spread evenly over the sets.
 */
static inline unsigned int rec_incident__cs_slot(uint64_t meta)
{
	return (unsigned int)((meta * 0x9e3779b97f4a7c15ULL) >> (64 - REC_INCIDENT_CS_SET_BITS)) *
	       2;
}

/*
 * The entry of rec_incident.cs of the callsite at meta (not 0), or NULL. The
 * last one found is asked first: most events come in runs of one callsite.
 */
static inline struct rec_incident_cs *rec_incident__cs_of(struct rec_incident *in, uint64_t meta)
{
	struct rec_incident_cs *c = in->cs_last;

	if (c && c->meta == meta)
		return c;
	if (!in->cs)
		return NULL;
	/* The first entry of its set is read first: most callsites have theirs alone. */
	c = &in->cs[rec_incident__cs_slot(meta)];
	if (c->meta != meta && (++c)->meta != meta)
		return NULL;
	in->cs_last = c;
	return c;
}

/*
 * Starts loading the cache entry of the callsite at meta, for a look a little
 * later: an event ingested meanwhile (its fields normalized) hides the miss
 * of an error storm that cycles through more callsites than the cache of the
 * CPU holds.
 */
static inline void rec_incident__prefetch(const struct rec_incident *in, uint64_t meta)
{
	if (in->cs)
		__builtin_prefetch(&in->cs[rec_incident__cs_slot(meta)], 1);
}

/* What the cache entry c (of in->cs) keeps of rule i < REC_INCIDENT_CS_SIGS. */
static inline struct rec_incident_quiet *
rec_incident__cs_quiet(struct rec_incident *in, struct rec_incident_cs *c, unsigned int i)
{
	return i ? &in->cs_quiet1[c - in->cs] : &c->quiet;
}

/*
 * The answer rec_incident__event_rules() gave for the callsite at meta, if it
 * is still cached (of the last asked of, at most two of a set of slots):
 * then *mask and *sure get it without a look at the callsite, and it returns
 * true.
 */
static inline bool rec_incident__cached_rules(struct rec_incident *in, uint64_t meta,
					      uint64_t *mask, uint64_t *sure)
{
	const struct rec_incident_cs *c;

	if (meta && meta == in->last_meta) {
		*mask = in->last_mask;
		*sure = in->last_sure;
		return true;
	}
	c = meta ? rec_incident__cs_of(in, meta) : NULL;
	if (!c)
		return false;
	/* An answer is the callsite's and the rules': it holds until they change. */
	in->last_meta = meta;
	in->last_mask = *mask = c->mask;
	in->last_sure = *sure = c->sure;
	return true;
}

/*
 * Rule i fired in recording at now_ns, on key (its signature, trigger.h), an
 * event or span of its own time at_ns (quiet: NULL, or what the callsite's
 * cache entry keeps of rule i, rec_incident__quiet()): asks its limiter (and,
 * with REC_INCIDENT_PENDING_MAX snapshots waiting, counts it capped); or,
 * while quiet says its limiter would say no again, only counts it there.
 * *sig gets the signature (NULL: none, or held back), for the caller to name
 * if new (id 0). Returns the snapshot now pending, due after_ns later, for
 * the caller to say in its what on what it fired and to copy the signature's
 * name into; NULL if none is. A storm of firings costs a count each: only an
 * admitted one is described.
 */
struct rec_incident_pending *rec_incident__fire(struct rec_incident *in, unsigned int i,
						uint64_t key, uint64_t recording, int64_t now_ns,
						int64_t at_ns, int64_t after_ns,
						struct rec_incident_quiet *quiet,
						struct rec_trigger_sig **sig);
/*
 * What the cache of event rules keeps of rule i and the callsite at meta (its
 * signature, its firings held back), or NULL if it keeps nothing.
 */
static inline struct rec_incident_quiet *rec_incident__quiet(struct rec_incident *in, uint64_t meta,
							     unsigned int i)
{
	struct rec_incident_cs *c;

	if (!meta || i >= REC_INCIDENT_CS_SIGS)
		return NULL;
	c = rec_incident__cs_of(in, meta);
	return c ? rec_incident__cs_quiet(in, c, i) : NULL;
}
/*
 * A storm's event of the callsite at meta, which every rule of mask (each
 * sure of it) fires: if each would only hold it back now (the first test of
 * rec_incident__fire(), at now_ns, the event's own time at_ns), each counts
 * it so and this returns true, at the cost of one look in the cache. False,
 * with nothing counted, if one may do more: an --otlp-keep rule, a rule past
 * the cache's first REC_INCIDENT_CS_SIGS, or one whose limiter is to be asked.
 */
static inline bool rec_incident__held_back(struct rec_incident *in, uint64_t meta, uint64_t mask,
					   int64_t now_ns, int64_t at_ns)
{
	struct rec_incident_cs *c;

	if (!meta || !mask || mask >> REC_INCIDENT_CS_SIGS || !in->rules)
		return false;
	c = rec_incident__cs_of(in, meta);
	if (!c)
		return false;
	for (unsigned int i = 0; i < REC_INCIDENT_CS_SIGS; i++) {
		const struct rec_incident_quiet *q;

		if (!(mask >> i & 1))
			continue;
		q = rec_incident__cs_quiet(in, c, i);
		/* n stays below UINT32_MAX here: rec_incident__fire() flushes it there. */
		if (i >= in->rules->n || in->rules->rules[i].keep || !q->sig ||
		    now_ns >= q->until || q->n >= UINT32_MAX - 1)
			return false;
	}
	for (unsigned int i = 0; i < REC_INCIDENT_CS_SIGS; i++) {
		struct rec_incident_quiet *q;

		if (!(mask >> i & 1))
			continue;
		q = rec_incident__cs_quiet(in, c, i);
		q->n++;
		q->last_ns = at_ns;
		q->last_seen_ns = now_ns;
	}
	return true;
}

/* Counts every firing held back (rec_incident__fire()) in the rules: before their counts are read. */
void rec_incident__flush(struct rec_incident *in);

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
