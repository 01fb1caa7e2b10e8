/* SPDX-License-Identifier: MIT */
/*
 * The trigger rules of a traced process and their counts, as recorder-tail
 * --triggers shows them: a table, or JSON lines (one object a rule), each
 * rule with its signatures (trigger.h) under it.
 */
#ifndef REC_OUTPUT_TRIGGERS_H
#define REC_OUTPUT_TRIGGERS_H

#include <stdbool.h>
#include <stdio.h>

#include "incidents/trigger.h"

/*
 * Writes the rules of set (NULL: none) with their counts and signatures to
 * out, as JSON lines with json; offset_ns turns CLOCK_MONOTONIC times into
 * CLOCK_REALTIME. Text from the target (a signature's) is escaped.
 */
void rec_table__triggers(FILE *out, const struct rec_trigger_set *set, bool json,
			 int64_t offset_ns);

#endif /* REC_OUTPUT_TRIGGERS_H */
