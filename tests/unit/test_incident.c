// SPDX-License-Identifier: MIT
/*
 * rec_incident (incident.h): the firings a callsite's cache entry holds back
 * while their signature's limiter would refuse them again are counted exactly
 * as the limiter would have counted them, and never hold back one it would
 * have admitted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "incidents/incident.h"

#define SEC 1000000000LL
#define NSITES 39

static struct rec_incident *new_incident(int64_t cooldown_ns, unsigned int per_hour,
					 unsigned int sig_per_hour)
{
	struct rec_incident *in = calloc(1, sizeof(*in));
	char err[256];

	assert_non_null(in);
	assert_int_equal(rec_incident__init(in, NULL), 0);
	assert_int_equal(
		rec_incident__add(in, "level>=error", cooldown_ns, per_hour, err, sizeof(err)), 1);
	assert_int_equal(
		rec_incident__add(in, "event:boom*", cooldown_ns, per_hour, err, sizeof(err)), 2);
	assert_int_equal(rec_trigger__limit_signatures(in->rules, sig_per_hour), 0);
	return in;
}

static void assert_same_counts(const struct rec_trigger_counts *a,
			       const struct rec_trigger_counts *b)
{
	assert_int_equal(a->fired, b->fired);
	assert_int_equal(a->admitted, b->admitted);
	assert_int_equal(a->cooldown, b->cooldown);
	assert_int_equal(a->capped, b->capped);
	assert_int_equal(a->new_capped, b->new_capped);
}

/* held (the cache's) against plain (no cache): after a flush, every count the same. */
static void assert_same(struct rec_incident *held, struct rec_incident *plain)
{
	const struct rec_trigger_sig *g, *h;

	rec_incident__flush(held);
	for (unsigned int i = 0; i < 2; i++)
		assert_same_counts(&rec_trigger__at(held->rules, i)->count,
				   &rec_trigger__at(plain->rules, i)->count);
	assert_int_equal(rec_trigger__nsigs(held->rules), rec_trigger__nsigs(plain->rules));
	for (size_t k = 0; (g = rec_trigger__sig_at(held->rules, k)); k++) {
		h = rec_trigger__sig_at(plain->rules, k);
		assert_true(g->key == h->key && g->rule_id == h->rule_id);
		assert_same_counts(&g->count, &h->count);
		assert_int_equal(g->last_ns, h->last_ns);
		assert_int_equal(g->last_seen_ns, h->last_seen_ns);
	}
	assert_int_equal(held->rules->new_capped, plain->rules->new_capped);
}

/*
 * Random storms over 39 callsites (three by three in a set of the two-way
 * cache, so that one pushes another out), for hours: the verdicts and the counts are the same
 * with the cache holding firings back and without. An event that every rule
 * would only hold back is counted by rec_incident__held_back() alone, as the
 * event path does.
 */
static void storm(int64_t cooldown_ns, unsigned int per_hour, unsigned int sig_per_hour)
{
	struct rec_incident *held = new_incident(cooldown_ns, per_hour, sig_per_hour);
	struct rec_incident *plain = new_incident(cooldown_ns, per_hour, sig_per_hour);
	struct rec_callsite cs = { .kind = 'E', .level = REC_LEVEL_ERROR, .message = "boom!" };
	struct rec_incident_pending p;
	uint64_t metas[NSITES], seed = 7;
	unsigned int nheld = 0, nfast = 0;
	int64_t t = 100 * SEC;

	/* The sites three by three in one set of the two-way cache: one pushes another out. */
	for (int k = 0, m = 0x10000; k < NSITES; m += 64) {
		unsigned int slot = rec_incident__cs_slot((uint64_t)m);
		bool taken = false;

		for (int j = 0; j < k; j++)
			taken |= rec_incident__cs_slot(metas[j]) == slot;
		if ((k % 3 == 0 && !taken) ||
		    (k % 3 != 0 && rec_incident__cs_slot(metas[k - k % 3]) == slot))
			metas[k++] = (uint64_t)m;
	}
	for (int step = 0; step < 300000; step++) {
		uint64_t meta, mask, sure, mask2, sure2;
		struct rec_trigger_sig *g;
		bool fast;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		/* Storms: mostly one site at a time, at times a jump of minutes. */
		meta = metas[(seed >> 33) % (step % 1000 < 500 ? 3 : NSITES)];
		t += (seed >> 45) % 100 == 0 ? (int64_t)((seed >> 20) % (600 * SEC / SEC)) * SEC
					     : (int64_t)((seed >> 40) % 4096) * 1000;
		mask = rec_incident__event_rules(held, meta, &cs, &sure);
		mask2 = rec_incident__event_rules(plain, meta, &cs, &sure2);
		assert_true(mask == 3 && mask2 == 3 && sure == 3);
		fast = rec_incident__held_back(held, meta, mask, t, t - 5);
		nfast += fast;
		for (unsigned int i = 0; i < 2; i++) {
			struct rec_incident_quiet *q = rec_incident__quiet(held, meta, i);
			bool a, b;

			assert_true(q || i >= REC_INCIDENT_CS_SIGS);
			nheld += q && q->sig && t < q->until;
			a = !fast &&
			    rec_incident__fire(held, i, meta, 1, t, t - 5, 0, q, &g) != NULL;
			b = rec_incident__fire(plain, i, meta, 1, t, t - 5, 0, NULL, &g) != NULL;
			assert_int_equal(a, b);
		}
		while (rec_incident__take_due(held, t, true, &p))
			;
		while (rec_incident__take_due(plain, t, true, &p))
			;
		if (step % 9973 == 0)
			assert_same(held, plain);
	}
	assert_same(held, plain);
	/* The cache did hold most back, and the limiters did say each thing. */
	assert_true(nheld > 200000);
	assert_true(nfast > 100000);
	assert_true(rec_trigger__at(plain->rules, 0)->count.cooldown > 0);
	assert_true(!per_hour || rec_trigger__at(plain->rules, 0)->count.capped > 0);
	assert_true(rec_trigger__at(plain->rules, 0)->count.admitted > 10);
	rec_incident__fini(held);
	rec_incident__fini(plain);
	free(held);
	free(plain);
}

static void held_back_firings_count_as_the_limiter_would(void **state)
{
	(void)state;
	/* Caps that bind, and a cooldown that ends into them. */
	storm(7 * SEC, 5, 3);
	/* No cap: every cooldown's end is an admission. */
	storm(2 * SEC, 0, 0);
	/* A cooldown shorter than a storm's gaps, the set's cap only. */
	storm(SEC / 1000, 60, 0);
}

/* Rules added and removed: what was held back is counted before the indexes move. */
static void held_back_firings_survive_a_rule_removed(void **state)
{
	struct rec_incident *in = new_incident(7 * SEC, 5, 3);
	struct rec_callsite cs = { .kind = 'E', .level = REC_LEVEL_ERROR, .message = "boom!" };
	struct rec_trigger_sig *g;
	uint64_t sure;
	char err[256];

	(void)state;
	rec_incident__event_rules(in, 0x5000, &cs, &sure);
	for (int k = 0; k < 1000; k++)
		for (unsigned int i = 0; i < 2; i++)
			rec_incident__fire(in, i, 0x5000, 1, SEC + k, SEC, 0,
					   rec_incident__quiet(in, 0x5000, i), &g);
	assert_int_equal(rec_incident__remove(in, "1", err, sizeof(err)), 0);
	rec_incident__flush(in);
	assert_int_equal(rec_trigger__at(in->rules, 0)->count.fired, 1000);
	assert_int_equal(rec_trigger__at(in->rules, 0)->count.cooldown, 999);
	assert_int_equal(rec_trigger__find_sig(in->rules, 2, 0x5000)->count.fired, 1000);
	rec_incident__fini(in);
	free(in);
}

/*
 * 2,000 error callsites laid out as a binary's .rodata lays them (literals
 * 120 bytes apart, from several page-aligned bases): once each is cached,
 * every one is found again, none pushed out by another of its set. An
 * error storm over them costs no callsite's look, nor its firings' limiter.
 */
static void callsites_of_one_binary_all_stay_cached(void **state)
{
	struct rec_callsite cs = { .kind = 'E', .level = REC_LEVEL_ERROR, .message = "boom!" };
	static const uint64_t bases[] = { 0x55d0c0e00000, 0x7f3a12345000, 0x400000,
					  0x5601ffe1f000 };
	uint64_t sure, mask;

	(void)state;
	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		struct rec_incident *in = new_incident(7 * SEC, 5, 3);
		size_t missing = 0;

		for (uint64_t k = 0; k < 2000; k++)
			rec_incident__event_rules(in, bases[b] + 0x4c8e0 + k * 120, &cs, &sure);
		for (uint64_t k = 0; k < 2000; k++)
			missing += !rec_incident__cached_rules(in, bases[b] + 0x4c8e0 + k * 120,
							       &mask, &sure);
		assert_int_equal(missing, 0);
		rec_incident__fini(in);
		free(in);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(held_back_firings_count_as_the_limiter_would),
		cmocka_unit_test(held_back_firings_survive_a_rule_removed),
		cmocka_unit_test(callsites_of_one_binary_all_stay_cached),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
