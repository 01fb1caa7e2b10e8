/* SPDX-License-Identifier: MIT */
/* LTTng-UST tracepoint provider of the benchmark's LTTng peer (bench_lttng.c). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./bench_tp.h"

#if !defined(BENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
	bench, event, LTTNG_UST_TP_ARGS(int64_t, i, const char *, s, int, ok),
	LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(int64_t, i, i) lttng_ust_field_string(s, s)
				    lttng_ust_field_integer(int, ok, ok)))

#endif

#include <lttng/tracepoint-event.h>
