/* SPDX-License-Identifier: MIT */
/*
 * Compiled by tests/run-all.sh as C11 and C++17 with -Wall -Wextra -Werror
 * -pedantic: every public form of include/recorder.h must stay warning-free.
 */
#include "recorder.h"

int main(void)
{
	struct rec_recorder *r = rec_recorder_new();
	struct rec_recording *rec = rec_recording_new(r, 10);
	struct rec_span span, child;

	if (!r || !rec)
		return 1;
	rec_recording_span(&span, rec, "subject");
	rec_span_enter(&span);
	REC_TRACE("trace");
	REC_DEBUG("debug", REC_I64(a, -1));
	REC_INFO("info", REC_U64(a, 1), REC_STR(b, "s"));
	REC_WARN("warn", REC_F64(a, 1.5), REC_BOOL(b, 1), REC_ERR(c, "e"));
	REC_ERROR("eight", REC_I64(a, 1), REC_U64(b, 2), REC_F64(c, 3.0), REC_BOOL(d, 0),
		  REC_STR(e, "5"), REC_ERR(f, "6"), REC_I64(g, 7), REC_U64(h, 8));
	REC_INFOF("formatted %d %s", 1, "x");
	REC_SPAN_INIT(&child, DEBUG, "child");
	rec_span_enter(&child);
	{
		REC_SPAN_SCOPED(scoped, INFO, "scoped");
		REC_INFO("in scope");
	}
	rec_span_exit(&child);
	rec_span_close(&child);
	rec_span_exit(&span);
	if (rec_current_span() != NULL || rec_is_attached())
		return 1;
	if (rec_recording_new(r, 1) != NULL || errno != EINVAL)
		return 1;
	rec_recording_free(rec);
	rec_recorder_free(r);
	return 0;
}
