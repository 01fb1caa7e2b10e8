// SPDX-License-Identifier: MIT
/*
 * Incident triggers (trigger.h): a set of rules with stable ids, their
 * signatures and the limiter. One rule, its text and what it matches are
 * trigger.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "incidents/trigger.h"

/* Slots of a set's signature index: a power of two, over twice the signatures. */
#define SIG_SLOTS 4096
_Static_assert(SIG_SLOTS >= 2 * (REC_TRIGGER_SIGNATURES_MAX + REC_TRIGGER_MAX_RULES),
	       "the signature index is at most half full");

/* A slot of the index: what a probe compares is in the slot (4 slots a cache line). */
struct sig_slot {
	uint64_t key;
	uint32_t rule_id;
	uint32_t at; /* an index into v, plus 1; 0: empty */
};

/* The most a table holds: its signatures and a fold for each rule. */
#define SIG_MAX (REC_TRIGGER_SIGNATURES_MAX + REC_TRIGGER_MAX_RULES)

/* A signature's cold part (rec_trigger_sig points into it). */
struct sig_cold {
	char text[REC_TRIGGER_SIG_TEXT_MAX];
	char first_path[REC_TRIGGER_SIG_PATH_MAX];
	int64_t admitted[REC_TRIGGER_SIG_PER_HOUR_MAX];
};

/*
 * v and cold are reserved whole (SIG_MAX each) and never move: calloc maps
 * them, and only the pages of the signatures made are ever touched.
 */
struct rec_trigger_sigs {
	size_t n;
	size_t nfolds;		   /* of n, rules' folds */
	struct rec_trigger_sig *v; /* in the order first seen */
	struct sig_cold *cold;	   /* v[i]'s is cold[i] */
	struct sig_slot slot[SIG_SLOTS];
};

int rec_trigger__init(struct rec_trigger_set *s, int64_t cooldown_ns, unsigned int per_hour)
{
	if (cooldown_ns < 0 || per_hour > REC_TRIGGER_PER_HOUR_MAX)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->cooldown_ns = cooldown_ns;
	s->per_hour = per_hour;
	return 0;
}

int rec_trigger__limit_signatures(struct rec_trigger_set *s, unsigned int per_hour)
{
	if (per_hour > REC_TRIGGER_SIG_PER_HOUR_MAX)
		return -EINVAL;
	s->sig_per_hour = per_hour;
	return 0;
}

void rec_trigger__fini(struct rec_trigger_set *s)
{
	if (s->sigs) {
		free(s->sigs->v);
		free(s->sigs->cold);
	}
	free(s->sigs);
	s->sigs = NULL;
	for (unsigned int i = 0; i < s->n; i++)
		s->rules[i].last_sig = 0;
}

static unsigned int sig_hash(uint32_t rule_id, uint64_t key)
{
	uint64_t h = (key ^ ((uint64_t)rule_id << 48 | rule_id)) * 0x9e3779b97f4a7c15ULL;

	return (unsigned int)(h >> 40) & (SIG_SLOTS - 1);
}

/* The slot of rule_id and key in t: its own, or the empty one where it would go. */
static struct sig_slot *sig_slot(const struct rec_trigger_sigs *t, uint32_t rule_id, uint64_t key)
{
	unsigned int h = sig_hash(rule_id, key);

	for (;; h = (h + 1) & (SIG_SLOTS - 1)) {
		const struct sig_slot *sl = &t->slot[h];

		if (!sl->at || (sl->key == key && sl->rule_id == rule_id))
			return (struct sig_slot *)sl;
	}
}

/* Points v[i] of t at its cold part. */
static void sig_point(struct rec_trigger_sigs *t, size_t i)
{
	t->v[i].text = t->cold[i].text;
	t->v[i].first_path = t->cold[i].first_path;
	t->v[i].admitted = t->cold[i].admitted;
}

/* Makes a signature of rule_id and key in t, at slot. Returns its index, or -ENOSPC. */
static int sig_add(struct rec_trigger_sigs *t, struct sig_slot *slot, uint32_t rule_id,
		   uint64_t key)
{
	if (t->n == SIG_MAX)
		return -ENOSPC;
	memset(&t->v[t->n], 0, sizeof(t->v[0]));
	memset(&t->cold[t->n], 0, sizeof(t->cold[0]));
	t->v[t->n].key = key;
	t->v[t->n].rule_id = rule_id;
	sig_point(t, t->n);
	*slot = (struct sig_slot){ .key = key, .rule_id = rule_id, .at = (uint32_t)++t->n };
	return (int)(t->n - 1);
}

/* A new table, or NULL. */
static struct rec_trigger_sigs *sigs_new(void)
{
	struct rec_trigger_sigs *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->v = calloc(SIG_MAX, sizeof(*t->v));
	t->cold = calloc(SIG_MAX, sizeof(*t->cold));
	if (!t->v || !t->cold) {
		free(t->v);
		free(t->cold);
		free(t);
		return NULL;
	}
	return t;
}

static void name_sig(const char *rule, struct rec_trigger_sig *g, const char *text);

/*
 * The signature of rule e and key, made if new: the rule's fold if the table
 * is full (counted in folded). NULL: no memory.
 */
static struct rec_trigger_sig *sig_of(struct rec_trigger_set *s, struct rec_trigger_entry *e,
				      uint64_t key)
{
	struct rec_trigger_sigs *t = s->sigs;
	struct sig_slot *slot;
	int at;

	/* Most firings come in runs of one signature a rule. */
	if (e->last_sig && e->last_key == key)
		return &t->v[e->last_sig - 1];
	if (!t) {
		t = s->sigs = sigs_new();
		if (!t)
			return NULL;
	}
	slot = sig_slot(t, e->id, key);
	if (!slot->at) {
		if (key != REC_TRIGGER_SIG_FOLD && t->n - t->nfolds >= REC_TRIGGER_SIGNATURES_MAX) {
			s->folded++;
			slot = sig_slot(t, e->id, REC_TRIGGER_SIG_FOLD);
			key = REC_TRIGGER_SIG_FOLD;
		}
	}
	if (!slot->at) {
		at = sig_add(t, slot, e->id, key);
		if (at < 0)
			return NULL;
		if (key == REC_TRIGGER_SIG_FOLD) {
			char text[64];

			t->nfolds++;
			snprintf(text, sizeof(text), "(signatures past the %d a process holds)",
				 REC_TRIGGER_SIGNATURES_MAX);
			name_sig(e->text, &t->v[at], text);
		}
	}
	/* A fold is asked again each time: it stands for many keys. */
	if (key != REC_TRIGGER_SIG_FOLD) {
		e->last_key = key;
		e->last_sig = slot->at;
	}
	return &t->v[slot->at - 1];
}

/* Rebuilds s's index after its signatures moved; every rule's last one is forgotten. */
static void sig_reindex(struct rec_trigger_set *s)
{
	struct rec_trigger_sigs *t = s->sigs;

	for (unsigned int i = 0; i < s->n; i++)
		s->rules[i].last_sig = 0;
	if (!t)
		return;
	memset(t->slot, 0, sizeof(t->slot));
	for (size_t i = 0; i < t->n; i++)
		*sig_slot(t, t->v[i].rule_id, t->v[i].key) = (struct sig_slot){
			.key = t->v[i].key, .rule_id = t->v[i].rule_id, .at = (uint32_t)(i + 1)
		};
}

/* Drops the signatures of rule rule_id, keeping the others' order. */
static void sig_drop_rule(struct rec_trigger_set *s, uint32_t rule_id)
{
	struct rec_trigger_sigs *t = s->sigs;
	size_t k = 0;

	for (size_t i = 0; t && i < t->n; i++) {
		if (t->v[i].rule_id != rule_id) {
			t->v[k] = t->v[i];
			t->cold[k] = t->cold[i];
			sig_point(t, k++);
		} else if (t->v[i].key == REC_TRIGGER_SIG_FOLD) {
			t->nfolds--;
		}
	}
	if (t)
		t->n = k;
	sig_reindex(s);
}

struct rec_trigger_sig *rec_trigger__find_sig(const struct rec_trigger_set *s, uint32_t rule_id,
					      uint64_t key)
{
	struct sig_slot *slot;

	if (!s->sigs)
		return NULL;
	slot = sig_slot(s->sigs, rule_id, key);
	return slot->at ? &s->sigs->v[slot->at - 1] : NULL;
}

const struct rec_trigger_sig *rec_trigger__sig_at(const struct rec_trigger_set *s, size_t i)
{
	return s->sigs && i < s->sigs->n ? &s->sigs->v[i] : NULL;
}

size_t rec_trigger__nsigs(const struct rec_trigger_set *s)
{
	return s->sigs ? s->sigs->n : 0;
}

/* Names g, a signature of the rule of canonical text rule (trigger.h, rec_trigger__name_sig()). */
static void name_sig(const char *rule, struct rec_trigger_sig *g, const char *text)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *p = rule; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	h = (h ^ '\n') * 0x100000001b3ULL;
	snprintf(g->text, REC_TRIGGER_SIG_TEXT_MAX, "%s", text);
	for (const char *p = g->text; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	h >>= 64 - REC_TRIGGER_SIG_ID_BITS;
	g->id = h ? h : 1;
}

void rec_trigger__name_sig(struct rec_trigger_set *s, unsigned int rule_index,
			   struct rec_trigger_sig *sig, const char *text)
{
	name_sig(rule_index < s->n ? s->rules[rule_index].text : "", sig, text);
}

static int find_text(const struct rec_trigger_set *s, const char *text)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (!strcmp(s->rules[i].text, text))
			return (int)i;
	return -ENOENT;
}

int rec_trigger__add(struct rec_trigger_set *s, const char *text, char *err, size_t errlen)
{
	struct rec_trigger_entry *e;
	struct rec_trigger_rule r;
	char canon[REC_TRIGGER_TEXT_MAX];
	int ret, i;

	ret = rec_trigger__parse(text, &r, err, errlen);
	if (ret)
		return ret;
	if (rec_trigger__format(&r, canon, sizeof(canon)))
		return rec_cond__fail(err, errlen, "rule '%s' cannot be written back", text);
	i = find_text(s, canon);
	if (i >= 0) {
		if (errlen)
			snprintf(err, errlen, "rule '%s' is already set (id %" PRIu32 ")", canon,
				 s->rules[i].id);
		return -EEXIST;
	}
	if (s->n >= REC_TRIGGER_MAX_RULES) {
		if (errlen)
			snprintf(err, errlen, "no room for rule '%s': %d rules already", canon,
				 REC_TRIGGER_MAX_RULES);
		return -ENOSPC;
	}
	e = &s->rules[s->n++];
	*e = (struct rec_trigger_entry){ .id = ++s->last_id, .rule = r };
	memcpy(e->text, canon, sizeof(e->text));
	return (int)e->id;
}

int rec_trigger__find(const struct rec_trigger_set *s, uint32_t id)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (s->rules[i].id == id)
			return (int)i;
	return -ENOENT;
}

static void remove_at(struct rec_trigger_set *s, unsigned int i)
{
	memmove(&s->rules[i], &s->rules[i + 1], (s->n - i - 1) * sizeof(s->rules[0]));
	s->n--;
}

int rec_trigger__remove(struct rec_trigger_set *s, uint32_t id)
{
	int i = rec_trigger__find(s, id);

	if (i < 0)
		return i;
	remove_at(s, (unsigned int)i);
	sig_drop_rule(s, id);
	return 0;
}

int rec_trigger__remove_text(struct rec_trigger_set *s, const char *text)
{
	struct rec_trigger_rule r;
	char canon[REC_TRIGGER_TEXT_MAX];
	int i;

	if (rec_trigger__parse(text, &r, NULL, 0) || rec_trigger__format(&r, canon, sizeof(canon)))
		return -ENOENT;
	i = find_text(s, canon);
	if (i < 0)
		return i;
	return rec_trigger__remove(s, s->rules[i].id);
}

const struct rec_trigger_entry *rec_trigger__at(const struct rec_trigger_set *s, unsigned int i)
{
	return i < s->n ? &s->rules[i] : NULL;
}

/* Whether a ring of per_hour admissions (at head, n of them) has room at now_ns; drops the old. */
static bool hour_has_room(const int64_t *ring, unsigned int per_hour, unsigned int *head,
			  unsigned int *n, int64_t now_ns)
{
	/* Those admitted an hour ago or more have left the window. */
	while (*n && now_ns - ring[*head] >= REC_TRIGGER_WINDOW_NS) {
		*head = (*head + 1) % per_hour;
		(*n)--;
	}
	return *n < per_hour;
}

enum rec_trigger_verdict rec_trigger__fire(struct rec_trigger_set *s, unsigned int rule_index,
					   uint64_t key, int64_t seen_ns, int64_t at_ns,
					   bool no_room, struct rec_trigger_sig **sigp)
{
	return rec_trigger__fire_hint(s, rule_index, key, seen_ns, at_ns, no_room, NULL, sigp);
}

enum rec_trigger_verdict rec_trigger__fire_hint(struct rec_trigger_set *s, unsigned int rule_index,
						uint64_t key, int64_t seen_ns, int64_t at_ns,
						bool no_room, uint32_t *hint,
						struct rec_trigger_sig **sigp)
{
	struct rec_trigger_entry *e = &s->rules[rule_index];
	struct rec_trigger_sigs *t = s->sigs;
	struct rec_trigger_sig *g = NULL;

	/* The caller's hint: one look at the signature, no index. */
	if (hint && *hint && t && *hint <= t->n) {
		g = &t->v[*hint - 1];
		if (g->key != key || g->rule_id != e->id)
			g = NULL;
	}
	if (!g) {
		g = sig_of(s, e, key);
		if (hint && g && g->key == key)
			*hint = (uint32_t)(g - s->sigs->v) + 1;
	}
	unsigned int head, n;
	bool room;

	if (sigp)
		*sigp = g;
	e->count.fired++;
	if (!g) {
		e->count.capped++;
		return REC_TRIGGER_CAP;
	}
	if (!g->count.fired++) {
		g->first_ns = at_ns;
		g->first_seen_ns = seen_ns;
	}
	g->last_ns = at_ns;
	g->last_seen_ns = seen_ns;
	if (s->cooldown_ns && g->admitted_before &&
	    seen_ns - g->last_admitted_ns < s->cooldown_ns) {
		e->count.cooldown++;
		g->count.cooldown++;
		return REC_TRIGGER_COOLDOWN;
	}
	head = g->head;
	n = g->nadmitted;
	room = !no_room && (!s->sig_per_hour ||
			    hour_has_room(g->admitted, s->sig_per_hour, &head, &n, seen_ns));
	g->head = (uint8_t)head;
	g->nadmitted = (uint8_t)n;
	if (room && s->per_hour)
		room = hour_has_room(s->admitted, s->per_hour, &s->head, &s->nadmitted, seen_ns);
	if (!room) {
		/* The set's cap (or no room) kept a new signature from its first snapshot. */
		if (!g->count.admitted && !g->count.capped) {
			s->new_capped++;
			e->count.new_capped++;
			g->count.new_capped++;
		}
		e->count.capped++;
		g->count.capped++;
		return REC_TRIGGER_CAP;
	}
	if (s->sig_per_hour)
		g->admitted[(g->head + g->nadmitted++) % s->sig_per_hour] = seen_ns;
	if (s->per_hour)
		s->admitted[(s->head + s->nadmitted++) % s->per_hour] = seen_ns;
	g->admitted_before = true;
	g->last_admitted_ns = seen_ns;
	e->count.admitted++;
	g->count.admitted++;
	return REC_TRIGGER_ADMIT;
}

int64_t rec_trigger__quiet_until(const struct rec_trigger_set *s, const struct rec_trigger_sig *g,
				 enum rec_trigger_verdict v, int64_t seen_ns)
{
	int64_t until = seen_ns;

	if (v == REC_TRIGGER_COOLDOWN)
		return g->last_admitted_ns + s->cooldown_ns;
	if (v != REC_TRIGGER_CAP)
		return seen_ns;
	/* Each cap that is full frees its first place an hour after its oldest. */
	if (s->sig_per_hour && g->nadmitted >= s->sig_per_hour &&
	    g->admitted[g->head] + REC_TRIGGER_WINDOW_NS > until)
		until = g->admitted[g->head] + REC_TRIGGER_WINDOW_NS;
	if (s->per_hour && s->nadmitted >= s->per_hour &&
	    s->admitted[s->head] + REC_TRIGGER_WINDOW_NS > until)
		until = s->admitted[s->head] + REC_TRIGGER_WINDOW_NS;
	return until;
}

void rec_trigger__fire_quiet(struct rec_trigger_set *s, unsigned int rule_index,
			     struct rec_trigger_sig *g, uint64_t n, enum rec_trigger_verdict v,
			     int64_t last_ns, int64_t last_seen_ns)
{
	struct rec_trigger_entry *e = &s->rules[rule_index];

	e->count.fired += n;
	g->count.fired += n;
	if (v == REC_TRIGGER_COOLDOWN) {
		e->count.cooldown += n;
		g->count.cooldown += n;
	} else {
		e->count.capped += n;
		g->count.capped += n;
	}
	g->last_ns = last_ns;
	g->last_seen_ns = last_seen_ns;
}

struct rec_trigger_sig *rec_trigger__hinted_sig(const struct rec_trigger_set *s,
						unsigned int rule_index, uint32_t hint)
{
	struct rec_trigger_sig *g;

	if (!hint || !s->sigs || hint > s->sigs->n || rule_index >= s->n)
		return NULL;
	g = &s->sigs->v[hint - 1];
	return g->rule_id == s->rules[rule_index].id ? g : NULL;
}

enum rec_trigger_verdict rec_trigger__admit(struct rec_trigger_set *s, unsigned int rule_index,
					    int64_t now_ns)
{
	return rec_trigger__fire(s, rule_index, 0, now_ns, now_ns, false, NULL);
}

void rec_trigger__report(struct rec_trigger_set *s, unsigned int rule_index, uint64_t key, int err,
			 const char *path)
{
	struct rec_trigger_entry *e = &s->rules[rule_index];
	struct rec_trigger_sig *g = rec_trigger__find_sig(s, e->id, key);

	if (!g)
		g = rec_trigger__find_sig(s, e->id, REC_TRIGGER_SIG_FOLD);
	if (err) {
		e->count.failed++;
		if (g)
			g->count.failed++;
		return;
	}
	e->count.saved++;
	if (!g)
		return;
	if (!g->count.saved && path)
		snprintf(g->first_path, REC_TRIGGER_SIG_PATH_MAX, "%s", path);
	g->count.saved++;
}
