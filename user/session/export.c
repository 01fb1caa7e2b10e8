// SPDX-License-Identifier: MIT
/*
 * recorder-attach --otlp (private.h): each traced process's events and spans
 * go to its job of the exporter (export/exporter.h) as views, never as text
 * through a socket: a follower inside the session (serving/clients.h) gives
 * the job what comes, or, with --otlp-keep, the session gives it the
 * recordings a keep rule fired on, whole.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "export/exporter.h"
#include "session/private.h"

void export__start(struct rec_session *s, struct traced *t)
{
	struct rec_query q = { .flags = REC_Q_FOLLOW | REC_Q_OTLP | REC_Q_SPANS,
			       .otlp_salt = t->otlp_salt };
	struct rec_clients_sink sink;
	int err;

	if (!s->opts.exporter || t->export || t->done || t->waiting)
		return;
	t->export = rec_exporter__start(s->opts.exporter, t->proc.pid);
	if (!t->export || rec_exporter__keeps(s->opts.exporter))
		return;
	sink = (struct rec_clients_sink){ .o = rec_export_job__output(t->export),
					  .backlog = rec_export_job__backlog,
					  .done = rec_export_job__done,
					  .ctx = t->export };
	err = rec_clients__follow_in_process(s->clients, &t->proc, t, &q, &sink);
	if (err) {
		fprintf(stderr, "recorder-attach: OTLP: cannot follow pid %d: %s\n",
			(int)t->proc.pid, strerror(-err));
		rec_export_job__done(t->export);
	}
}

/*
 * --otlp-keep: the recording of k of t, its events and spans, each naming the
 * trigger that kept it (its rule and signature), to its job.
 */
void export__kept(struct rec_session *s, struct traced *t, const struct rec_incident_keep *k)
{
	struct rec_query q = { .flags = REC_Q_OTLP | REC_Q_SPANS | REC_Q_HAS_RECORDING,
			       .recording = k->recording,
			       .otlp_salt = t->otlp_salt };
	struct rec_rstate *rs = rec_proc__find(&t->proc, k->recording);
	int at = t->inc.rules ? rec_trigger__find(t->inc.rules, k->rule_id) : -ENOENT;
	const struct rec_trigger_sig *g = NULL;
	struct rec_output_kept kept;
	struct rec_output o;

	(void)s;
	if (at >= 0) {
		g = rec_trigger__find_sig(t->inc.rules, k->rule_id, k->sig_key);
		if (!g)
			g = rec_trigger__find_sig(t->inc.rules, k->rule_id, REC_TRIGGER_SIG_FOLD);
	}
	kept = (struct rec_output_kept){ .rule = at >= 0 ? t->inc.rules->rules[at].text : "",
					 .sig_id = g ? g->id : 0,
					 .sig_text = g ? g->text : "" };
	o = *rec_export_job__output(t->export);
	rec_query__fit(&o, &q);
	rec_query__answer_to(&o, &t->proc, &q, NULL, &kept);
	if (rs)
		rec_proc__unpin(&t->proc, rs);
}

void export__end(struct rec_session *s, struct traced *t, uint64_t recordings, uint64_t kept)
{
	if (!t->export || !rec_exporter__keeps(s->opts.exporter))
		return;
	rec_export_job__kept(t->export, recordings, kept);
	rec_export_job__done(t->export);
}
