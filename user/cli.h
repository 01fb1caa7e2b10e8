/* SPDX-License-Identifier: MIT */
/* Argument parsing helpers shared by the command-line tools. */
#ifndef REC_CLI_H
#define REC_CLI_H

#include <stdint.h>

/*
 * Parses a whole decimal (or 0x-prefixed hex) number in [min, max] from s.
 * Returns 0 or -EINVAL.
 */
int rec_cli__parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif /* REC_CLI_H */
