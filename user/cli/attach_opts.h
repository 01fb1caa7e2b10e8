/* SPDX-License-Identifier: MIT */
/*
 * recorder-attach's options (as retsnoop's env.c holds its own): what the
 * command line asks, parsed and checked, with the defaults of every option.
 * Its main (recorder-attach.c) only runs what they say.
 */
#ifndef REC_CLI_ATTACH_OPTS_H
#define REC_CLI_ATTACH_OPTS_H

#include <stdbool.h>
#include <sys/types.h>

#include "dumps/retention.h"
#include "incidents/trigger.h"
#include "session/session.h"

#define MAX_PIDS 64
/* The bounds of the byte sizes --ring-size and --follow-buffer. */
#define BYTES_MIN 4096u
#define BYTES_MAX (1u << 30)

/* What the command line asks. */
struct rec_attach_env {
	pid_t pids[MAX_PIDS];
	int npids;
	const char *binaries[REC_MAX_BINARIES];
	int nbinaries;
	struct rec_session_opts opts;
	int machine;			 /* --machine */
	const char *otlp_url;		 /* --otlp: every traced process's events go there too */
	int otlp_timeout_ms;		 /* --otlp-timeout */
	int otlp_tries;			 /* --otlp-tries */
	struct rec_trigger_set triggers; /* --trigger rules, with --trigger-cooldown and -cap */
	int otlp_keep;			 /* --otlp-keep: only the recordings its rules fire on */
};

/* The defaults of every option. */
#define REC_ATTACH_ENV_DEFAULTS                                                                    \
	{                                                                                          \
		.opts = { .ring_bytes = 8u << 20,                                                  \
			  .drain_ms = 10,                                                          \
			  .dump_dir = "/var/lib/recorder",                                         \
			  .keep_dumps = REC_KEEP_DUMPS,                                            \
			  .max_dump_bytes = REC_MAX_DUMP_BYTES,                                    \
			  .max_clients = REC_CLIENTS_MAX,                                          \
			  .client_timeout_ms = REC_CLIENT_TIMEOUT_MS,                              \
			  .follow_buffer = REC_FOLLOW_BUFFER,                                      \
			  .trigger_after_ns = REC_TRIGGER_AFTER_NS,                                \
			  .keep_snapshots = REC_KEEP_SNAPSHOTS,                                    \
			  .max_snapshot_bytes = REC_MAX_SNAPSHOT_BYTES,                            \
			  .limits = REC_LIMITS_DEFAULT },                                          \
		.triggers = { .cooldown_ns = REC_TRIGGER_COOLDOWN_NS,                              \
			      .per_hour = REC_TRIGGER_PER_HOUR,                                    \
			      .sig_per_hour = REC_TRIGGER_SIG_PER_HOUR },                          \
	}

/*
 * Parses argv into env (which holds the defaults): a bad option prints why
 * and exits (argp). Returns 0, or argp's error.
 */
int rec_attach_env__parse(struct rec_attach_env *env, int argc, char **argv);

#endif /* REC_CLI_ATTACH_OPTS_H */
