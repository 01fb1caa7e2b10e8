// SPDX-License-Identifier: MIT
/* Incidents of one traced process (incident.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "incidents/incident.h"

/* Which kinds of rules in has: what the session holds against them. */
static void kinds(struct rec_incident *in)
{
	in->last_meta = 0;
	in->cs_last = NULL;
	if (in->cs) {
		memset(in->cs, 0, REC_INCIDENT_CS_CACHE * sizeof(in->cs[0]));
		memset(in->cs_quiet1, 0, REC_INCIDENT_CS_CACHE * sizeof(in->cs_quiet1[0]));
	}
	in->span_rules = in->event_rules = in->code_rules = false;
	for (unsigned int i = 0; in->rules && i < in->rules->n; i++) {
		enum rec_trigger_kind k = in->rules->rules[i].rule.kind;

		in->span_rules |= k == REC_TRIGGER_SPAN;
		in->event_rules |= k == REC_TRIGGER_LEVEL || k == REC_TRIGGER_EVENT;
		in->code_rules |= k == REC_TRIGGER_CODE;
	}
}

int rec_incident__init(struct rec_incident *in, const struct rec_trigger_set *rules)
{
	memset(in, 0, sizeof(*in));
	if (!rules || !rules->n)
		return 0;
	in->rules = malloc(sizeof(*in->rules));
	if (!in->rules)
		return -ENOMEM;
	*in->rules = *rules;
	/* Signatures are each process's own. */
	in->rules->sigs = NULL;
	in->rules->folded = in->rules->new_capped = 0;
	kinds(in);
	return 0;
}

/* The firings q held back of rule i: counted in the rules. */
static void quiet_flush(struct rec_incident *in, unsigned int i, struct rec_incident_quiet *q)
{
	struct rec_trigger_sig *g = rec_trigger__hinted_sig(in->rules, i, q->sig);

	if (g && q->n)
		rec_trigger__fire_quiet(in->rules, i, g, q->n, (enum rec_trigger_verdict)q->verdict,
					q->last_ns, q->last_seen_ns);
	q->n = 0;
}

/* The firings the cache entry c holds back, counted. */
static void cs_flush(struct rec_incident *in, struct rec_incident_cs *c)
{
	for (unsigned int i = 0; i < REC_INCIDENT_CS_SIGS; i++) {
		struct rec_incident_quiet *q = rec_incident__cs_quiet(in, c, i);

		if (q->n)
			quiet_flush(in, i, q);
	}
}

void rec_incident__flush(struct rec_incident *in)
{
	if (!in->cs || !in->rules)
		return;
	for (size_t k = 0; k < REC_INCIDENT_CS_CACHE; k++)
		if (in->cs[k].meta)
			cs_flush(in, &in->cs[k]);
}

int rec_incident__add(struct rec_incident *in, const char *text, int64_t cooldown_ns,
		      unsigned int per_hour, char *err, size_t errlen)
{
	int id;

	/* What the cache held back is counted before it is cleared. */
	rec_incident__flush(in);

	if (!in->rules) {
		in->rules = malloc(sizeof(*in->rules));
		if (!in->rules)
			return -ENOMEM;
		rec_trigger__init(in->rules, cooldown_ns, per_hour);
	}
	id = rec_trigger__add(in->rules, text, err, errlen);
	kinds(in);
	return id;
}

int rec_incident__remove(struct rec_incident *in, const char *text, char *err, size_t errlen)
{
	char *end;
	unsigned long id = strtoul(text, &end, 10);
	int at, i;

	if (!in->rules) {
		snprintf(err, errlen, "no trigger rule is '%s'", text);
		return -ENOENT;
	}
	/* Counted while the rules' indexes are the cache's. */
	rec_incident__flush(in);
	at = *text && !*end ? rec_trigger__find(in->rules, (uint32_t)id) : -1;
	if (at < 0 && *text && !*end) {
		snprintf(err, errlen, "no trigger rule has id %s", text);
		return -ENOENT;
	}
	if (at < 0) {
		char canon[REC_TRIGGER_TEXT_MAX];
		struct rec_trigger_rule r;

		if (rec_trigger__parse(text, &r, err, errlen))
			return -EINVAL;
		rec_trigger__format(&r, canon, sizeof(canon));
		at = -1;
		for (unsigned int k = 0; k < in->rules->n; k++)
			if (!strcmp(in->rules->rules[k].text, canon))
				at = (int)k;
	}
	if (at < 0) {
		snprintf(err, errlen, "no trigger rule is '%s'", text);
		return -ENOENT;
	}
	/* The pending snapshots of the rules after it keep their rule: indexes move down. */
	for (size_t k = 0; k < in->npending; k++)
		if (in->pending[k].rule > (unsigned int)at)
			in->pending[k].rule--;
		else if (in->pending[k].rule == (unsigned int)at)
			in->pending[k].rule = REC_INCIDENT_NO_RULE;
	i = rec_trigger__remove(in->rules, in->rules->rules[at].id);
	kinds(in);
	return i;
}

void rec_incident__fini(struct rec_incident *in)
{
	if (in->rules)
		rec_trigger__fini(in->rules);
	free(in->rules);
	free(in->cs);
	free(in->cs_quiet1);
	in->cs = NULL;
	in->cs_quiet1 = NULL;
	in->cs_last = NULL;
	in->rules = NULL;
}

struct rec_incident_pending *rec_incident__fire(struct rec_incident *in, unsigned int i,
						uint64_t key, uint64_t recording, int64_t now_ns,
						int64_t at_ns, int64_t after_ns,
						struct rec_incident_quiet *q,
						struct rec_trigger_sig **sig)
{
	enum rec_trigger_verdict v;
	struct rec_incident_pending *p;
	struct rec_trigger_entry *e;

	*sig = NULL;
	if (!in->rules || i >= in->rules->n)
		return NULL;
	e = &in->rules->rules[i];
	/* A storm's firing that its limiter would refuse again: a count, nothing more. */
	if (q && q->sig && now_ns < q->until) {
		q->n++;
		q->last_ns = at_ns;
		q->last_seen_ns = now_ns;
		if (q->n == UINT32_MAX)
			quiet_flush(in, i, q);
		return NULL;
	}
	if (q && q->n)
		quiet_flush(in, i, q);
	/* Too many waiting already (the cap of what recorder-attach holds at once): capped. */
	v = rec_trigger__fire_hint(in->rules, i, key, now_ns, at_ns,
				   in->npending == REC_INCIDENT_PENDING_MAX, q ? &q->sig : NULL,
				   sig);
	if (q) {
		q->verdict = (uint16_t)v;
		q->until = v != REC_TRIGGER_ADMIT && *sig && q->sig
				   ? rec_trigger__quiet_until(in->rules, *sig, v, now_ns)
				   : 0;
	}
	if (v != REC_TRIGGER_ADMIT)
		return NULL;
	p = &in->pending[in->npending++];
	p->rule = i;
	p->rule_id = e->id;
	snprintf(p->rule_text, sizeof(p->rule_text), "%s", e->text);
	p->recording = recording;
	p->fired_ns = now_ns;
	p->at_ns = at_ns;
	p->due_ns = now_ns + after_ns;
	p->sig_key = key;
	p->sig_id = 0;
	p->sig_text[0] = 0;
	p->what[0] = 0;
	return p;
}

bool rec_incident__open_fired(struct rec_incident *in, uint64_t id, bool remember)
{
	for (size_t i = 0; i < REC_INCIDENT_OPEN_FIRED_MAX; i++)
		if (in->open_fired[i] == id)
			return true;
	if (!remember)
		return false;
	in->open_fired[in->open_next] = id;
	in->open_next = (in->open_next + 1) % REC_INCIDENT_OPEN_FIRED_MAX;
	return false;
}

bool rec_incident__take_due(struct rec_incident *in, int64_t now_ns, bool all,
			    struct rec_incident_pending *out)
{
	for (size_t i = 0; i < in->npending; i++) {
		if (!all && in->pending[i].due_ns > now_ns)
			continue;
		*out = in->pending[i];
		memmove(&in->pending[i], &in->pending[i + 1],
			(in->npending - i - 1) * sizeof(in->pending[0]));
		in->npending--;
		return true;
	}
	return false;
}

bool rec_incident__pins(const struct rec_incident *in, uint64_t recording)
{
	for (size_t i = 0; i < in->npending; i++)
		if (in->pending[i].recording == recording)
			return true;
	return false;
}

bool rec_incident__keep(struct rec_incident *in, uint64_t recording, int64_t now_ns,
			int64_t after_ns, uint32_t rule_id, uint64_t sig_key)
{
	for (size_t i = 0; i < in->nkeep; i++)
		if (in->keep[i].recording == recording)
			return false;
	for (size_t i = 0; i < REC_INCIDENT_OPEN_FIRED_MAX; i++)
		if (recording && in->kept_keys[i] == recording)
			return false;
	if (in->nkeep == REC_INCIDENT_KEEP_MAX) {
		in->keep_dropped++;
		return false;
	}
	in->keep[in->nkeep++] = (struct rec_incident_keep){ .recording = recording,
							    .due_ns = now_ns + after_ns,
							    .sig_key = sig_key,
							    .rule_id = rule_id };
	return true;
}

bool rec_incident__take_keep(struct rec_incident *in, int64_t now_ns, bool all,
			     struct rec_incident_keep *out)
{
	for (size_t i = 0; i < in->nkeep; i++) {
		if (!all && in->keep[i].due_ns > now_ns)
			continue;
		*out = in->keep[i];
		memmove(&in->keep[i], &in->keep[i + 1], (in->nkeep - i - 1) * sizeof(in->keep[0]));
		in->nkeep--;
		in->kept_keys[in->kept_next] = out->recording;
		in->kept_next = (in->kept_next + 1) % REC_INCIDENT_OPEN_FIRED_MAX;
		in->kept++;
		return true;
	}
	return false;
}

uint64_t rec_incident__event_rules(struct rec_incident *in, uint64_t meta,
				   const struct rec_callsite *cs, uint64_t *sure)
{
	uint64_t mask = 0;

	if (rec_incident__cached_rules(in, meta, &mask, sure))
		return mask;
	*sure = 0;
	for (unsigned int i = 0; in->rules && i < in->rules->n && i < 64; i++) {
		const struct rec_trigger_rule *r = &in->rules->rules[i].rule;
		bool may = false;

		/* Unreadable: no level, no message; nothing matches it. */
		if (!cs)
			break;
		if (r->kind == REC_TRIGGER_LEVEL) {
			/* A REC_EVENT_LEVEL event's level is its own: asked per event. */
			may = cs->level == REC_LEVEL_RUNTIME || (int)cs->level >= (int)r->level;
			if (cs->level != REC_LEVEL_RUNTIME && may)
				*sure |= 1ULL << i;
		} else if (r->kind == REC_TRIGGER_EVENT) {
			/* A formatted message is the event's own: asked per event. */
			may = !cs->message[0] || fnmatch(r->glob, cs->message, 0) == 0;
			if (cs->message[0] && may && !r->has_cond)
				*sure |= 1ULL << i;
		}
		if (may)
			mask |= 1ULL << i;
	}
	/* Cached only once its callsite is: the next event of it may find it readable. */
	if (cs) {
		struct rec_incident_cs *c;

		if (!in->cs) {
			/* Each entry a cache line of its own (rec_incident_cs). */
			in->cs = aligned_alloc(64, REC_INCIDENT_CS_CACHE * sizeof(in->cs[0]));
			if (in->cs)
				memset(in->cs, 0, REC_INCIDENT_CS_CACHE * sizeof(in->cs[0]));
			in->cs_quiet1 = calloc(REC_INCIDENT_CS_CACHE, sizeof(in->cs_quiet1[0]));
			if (!in->cs || !in->cs_quiet1) {
				free(in->cs);
				free(in->cs_quiet1);
				in->cs = NULL;
				in->cs_quiet1 = NULL;
				return mask;
			}
		}
		c = rec_incident__cs_of(in, meta);
		if (!c) {
			/* New in its set: first, and the first moves second; the second goes. */
			c = &in->cs[rec_incident__cs_slot(meta)];
			/* What the one that goes held back is counted first. */
			if (c[1].meta)
				cs_flush(in, &c[1]);
			if (c[1].meta == in->last_meta)
				in->last_meta = 0;
			c[1] = c[0];
			*rec_incident__cs_quiet(in, &c[1], 1) = *rec_incident__cs_quiet(in, c, 1);
		} else if (c->meta) {
			cs_flush(in, c);
		}
		*c = (struct rec_incident_cs){ .meta = meta, .mask = mask, .sure = *sure };
		*rec_incident__cs_quiet(in, c, 1) = (struct rec_incident_quiet){ 0 };
		in->cs_last = c;
	}
	return mask;
}
