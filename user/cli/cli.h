/* SPDX-License-Identifier: MIT */
/* Argument parsing helpers shared by the command-line tools. */
#ifndef REC_CLI_H
#define REC_CLI_H

#include <argp.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Parses a whole decimal number, or a 0x-prefixed hex one (keys), in [min, max]
 * from s. A leading 0 is decimal, never octal. No sign, no space. Returns 0 or
 * -EINVAL.
 */
int rec_cli__parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * Parses a whole decimal number in [min, max] from s (pids, counts): "010" is
 * 10, "0x10" is refused. Returns 0 or -EINVAL.
 */
int rec_cli__parse_dec(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * Parses a decimal pid argument of an option; a bad one ends the program
 * through argp_error().
 */
/*
 * Parses a byte size: decimal digits, then optionally k, M or G (times 1024,
 * 1024^2, 1024^3). Returns 0 or -EINVAL (empty, other characters, overflow).
 */
int rec_cli__parse_size(const char *s, uint64_t *out);

/*
 * Parses a duration: decimal digits and a unit, ms, s, m, h or d ("30s",
 * "5m"). Returns 0 and the nanoseconds, or -EINVAL.
 */
int rec_cli__parse_duration(const char *s, uint64_t *ns);

pid_t rec_cli__parse_pid(struct argp_state *state, const char *arg);

/*
 * Parses --otlp-timeout (a duration from 1ms to 10m, into ms) and --otlp-tries
 * (1 to 100) for either tool; a bad one ends the program through argp_error().
 */
int rec_cli__parse_otlp_timeout(struct argp_state *state, const char *arg);
int rec_cli__parse_otlp_tries(struct argp_state *state, const char *arg);

#endif /* REC_CLI_H */
