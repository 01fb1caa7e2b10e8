/* SPDX-License-Identifier: MIT */
/*
 * evloop_plain.h: the part of recorder.h's API that tests/targets/evloop.c
 * uses, as no-ops, so that -DEVLOOP_PLAIN builds the same server without any
 * instrumentation (no probe site, no span chain, no allocation): the baseline
 * of a plain-against-instrumented comparison. An event's fields are never
 * evaluated, as in recorder.h while nothing is attached.
 */
#ifndef EVLOOP_PLAIN_H
#define EVLOOP_PLAIN_H

struct rec_recorder {
	int unused;
};
struct rec_recording {
	int unused;
};
struct rec_span {
	int unused;
};

static struct rec_recorder evloop_plain_recorder;
static struct rec_recording evloop_plain_recording;

static inline struct rec_recorder *rec_recorder_new(void)
{
	return &evloop_plain_recorder;
}

static inline void rec_recorder_free(struct rec_recorder *r)
{
	(void)r;
}

static inline struct rec_recording *rec_recording_new(struct rec_recorder *r, unsigned long cap)
{
	(void)r;
	(void)cap;
	return &evloop_plain_recording;
}

static inline void rec_recording_free(struct rec_recording *rec)
{
	(void)rec;
}

static inline void rec_recording_span(struct rec_span *s, struct rec_recording *rec,
				      const char *subject)
{
	(void)s;
	(void)rec;
	(void)subject;
}

static inline void rec_span_enter(struct rec_span *s)
{
	(void)s;
}

static inline void rec_span_exit(struct rec_span *s)
{
	(void)s;
}

#define REC_SPAN_INIT(span, lvl, name) ((void)(span))
#define REC_DEBUG(...) ((void)0)
#define REC_INFO(...) ((void)0)
#define REC_WARN(...) ((void)0)

#endif /* EVLOOP_PLAIN_H */
