// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "cli.h"

int rec_cli__parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

pid_t rec_cli__parse_pid(struct argp_state *state, const char *arg)
{
	uint64_t v = 0;

	if (rec_cli__parse_u64(arg, 1, INT32_MAX, &v))
		argp_error(state, "invalid pid '%s': expected a positive integer", arg);
	return (pid_t)v;
}
