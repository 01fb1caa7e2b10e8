/* SPDX-License-Identifier: MIT */
/* shlib.c: probe sites that live in a shared library, not in the executable. */
#include <recorder.h>

#include "shlib.h"

void shlib_emit(int n)
{
	REC_SPAN_SCOPED(span, INFO, "shlib_span");

	for (int k = 0; k < n; k++)
		REC_INFO("from shared library", REC_I64(i, k));
}

int shlib_is_attached(void)
{
	return rec_is_attached();
}
