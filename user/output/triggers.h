/* SPDX-License-Identifier: MIT */
/*
 * The trigger rules of a traced process and their counts, as recorder-tail
 * --triggers shows them: a table, or JSON lines (one object a rule).
 */
#ifndef REC_OUTPUT_TRIGGERS_H
#define REC_OUTPUT_TRIGGERS_H

#include <stdbool.h>
#include <stdio.h>

#include "trigger.h"

/* Writes the rules of set (NULL: none) with their counts to out, as JSON lines with json. */
void rec_output__triggers(FILE *out, const struct rec_trigger_set *set, bool json);

#endif /* REC_OUTPUT_TRIGGERS_H */
