// SPDX-License-Identifier: MIT
/* recorder-attach: attach the flight recorder to running processes. */
#include <argp.h>
#include <errno.h>
#include <pthread.h>
#include <sys/random.h>
#include <time.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder_abi.h"

#include "cli/cli.h"
#include "serving/control.h"
#include "model/dump.h"
#include "base/text.h"
#include "export/http.h"
#include "export/otlp.h"
#include "dumps/retention.h"
#include "kernel/machine.h"
#include "session/session.h"
#include "incidents/trigger.h"

#define MAX_PIDS 64
/* The bounds of the byte sizes --ring-size and --follow-buffer. */
#define BYTES_MIN 4096u
#define BYTES_MAX (1u << 30)
/* The smallest ring that holds 4 full batch records (a power of two). */
#define BATCH_RING_MIN (1u << 16)
_Static_assert(BATCH_RING_MIN >= 4 * (sizeof(struct rec_batch_rec) + REC_TBUF_DATA),
	       "BATCH_RING_MIN holds 4 batches");
/* Pids named in the summary of black boxes that could not be written. */
#define MAX_LOST_NAMED 16

static struct {
	pid_t pids[MAX_PIDS];
	int npids;
	const char *binaries[REC_MAX_BINARIES];
	int nbinaries;
	struct rec_session_opts opts;
	int machine; /* --machine */
	int lost;    /* black boxes that could not be written */
	pid_t lost_pids[MAX_LOST_NAMED];
	const char *otlp_url;		 /* --otlp: every traced process's events go there too */
	struct otlp_job *otlp_jobs;	 /* one a traced process */
	int otlp_lost;			 /* processes some of whose records were not delivered */
	int otlp_timeout_ms;		 /* --otlp-timeout */
	int otlp_tries;			 /* --otlp-tries */
	struct rec_trigger_set triggers; /* --trigger rules, with --trigger-cooldown and -cap */
	int otlp_keep;			 /* --otlp-keep: only the recordings its rules fire on */
} env = {
	.opts = { .ring_bytes = 8u << 20,
		  .drain_ms = 10,
		  .dump_dir = "/var/lib/recorder",
		  .keep_dumps = REC_KEEP_DUMPS,
		  .max_dump_bytes = REC_MAX_DUMP_BYTES,
		  .max_clients = REC_CLIENTS_MAX,
		  .client_timeout_ms = REC_CLIENT_TIMEOUT_MS,
		  .follow_buffer = REC_FOLLOW_BUFFER,
		  .trigger_after_ns = REC_TRIGGER_AFTER_NS,
		  .keep_snapshots = REC_KEEP_SNAPSHOTS,
		  .max_snapshot_bytes = REC_MAX_SNAPSHOT_BYTES,
		  .limits = REC_LIMITS_DEFAULT },
	.triggers = { .cooldown_ns = REC_TRIGGER_COOLDOWN_NS,
		      .per_hour = REC_TRIGGER_PER_HOUR,
		      .sig_per_hour = REC_TRIGGER_SIG_PER_HOUR },
};

const char *argp_program_version = "recorder-attach 0.1";
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

static void on_keep(pid_t pid, uint64_t recording, const char *lines, size_t len, void *ctx);

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

/* Says once which event path runs (docs/guide/using.md, "Event paths"), after the first attach. */
static void print_path(void)
{
	static bool printed;

	if (printed)
		return;
	printed = true;
	printf("event path: %s\n", env.opts.per_event
					   ? "per-event (one probe hit per event)"
					   : "batch (one probe hit per full per-thread buffer)");
	printf("kernel time per span: %s\n", env.opts.sched ? "on" : "off (--sched: on)");
	/* A full buffer goes into the ring as one record: a small ring holds few. */
	if (!env.opts.per_event && env.opts.ring_bytes < BATCH_RING_MIN)
		fprintf(stderr,
			"recorder-attach: warning: --ring-size %zu holds fewer than 4 full batches "
			"(%zu bytes each): most of a burst will be dropped (counted in ring_full); "
			"use --ring-size %u or more, or --per-event\n",
			env.opts.ring_bytes, sizeof(struct rec_batch_rec) + (size_t)REC_TBUF_DATA,
			BATCH_RING_MIN);
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	static bool per_process_given;
	struct rec_limits *lim = &env.opts.limits;
	uint64_t v;
	pid_t pid;

	switch (key) {
	case 'p':
		pid = rec_cli__parse_pid(state, arg);
		if (env.npids == MAX_PIDS)
			argp_error(state, "too many -p: at most %d", MAX_PIDS);
		env.pids[env.npids++] = pid;
		break;
	case OPT_BINARY:
		if (env.nbinaries == REC_MAX_BINARIES)
			argp_error(state, "too many --binary: at most %d", REC_MAX_BINARIES);
		env.binaries[env.nbinaries++] = arg;
		break;
	case OPT_RING:
		if (rec_cli__parse_u64(arg, BYTES_MIN, BYTES_MAX, &v) || (v & (v - 1)))
			argp_error(state,
				   "invalid --ring-size '%s': expected a power of two "
				   "from %u to %u",
				   arg, BYTES_MIN, BYTES_MAX);
		env.opts.ring_bytes = v;
		break;
	case OPT_PER_EVENT:
		env.opts.per_event = 1;
		break;
	case OPT_SCHED:
	case OPT_NO_SCHED:
		env.opts.sched = key == OPT_SCHED;
		break;
	case OPT_COLLECT:
		if (rec_cli__parse_u64(arg, 0, 10000, &v))
			argp_error(state, "invalid --collect-ms '%s': expected 0 to 10000", arg);
		env.opts.collect_ms = v ? (int)v : -1;
		break;
	case OPT_DRAIN:
		if (rec_cli__parse_u64(arg, 1, 10000, &v))
			argp_error(state, "invalid --drain-ms '%s': expected 1 to 10000", arg);
		env.opts.drain_ms = (int)v;
		break;
	case OPT_SOCKDIR:
		if (!*arg)
			argp_error(state, "--sock-dir needs a directory");
		env.opts.sock_dir = arg;
		break;
	case OPT_MAXCLIENTS:
		if (rec_cli__parse_u64(arg, 1, 4096, &v))
			argp_error(state, "invalid --max-clients '%s': expected 1 to 4096", arg);
		env.opts.max_clients = (unsigned int)v;
		break;
	case OPT_CLIENTTIMEOUT:
		if (rec_cli__parse_u64(arg, 1, 3600000, &v))
			argp_error(state,
				   "invalid --client-timeout '%s': expected 1 to 3600000 "
				   "milliseconds",
				   arg);
		env.opts.client_timeout_ms = (int)v;
		break;
	case OPT_FOLLOWBUF:
		if (rec_cli__parse_u64(arg, BYTES_MIN, BYTES_MAX, &v))
			argp_error(state, "invalid --follow-buffer '%s': expected %u to %u bytes",
				   arg, BYTES_MIN, BYTES_MAX);
		env.opts.follow_buffer = v;
		break;
	case OPT_DUMPDIR:
		if (!*arg)
			argp_error(state, "--dump-dir needs a directory");
		env.opts.dump_dir = arg;
		break;
	case OPT_NODUMP:
		env.opts.dump_dir = NULL;
		break;
	case OPT_OTLP: {
		struct rec_http_url u;
		const char *why;

		if (rec_http__parse_url(arg, &u, &why))
			argp_error(state, "invalid --otlp '%s': %s", arg, why);
		env.otlp_url = arg;
		break;
	}
	case OPT_OTLP_TIMEOUT:
		env.otlp_timeout_ms = rec_cli__parse_otlp_timeout(state, arg);
		break;
	case OPT_OTLP_TRIES:
		env.otlp_tries = rec_cli__parse_otlp_tries(state, arg);
		break;
	case OPT_KEEPDUMPS:
		env.opts.keep_dumps = parse_keep(state, "keep-dumps", arg);
		break;
	case OPT_MAXDUMPBYTES:
		env.opts.max_dump_bytes = parse_bytes(state, "max-dump-bytes", arg);
		break;
	case 'v':
		env.opts.verbose = 1;
		break;
	case OPT_MACHINE:
		env.machine = 1;
		break;
	case OPT_TRIGGER: {
		char err[256];

		if (rec_trigger__add(&env.triggers, arg, err, sizeof(err)) < 0)
			argp_error(state, "invalid --trigger '%s': %s\n\n%s", arg, err,
				   REC_TRIGGER_GRAMMAR);
		env.opts.triggers = &env.triggers;
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
		for (unsigned int i = 0; i < env.triggers.n; i++)
			if (!strcmp(env.triggers.rules[i].text, canon))
				at = (int)i;
		if (at < 0) {
			if (rec_trigger__add(&env.triggers, arg, err, sizeof(err)) < 0)
				argp_error(state, "invalid --otlp-keep '%s': %s", arg, err);
			at = (int)env.triggers.n - 1;
		}
		env.triggers.rules[at].keep = true;
		env.opts.triggers = &env.triggers;
		env.otlp_keep = 1;
		env.opts.on_keep = on_keep;
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
			env.opts.trigger_after_ns = ns;
		else
			env.triggers.cooldown_ns = ns;
		break;
	}
	case OPT_TRIGGER_CAP:
		if (rec_cli__parse_dec(arg, 0, REC_TRIGGER_PER_HOUR_MAX, &v))
			argp_error(state, "invalid --trigger-cap '%s': expected 0 to %d", arg,
				   REC_TRIGGER_PER_HOUR_MAX);
		env.triggers.per_hour = (unsigned int)v;
		break;
	case OPT_TRIGGER_SIG_CAP:
		if (rec_cli__parse_dec(arg, 0, REC_TRIGGER_SIG_PER_HOUR_MAX, &v))
			argp_error(state, "invalid --trigger-signature-cap '%s': expected 0 to %d",
				   arg, REC_TRIGGER_SIG_PER_HOUR_MAX);
		env.triggers.sig_per_hour = (unsigned int)v;
		break;
	case OPT_TRIGGER_SCOPE:
		if (strcmp(arg, "recording") && strcmp(arg, "process"))
			argp_error(state,
				   "invalid --trigger-scope '%s': expected recording or process",
				   arg);
		env.opts.trigger_scope_process = strcmp(arg, "process") == 0;
		break;
	case OPT_KEEP_SNAPSHOTS:
		env.opts.keep_snapshots = parse_keep(state, "keep-snapshots", arg);
		break;
	case OPT_MAX_SNAPSHOT_BYTES:
		env.opts.max_snapshot_bytes = parse_bytes(state, "max-snapshot-bytes", arg);
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
		if (env.machine && (env.npids || env.nbinaries))
			argp_error(state,
				   "--machine measures this machine and exits: give no -p or "
				   "--binary with it");
		if (env.npids == 0 && env.nbinaries == 0 && !env.machine)
			argp_error(state, "no process given: use -p PID or --binary PATH");
		if (env.otlp_keep && !env.otlp_url)
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

/*
 * --otlp: a thread a traced process follows it through its control socket,
 * as recorder-tail --follow --otlp does, and sends its events to the
 * receiver. The ring consumer never waits on the network: a follower too slow
 * misses events, and they are counted. When the process ends, the follower
 * gets the rest of its events (its black box's tails) before its stream ends.
 */
struct otlp_job {
	pid_t pid;
	pthread_t thread;
	int started;
	int lost; /* records not delivered */
	struct otlp_job *next;
	/* --otlp-keep: the kept recordings' lines, waiting for the thread; done once it ended. */
	pthread_mutex_t lock;
	pthread_cond_t more;
	char *queue;
	size_t queued;
	int done;
	uint64_t recordings, kept;
};

/* The exporter's options for job: the process's name is its service.name. */
static void otlp_opts(struct otlp_job *job, struct rec_otlp_opts *o, char *comm, size_t commlen,
		      char *who, size_t wholen)
{
	char proc[32];
	FILE *f;

	*o = (struct rec_otlp_opts){ .url = env.otlp_url,
				     .log = stderr,
				     .pid = job->pid,
				     .timeout_ms = env.otlp_timeout_ms,
				     .max_tries = env.otlp_tries };
	comm[0] = 0;
	snprintf(proc, sizeof(proc), "/proc/%d/comm", (int)job->pid);
	f = fopen(proc, "r");
	if (f && fgets(comm, (int)commlen, f))
		comm[strcspn(comm, "\n")] = 0;
	if (f)
		fclose(f);
	o->service_name = comm[0] ? comm : "unknown_service:recorder";
	snprintf(who, wholen, "recorder-attach: OTLP for pid %d", (int)job->pid);
	o->who = who;
}

/*
 * --otlp-keep: sends what the session hands over (on_keep), the recordings a
 * keep rule fired on, until the process has ended; the others are skipped.
 */
static void *otlp_keep(void *arg)
{
	struct otlp_job *job = arg;
	char who[64], comm[64];
	struct rec_otlp_opts o;
	struct rec_otlp *otlp;
	const char *why;

	otlp_opts(job, &o, comm, sizeof(comm), who, sizeof(who));
	if (rec_otlp__new(&otlp, &o, &why))
		return NULL; /* the URL was checked at start */
	pthread_mutex_lock(&job->lock);
	for (;;) {
		char *buf = job->queue;
		size_t n = job->queued;
		int done = job->done;

		if (!n && !done) {
			pthread_cond_wait(&job->more, &job->lock);
			continue;
		}
		job->queue = NULL;
		job->queued = 0;
		pthread_mutex_unlock(&job->lock);
		if (n) {
			rec_otlp__write(otlp, buf, n);
			rec_otlp__flush(otlp);
		}
		free(buf);
		pthread_mutex_lock(&job->lock);
		if (done && !job->queued)
			break;
	}
	pthread_mutex_unlock(&job->lock);
	fprintf(stderr,
		"%s: kept %" PRIu64 " of its %" PRIu64 " recordings (--otlp-keep); %" PRIu64
		" skipped\n",
		who, job->kept, job->recordings, job->recordings - job->kept);
	if (rec_otlp__finish(otlp, who))
		job->lost = 1;
	rec_otlp__free(otlp);
	return NULL;
}

static struct otlp_job *otlp_job_of(pid_t pid)
{
	for (struct otlp_job *job = env.otlp_jobs; job; job = job->next)
		if (job->pid == pid)
			return job;
	return NULL;
}

/* The session's --otlp-keep call: a kept recording's lines, for its process's thread. */
static void on_keep(pid_t pid, uint64_t recording, const char *lines, size_t len, void *ctx)
{
	struct otlp_job *job = otlp_job_of(pid);
	char *v;

	(void)recording;
	(void)ctx;
	if (!job || !job->started)
		return;
	pthread_mutex_lock(&job->lock);
	v = realloc(job->queue, job->queued + len);
	if (v) {
		memcpy(v + job->queued, lines, len);
		job->queue = v;
		job->queued += len;
	}
	pthread_cond_signal(&job->more);
	pthread_mutex_unlock(&job->lock);
}

/* --otlp-keep: pid ended; its thread sends what is left and says what it kept. */
static void otlp_keep_done(const struct rec_exit_info *info)
{
	struct otlp_job *job = otlp_job_of(info->pid);

	if (!job || !env.otlp_keep)
		return;
	pthread_mutex_lock(&job->lock);
	job->done = 1;
	job->recordings = info->recordings;
	job->kept = info->kept;
	pthread_cond_signal(&job->more);
	pthread_mutex_unlock(&job->lock);
}

static void *otlp_follow(void *arg)
{
	struct otlp_job *job = arg;
	struct rec_otlp_opts o;
	/* Events to /v1/logs, and spans, as they are left, to /v1/traces. */
	struct rec_query q = { .flags = REC_Q_FOLLOW | REC_Q_OTLP | REC_Q_SPANS };
	char path[108], who[64], comm[64], status;
	struct rec_otlp *otlp;
	const char *why;
	int fd;

	otlp_opts(job, &o, comm, sizeof(comm), who, sizeof(who));
	if (getrandom(&q.otlp_salt, sizeof(q.otlp_salt), 0) != sizeof(q.otlp_salt))
		q.otlp_salt = (uint64_t)time(NULL) ^ ((uint64_t)job->pid << 32);
	if (rec_otlp__new(&otlp, &o, &why))
		return NULL; /* the URL was checked at start */
	fd = rec_control__path(path, sizeof(path), env.opts.sock_dir, job->pid)
		     ? -ENAMETOOLONG
		     : rec_control__connect(path);
	if (fd < 0 || rec_control__send(fd, &q) || read(fd, &status, 1) != 1 || status != '0') {
		fprintf(stderr, "%s: cannot follow it on %s\n", who, path);
		job->lost = 1;
	} else {
		rec_otlp__pump(otlp, fd, 1000);
	}
	if (fd >= 0)
		close(fd);
	if (rec_otlp__finish(otlp, who))
		job->lost = 1;
	rec_otlp__free(otlp);
	return NULL;
}

static void otlp_start(pid_t pid)
{
	struct otlp_job *job;

	if (!env.otlp_url)
		return;
	job = calloc(1, sizeof(*job));
	if (!job)
		return;
	job->pid = pid;
	pthread_mutex_init(&job->lock, NULL);
	pthread_cond_init(&job->more, NULL);
	job->started = pthread_create(&job->thread, NULL, env.otlp_keep ? otlp_keep : otlp_follow,
				      job) == 0;
	if (!job->started)
		fprintf(stderr, "recorder-attach: OTLP: no thread to follow pid %d\n", (int)pid);
	job->next = env.otlp_jobs;
	env.otlp_jobs = job;
}

/* After the session: every follower has its end; waits for their last sends. */
static void otlp_join(void)
{
	while (env.otlp_jobs) {
		struct otlp_job *job = env.otlp_jobs;

		env.otlp_jobs = job->next;
		if (job->started)
			pthread_join(job->thread, NULL);
		env.otlp_lost += job->lost || !job->started;
		free(job);
	}
}

static void on_adopt(pid_t pid, const char *binary, void *ctx)
{
	(void)ctx;
	printf("recorder-attach: tracing pid %d (%s)\n", (int)pid, binary);
	fflush(stdout);
	otlp_start(pid);
}

/* "recorder-attach N (--binary PATH)", or "(-p)": who else holds or waits for a process. */
static void print_peer(const struct rec_control_peer *p)
{
	if (p->pid)
		fprintf(stderr, "recorder-attach %d (", (int)p->pid);
	else
		fputs("another recorder-attach (", stderr);
	if (p->binary[0]) {
		fputs("--binary ", stderr);
		rec_text__escape(stderr, p->binary, strlen(p->binary));
	} else {
		fputs("-p", stderr);
	}
	fputc(')', stderr);
}

/* One line on stderr for each hand-over of a process between two recorder-attach. */
static void on_handover(enum rec_handover what, pid_t pid, const struct rec_control_peer *other,
			int err, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "recorder-attach: pid %d ", (int)pid);
	switch (what) {
	case REC_HANDOVER_DEFER:
		fputs("is held by ", stderr);
		print_peer(other);
		fputs(": deferring to it (its events are kept here too, and it is taken over "
		      "here if that one stops)\n",
		      stderr);
		break;
	case REC_HANDOVER_TAKEN:
		fputs("handed back by ", stderr);
		print_peer(other);
		fputs(", which let go of it: traced here now\n", stderr);
		break;
	case REC_HANDOVER_GIVEN:
		fputs("handed back to ", stderr);
		print_peer(other);
		fputs(", which waited for it\n", stderr);
		break;
	case REC_HANDOVER_GONE:
		fputs("ended while ", stderr);
		print_peer(other);
		fputs(" held it: its black box is that one's\n", stderr);
		break;
	case REC_HANDOVER_FAILED:
		fputs("handed back by ", stderr);
		print_peer(other);
		fprintf(stderr, ", but its socket cannot be served here: %s; no longer traced\n",
			strerror(-err));
		break;
	case REC_HANDOVER_EXEC:
		fputs("exec'd a file no --binary names, before any recording: no longer "
		      "traced\n",
		      stderr);
		break;
	}
	fflush(stderr);
}

/* The file and the spec come from the target's files: escaped for the terminal. */
static void on_skipped(pid_t pid, const char *path, const char *probe, unsigned int nsites,
		       const char *spec, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "recorder-attach: warning: skipped %u site%s of probe recorder:%s in ",
		nsites, nsites == 1 ? "" : "s", probe);
	rec_text__escape(stderr, path, strlen(path));
	if (pid)
		fprintf(stderr, " (pid %d)", (int)pid);
	fputs(": unsupported argument spec '", stderr);
	rec_text__escape(stderr, spec, strlen(spec));
	fputs("'; its other sites are attached\n", stderr);
}

/* " in pid N", or " in every process" for a library of a --binary's processes. */
static void print_in(FILE *out, pid_t pid)
{
	if (pid)
		fprintf(out, " in pid %d", (int)pid);
	else
		fputs(" in every process", out);
}

/* The path comes from the target's maps: escaped for the terminal. */
static void on_late(enum rec_late_library what, pid_t pid, const char *path, int err,
		    unsigned int tries, void *ctx)
{
	FILE *out = what == REC_LATE_ATTACHED ? stdout : stderr;

	(void)ctx;
	fputs(what == REC_LATE_FAILED	  ? "recorder-attach: failed to attach the probes of "
	      : what == REC_LATE_ATTACHED ? "recorder-attach: attached the probes of "
					  : "recorder-attach: gave up attaching the probes of ",
	      out);
	rec_text__escape(out, path, strlen(path));
	print_in(out, pid);
	if (what == REC_LATE_FAILED)
		fprintf(out, ": %s; trying again at each rescan, %d more times at most\n",
			strerror(-err), REC_ATTACH_TRIES - 1);
	else if (what == REC_LATE_ATTACHED)
		fprintf(out, " at try %u\n", tries);
	else
		fprintf(out, " after %u tries: %s\n", tries, strerror(-err));
	fflush(out);
}

static void on_exit_pid(const struct rec_exit_info *info, void *ctx)
{
	(void)ctx;
	otlp_keep_done(info);
	printf("recorder-attach: pid %d exited: %s\n", (int)info->pid, info->how);
	if (info->dump_err == 0)
		printf("recorder-attach: black box of pid %d written to %s\n", (int)info->pid,
		       info->dump_path);
	else if (env.opts.dump_dir) {
		fprintf(stderr,
			"recorder-attach: failed to write the black box of pid %d into %s: "
			"%s\n",
			(int)info->pid, env.opts.dump_dir, strerror(-info->dump_err));
		if (env.lost < MAX_LOST_NAMED)
			env.lost_pids[env.lost] = info->pid;
		env.lost++;
	}
	fflush(stdout);
}

/*
 * The capabilities recorder-attach still needs once it has attached, found by
 * dropping all and adding back what the tests needed; docs/guide/access.md
 * ("Capabilities") says the same. CAP_BPF and CAP_PERFMON are not among them:
 * the programs are loaded, and linking them to the probes of a library loaded
 * later or of an adopted process, using the maps and the iterator they hold,
 * checks no capability. Everything else goes, from the bounding set too, so
 * nothing recorder-attach runs can get it back.
 */
static const int kept_caps[] = {
	CAP_SYS_PTRACE,	     /* other processes' /proc/PID/{maps,exe,root,mem}: rescans for
				 * libraries, --binary adoption, reads of their memory */
	CAP_DAC_READ_SEARCH, /* scan and attach libraries whose file or directory mode
				 * shuts root out (a user's private directory) */
	CAP_CHOWN,	     /* give the socket of a process adopted later to its owner */
};

static int drop_capabilities(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	uint64_t keep = 0, eff, prm;

	for (size_t i = 0; i < sizeof(kept_caps) / sizeof(kept_caps[0]); i++)
		keep |= 1ULL << kept_caps[i];
	/*
	 * The bounding set first: that needs CAP_SETPCAP, which goes next. A
	 * service manager may have taken CAP_SETPCAP away already with a bounding
	 * set of its own (recorder@.service): then that set stays as it is, and
	 * no-new-privileges below still keeps exec from regaining anything.
	 */
	for (int c = 0, in; c < 64 && (in = prctl(PR_CAPBSET_READ, c, 0, 0, 0)) >= 0; c++) {
		if (!in || (keep & (1ULL << c)))
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0)) {
			if (errno != EPERM)
				return -errno;
			break;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capget, &h, d))
		return -errno;
	eff = ((uint64_t)d[1].effective << 32 | d[0].effective) & keep;
	prm = ((uint64_t)d[1].permitted << 32 | d[0].permitted) & keep;
	for (int i = 0; i < 2; i++) {
		d[i].effective = (uint32_t)(eff >> (32 * i));
		d[i].permitted = (uint32_t)(prm >> (32 * i));
		d[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &h, d))
		return -errno;
	/* Nor by exec: no set-user-ID or file capabilities for what it runs. */
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? -errno : 0;
}

static int sock_dir_searchable = 1;

/* Gets the socket directory ready (created if missing) and refuses an unsafe one. */
static int prepare_sock_dir(void)
{
	const char *dir = env.opts.sock_dir ? env.opts.sock_dir : REC_CONTROL_DIR;
	int err, searchable;
	char why[128];

	err = rec_control__prepare_dir(dir, why, sizeof(why), &searchable);
	if (err == -EPERM) {
		fprintf(stderr,
			"recorder-attach: refusing the socket directory %s: %s (an existing "
			"directory is never changed: fix it, or choose another with "
			"--sock-dir)\n",
			dir, why);
		return err;
	} else if (err) {
		fprintf(stderr, "recorder-attach: failed to create the socket directory %s: %s\n",
			dir, strerror(-err));
		return err;
	}
	sock_dir_searchable = searchable;
	return 0;
}

/* Why pid's control socket could not be served, for the errors of rec_session__attach. */
static int socket_error(pid_t pid, int err, const struct rec_attach_info *info)
{
	if (err == -EBUSY && info->lock_holder)
		fprintf(stderr,
			"recorder-attach: pid %d is already traced by recorder-attach pid %d, "
			"which holds the lock %s and serves %s\n",
			(int)pid, (int)info->lock_holder, info->lock_path, info->sock_path);
	else if (err == -EBUSY)
		fprintf(stderr,
			"recorder-attach: pid %d is already traced by another "
			"recorder-attach, which holds the lock %s and serves %s\n",
			(int)pid, info->lock_path, info->sock_path);
	else if (err == -EADDRINUSE)
		fprintf(stderr,
			"recorder-attach: failed to attach to pid %d: something else "
			"answers on its socket %s without holding the lock %s; stop it or "
			"use another --sock-dir\n",
			(int)pid, info->sock_path, info->lock_path);
	else if (err == -EEXIST)
		fprintf(stderr,
			"recorder-attach: failed to attach to pid %d: %s is in the place of "
			"its socket and is not a socket; remove it or use another "
			"--sock-dir\n",
			(int)pid, info->sock_path);
	else
		return 0;
	return 1;
}

/* Names the processes whose black box could not be written. */
static void report_lost(void)
{
	fprintf(stderr, "recorder-attach: %d black box%s could not be written: pid", env.lost,
		env.lost == 1 ? "" : "es");
	for (int i = 0; i < env.lost && i < MAX_LOST_NAMED; i++)
		fprintf(stderr, "%s %d", i ? "," : "", (int)env.lost_pids[i]);
	fprintf(stderr, "%s\n", env.lost > MAX_LOST_NAMED ? ", ..." : "");
}

/* --machine: the facts as one JSON line, from a session that attaches nothing. */
static int print_machine(void)
{
	struct rec_session_opts o = env.opts;
	struct rec_session *s = NULL;
	struct rec_machine m;
	int err;

	o.dump_dir = NULL;
	err = rec_session__open(&s, &o);
	if (err) {
		fprintf(stderr, "recorder-attach: failed to load the BPF programs: %s\n",
			strerror(-err));
		return 1;
	}
	err = rec_session__machine(s, &m);
	rec_session__free(s);
	if (err)
		fprintf(stderr, "recorder-attach: could not time a uprobe hit: %s\n",
			strerror(-err));
	rec_machine__write_json(&m, stdout);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_arg, NULL, doc, NULL, NULL, NULL };
	struct rec_session *s = NULL;
	int err;

	/* The reaper children that detach (rec_reaper__close_links) are never waited for. */
	signal(SIGCHLD, SIG_IGN);
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;
	/* A rule on a span's kernel time would never fire without it. */
	for (unsigned int i = 0; i < env.triggers.n && !env.opts.sched; i++)
		if (env.triggers.rules[i].rule.part) {
			fprintf(stderr, "recorder-attach: --trigger '%s' needs --sched\n",
				env.triggers.rules[i].text);
			return 2;
		}
	if (geteuid() != 0) {
		fprintf(stderr, "recorder-attach: must run as root (loading BPF programs and "
				"attaching uprobes needs CAP_BPF and CAP_PERFMON)\n");
		return 1;
	}
	if (env.machine)
		return print_machine();
	if (prepare_sock_dir())
		return 1;
	/* Found now, not when a process dies and its black box is lost. */
	if (env.opts.dump_dir) {
		err = rec_dump__prepare_dir(env.opts.dump_dir);
		if (err) {
			fprintf(stderr,
				"recorder-attach: cannot write black boxes into %s: %s%s "
				"(use --dump-dir DIR, or --no-dump)\n",
				env.opts.dump_dir, strerror(-err),
				err == -EACCES ? ": its mode does not let root "
						 "write in it"
					       : "");
			return 1;
		}
	}
	env.opts.on_adopt = on_adopt;
	env.opts.on_handover = on_handover;
	env.opts.on_skipped = on_skipped;
	env.opts.on_late = on_late;
	env.opts.follow_binaries = env.nbinaries > 0;
	err = rec_session__open(&s, &env.opts);
	if (err) {
		fprintf(stderr,
			"recorder-attach: failed to load the BPF programs: %s "
			"(BPF unavailable? the kernel needs BPF, BTF and uprobes; -v shows "
			"libbpf's messages)\n",
			strerror(-err));
		return 1;
	}
	if (env.opts.verbose) {
		struct rec_machine m;
		char line[512];

		rec_session__machine(s, &m);
		rec_machine__format(&m, line, sizeof(line));
		fprintf(stderr, "recorder-attach: this machine: %s\n", line);
	}
	for (int i = 0; i < env.npids; i++) {
		struct rec_attach_info info;
		pid_t pid = env.pids[i];

		err = rec_session__attach(s, pid, &info);
		if (socket_error(pid, err, &info)) {
			goto cleanup;
		} else if (err == -ENOENT) {
			fprintf(stderr,
				"recorder-attach: pid %d has no recorder probes in its "
				"executable or loaded libraries\n",
				(int)pid);
			goto cleanup;
		} else if (err == -E2BIG) {
			fprintf(stderr,
				"recorder-attach: failed to attach to pid %d: its probes have "
				"more distinct argument layouts than the %d this build holds\n",
				(int)pid, REC_USDT_MAX_SPECS);
			goto cleanup;
		} else if (err) {
			fprintf(stderr, "recorder-attach: failed to attach to pid %d: %s\n",
				(int)pid, strerror(-err));
			goto cleanup;
		}
		printf("attached to %d: %u probe sites in %u objects\n", (int)pid, info.sites,
		       info.objects);
		print_path();
		otlp_start(pid);
		if (!sock_dir_searchable && info.uid != 0 && info.uid != (uid_t)-1)
			fprintf(stderr,
				"recorder-attach: note: pid %d belongs to uid %u, who may not "
				"search %s: only root can read its trace ('chmod o+x' on the "
				"directory lets owners read their own)\n",
				(int)pid, (unsigned int)info.uid,
				env.opts.sock_dir ? env.opts.sock_dir : REC_CONTROL_DIR);
		fflush(stdout);
	}
	for (int i = 0; i < env.nbinaries; i++) {
		struct rec_attach_info info;

		err = rec_session__attach_binary(s, env.binaries[i], &info);
		if (err == -ENOENT) {
			fprintf(stderr, "recorder-attach: %s has no recorder probes\n",
				env.binaries[i]);
			goto cleanup;
		} else if (err) {
			fprintf(stderr, "recorder-attach: failed to attach to %s: %s\n",
				env.binaries[i], strerror(-err));
			goto cleanup;
		}
		printf("attached to %s: %u probe sites, in every process that runs it\n",
		       env.binaries[i], info.sites);
		print_path();
		fflush(stdout);
	}
	err = drop_capabilities();
	if (err) {
		fprintf(stderr,
			"recorder-attach: failed to drop the capabilities it no longer "
			"needs: %s\n",
			strerror(-err));
		goto cleanup;
	}
	err = rec_session__run(s, on_exit_pid, NULL);
	if (err)
		fprintf(stderr, "recorder-attach: event loop failed: %s\n", strerror(-err));
cleanup:
	rec_session__free(s);
	otlp_join();
	if (env.lost)
		report_lost();
	return err || env.lost || env.otlp_lost ? 1 : 0;
}
