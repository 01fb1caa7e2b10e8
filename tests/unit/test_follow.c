// SPDX-License-Identifier: MIT
/*
 * The way of one ring record to the followers (serving/clients.h,
 * serving/feed.h): decoded once, as it is ingested, and shown by every
 * follower from that one decode, the same after its recording is gone. Two
 * followers inside this process (as recorder-attach --otlp follows), each with
 * its own text backend; the decodes are counted (rec_event__decodes()).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REC_TARGET "srv"
#include "recorder.h"

#include "model/proc.h"
#include "serving/clients.h"
#include "serving/query.h"
#include "target/target.h"

#define KEY 0x8000000000000002ULL

/* This process as a target: the model reads the callsites from its memory. */
static struct rec_target self;

static const char *event_meta = REC__META("E", INFO, "event x.c:1", "hello", 2, "n\0who\0");

/* One follower: its backend writes into buf. */
struct follower {
	struct rec_query q;
	struct rec_output o;
	FILE *f;
	char *buf;
	size_t len;
	int done;
};

static size_t no_backlog(void *ctx)
{
	(void)ctx;
	return 0;
}

static void set_done(void *ctx)
{
	((struct follower *)ctx)->done++;
}

struct world {
	struct rec_proc p;
	struct rec_clients *cs;
	struct follower fl[2];
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct rec_clients_opts co = { 0 };
	struct rec_recording_rec r = { .key = KEY,
				       .recorder = 0x80000001,
				       .cap = 16,
				       .state = REC_RS_LIVE,
				       .has_subject = 1 };
	struct rec_reader reader;

	if (!self.pid)
		assert_int_equal(rec_target__open(&self, getpid()), 0);
	rec_target__reader(&self, &reader);
	rec_proc__init(&w->p, getpid(), &reader);
	strcpy(r.subject, "conn[1]");
	assert_int_equal(rec_proc__ingest_recording(&w->p, &r), 0);
	assert_int_equal(rec_clients__new(&w->cs, &co), 0);
	for (int i = 0; i < 2; i++) {
		struct follower *fl = &w->fl[i];
		struct rec_clients_sink sink = {
			.o = &fl->o, .backlog = no_backlog, .done = set_done, .ctx = fl
		};

		fl->q.flags = REC_Q_FOLLOW;
		fl->f = open_memstream(&fl->buf, &fl->len);
		rec_query__output(&fl->o, fl->f, &fl->q);
		assert_int_equal(rec_clients__follow_in_process(w->cs, &w->p, w, &fl->q, &sink), 0);
	}
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	rec_clients__free(w->cs);
	for (int i = 0; i < 2; i++) {
		fclose(w->fl[i].f);
		free(w->fl[i].buf);
	}
	rec_proc__fini(&w->p);
	free(w);
	return 0;
}

/* Ingests event seq of KEY, with n and the string who, and hands it to the followers. */
static void ingest_and_follow(struct world *w, uint64_t seq, uint64_t n, const char *who)
{
	struct rec_event_rec e = {
		.hdr = { .type = REC_RT_EVENT, .tgid = w->p.pid, .tid = 7 },
		.recording = KEY,
		.seq = seq,
		.meta = (uintptr_t)event_meta,
		.types = REC_TYPE_U64 | REC_TYPE_STR << 4,
		.values = { n, REC_STR_SLOT(0, strlen(who), REC_STR_OK) },
	};
	size_t len = sizeof(e) + strlen(who) + 1;
	unsigned char rec[sizeof(e) + 32];
	struct rec_decoded d;
	struct rec_rstate *rs;

	assert_true(len <= sizeof(rec));
	e.hdr.size = (uint16_t)len;
	memcpy(rec, &e, sizeof(e));
	memcpy(rec + sizeof(e), who, strlen(who) + 1);
	assert_int_equal(rec_proc__ingest_event(&w->p, rec, len, &d, &rs), 0);
	rec_clients__follow_event(w->cs, w, &w->p, rs, &d, w->p.norm_len);
}

/* What follower i has been shown. */
static const char *shown(struct world *w, int i)
{
	fflush(w->fl[i].f);
	return w->fl[i].buf ? w->fl[i].buf : "";
}

/* One record, two followers: one decode, and each shows the event whole. */
static void test_one_decode_for_two_followers(void **state)
{
	struct world *w = *state;
	uint64_t before = rec_event__decodes();

	ingest_and_follow(w, 0, 42, "alice");
	rec_clients__tick(w->cs);
	assert_int_equal(rec_event__decodes() - before, 1);
	for (int i = 0; i < 2; i++) {
		assert_non_null(strstr(shown(w, i), "<conn[1]> hello, n: 42, who: alice\n"));
		assert_int_equal(w->fl[i].done, 0);
	}
}

/*
 * A follower renders later: what it shows was copied from the record as it
 * came, not read from the buffer the next event is normalized into, nor from
 * a recording that may be gone by then.
 */
static void test_followers_show_what_came_after_more_came(void **state)
{
	struct world *w = *state;
	uint64_t before = rec_event__decodes();
	const char *out;

	ingest_and_follow(w, 0, 1, "first");
	ingest_and_follow(w, 1, 2, "second one");
	rec_proc__ingest_recording(&w->p, &(struct rec_recording_rec){ .key = KEY,
								       .recorder = 0x80000001,
								       .cap = 16,
								       .seq = 2,
								       .state = REC_RS_RETIRED });
	rec_clients__tick(w->cs);
	assert_int_equal(rec_event__decodes() - before, 2);
	for (int i = 0; i < 2; i++) {
		out = shown(w, i);
		assert_non_null(strstr(out, "<conn[1]> hello, n: 1, who: first\n"));
		assert_non_null(strstr(out, "<conn[1]> hello, n: 2, who: second one\n"));
	}
}

/* A follower's own filter works on the same decode; the other still gets the event. */
static void test_a_filter_works_on_the_view(void **state)
{
	struct world *w = *state;
	uint64_t before = rec_event__decodes();

	/* A third follower, with --level error. */
	{
		struct follower err = { .q = { .flags = REC_Q_FOLLOW | REC_Q_HAS_LEVEL,
					       .level = REC_LEVEL_ERROR } };
		struct rec_clients_sink sink = {
			.o = &err.o, .backlog = no_backlog, .done = set_done, .ctx = &err
		};

		err.f = open_memstream(&err.buf, &err.len);
		rec_query__output(&err.o, err.f, &err.q);
		assert_int_equal(rec_clients__follow_in_process(w->cs, &w->p, w, &err.q, &sink), 0);
		ingest_and_follow(w, 0, 7, "bob");
		rec_clients__tick(w->cs);
		rec_clients__target_done(w->cs, w);
		fflush(err.f);
		assert_true(!err.buf || !strstr(err.buf, "hello"));
		assert_int_equal(err.done, 1);
		fclose(err.f);
		free(err.buf);
	}
	assert_int_equal(rec_event__decodes() - before, 1);
	assert_non_null(strstr(shown(w, 0), "who: bob\n"));
	/* The end reaches every follower once. */
	assert_int_equal(w->fl[0].done, 1);
	assert_int_equal(w->fl[1].done, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_decode_for_two_followers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_followers_show_what_came_after_more_came,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_filter_works_on_the_view, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
