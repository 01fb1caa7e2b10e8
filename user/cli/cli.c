// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Parses all of s in base (10 or 16) into [min, max]; digits only, no sign or space. */
static int parse_base(const char *s, int base, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || !(base == 16 ? isxdigit((unsigned char)*s) : isdigit((unsigned char)*s)))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int rec_cli__parse_dec(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!s)
		return -EINVAL;
	return parse_base(s, 10, min, max, out);
}

int rec_cli__parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!s)
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_base(s + 2, 16, min, max, out);
	return parse_base(s, 10, min, max, out);
}

int rec_cli__parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "kMG";
	const char *u;
	uint64_t v;
	size_t n;
	char num[32];
	int shift;

	if (!s || !*s || (n = strlen(s)) >= sizeof(num))
		return -EINVAL;
	u = strchr(units, s[n - 1]);
	shift = u && s[n - 1] ? 10 * (int)(u - units + 1) : 0;
	memcpy(num, s, n + 1);
	if (shift)
		num[n - 1] = 0;
	if (parse_base(num, 10, 0, UINT64_MAX >> shift, &v))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

int rec_cli__parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = { { "ms", 1000000ULL },
		      { "s", 1000000000ULL },
		      { "m", 60000000000ULL },
		      { "h", 3600000000000ULL },
		      { "d", 86400000000000ULL } };
	size_t n, k;
	char num[32];
	uint64_t v;

	if (!s || !*s || (n = strlen(s)) >= sizeof(num))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		k = strlen(units[i].suffix);
		if (n <= k || strcmp(s + n - k, units[i].suffix) != 0)
			continue;
		/* "5ms" ends in "s" too: a digit must come before the suffix. */
		if (!isdigit((unsigned char)s[n - k - 1]))
			continue;
		memcpy(num, s, n - k);
		num[n - k] = 0;
		if (parse_base(num, 10, 0, UINT64_MAX / units[i].ns, &v))
			return -EINVAL;
		*ns = v * units[i].ns;
		return 0;
	}
	return -EINVAL;
}

pid_t rec_cli__parse_pid(struct argp_state *state, const char *arg)
{
	uint64_t v = 0;

	if (rec_cli__parse_dec(arg, 1, INT32_MAX, &v))
		argp_error(state, "invalid pid '%s': expected a positive decimal integer", arg);
	return (pid_t)v;
}

int rec_cli__parse_otlp_timeout(struct argp_state *state, const char *arg)
{
	uint64_t v;

	if (rec_cli__parse_duration(arg, &v) || v < 1000000 || v > 600000000000ULL)
		argp_error(state,
			   "invalid --otlp-timeout '%s': expected a duration from 1ms to 10m", arg);
	return (int)(v / 1000000);
}

int rec_cli__parse_otlp_tries(struct argp_state *state, const char *arg)
{
	uint64_t v;

	if (rec_cli__parse_dec(arg, 1, 100, &v))
		argp_error(state, "invalid --otlp-tries '%s': expected 1 to 100", arg);
	return (int)v;
}
