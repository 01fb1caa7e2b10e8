/* SPDX-License-Identifier: MIT */
/*
 * workload: an instrumented program that generates recorder load on demand. It
 * drives the demo, the end-to-end tests and the benchmarks, and shows users what
 * an attached recorder sees.
 *
 * Each of T threads creates R recordings of one shared recorder, gives each a
 * recording span with a subject and D nested child spans, and emits N events
 * into every recording, round-robin. After the last event every thread is inside
 * the spans of all its recordings; the workload holds there, writes its report
 * and ends the way --die says, so tests can compare what the recorder kept with
 * what was emitted.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <recorder.h>

#define MAX_THREADS 4096
#define MAX_RECORDINGS 1000000
/* Each depth has its own span name, and a name is a literal in the callsite metadata. */
#define MAX_DEPTH 999
#define NSEC_PER_SEC 1000000000ULL

enum die_mode {
	DIE_EXIT,
	DIE_KILL,
	DIE_SEGV,
	DIE_ABORT,
	DIE_EXEC
};

static struct options {
	uint64_t threads;
	uint64_t recordings;
	uint64_t cap;
	uint64_t events;
	uint64_t rate;
	uint64_t depth;
	uint64_t fields;
	bool error;	      /* --level error: REC_ERROR instead of REC_INFO */
	uint64_t error_sites; /* --error-sites: 0, or REC_ERROR at event k's site k % error_sites */
	const char *subject;
	bool wait_attach;
	uint64_t attach_timeout;
	uint64_t hold;
	enum die_mode die;
	const char *report;
} opts = {
	.threads = 1,
	.recordings = 1,
	.cap = 100,
	.events = 10,
	.rate = 0,
	.depth = 0,
	.fields = 2,
	.subject = "actor",
	.attach_timeout = 30,
	.die = DIE_EXIT,
};

/* One recording and the stack of spans that leads into it. */
struct stream {
	struct rec_recording *rec;
	struct rec_span *spans; /* [0] the recording span, [1..depth] "depth1".."depthD" */
	bool initialised;	/* the depth spans exist (they are created on first entry) */
	bool entered;
	uint64_t emitted;
	uint64_t left; /* its spans left so far, the recording span's included */
};

static struct rec_recorder *recorder;
static struct stream *streams; /* recording i of thread w is streams[w * recordings + i] */
static pthread_barrier_t start_barrier, done_barrier, end_barrier;

const char *argp_program_version = "workload 1";
static const char doc[] =
	"Generate recorder load: threads emitting events into recordings.\n"
	"\n"
	"USAGE: workload [--threads T] [--recordings R] [--cap C] [--events N]\n"
	"                [--rate R] [--depth D] [--fields F] [--level info|error]\n"
	"                [--error-sites S]\n"
	"                [--subject PREFIX] [--wait-attach] [--attach-timeout S]\n"
	"                [--hold S] [--die exit|kill|segv|abort|exec] [--report FILE]\n"
	"\n"
	"Each thread creates R recordings (subjects PREFIX[0], PREFIX[1], ...\n"
	"numbered across all threads), nests D spans \"depth1\"..\"depthD\" under\n"
	"each recording span, and emits N \"workload event\" events into each\n"
	"recording, round-robin. stdout gets one line, \"workload: pid N\";\n"
	"diagnostics go to stderr. Exit status: 0 done, 1 error, 2 bad usage,\n"
	"3 nothing attached in time.\n"
	"\n"
	"EXAMPLES:\n"
	"    workload --wait-attach -n 1000      # 1000 events once attached\n"
	"    workload -t 4 -r 8 -c 50 --rate 100 # 4 threads, 32 recordings, paced\n"
	"    workload --depth 3 --hold 60        # sit inside 4 spans for a minute\n"
	"    workload --die kill --report r.json # SIGKILL itself after the events\n";

enum {
	OPT_RATE = 0x100,
	OPT_SUBJECT,
	OPT_ATTACH_TIMEOUT,
	OPT_HOLD,
	OPT_DIE,
	OPT_REPORT,
	OPT_LEVEL,
	OPT_ERROR_SITES,
};

static const struct argp_option options[] = {
	{ "threads", 't', "T", 0, "Threads, each with its own recordings (default 1)", 0 },
	{ "recordings", 'r', "R", 0, "Recordings per thread (default 1)", 0 },
	{ "cap", 'c', "C", 0, "Capacity of each recording, at least 2 (default 100)", 0 },
	{ "events", 'n', "N", 0, "Events per recording (default 10)", 0 },
	{ "rate", OPT_RATE, "R", 0, "Events per second per thread, 0 = flat out (default 0)", 0 },
	{ "depth", 'd', "D", 0, "Spans nested under each recording span (default 0)", 0 },
	{ "fields", 'f', "F", 0,
	  "Fields per event, 0..8 (default 2): n (u64, event index in its recording), "
	  "state (str), delta (i64), ok (bool), ratio (f64), thread (u64), subject (str), "
	  "remaining (i64)",
	  0 },
	{ "level", OPT_LEVEL, "LEVEL", 0,
	  "Level of every event: info (REC_INFO, the default) or error (REC_ERROR: an error "
	  "storm, for incident triggers)",
	  0 },
	{ "error-sites", OPT_ERROR_SITES, "S", 0,
	  "Every event a REC_ERROR at one of S distinct callsites (1 to 1000), event k at "
	  "site k % S, each with the 3 fields of --fields 3 and its own message \"workload "
	  "error ...\": S incident signatures (issue 35; default 0: off)",
	  0 },
	{ "subject", OPT_SUBJECT, "PREFIX", 0, "Subject prefix: PREFIX[i] (default \"actor\")", 0 },
	{ "wait-attach", 'w', NULL, 0, "Start only once a recorder is attached", 0 },
	{ "attach-timeout", OPT_ATTACH_TIMEOUT, "S", 0,
	  "Seconds --wait-attach waits before exiting with status 3 (default 30)", 0 },
	{ "hold", OPT_HOLD, "S", 0,
	  "Seconds to stay inside the spans after the last event (default 0)", 0 },
	{ "die", OPT_DIE, "HOW", 0,
	  "How to end: exit (leave spans, free, exit 0), kill (SIGKILL inside the spans), "
	  "segv (NULL write), abort, exec (execve /bin/true inside the spans) (default exit)",
	  0 },
	{ "report", OPT_REPORT, "FILE", 0,
	  "Before ending, write JSON: pid, and per recording its key, subject, events "
	  "emitted, the seq of the last one and the spans left so far",
	  0 },
	{ 0 },
};

static void bad_option(const char *name, const char *arg, const char *expected)
{
	fprintf(stderr, "workload: invalid --%s '%s': expected %s\n", name, arg, expected);
	exit(2);
}

/* Parses a decimal integer in [min, max] or exits with a message naming the option. */
static uint64_t parse_uint(const char *name, const char *arg, uint64_t min, uint64_t max)
{
	char expected[64];
	unsigned long long v;
	char *end;

	if (max == UINT64_MAX)
		snprintf(expected, sizeof(expected), "an integer >= %" PRIu64, min);
	else
		snprintf(expected, sizeof(expected), "an integer from %" PRIu64 " to %" PRIu64, min,
			 max);
	/* strtoull() would accept and negate "-1", and skip leading blanks. */
	if (*arg < '0' || *arg > '9')
		bad_option(name, arg, expected);
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || v < min || v > max)
		bad_option(name, arg, expected);
	return v;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 't':
		opts.threads = parse_uint("threads", arg, 1, MAX_THREADS);
		break;
	case 'r':
		opts.recordings = parse_uint("recordings", arg, 1, MAX_RECORDINGS);
		break;
	case 'c':
		opts.cap = parse_uint("cap", arg, 2, UINT64_MAX);
		break;
	case 'n':
		opts.events = parse_uint("events", arg, 0, UINT64_MAX);
		break;
	case OPT_RATE:
		opts.rate = parse_uint("rate", arg, 0, NSEC_PER_SEC);
		break;
	case 'd':
		opts.depth = parse_uint("depth", arg, 0, MAX_DEPTH);
		break;
	case 'f':
		opts.fields = parse_uint("fields", arg, 0, REC_MAX_FIELDS);
		break;
	case OPT_LEVEL:
		if (!strcmp(arg, "info"))
			opts.error = false;
		else if (!strcmp(arg, "error"))
			opts.error = true;
		else
			bad_option("level", arg, "info or error");
		break;
	case OPT_ERROR_SITES:
#ifdef WORKLOAD_ERROR_SITES
		opts.error_sites = parse_uint("error-sites", arg, 1, 1000);
#else
		fprintf(stderr,
			"workload: --error-sites needs build/workload-sites (this build has "
			"no 1,000 error sites: a peer on recorder:* would see them all)\n");
		exit(2);
#endif
		break;
	case OPT_SUBJECT:
		opts.subject = arg;
		break;
	case 'w':
		opts.wait_attach = true;
		break;
	case OPT_ATTACH_TIMEOUT:
		opts.attach_timeout = parse_uint("attach-timeout", arg, 0, INT_MAX);
		break;
	case OPT_HOLD:
		opts.hold = parse_uint("hold", arg, 0, INT_MAX);
		break;
	case OPT_DIE:
		if (!strcmp(arg, "exit"))
			opts.die = DIE_EXIT;
		else if (!strcmp(arg, "kill"))
			opts.die = DIE_KILL;
		else if (!strcmp(arg, "segv"))
			opts.die = DIE_SEGV;
		else if (!strcmp(arg, "abort"))
			opts.die = DIE_ABORT;
		else if (!strcmp(arg, "exec"))
			opts.die = DIE_EXEC;
		else
			bad_option("die", arg, "exit, kill, segv, abort or exec");
		break;
	case OPT_REPORT:
		opts.report = arg;
		break;
	case ARGP_KEY_ARG:
		argp_usage(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void fatal(const char *what, int err)
{
	fprintf(stderr, "workload: %s: %s\n", what, strerror(err));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void wait_for_attach(void)
{
	const struct timespec tick = { .tv_nsec = 1000000 };
	uint64_t deadline = now_ns() + opts.attach_timeout * NSEC_PER_SEC;

	while (!rec_is_attached()) {
		if (now_ns() >= deadline) {
			fprintf(stderr, "workload: no recorder attached after %" PRIu64 " s\n",
				opts.attach_timeout);
			exit(3);
		}
		nanosleep(&tick, NULL);
	}
}

/*
 * REC_SPAN_INIT for the span at depth d (1-based), named "depth<d>". The name
 * must be a literal, so every depth gets its own callsite; the cases are spelled
 * out by pasting digits.
 */
/* Laid out by hand: the cases, ten a line. */
/* clang-format off */
#define DEPTH_CASE(n)                                                                             \
	case n:                                                                                   \
		REC_SPAN_INIT(s, INFO, "depth" #n);                                               \
		break;
#define DEPTH_CASES_10(t)                                                                         \
	DEPTH_CASE(t##0) DEPTH_CASE(t##1) DEPTH_CASE(t##2) DEPTH_CASE(t##3) DEPTH_CASE(t##4)      \
	DEPTH_CASE(t##5) DEPTH_CASE(t##6) DEPTH_CASE(t##7) DEPTH_CASE(t##8) DEPTH_CASE(t##9)
#define DEPTH_CASES_100(h)                                                                        \
	DEPTH_CASES_10(h##0) DEPTH_CASES_10(h##1) DEPTH_CASES_10(h##2) DEPTH_CASES_10(h##3)       \
	DEPTH_CASES_10(h##4) DEPTH_CASES_10(h##5) DEPTH_CASES_10(h##6) DEPTH_CASES_10(h##7)       \
	DEPTH_CASES_10(h##8) DEPTH_CASES_10(h##9)

static void depth_span_init(struct rec_span *s, unsigned int d)
{
	_Static_assert(MAX_DEPTH == 999, "depth_span_init() spells out depths 1..999");

	switch (d) {
	DEPTH_CASE(1) DEPTH_CASE(2) DEPTH_CASE(3) DEPTH_CASE(4) DEPTH_CASE(5)
	DEPTH_CASE(6) DEPTH_CASE(7) DEPTH_CASE(8) DEPTH_CASE(9)
	DEPTH_CASES_10(1) DEPTH_CASES_10(2) DEPTH_CASES_10(3) DEPTH_CASES_10(4)
	DEPTH_CASES_10(5) DEPTH_CASES_10(6) DEPTH_CASES_10(7) DEPTH_CASES_10(8)
	DEPTH_CASES_10(9)
	DEPTH_CASES_100(1) DEPTH_CASES_100(2) DEPTH_CASES_100(3) DEPTH_CASES_100(4)
	DEPTH_CASES_100(5) DEPTH_CASES_100(6) DEPTH_CASES_100(7) DEPTH_CASES_100(8)
			/* clang-format on */
			DEPTH_CASES_100(9) default : abort();
	}
}

/* Enters the recording span of st and its depth spans, creating those on first entry. */
static void stream_enter(struct stream *st)
{
	rec_span_enter(&st->spans[0]);
	for (unsigned int d = 1; d <= opts.depth; d++) {
		/* Created here, not earlier: a span's parent is the span current at creation. */
		if (!st->initialised)
			depth_span_init(&st->spans[d], d);
		rec_span_enter(&st->spans[d]);
	}
	st->initialised = true;
	st->entered = true;
}

static void stream_exit(struct stream *st)
{
	for (unsigned int d = opts.depth + 1; d-- > 0;)
		rec_span_exit(&st->spans[d]);
	st->left += opts.depth + 1;
	st->entered = false;
}

static const char *const states[] = { "idle", "busy", "waiting", "done" };

/* The fields, in the order --fields takes them: kinds cycle u64, str, i64, bool, f64. */
#define F1 REC_U64(n, k)
#define F2 REC_STR(state, states[k % 4])
#define F3 REC_I64(delta, -(int64_t)k)
#define F4 REC_BOOL(ok, k % 2 == 0)
#define F5 REC_F64(ratio, (double)k / (double)opts.events)
#define F6 REC_U64(thread, w)
#define F7 REC_STR(subject, st->rec->subject)
#define F8 REC_I64(remaining, (int64_t)(opts.events - 1 - k))

/*
 * The event with opts.fields fields, by MACRO (REC_INFO or REC_ERROR): one
 * callsite per field count and level, each with a literal level. The sites of
 * one level share a source line (a run uses one field count, so one of them).
 */
#define EMIT_FIELDS(MACRO)                                                                         \
	do {                                                                                       \
		switch (opts.fields) {                                                             \
		case 0:                                                                            \
			MACRO("workload event");                                                   \
			break;                                                                     \
		case 1:                                                                            \
			MACRO("workload event", F1);                                               \
			break;                                                                     \
		case 2:                                                                            \
			MACRO("workload event", F1, F2);                                           \
			break;                                                                     \
		case 3:                                                                            \
			MACRO("workload event", F1, F2, F3);                                       \
			break;                                                                     \
		case 4:                                                                            \
			MACRO("workload event", F1, F2, F3, F4);                                   \
			break;                                                                     \
		case 5:                                                                            \
			MACRO("workload event", F1, F2, F3, F4, F5);                               \
			break;                                                                     \
		case 6:                                                                            \
			MACRO("workload event", F1, F2, F3, F4, F5, F6);                           \
			break;                                                                     \
		case 7:                                                                            \
			MACRO("workload event", F1, F2, F3, F4, F5, F6, F7);                       \
			break;                                                                     \
		default:                                                                           \
			MACRO("workload event", F1, F2, F3, F4, F5, F6, F7, F8);                   \
			break;                                                                     \
		}                                                                                  \
	} while (0)

#ifdef WORKLOAD_ERROR_SITES
/*
 * --error-sites: 1,000 REC_ERROR callsites, each its own static callsite and
 * message ("workload error 100 + 20 + 3" is site 123), made by the preprocessor.
 * Only in build/workload-sites (-DWORKLOAD_ERROR_SITES, for the bench): in the
 * workload of the tests they were 1,000 probe sites more than a peer's
 * recorder:* attaches to (bpftrace's limit is 512).
 */
/* clang-format never settles on these lists. */
/* clang-format off */
#define SITE(n) case n: REC_ERROR("workload error " #n, F1, F2, F3); break;
#define SITES10(b) SITE(b + 0) SITE(b + 1) SITE(b + 2) SITE(b + 3) SITE(b + 4) \
	SITE(b + 5) SITE(b + 6) SITE(b + 7) SITE(b + 8) SITE(b + 9)
#define SITES100(b) SITES10(b + 0) SITES10(b + 10) SITES10(b + 20) SITES10(b + 30) \
	SITES10(b + 40) SITES10(b + 50) SITES10(b + 60) SITES10(b + 70) SITES10(b + 80) \
	SITES10(b + 90)
/* clang-format on */

/* Event k of st at site k % --error-sites. */
static void emit_site(struct stream *st, uint64_t w, uint64_t k)
{
	(void)st;
	(void)w;
	switch (k % opts.error_sites) {
		SITES100(0)
		SITES100(100)
		SITES100(200)
		SITES100(300)
		SITES100(400)
		SITES100(500)
		SITES100(600)
		SITES100(700)
		SITES100(800)
		SITES100(900)
	}
}
#endif

/* Emits event k of st; st's spans must be the innermost entered on this thread. */
static void emit(struct stream *st, uint64_t w, uint64_t k)
{
#ifdef WORKLOAD_ERROR_SITES
	if (opts.error_sites)
		emit_site(st, w, k);
	else
#endif
		if (opts.error)
		EMIT_FIELDS(REC_ERROR);
	else
		EMIT_FIELDS(REC_INFO);
	st->emitted++;
}

/*
 * Sleeps until start + i / rate seconds, so the rate holds however long emits
 * take. A sleep costs at least the timer slack (about 50 us), so it only sleeps
 * once it is a millisecond ahead: high rates come in short bursts, on schedule.
 */
static void pace(const struct timespec *start, uint64_t i)
{
	uint64_t ns = (i % opts.rate) * NSEC_PER_SEC / opts.rate;
	struct timespec at = {
		.tv_sec = start->tv_sec + (time_t)(i / opts.rate),
		.tv_nsec = start->tv_nsec + (long)ns,
	};
	struct timespec now;

	if (at.tv_nsec >= (long)NSEC_PER_SEC) {
		at.tv_sec++;
		at.tv_nsec -= NSEC_PER_SEC;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((at.tv_sec - now.tv_sec) * (int64_t)NSEC_PER_SEC + (at.tv_nsec - now.tv_nsec) < 1000000)
		return;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
		;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/*
 * Writes the report through a temporary file and rename(), so a reader never
 * sees half of it, even if the process is killed right after.
 */
static void write_report(void)
{
	uint64_t total = opts.threads * opts.recordings;
	char tmp[PATH_MAX];
	FILE *f;
	int bad;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", opts.report, (int)getpid()) >= (int)sizeof(tmp))
		fatal("report path", ENAMETOOLONG);
	f = fopen(tmp, "w");
	if (!f)
		fatal(tmp, errno);
	fprintf(f, "{\"pid\": %d, \"recordings\": [", (int)getpid());
	for (uint64_t i = 0; i < total; i++) {
		const struct stream *st = &streams[i];

		fprintf(f, "%s\n  {\"key\": \"0x%" PRIx64 "\", \"subject\": ", i ? "," : "",
			rec_recording_key(st->rec));
		json_string(f, st->rec->subject);
		fprintf(f,
			", \"emitted\": %" PRIu64 ", \"last_seq\": %" PRId64
			", \"spans_left\": %" PRIu64 "}",
			st->emitted, (int64_t)st->emitted - 1, st->left);
	}
	fprintf(f, "\n]}\n");
	bad = ferror(f);
	if (fclose(f) || bad)
		fatal(tmp, bad ? EIO : errno);
	if (rename(tmp, opts.report))
		fatal(opts.report, errno);
}

static void hold(void)
{
	struct timespec left = { .tv_sec = (time_t)opts.hold };

	while (nanosleep(&left, &left) && errno == EINTR)
		;
}

static void __attribute__((noreturn)) die(void)
{
	/* Both volatile: the compiler can neither prove the NULL nor drop the dead store. */
	volatile int *volatile nowhere = NULL;

	fflush(NULL);
	switch (opts.die) {
	case DIE_KILL:
		raise(SIGKILL);
		break;
	case DIE_SEGV:
		*nowhere = 1;
		break;
	case DIE_EXEC:
		/* Another program in this process, its other threads still inside spans. */
		execl("/bin/true", "true", (char *)NULL);
		break;
	default:
		break;
	}
	abort();
}

/*
 * Thread w: set up its recordings, emit, then stay inside all its spans until
 * thread 0 has written the report, held and (with --die exit) released everyone.
 */
static void *worker(void *arg)
{
	uint64_t w = (uint64_t)(uintptr_t)arg;
	struct stream *mine = &streams[w * opts.recordings];
	struct stream *cur = NULL;
	struct timespec start;
	uint64_t i = 0;

	for (uint64_t r = 0; r < opts.recordings; r++) {
		char subject[REC_SUBJECT_MAX];

		mine[r].rec = rec_recording_new(recorder, opts.cap);
		if (!mine[r].rec)
			fatal("cannot create a recording", errno);
		snprintf(subject, sizeof(subject), "%s[%" PRIu64 "]", opts.subject,
			 w * opts.recordings + r);
		rec_recording_span(&mine[r].spans[0], mine[r].rec, subject);
	}

	/* All threads emit at once, so their events interleave. */
	pthread_barrier_wait(&start_barrier);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (uint64_t k = 0; k < opts.events; k++) {
		for (uint64_t r = 0; r < opts.recordings; r++, i++) {
			/* Only the target's spans are entered, so the event goes to it alone. */
			if (cur != &mine[r]) {
				if (cur)
					stream_exit(cur);
				cur = &mine[r];
				stream_enter(cur);
			}
			if (opts.rate)
				pace(&start, i);
			emit(cur, w, k);
		}
	}

	/* From here on every recording of this thread has an active stack. */
	for (uint64_t r = 0; r < opts.recordings; r++) {
		if (!mine[r].entered)
			stream_enter(&mine[r]);
	}
	pthread_barrier_wait(&done_barrier);

	if (w == 0) {
		if (opts.report)
			write_report();
		hold();
		if (opts.die != DIE_EXIT)
			die();
	}
	pthread_barrier_wait(&end_barrier);

	/* Innermost first: the stacks entered after the loop, then the loop's last one. */
	for (uint64_t r = opts.recordings; r-- > 0;) {
		if (&mine[r] != cur)
			stream_exit(&mine[r]);
	}
	if (cur)
		stream_exit(cur);
	for (uint64_t r = 0; r < opts.recordings; r++)
		rec_recording_free(mine[r].rec);
	return NULL;
}

int main(int argc, char **argv)
{
	const struct argp argp = { .options = options, .parser = parse_opt, .doc = doc };
	uint64_t total;
	pthread_t *threads;
	struct rec_span *spans;
	int err;

	argp_err_exit_status = 2;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		fatal("cannot parse arguments", err);

	printf("workload: pid %d\n", (int)getpid());
	fflush(stdout);
	if (opts.wait_attach)
		wait_for_attach();

	total = opts.threads * opts.recordings;
	recorder = rec_recorder_new();
	streams = calloc(total, sizeof(*streams));
	spans = calloc(total * (opts.depth + 1), sizeof(*spans));
	threads = calloc(opts.threads, sizeof(*threads));
	if (!recorder || !streams || !spans || !threads)
		fatal("cannot allocate", ENOMEM);
	for (uint64_t i = 0; i < total; i++)
		streams[i].spans = &spans[i * (opts.depth + 1)];

	pthread_barrier_init(&start_barrier, NULL, opts.threads);
	pthread_barrier_init(&done_barrier, NULL, opts.threads);
	pthread_barrier_init(&end_barrier, NULL, opts.threads);
	/* Thread 0 is the main thread: with --threads 1 the process has one thread. */
	for (uint64_t w = 1; w < opts.threads; w++) {
		err = pthread_create(&threads[w], NULL, worker, (void *)(uintptr_t)w);
		if (err)
			fatal("cannot create a thread", err);
	}
	worker((void *)0);
	for (uint64_t w = 1; w < opts.threads; w++)
		pthread_join(threads[w], NULL);

	rec_recorder_free(recorder);
	free(threads);
	free(spans);
	free(streams);
	return 0;
}
