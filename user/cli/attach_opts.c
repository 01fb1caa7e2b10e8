// SPDX-License-Identifier: MIT
/* recorder-attach's options: the help text, the table, the parser (attach_opts.h). */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/attach_opts.h"
#include "cli/cli.h"
#include "dumps/retention.h"
#include "export/http.h"
#include "recorder_abi.h"
#include "serving/control.h"

static const char doc[] =
	/* Lines under 79 columns: argp re-wraps longer ones mid-sentence. */
	"Attach the flight recorder to running processes instrumented with\n"
	"recorder.h.\n"
	"\n"
	"It finds every recorder probe in each process's executable and loaded\n"
	"shared libraries, keeps the last events of every recording, and serves\n"
	"them to recorder-tail over a socket in /run/recorder until the processes\n"
	"exit or it gets SIGINT or SIGTERM. Root and each process's owner may read\n"
	"its trace. Needs root; once attached, it keeps only the capabilities it\n"
	"still needs. One recorder-attach per process: a second -p one is refused.\n"
	"\n"
	"When a process ends, even by SIGKILL, its black box (every recording's\n"
	"tail, the span stacks its threads died in, and how it ended) is written\n"
	"as JSON into the dump directory; read it with recorder-tail --file.\n"
	"A dump is 0600 and belongs to the process's owner. The directory is\n"
	"created if missing (0711) and checked before anything is attached; a\n"
	"black box that cannot be written is reported, and the exit status is 1.\n"
	"\n"
	"Events take the batch path: each thread writes them to a buffer of its\n"
	"own, handed over when full, when the thread sleeps (before every read),\n"
	"dies or execs. --per-event fires one probe per event instead. The path\n"
	"is printed on attach.\n"
	"\n"
	"With --binary, every process that runs the executable is traced, those\n"
	"running now and those started later (from their exec or fork, whether\n"
	"or not they hit a probe), until recorder-attach is stopped. A -p\n"
	"recorder-attach on such a process defers to the --binary one, and the\n"
	"--binary one waits for a process a -p one holds: each keeps its events,\n"
	"and takes the process over when the other stops (one stderr line says\n"
	"so). Either way, one of them writes its black box.\n"
	"\n"
	"USAGE: recorder-attach -p PID [-p PID ...] [OPTION...]\n"
	"       recorder-attach --binary PATH [OPTION...]\n"
	"\n"
	"EXAMPLES:\n"
	"  recorder-attach -p 4242               # trace pid 4242\n"
	"  recorder-attach -p 4242 -p 4243       # trace two processes\n"
	"  recorder-attach --binary ./server     # every server process, from now on\n"
	"  recorder-attach -p 4242 --ring-size 33554432    # a 32 MiB ring buffer\n"
	"  recorder-attach -p 4242 --dump-dir /tmp/boxes   # black boxes go there\n"
	"  recorder-attach -p 4242 --per-event   # one probe hit per event\n"
	"  recorder-attach -p 4242 --min-cap 10000   # keep more history per recording\n"
	"\n"
	"LIMITS: every table and cache that a target can grow has a limit, and\n"
	"what does not fit is counted (recorder-tail --stats, --list, the dump).\n";

enum {
	OPT_BINARY = 0x100,
	OPT_RING,
	OPT_DRAIN,
	OPT_SOCKDIR,
	OPT_DUMPDIR,
	OPT_NODUMP,
	OPT_MAXCLIENTS,
	OPT_CLIENTTIMEOUT,
	OPT_FOLLOWBUF,
	OPT_KEEPDUMPS,
	OPT_MAXDUMPBYTES,
	OPT_OTLP,
	OPT_OTLP_TIMEOUT,
	OPT_OTLP_TRIES,
	OPT_MAX_RECORDINGS,
	OPT_MAX_PER_PROCESS,
	OPT_KEEP_RETIRED,
	OPT_MAX_CALLSITES,
	OPT_MAX_LITERALS,
	OPT_MAX_DEAD_STACKS,
	OPT_MAX_FORGOTTEN,
	OPT_SPAN_CAP,
	OPT_MIN_CAP,
	OPT_MAX_CAP,
	OPT_PER_EVENT,
	OPT_SCHED,
	OPT_NO_SCHED,
	OPT_COLLECT,
	OPT_TRIGGER,
	OPT_TRIGGER_AFTER,
	OPT_TRIGGER_COOLDOWN,
	OPT_TRIGGER_CAP,
	OPT_TRIGGER_SIG_CAP,
	OPT_TRIGGER_SCOPE,
	OPT_KEEP_SNAPSHOTS,
	OPT_MAX_SNAPSHOT_BYTES,
	OPT_OTLP_KEEP,
	OPT_MACHINE,
};

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Process to trace (repeatable)", 0 },
	{ "binary", OPT_BINARY, "PATH", 0,
	  "Trace every process running this executable, now and later (repeatable)", 0 },
	{ "ring-size", OPT_RING, "BYTES", 0,
	  "Ring buffer size, a power of two from 4096 (default 8388608)", 0 },
	{ "drain-ms", OPT_DRAIN, "MS", 0,
	  "Drain the ring buffer every MS milliseconds (default 10)", 0 },
	{ "per-event", OPT_PER_EVENT, NULL, 0,
	  "One probe hit per event, span enter and exit (the default is the batch path: "
	  "one per full per-thread buffer)",
	  0 },
	{ "sched", OPT_SCHED, NULL, 0,
	  "Charge each span the time its thread spent on the CPU, blocked (by system call) "
	  "and waiting to run (off by default until measured: see docs/kernel-time.md)",
	  0 },
	{ "no-sched", OPT_NO_SCHED, NULL, 0, "Attach no scheduler hook: spans have no kernel time",
	  0 },
	{ "collect-ms", OPT_COLLECT, "MS", 0,
	  "Batch path: take what sleeping threads have pending every MS milliseconds "
	  "(default 50; 0 = only when a client reads)",
	  0 },
	{ "sock-dir", OPT_SOCKDIR, "DIR", 0,
	  "Directory of control sockets (default /run/recorder); created if missing, "
	  "never changed if it exists",
	  0 },
	{ "max-clients", OPT_MAXCLIENTS, "N", 0,
	  "Serve at most N recorder-tail clients at once; more are refused "
	  "(default 32)",
	  0 },
	{ "client-timeout", OPT_CLIENTTIMEOUT, "MS", 0,
	  "Close a client that sends no whole request, or takes none of its answer, "
	  "within MS milliseconds (default 5000)",
	  0 },
	{ "follow-buffer", OPT_FOLLOWBUF, "BYTES", 0,
	  "A --follow reader that holds BYTES (events not yet rendered, text not "
	  "yet sent) misses events until it catches up, and is told how many "
	  "(default 1048576)",
	  0 },
	{ "dump-dir", OPT_DUMPDIR, "DIR", 0,
	  "Where black boxes are written when a process ends (default /var/lib/recorder)", 0 },
	{ "no-dump", OPT_NODUMP, NULL, 0, "Write no black box when a process ends", 0 },
	{ "otlp", OPT_OTLP, "URL", 0,
	  "Also send every traced process's events, to its end, as OpenTelemetry log records "
	  "(OTLP/HTTP, JSON) to URL/v1/logs, from a thread that follows it",
	  0 },
	{ "otlp-timeout", OPT_OTLP_TIMEOUT, "DURATION", 0,
	  "With --otlp: the most one request may take, connect to answer (default 5s)", 0 },
	{ "otlp-tries", OPT_OTLP_TRIES, "N", 0,
	  "With --otlp: tries of a batch before it is counted as not delivered (default 6)", 0 },
	{ "otlp-keep", OPT_OTLP_KEEP, "RULE", 0,
	  "With --otlp: send only the recordings RULE (a --trigger rule, repeatable) fires "
	  "on, all their events and spans, once --trigger-after has passed or their "
	  "process ended; the others are counted as skipped",
	  0 },
	{ "keep-dumps", OPT_KEEPDUMPS, "N", 0,
	  "Keep at most N black boxes in the dump directory, the newest; older ones "
	  "are removed after each new one (default 100; 0: no limit)",
	  0 },
	{ "max-dump-bytes", OPT_MAXDUMPBYTES, "SIZE", 0,
	  "Keep at most SIZE bytes of black boxes in the dump directory (suffix k, M "
	  "or G), removing the oldest; the one just written always stays "
	  "(default 1G; 0: no limit)",
	  0 },
	{ "verbose", 'v', NULL, 0,
	  "Show libbpf's messages, and at start what decides the cost of recording "
	  "here (see --machine)",
	  0 },
	{ "machine", OPT_MACHINE, NULL, 0,
	  "Print what decides the cost of recording on this machine as one JSON line "
	  "(the clocksource, pti, a system call's and a uprobe hit's cost, measured now), "
	  "and exit: no process is needed",
	  0 },
	{ NULL, 0, NULL, 0,
	  "Incidents (a rule that fires saves a snapshot into the dump directory):", 2 },
	{ "trigger", OPT_TRIGGER, "RULE", 0,
	  "Save a snapshot when RULE fires (repeatable): level>=LEVEL, "
	  "span:GLOB>DURATION (ended or still open), event:GLOB [FIELD OP VALUE], "
	  "code[:GLOB] (rec_trigger() in the program)",
	  2 },
	{ "trigger-after", OPT_TRIGGER_AFTER, "DURATION", 0,
	  "Keep recording this long after a rule fires before its snapshot is "
	  "written, so that it shows how the request ended (default 200ms)",
	  2 },
	{ "trigger-cooldown", OPT_TRIGGER_COOLDOWN, "DURATION", 0,
	  "After a snapshot, the firings of its signature (its rule and the callsite, "
	  "span or reason it fired on) are counted, not saved, for this long "
	  "(default 10s; 0: none)",
	  2 },
	{ "trigger-cap", OPT_TRIGGER_CAP, "N", 0,
	  "Snapshots per process in any hour, over all its rules and signatures; the "
	  "rest are counted, not saved (default 60; 0: no cap; at most 1000)",
	  2 },
	{ "trigger-signature-cap", OPT_TRIGGER_SIG_CAP, "N", 0,
	  "Snapshots of one signature in any hour, so that a flood of one cannot "
	  "take the others' room; the first of a new signature is always saved "
	  "unless --trigger-cap is reached (default 6; 0: no cap; at most 32). A "
	  "process holds 1024 signatures; the firings of more share one per rule, "
	  "counted folded",
	  2 },
	{ "trigger-scope", OPT_TRIGGER_SCOPE, "SCOPE", 0,
	  "What a snapshot holds: recording (the recording the rule fired in, and "
	  "every thread's stack; the default) or process (every recording, as "
	  "recorder-tail --dump)",
	  2 },
	{ "keep-snapshots", OPT_KEEP_SNAPSHOTS, "N", 0,
	  "Keep at most N snapshots in the dump directory, the newest (default 50; "
	  "0: no limit); black boxes are never removed for them",
	  2 },
	{ "max-snapshot-bytes", OPT_MAX_SNAPSHOT_BYTES, "SIZE", 0,
	  "Keep at most SIZE bytes of snapshots (suffix k, M or G; default 256M; "
	  "0: no limit)",
	  2 },
	{ NULL, 0, NULL, 0, "Limits (what does not fit is counted, see --stats):", 1 },
	{ "max-recordings", OPT_MAX_RECORDINGS, "N", 0,
	  "Recordings tracked at once by all processes together (default 65536); "
	  "the events of one that finds no room are counted, not kept",
	  1 },
	{ "max-recordings-per-process", OPT_MAX_PER_PROCESS, "N", 0,
	  "Recordings one process may have tracked at once (default a quarter "
	  "of --max-recordings), so that no process can starve another",
	  1 },
	{ "keep-retired", OPT_KEEP_RETIRED, "N", 0,
	  "Freed recordings kept per process with their tails (default 64); older "
	  "ones are forgotten and tallied per recorder",
	  1 },
	{ "max-callsites", OPT_MAX_CALLSITES, "N", 0,
	  "Callsites cached per process (default 65536); others are read again at "
	  "each use",
	  1 },
	{ "max-literals", OPT_MAX_LITERALS, "N", 0,
	  "String literals cached per process (default 65536); others are read "
	  "again at each use",
	  1 },
	{ "max-dead-stacks", OPT_MAX_DEAD_STACKS, "N", 0,
	  "Stacks of exited threads kept per process, the newest (default 4096, "
	  "at most 65536)",
	  1 },
	{ "span-cap", OPT_SPAN_CAP, "N", 0,
	  "Spans kept per recording, the newest (default 256, at most 1048576); "
	  "the others are counted dropped",
	  1 },
	{ "min-cap", OPT_MIN_CAP, "N", 0,
	  "Events every recording keeps at least, whatever its program asked "
	  "(2 to 1048576; default: what it asked); --list shows both caps",
	  1 },
	{ "max-cap", OPT_MAX_CAP, "N", 0,
	  "Events every recording keeps at most, whatever its program asked "
	  "(2 to 1048576, not below --min-cap; default: what it asked)",
	  1 },
	{ "max-forgotten-recorders", OPT_MAX_FORGOTTEN, "N", 0,
	  "Recorders whose forgotten recordings are tallied one by one (default "
	  "1024); the rest share one tally",
	  1 },
	{},
};

/* How many files of a kind the dump directory keeps (--keep-dumps, --keep-snapshots). */
static uint64_t parse_keep(struct argp_state *state, const char *name, const char *arg)
{
	uint64_t v;

	if (rec_cli__parse_dec(arg, 0, 1000000, &v))
		argp_error(state, "invalid --%s '%s': expected 0 to 1000000", name, arg);
	return v;
}

/* How many bytes of them (--max-dump-bytes, --max-snapshot-bytes). */
static uint64_t parse_bytes(struct argp_state *state, const char *name, const char *arg)
{
	uint64_t v;

	if (rec_cli__parse_size(arg, &v))
		argp_error(state,
			   "invalid --%s '%s': expected a size in bytes, with an optional "
			   "suffix k, M or G (0: no limit)",
			   name, arg);
	return v;
}

/* Parses the value of a limit option into *out; a bad one ends the program. */
static void parse_limit(struct argp_state *state, const char *name, const char *arg, uint64_t min,
			uint64_t max, uint64_t *out)
{
	if (rec_cli__parse_u64(arg, min, max, out))
		argp_error(state, "invalid --%s '%s': expected %" PRIu64 " to %" PRIu64, name, arg,
			   min, max);
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	struct rec_attach_env *env = state->input;
	static bool per_process_given;
	struct rec_limits *lim = &env->opts.limits;
	uint64_t v;
	pid_t pid;

	switch (key) {
	case 'p':
		pid = rec_cli__parse_pid(state, arg);
		if (env->npids == MAX_PIDS)
			argp_error(state, "too many -p: at most %d", MAX_PIDS);
		env->pids[env->npids++] = pid;
		break;
	case OPT_BINARY:
		if (env->nbinaries == REC_MAX_BINARIES)
			argp_error(state, "too many --binary: at most %d", REC_MAX_BINARIES);
		env->binaries[env->nbinaries++] = arg;
		break;
	case OPT_RING:
		if (rec_cli__parse_u64(arg, BYTES_MIN, BYTES_MAX, &v) || (v & (v - 1)))
			argp_error(state,
				   "invalid --ring-size '%s': expected a power of two "
				   "from %u to %u",
				   arg, BYTES_MIN, BYTES_MAX);
		env->opts.ring_bytes = v;
		break;
	case OPT_PER_EVENT:
		env->opts.per_event = 1;
		break;
	case OPT_SCHED:
	case OPT_NO_SCHED:
		env->opts.sched = key == OPT_SCHED;
		break;
	case OPT_COLLECT:
		if (rec_cli__parse_u64(arg, 0, 10000, &v))
			argp_error(state, "invalid --collect-ms '%s': expected 0 to 10000", arg);
		env->opts.collect_ms = v ? (int)v : -1;
		break;
	case OPT_DRAIN:
		if (rec_cli__parse_u64(arg, 1, 10000, &v))
			argp_error(state, "invalid --drain-ms '%s': expected 1 to 10000", arg);
		env->opts.drain_ms = (int)v;
		break;
	case OPT_SOCKDIR:
		if (!*arg)
			argp_error(state, "--sock-dir needs a directory");
		env->opts.sock_dir = arg;
		break;
	case OPT_MAXCLIENTS:
		if (rec_cli__parse_u64(arg, 1, 4096, &v))
			argp_error(state, "invalid --max-clients '%s': expected 1 to 4096", arg);
		env->opts.max_clients = (unsigned int)v;
		break;
	case OPT_CLIENTTIMEOUT:
		if (rec_cli__parse_u64(arg, 1, 3600000, &v))
			argp_error(state,
				   "invalid --client-timeout '%s': expected 1 to 3600000 "
				   "milliseconds",
				   arg);
		env->opts.client_timeout_ms = (int)v;
		break;
	case OPT_FOLLOWBUF:
		if (rec_cli__parse_u64(arg, BYTES_MIN, BYTES_MAX, &v))
			argp_error(state, "invalid --follow-buffer '%s': expected %u to %u bytes",
				   arg, BYTES_MIN, BYTES_MAX);
		env->opts.follow_buffer = v;
		break;
	case OPT_DUMPDIR:
		if (!*arg)
			argp_error(state, "--dump-dir needs a directory");
		env->opts.dump_dir = arg;
		break;
	case OPT_NODUMP:
		env->opts.dump_dir = NULL;
		break;
	case OPT_OTLP: {
		struct rec_http_url u;
		const char *why;

		if (rec_http__parse_url(arg, &u, &why))
			argp_error(state, "invalid --otlp '%s': %s", arg, why);
		env->otlp_url = arg;
		break;
	}
	case OPT_OTLP_TIMEOUT:
		env->otlp_timeout_ms = rec_cli__parse_otlp_timeout(state, arg);
		break;
	case OPT_OTLP_TRIES:
		env->otlp_tries = rec_cli__parse_otlp_tries(state, arg);
		break;
	case OPT_KEEPDUMPS:
		env->opts.keep_dumps = parse_keep(state, "keep-dumps", arg);
		break;
	case OPT_MAXDUMPBYTES:
		env->opts.max_dump_bytes = parse_bytes(state, "max-dump-bytes", arg);
		break;
	case 'v':
		env->opts.verbose = 1;
		break;
	case OPT_MACHINE:
		env->machine = 1;
		break;
	case OPT_TRIGGER: {
		char err[256];

		if (rec_trigger__add(&env->triggers, arg, err, sizeof(err)) < 0)
			argp_error(state, "invalid --trigger '%s': %s\n\n%s", arg, err,
				   REC_TRIGGER_GRAMMAR);
		env->opts.triggers = &env->triggers;
		break;
	}
	case OPT_OTLP_KEEP: {
		struct rec_trigger_rule r;
		char err[256], canon[REC_TRIGGER_TEXT_MAX];
		int at = -1;

		if (rec_trigger__parse(arg, &r, err, sizeof(err)))
			argp_error(state, "invalid --otlp-keep '%s': %s\n\n%s", arg, err,
				   REC_TRIGGER_GRAMMAR);
		rec_trigger__format(&r, canon, sizeof(canon));
		for (unsigned int i = 0; i < env->triggers.n; i++)
			if (!strcmp(env->triggers.rules[i].text, canon))
				at = (int)i;
		if (at < 0) {
			if (rec_trigger__add(&env->triggers, arg, err, sizeof(err)) < 0)
				argp_error(state, "invalid --otlp-keep '%s': %s", arg, err);
			at = (int)env->triggers.n - 1;
		}
		env->triggers.rules[at].keep = true;
		env->opts.triggers = &env->triggers;
		env->otlp_keep = 1;
		break;
	}
	case OPT_TRIGGER_AFTER:
	case OPT_TRIGGER_COOLDOWN: {
		const char *name = key == OPT_TRIGGER_AFTER ? "trigger-after" : "trigger-cooldown";
		char err[256];
		int64_t ns;

		if (rec_trigger__parse_duration(arg, &ns, err, sizeof(err)))
			argp_error(state, "invalid --%s '%s': %s", name, arg, err);
		if (key == OPT_TRIGGER_AFTER)
			env->opts.trigger_after_ns = ns;
		else
			env->triggers.cooldown_ns = ns;
		break;
	}
	case OPT_TRIGGER_CAP:
		if (rec_cli__parse_dec(arg, 0, REC_TRIGGER_PER_HOUR_MAX, &v))
			argp_error(state, "invalid --trigger-cap '%s': expected 0 to %d", arg,
				   REC_TRIGGER_PER_HOUR_MAX);
		env->triggers.per_hour = (unsigned int)v;
		break;
	case OPT_TRIGGER_SIG_CAP:
		if (rec_cli__parse_dec(arg, 0, REC_TRIGGER_SIG_PER_HOUR_MAX, &v))
			argp_error(state, "invalid --trigger-signature-cap '%s': expected 0 to %d",
				   arg, REC_TRIGGER_SIG_PER_HOUR_MAX);
		env->triggers.sig_per_hour = (unsigned int)v;
		break;
	case OPT_TRIGGER_SCOPE:
		if (strcmp(arg, "recording") && strcmp(arg, "process"))
			argp_error(state,
				   "invalid --trigger-scope '%s': expected recording or process",
				   arg);
		env->opts.trigger_scope_process = strcmp(arg, "process") == 0;
		break;
	case OPT_KEEP_SNAPSHOTS:
		env->opts.keep_snapshots = parse_keep(state, "keep-snapshots", arg);
		break;
	case OPT_MAX_SNAPSHOT_BYTES:
		env->opts.max_snapshot_bytes = parse_bytes(state, "max-snapshot-bytes", arg);
		break;
	case OPT_MAX_RECORDINGS:
		parse_limit(state, "max-recordings", arg, 16, 1u << 22, &lim->max_recordings);
		break;
	case OPT_MAX_PER_PROCESS:
		parse_limit(state, "max-recordings-per-process", arg, 1, 1u << 22,
			    &lim->max_recordings_per_process);
		per_process_given = true;
		break;
	case OPT_KEEP_RETIRED:
		parse_limit(state, "keep-retired", arg, 1, 1u << 20, &lim->keep_retired);
		break;
	case OPT_MAX_CALLSITES:
		parse_limit(state, "max-callsites", arg, 1, 1u << 24, &lim->max_callsites);
		break;
	case OPT_MAX_LITERALS:
		parse_limit(state, "max-literals", arg, 1, 1u << 24, &lim->max_literals);
		break;
	case OPT_MAX_DEAD_STACKS:
		parse_limit(state, "max-dead-stacks", arg, 1, REC_MAX_DEAD_STACKS_LIMIT,
			    &lim->max_dead_stacks);
		break;
	case OPT_SPAN_CAP:
		parse_limit(state, "span-cap", arg, 1, REC_SPAN_CAP_MAX, &lim->span_cap);
		break;
	case OPT_MIN_CAP:
		parse_limit(state, "min-cap", arg, 2, REC_CAP_MAX, &lim->min_cap);
		break;
	case OPT_MAX_CAP:
		parse_limit(state, "max-cap", arg, 2, REC_CAP_MAX, &lim->max_cap);
		break;
	case OPT_MAX_FORGOTTEN:
		parse_limit(state, "max-forgotten-recorders", arg, 1, 1u << 20,
			    &lim->max_forgotten_recorders);
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (env->machine && (env->npids || env->nbinaries))
			argp_error(state,
				   "--machine measures this machine and exits: give no -p or "
				   "--binary with it");
		if (env->npids == 0 && env->nbinaries == 0 && !env->machine)
			argp_error(state, "no process given: use -p PID or --binary PATH");
		if (env->otlp_keep && !env->otlp_url)
			argp_error(state, "--otlp-keep chooses what --otlp sends: give --otlp URL");
		if (!per_process_given)
			lim->max_recordings_per_process =
				lim->max_recordings / REC_DEFAULT_PER_PROCESS_SHARE;
		if (lim->max_recordings_per_process > lim->max_recordings)
			argp_error(state,
				   "--max-recordings-per-process %" PRIu64 " is more than "
				   "--max-recordings %" PRIu64,
				   lim->max_recordings_per_process, lim->max_recordings);
		if (lim->min_cap && lim->max_cap && lim->max_cap < lim->min_cap)
			argp_error(state,
				   "--max-cap %" PRIu64 " is less than --min-cap %" PRIu64
				   ": no recording could keep both",
				   lim->max_cap, lim->min_cap);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int rec_attach_env__parse(struct rec_attach_env *env, int argc, char **argv)
{
	static const struct argp argp = { options, parse_arg, NULL, doc, NULL, NULL, NULL };

	return argp_parse(&argp, argc, argv, 0, NULL, env);
}
