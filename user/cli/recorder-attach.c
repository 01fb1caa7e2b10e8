// SPDX-License-Identifier: MIT
/* recorder-attach: attach the flight recorder to running processes. */
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

#include "cli/attach_opts.h"
#include "serving/control.h"
#include "model/dump.h"
#include "base/text.h"
#include "export/exporter.h"
#include "kernel/machine.h"
#include "session/session.h"

/* The smallest ring that holds 4 full batch records (a power of two). */
#define BATCH_RING_MIN (1u << 18)
_Static_assert(BATCH_RING_MIN >= 4 * (sizeof(struct rec_batch_rec) + REC_TBUF_DATA),
	       "BATCH_RING_MIN holds 4 batches");
/* Pids named in the summary of black boxes that could not be written. */
#define MAX_LOST_NAMED 16

static struct rec_attach_env env = REC_ATTACH_ENV_DEFAULTS;

/* What the run found. */
static struct {
	int lost; /* black boxes that could not be written */
	pid_t lost_pids[MAX_LOST_NAMED];
	struct rec_exporter *exporter; /* --otlp: a job a traced process */
	int otlp_lost;		       /* processes some of whose records were not delivered */
} run;

const char *argp_program_version = "recorder-attach 0.1";

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

static void on_adopt(pid_t pid, const char *binary, void *ctx)
{
	(void)ctx;
	printf("recorder-attach: tracing pid %d (%s)\n", (int)pid, binary);
	fflush(stdout);
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
	printf("recorder-attach: pid %d exited: %s\n", (int)info->pid, info->how);
	if (info->dump_err == 0)
		printf("recorder-attach: black box of pid %d written to %s\n", (int)info->pid,
		       info->dump_path);
	else if (env.opts.dump_dir) {
		fprintf(stderr,
			"recorder-attach: failed to write the black box of pid %d into %s: "
			"%s\n",
			(int)info->pid, env.opts.dump_dir, strerror(-info->dump_err));
		if (run.lost < MAX_LOST_NAMED)
			run.lost_pids[run.lost] = info->pid;
		run.lost++;
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
	fprintf(stderr, "recorder-attach: %d black box%s could not be written: pid", run.lost,
		run.lost == 1 ? "" : "es");
	for (int i = 0; i < run.lost && i < MAX_LOST_NAMED; i++)
		fprintf(stderr, "%s %d", i ? "," : "", (int)run.lost_pids[i]);
	fprintf(stderr, "%s\n", run.lost > MAX_LOST_NAMED ? ", ..." : "");
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
	struct rec_session *s = NULL;
	int err;

	/* The reaper children that detach (rec_reaper__close_links) are never waited for. */
	signal(SIGCHLD, SIG_IGN);
	err = rec_attach_env__parse(&env, argc, argv);
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
	if (env.otlp_url) {
		struct rec_exporter_opts eo = { .url = env.otlp_url,
						.timeout_ms = env.otlp_timeout_ms,
						.max_tries = env.otlp_tries,
						.keep = env.otlp_keep,
						.log = stderr };
		/* The URL was checked with the options (attach_opts.c): what is left is memory. */
		err = rec_exporter__new(&run.exporter, &eo);
		if (err) {
			fprintf(stderr, "recorder-attach: --otlp %s: %s\n", env.otlp_url,
				strerror(-err));
			return 1;
		}
		env.opts.exporter = run.exporter;
	}
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
	if (run.exporter)
		run.otlp_lost = rec_exporter__join(run.exporter);
	rec_exporter__free(run.exporter);
	if (run.lost)
		report_lost();
	return err || run.lost || run.otlp_lost ? 1 : 0;
}
