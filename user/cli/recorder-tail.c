// SPDX-License-Identifier: MIT
/* recorder-tail: print what recorder-attach recorded. */
#include <argp.h>
#include <inttypes.h>
#include <sys/random.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "serving/control.h"
#include "model/dump.h"
#include "model/names.h"
#include "export/otlp.h"
#include "serving/query.h"
#include "incidents/trigger.h"

/* How often a --follow --otlp sends what it holds. */
#define OTLP_FLUSH_MS 1000

static struct {
	pid_t pid;
	const char *sock_dir;
	const char *file;
	struct rec_query q;
	const char *otlp_url;	  /* --otlp: events go there, not to stdout */
	const char *service_name; /* --service-name */
	int otlp_timeout_ms;	  /* --otlp-timeout */
	int otlp_tries;		  /* --otlp-tries */
	struct rec_otlp *otlp;
} env;

const char *argp_program_version = "recorder-tail 0.1";
static const char doc[] =
	/* Lines under 79 columns: argp re-wraps longer ones mid-sentence. */
	"Print the flight recorder of a process traced by recorder-attach: the\n"
	"last events of each recording, oldest first, with their sequence numbers;\n"
	"the recordings; or the span stack every thread is in right now. Root\n"
	"and the process's owner may read it.\n"
	"\n"
	"Text lines are glog-style: level, date, time, thread id, file:line,\n"
	"<subject>, message and fields. Lost events show as a\n"
	"'-- N events lost --' line. A --follow reader too slow for the events\n"
	"misses some and is told so: '-- N events not sent: reader too slow --'\n"
	"(in --json, an object with not_sent).\n"
	"\n"
	"With --file, reads a black box written by recorder-attach when a process\n"
	"ended; every other option works the same on it.\n"
	"\n"
	"USAGE: recorder-tail -p PID [OPTION...]\n"
	"       recorder-tail --file DUMP [OPTION...]\n"
	"\n"
	"EXAMPLES:\n"
	"  recorder-tail -p 4242                 # every recording's tail\n"
	"  recorder-tail -p 4242 -n 5 --json     # the last 5 of each, JSON lines\n"
	"  recorder-tail -p 4242 --list          # recordings, seen and dropped\n"
	"  recorder-tail -p 4242 --stacks        # what each thread is in, how long\n"
	"  recorder-tail -p 4242 --subject 'actor[0]' --follow\n"
	"  recorder-tail -p 4242 --where 'status>=500' --where 'key=user:*'\n"
	"  recorder-tail -p 4242 --dump          # write a black box now\n"
	"  recorder-tail --file DUMP --format chrome >t.json  # ui.perfetto.dev\n"
	"  recorder-tail --file /var/lib/recorder/recorder-4242-….json --stacks\n";

enum {
	OPT_FILE = 0x100,
	OPT_DUMP,
	OPT_STATS,
	OPT_RECORDER,
	OPT_RECORDING,
	OPT_SUBJECT,
	OPT_LIST,
	OPT_STACKS,
	OPT_FOLLOW,
	OPT_JSON,
	OPT_SOCKDIR,
	OPT_LEVEL,
	OPT_TARGET,
	OPT_SINCE,
	OPT_OTLP,
	OPT_SERVICE,
	OPT_SPANS,
	OPT_FORMAT,
	OPT_OTLP_TIMEOUT,
	OPT_OTLP_TRIES,
	OPT_TRIGGERS,
	OPT_ADD_TRIGGER,
	OPT_REMOVE_TRIGGER,
	OPT_WHERE,
};

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Process to read (traced by recorder-attach)", 0 },
	{ "lines", 'n', "N", 0, "Show only the last N events of each recording", 0 },
	{ "recording", OPT_RECORDING, "KEY", 0, "Only the recording with this key (0x...)", 0 },
	{ "recorder", OPT_RECORDER, "KEY", 0, "Only the recordings of the recorder with this key",
	  0 },
	{ "subject", OPT_SUBJECT, "GLOB", 0,
	  "Only recordings whose subject is GLOB, or matches it as a glob ('conn#6*'); "
	  "a filter that matches no recording is an error (exit status 1)",
	  0 },
	{ "level", OPT_LEVEL, "LEVEL", 0,
	  "Only events of LEVEL (trace, debug, info, warn, error) and above", 0 },
	{ "target", OPT_TARGET, "GLOB", 0,
	  "Only events whose target (REC_TARGET, by default the source file) is GLOB, or "
	  "matches it as a glob",
	  0 },
	{ "since", OPT_SINCE, "DURATION", 0,
	  "Only events of the last DURATION (500ms, 30s, 5m, 2h, 1d), counted back from now", 0 },
	{ "where", OPT_WHERE, "COND", 0,
	  "Only events whose fields (those of --json, message included) satisfy COND, FIELD OP "
	  "VALUE: status>=500, 'key=user:*', hit=false (OP = != < <= > >=; numbers by value, "
	  "strings as globs, booleans). "
	  "Repeatable: every COND must hold. An event without the field, or whose field is "
	  "of another type than VALUE, is left out (with != too); spans are not filtered",
	  0 },
	{ "list", OPT_LIST, NULL, 0,
	  "List the recordings: key, recorder, subject, cap (kept) and the cap its program "
	  "asked for, events seen, delivered, dropped, tail, state",
	  0 },
	{ "stacks", OPT_STACKS, NULL, 0,
	  "Show each active span stack, leaf first, 'recording' last, and how long each "
	  "frame has been open (JSON: its enter time and age_ns)",
	  0 },
	{ "spans", OPT_SPANS, NULL, 0,
	  "With a tail: each recording's spans too, after its events (enter, duration or "
	  "open, id, parent); with --list: its spans seen, kept, aged out by --span-cap and "
	  "lost",
	  0 },
	{ "follow", OPT_FOLLOW, NULL, 0, "After the tail, print new events as they arrive", 0 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per line (the same as --format json)", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0,
	  "text (the default), json (JSON lines) or chrome: the tail as one Chrome trace-event "
	  "JSON document for ui.perfetto.dev (not with --follow, --list, --stacks, --stats)",
	  0 },
	{ "stats", OPT_STATS, NULL, 0,
	  "Show the loss and error counters, and the limits something went over", 0 },
	{ "verbose", 'v', NULL, 0,
	  "With --stats: every limit and its use, and the internal table sizes", 0 },
	{ "file", OPT_FILE, "DUMP", 0, "Read a black box (dump) instead of a live process", 0 },
	{ "otlp", OPT_OTLP, "URL", 0,
	  "Send the events as OpenTelemetry log records (OTLP/HTTP, JSON) to URL/v1/logs, "
	  "and the spans to URL/v1/traces, instead of printing them; with the filters, "
	  "--follow and --file",
	  0 },
	{ "service-name", OPT_SERVICE, "NAME", 0,
	  "With --otlp: the resource's service.name (default: the process's comm)", 0 },
	{ "otlp-timeout", OPT_OTLP_TIMEOUT, "DURATION", 0,
	  "With --otlp: the most one request may take, connect to answer (default 5s)", 0 },
	{ "otlp-tries", OPT_OTLP_TRIES, "N", 0,
	  "With --otlp: tries of a batch before it is counted as not delivered (default 6)", 0 },
	{ "dump", OPT_DUMP, NULL, 0, "Ask recorder-attach to write a black box now", 0 },
	{ "triggers", OPT_TRIGGERS, NULL, 0,
	  "The trigger rules of the process, with how often each fired, was saved, or was "
	  "held back by a cooldown or an hourly cap; under each its signatures (what it "
	  "fired on): counts, first and last firing, first snapshot",
	  0 },
	{ "add-trigger", OPT_ADD_TRIGGER, "RULE", 0,
	  "Add a trigger rule to the running recorder-attach of the process (root and the "
	  "process's owner only)",
	  0 },
	{ "remove-trigger", OPT_REMOVE_TRIGGER, "RULE|ID", 0,
	  "Remove a trigger rule, by its text or its id (see --triggers)", 0 },
	{ "sock-dir", OPT_SOCKDIR, "DIR", 0, "Directory of control sockets (default /run/recorder)",
	  0 },
	{},
};

/* A --subject or --target pattern into buf (size bytes), or a usage error naming it. */
static void copy_pattern(struct argp_state *state, const char *opt, const char *arg, char *buf,
			 size_t size)
{
	if (!*arg || strlen(arg) >= size)
		argp_error(state, "invalid %s '%s': expected 1 to %zu bytes", opt, arg, size - 1);
	strcpy(buf, arg);
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	uint64_t v;

	switch (key) {
	case 'p':
		env.pid = rec_cli__parse_pid(state, arg);
		break;
	case 'n':
		if (rec_cli__parse_dec(arg, 1, INT64_MAX, &v))
			argp_error(state, "invalid -n '%s': expected a positive decimal integer",
				   arg);
		env.q.n = (int64_t)v;
		break;
	case OPT_RECORDING:
		if (rec_cli__parse_u64(arg, 1, UINT64_MAX, &v))
			argp_error(state,
				   "invalid --recording '%s': expected a key such as "
				   "0x8000000000000001",
				   arg);
		env.q.recording = v;
		env.q.flags |= REC_Q_HAS_RECORDING;
		break;
	case OPT_RECORDER:
		if (rec_cli__parse_u64(arg, 1, UINT64_MAX, &v))
			argp_error(state,
				   "invalid --recorder '%s': expected a key such as "
				   "0x8000000000000001",
				   arg);
		env.q.recorder = v;
		env.q.flags |= REC_Q_HAS_RECORDER;
		break;
	case OPT_SUBJECT:
		copy_pattern(state, "--subject", arg, env.q.subject, sizeof(env.q.subject));
		break;
	case OPT_LIST:
		env.q.flags |= REC_Q_LIST;
		break;
	case OPT_STACKS:
		env.q.flags |= REC_Q_STACKS;
		break;
	case OPT_SPANS:
		env.q.flags |= REC_Q_SPANS;
		break;
	case OPT_FOLLOW:
		env.q.flags |= REC_Q_FOLLOW;
		break;
	case OPT_JSON:
		/* The last of --json and --format counts. */
		env.q.flags &= ~(uint32_t)REC_Q_CHROME;
		env.q.flags |= REC_Q_JSON;
		break;
	case OPT_FORMAT:
		env.q.flags &= ~(uint32_t)(REC_Q_JSON | REC_Q_CHROME);
		if (!strcmp(arg, "json"))
			env.q.flags |= REC_Q_JSON;
		else if (!strcmp(arg, "chrome"))
			env.q.flags |= REC_Q_CHROME;
		else if (strcmp(arg, "text"))
			argp_error(state, "invalid --format '%s': expected text, json or chrome",
				   arg);
		break;
	case OPT_STATS:
		env.q.flags |= REC_Q_STATS;
		break;
	case 'v':
		env.q.flags |= REC_Q_VERBOSE;
		break;
	case OPT_LEVEL: {
		enum rec_level level;

		if (rec_names__parse_level(arg, &level))
			argp_error(
				state,
				"invalid --level '%s': expected trace, debug, info, warn or error",
				arg);
		env.q.level = level;
		env.q.flags |= REC_Q_HAS_LEVEL;
		break;
	}
	case OPT_TARGET:
		copy_pattern(state, "--target", arg, env.q.target, sizeof(env.q.target));
		break;
	case OPT_SINCE: {
		struct timespec now;

		if (rec_cli__parse_duration(arg, &v))
			argp_error(state,
				   "invalid --since '%s': expected a duration such as 500ms, 30s, "
				   "5m, 2h or 1d",
				   arg);
		clock_gettime(CLOCK_REALTIME, &now);
		env.q.since_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec -
				 (v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v);
		env.q.flags |= REC_Q_HAS_SINCE;
		break;
	}
	case OPT_WHERE: {
		char err[REC_COND_TEXT_MAX + 128];

		if (env.q.nwhere == REC_QUERY_WHERE_MAX)
			argp_error(state, "too many --where '%s': at most %d conditions", arg,
				   REC_QUERY_WHERE_MAX);
		if (rec_cond__parse(arg, &env.q.where[env.q.nwhere], err, sizeof(err)))
			argp_error(state, "invalid --where '%s': %s\n\n%s", arg, err,
				   REC_COND_GRAMMAR);
		env.q.nwhere++;
		break;
	}
	case OPT_FILE:
		env.file = arg;
		break;
	case OPT_OTLP:
		env.otlp_url = arg;
		env.q.flags |= REC_Q_OTLP;
		break;
	case OPT_SERVICE:
		if (!*arg)
			argp_error(state, "--service-name needs a name");
		env.service_name = arg;
		break;
	case OPT_OTLP_TIMEOUT:
		env.otlp_timeout_ms = rec_cli__parse_otlp_timeout(state, arg);
		break;
	case OPT_OTLP_TRIES:
		env.otlp_tries = rec_cli__parse_otlp_tries(state, arg);
		break;
	case OPT_DUMP:
		env.q.flags |= REC_Q_DUMP;
		break;
	case OPT_TRIGGERS:
		env.q.flags |= REC_Q_TRIGGERS;
		break;
	case OPT_ADD_TRIGGER: {
		struct rec_trigger_rule r;
		char err[256];

		if (rec_trigger__parse(arg, &r, err, sizeof(err)))
			argp_error(state, "invalid --add-trigger '%s': %s\n\n%s", arg, err,
				   REC_TRIGGER_GRAMMAR);
		copy_pattern(state, "--add-trigger", arg, env.q.rule, sizeof(env.q.rule));
		env.q.flags |= REC_Q_ADD_TRIGGER;
		break;
	}
	case OPT_REMOVE_TRIGGER:
		copy_pattern(state, "--remove-trigger", arg, env.q.rule, sizeof(env.q.rule));
		env.q.flags |= REC_Q_REMOVE_TRIGGER;
		break;
	case OPT_SOCKDIR:
		env.sock_dir = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!env.pid && !env.file)
			argp_error(state, "no process given: use -p PID or --file DUMP");
		if (env.pid && env.file)
			argp_error(state, "-p and --file do not go together");
		if (__builtin_popcount(env.q.flags & (REC_Q_LIST | REC_Q_STACKS | REC_Q_STATS |
						      REC_Q_DUMP | REC_Q_TRIGGERS |
						      REC_Q_ADD_TRIGGER | REC_Q_REMOVE_TRIGGER)) >
		    1)
			argp_error(state, "--list, --stacks, --stats, --dump, --triggers, "
					  "--add-trigger and --remove-trigger do not go together");
		if (env.file &&
		    (env.q.flags & (REC_Q_TRIGGERS | REC_Q_ADD_TRIGGER | REC_Q_REMOVE_TRIGGER)))
			argp_error(state, "--triggers, --add-trigger and --remove-trigger ask a "
					  "live recorder-attach; they do not go with --file");
		if ((env.q.flags & REC_Q_FOLLOW) &&
		    (env.q.flags & (REC_Q_TRIGGERS | REC_Q_ADD_TRIGGER | REC_Q_REMOVE_TRIGGER)))
			argp_error(state, "--follow goes with live tails only");
		if ((env.q.flags & REC_Q_FOLLOW) &&
		    (env.file ||
		     (env.q.flags & (REC_Q_LIST | REC_Q_STACKS | REC_Q_STATS | REC_Q_DUMP))))
			argp_error(state, "--follow goes with live tails only");
		/* One document per answer: nothing to add events to after it. */
		if ((env.q.flags & REC_Q_CHROME) &&
		    (env.q.flags & (REC_Q_FOLLOW | REC_Q_LIST | REC_Q_STACKS | REC_Q_STATS)))
			argp_error(state,
				   "--format chrome writes one trace of the tails: it does not "
				   "go with --follow, --list, --stacks or --stats");
		/* Said, not ignored: these views show no events to choose. */
		if ((env.q.flags & (REC_Q_LIST | REC_Q_STACKS | REC_Q_STATS)) &&
		    ((env.q.flags & (REC_Q_HAS_LEVEL | REC_Q_HAS_SINCE)) || env.q.target[0] ||
		     env.q.nwhere))
			argp_error(state,
				   "--level, --target, --since and --where choose events: they "
				   "do not go with --list, --stacks or --stats");
		if (env.file && (env.q.flags & REC_Q_DUMP))
			argp_error(
				state,
				"--dump asks a live recorder-attach; it does not go with --file");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* --otlp: checks what cannot go with it, and starts the exporter. 0, or 1 after a usage error. */
static int otlp_start(void)
{
	struct rec_otlp_opts o = { .url = env.otlp_url,
				   .log = stderr,
				   .pid = env.pid,
				   .timeout_ms = env.otlp_timeout_ms,
				   .max_tries = env.otlp_tries };
	static char comm[64];
	const char *why;
	char path[64];
	FILE *f;

	if (env.q.flags &
	    (REC_Q_LIST | REC_Q_STACKS | REC_Q_STATS | REC_Q_DUMP | REC_Q_JSON | REC_Q_CHROME)) {
		fprintf(stderr, "recorder-tail: --otlp sends events: it does not go with --list, "
				"--stacks, --stats, --dump, --json or --format\n");
		return 1;
	}
	/* Spans go to /v1/traces: the tail's spans, as --spans has them. */
	env.q.flags |= REC_Q_SPANS;
	o.service_name = env.service_name;
	if (!o.service_name && env.pid) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)env.pid);
		f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = 0;
			o.service_name = comm;
		}
		if (f)
			fclose(f);
	}
	if (!o.service_name)
		o.service_name = "unknown_service:recorder";
	if (getrandom(&env.q.otlp_salt, sizeof(env.q.otlp_salt), 0) != sizeof(env.q.otlp_salt))
		env.q.otlp_salt = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (rec_otlp__new(&env.otlp, &o, &why)) {
		fprintf(stderr, "recorder-tail: invalid --otlp '%s': %s\n", env.otlp_url, why);
		return 1;
	}
	return 0;
}

/* --otlp: sends what is left and says what was delivered. Returns rc, or 1 if something was not. */
static int otlp_end(int rc)
{
	if (!env.otlp)
		return rc;
	if (rec_otlp__finish(env.otlp, "recorder-tail: OTLP"))
		rc = 1;
	rec_otlp__free(env.otlp);
	env.otlp = NULL;
	return rc;
}

/* Where the answer's bytes go: stdout, or the OTLP exporter. */
static int emit(const char *buf, size_t n)
{
	if (env.otlp) {
		rec_otlp__write(env.otlp, buf, n);
		return 0;
	}
	if (fwrite(buf, 1, n, stdout) != n)
		return -1;
	fflush(stdout);
	return 0;
}

/* A dump is shown by the same code that answers for live processes. */
static int show_file(const char *path)
{
	struct rec_dump_counters counters;
	struct rec_proc p;
	char err[PATH_MAX + 256];
	int rc;

	/* A FIFO, a device or a directory is refused before it is opened. */
	rc = rec_dump__read(path, &p, &counters, err, sizeof(err));
	if (rc == -EINVAL) {
		fprintf(stderr, "recorder-tail: %s is not a valid recorder dump: %s\n", path, err);
		return 1;
	} else if (rc) {
		/* err names the file: "PATH: a FIFO, not a regular file". */
		fprintf(stderr, "recorder-tail: failed to read %s\n", err);
		return 1;
	}
	memcpy(p.counters, counters.v, sizeof(p.counters));
	if (rec_query__selects_nothing(&p, &env.q, err, sizeof(err))) {
		fprintf(stderr, "recorder-tail: no recording in %s matches %s\n", path, err);
		rec_proc__fini(&p);
		return 1;
	}
	if (env.otlp) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		rc = f ? rec_query__answer(f, &p, &env.q) : -ENOMEM;
		if (f && fclose(f))
			rc = -ENOMEM;
		if (!rc)
			emit(buf, len);
		free(buf);
	} else {
		rc = rec_query__answer(stdout, &p, &env.q);
	}
	rec_proc__fini(&p);
	if (fflush(stdout) || rc) {
		fprintf(stderr, "recorder-tail: failed to write the output\n");
		return 1;
	}
	return 0;
}

/* The socket's mode or its directory's kept us out: who may read, then. */
static void access_error(const char *path)
{
	char proc[32];
	struct stat st;

	snprintf(proc, sizeof(proc), "/proc/%d", (int)env.pid);
	if (stat(proc, &st) == 0 && st.st_uid != 0)
		fprintf(stderr,
			"recorder-tail: permission denied on %s: only root and the owner "
			"of pid %d (uid %u) may read its trace\n",
			path, (int)env.pid, (unsigned int)st.st_uid);
	else
		fprintf(stderr,
			"recorder-tail: permission denied on %s: only root may read the "
			"trace of pid %d\n",
			path, (int)env.pid);
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_arg, NULL, doc, NULL, NULL, NULL };
	char path[108], buf[65536], status;
	ssize_t n;
	int fd;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	if (env.otlp_url && otlp_start())
		return 2;
	if (env.file)
		return otlp_end(show_file(env.file));
	if (rec_control__path(path, sizeof(path), env.sock_dir, env.pid)) {
		fprintf(stderr, "recorder-tail: socket path for pid %d is too long\n",
			(int)env.pid);
		return 1;
	}
	fd = rec_control__connect(path);
	if (fd < 0) {
		if (fd == -EACCES || fd == -EPERM)
			access_error(path);
		else if (fd == -ENOENT && kill(env.pid, 0) && errno == ESRCH)
			fprintf(stderr,
				"recorder-tail: no such process: pid %d (and no "
				"recorder-attach serving it at %s)\n",
				(int)env.pid, path);
		else if (fd == -ENOENT)
			fprintf(stderr,
				"recorder-tail: no recorder-attach is running for pid %d "
				"(no socket at %s); start one with: recorder-attach -p %d\n",
				(int)env.pid, path, (int)env.pid);
		else
			fprintf(stderr, "recorder-tail: failed to connect to %s: %s\n", path,
				strerror(-fd));
		return 1;
	}
	signal(SIGPIPE, SIG_DFL);
	/* Even if it hung up before the request went out, it may have said why. */
	rec_control__send(fd, &env.q);
	if (read(fd, &status, 1) != 1) {
		fprintf(stderr, "recorder-tail: recorder-attach for pid %d did not answer on %s\n",
			(int)env.pid, path);
		return 1;
	}
	/* A follower's records go out at least once a second, however few. */
	if (env.otlp && status == '0') {
		rec_otlp__pump(env.otlp, fd, OTLP_FLUSH_MS);
		close(fd);
		return otlp_end(0);
	}
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (status != '0') {
			fwrite(buf, 1, (size_t)n, stderr);
			fflush(stderr);
		} else if (emit(buf, (size_t)n)) {
			return 1;
		}
	}
	close(fd);
	return otlp_end(status == '0' ? 0 : 1);
}
