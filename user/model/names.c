// SPDX-License-Identifier: MIT
/*
 * The one table of names (names.h): each enum's names in an array indexed by
 * its values, looked up and parsed back by the same two helpers.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "model/names.h"

#define COUNT(t) (sizeof(t) / sizeof((t)[0]))

static const char *const level_names[] = {
	[REC_LEVEL_TRACE] = "TRACE", [REC_LEVEL_DEBUG] = "DEBUG", [REC_LEVEL_INFO] = "INFO",
	[REC_LEVEL_WARN] = "WARN",   [REC_LEVEL_ERROR] = "ERROR",
};

/* As glibc's sigabbrev_np() names them, with "SIG" in front. */
static const char *const signal_names[] = {
	[SIGHUP] = "SIGHUP",	   [SIGINT] = "SIGINT",	      [SIGQUIT] = "SIGQUIT",
	[SIGILL] = "SIGILL",	   [SIGTRAP] = "SIGTRAP",     [SIGABRT] = "SIGABRT",
	[SIGBUS] = "SIGBUS",	   [SIGFPE] = "SIGFPE",	      [SIGKILL] = "SIGKILL",
	[SIGUSR1] = "SIGUSR1",	   [SIGSEGV] = "SIGSEGV",     [SIGUSR2] = "SIGUSR2",
	[SIGPIPE] = "SIGPIPE",	   [SIGALRM] = "SIGALRM",     [SIGTERM] = "SIGTERM",
	[SIGSTKFLT] = "SIGSTKFLT", [SIGCHLD] = "SIGCHLD",     [SIGCONT] = "SIGCONT",
	[SIGSTOP] = "SIGSTOP",	   [SIGTSTP] = "SIGTSTP",     [SIGTTIN] = "SIGTTIN",
	[SIGTTOU] = "SIGTTOU",	   [SIGURG] = "SIGURG",	      [SIGXCPU] = "SIGXCPU",
	[SIGXFSZ] = "SIGXFSZ",	   [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF",
	[SIGWINCH] = "SIGWINCH",   [SIGPOLL] = "SIGPOLL",     [SIGPWR] = "SIGPWR",
	[SIGSYS] = "SIGSYS",
};

static const char *const counter_names[REC_C_MAX] = {
	[REC_C_RING_FULL] = "ring_full",
	[REC_C_STR_FAULT] = "str_fault",
	[REC_C_DEPTH_OVERFLOW] = "depth_overflow",
	[REC_C_EXIT_UNMATCHED] = "exit_unmatched",
	[REC_C_EXIT_OUT_OF_ORDER] = "exit_out_of_order",
	[REC_C_RETIRED_EVENTS] = "retired_events",
	[REC_C_UNKNOWN_RECORDING] = "unknown_recording",
	[REC_C_NO_STORAGE] = "no_storage",
	[REC_C_BAD_ARG] = "bad_arg",
	[REC_C_UNTRACKED_EVENTS] = "untracked_events",
	[REC_C_OVER_QUOTA] = "over_quota",
	[REC_C_TABLE_FULL] = "table_full",
	[REC_C_BATCH_BAD] = "batch_bad",
	[REC_C_BATCH_FAULT] = "batch_fault",
	[REC_C_EXIT_BEFORE_ATTACH] = "exit_before_attach",
	[REC_C_STALE_SPANS] = "stale_spans",
	[REC_C_UNCERTAIN_SPANS] = "uncertain_spans",
	[REC_C_BATCH_FOREIGN] = "batch_foreign",
	[REC_C_BATCH_DEFERRED] = "batch_deferred",
	[REC_C_BATCH_QUEUED] = "batch_queued",
};

static const char *const limit_names[REC_L_MAX] = {
	[REC_L_RECORDINGS] = "recordings", [REC_L_PROC_RECORDINGS] = "recordings_per_process",
	[REC_L_RETIRED] = "retired_kept",  [REC_L_CALLSITES] = "callsites",
	[REC_L_LITERALS] = "literals",	   [REC_L_DEAD_STACKS] = "dead_stacks",
};

static const char *const str_status_names[] = {
	[REC_STR_OK] = "ok",	 [REC_STR_TRUNCATED] = "truncated", [REC_STR_FAULT] = "fault",
	[REC_STR_NULL] = "null", [REC_STR_NOSPACE] = "nospace",
};

static const char *const str_marks[] = {
	[REC_STR_OK] = "",
	[REC_STR_TRUNCATED] = "\xe2\x80\xa6[truncated]",
	[REC_STR_FAULT] = "<unreadable>",
	[REC_STR_NULL] = "(null)",
	[REC_STR_NOSPACE] = "<no space>",
};

/* The types of a dump's values: no REC_TYPE_NONE, no REC_TYPE_STR_LIT. */
static const char *const field_type_names[] = {
	[REC_TYPE_STR] = "str", [REC_TYPE_I64] = "i64",	  [REC_TYPE_U64] = "u64",
	[REC_TYPE_F64] = "f64", [REC_TYPE_BOOL] = "bool",
};

static const char *const untracked_names[] = {
	[REC_UT_OVER_QUOTA] = "over-quota",
	[REC_UT_TABLE_FULL] = "table-full",
};

static const char *const retired_names[] = { "live", "retired" };

/* The values of enum rec_dump_trigger_kind (dump.h). */
static const char *const trigger_kind_names[] = {
	[1] = "level",
	[2] = "span",
	[3] = "event",
	[4] = "code",
};

static const char *const scope_names[] = { "process", "recording" };

static const char *const end_how_names[] = {
	[REC_END_RUNNING] = "running",
	[REC_END_EXIT] = "exit",
	[REC_END_SIGNAL] = "signal",
	[REC_END_UNKNOWN] = "unknown",
};

/* The name of value v in table t (n entries), or fallback for a value it has none for. */
static const char *name_of(const char *const *t, size_t n, long v, const char *fallback)
{
	return v >= 0 && (size_t)v < n && t[v] ? t[v] : fallback;
}

/* The value named s in table t (n entries), or -1. */
static long value_of(const char *const *t, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (t[i] && !strcmp(t[i], s))
			return (long)i;
	return -1;
}

const char *rec_names__level(enum rec_level level)
{
	return name_of(level_names, COUNT(level_names), level, "?");
}

char rec_names__level_letter(enum rec_level level)
{
	return name_of(level_names, COUNT(level_names), level, "?")[0];
}

const char *rec_names__signal(int sig)
{
	return name_of(signal_names, COUNT(signal_names), sig, NULL);
}

const char *rec_names__counter(enum rec_counter c)
{
	return name_of(counter_names, COUNT(counter_names), c, "unknown");
}

const char *rec_names__limit(enum rec_limit l)
{
	return name_of(limit_names, COUNT(limit_names), l, "unknown");
}

const char *rec_names__str_status(enum rec_str_status st)
{
	return name_of(str_status_names, COUNT(str_status_names), st, "?");
}

int rec_names__parse_str_status(const char *s, enum rec_str_status *out)
{
	long v = value_of(str_status_names, COUNT(str_status_names), s);

	if (v < 0)
		return -EINVAL;
	*out = (enum rec_str_status)v;
	return 0;
}

const char *rec_names__str_mark(enum rec_str_status st)
{
	return name_of(str_marks, COUNT(str_marks), st, "<?>");
}

const char *rec_names__field_type(enum rec_field_type t)
{
	return name_of(field_type_names, COUNT(field_type_names), t, "?");
}

int rec_names__parse_field_type(const char *s, enum rec_field_type *out)
{
	long v = value_of(field_type_names, COUNT(field_type_names), s);

	if (v < 0)
		return -EINVAL;
	*out = (enum rec_field_type)v;
	return 0;
}

const char *rec_names__untracked(int reason)
{
	return name_of(untracked_names, COUNT(untracked_names), reason, "");
}

int rec_names__parse_untracked(const char *s, int *out)
{
	long v = value_of(untracked_names, COUNT(untracked_names), s);

	if (v < 0)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

const char *rec_names__retired(int retired)
{
	return retired_names[retired != 0];
}

int rec_names__parse_retired(const char *s, int *out)
{
	long v = value_of(retired_names, COUNT(retired_names), s);

	if (v < 0)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

const char *rec_names__recording_state(int retired, int untracked)
{
	if (retired || !untracked)
		return rec_names__retired(retired);
	return rec_names__untracked(untracked);
}

const char *rec_names__trigger_kind(int kind)
{
	return name_of(trigger_kind_names, COUNT(trigger_kind_names), kind, "?");
}

int rec_names__parse_trigger_kind(const char *s, int *out)
{
	long v = value_of(trigger_kind_names, COUNT(trigger_kind_names), s);

	if (v < 0)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

const char *rec_names__scope(int one_recording)
{
	return scope_names[one_recording != 0];
}

int rec_names__parse_scope(const char *s, int *out)
{
	long v = value_of(scope_names, COUNT(scope_names), s);

	if (v < 0)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

const char *rec_names__end_how(enum rec_end end)
{
	return name_of(end_how_names, COUNT(end_how_names), end, "unknown");
}

int rec_names__parse_level(const char *s, enum rec_level *out)
{
	char up[8];
	size_t i;
	long v;

	for (i = 0; s[i] && i < sizeof(up) - 1; i++)
		up[i] = (char)toupper((unsigned char)s[i]);
	if (s[i])
		return -EINVAL;
	up[i] = 0;
	v = value_of(level_names, COUNT(level_names), up);
	if (v < 0)
		return -EINVAL;
	*out = (enum rec_level)v;
	return 0;
}

int rec_names__parse_end_how(const char *s, enum rec_end *out)
{
	long v = value_of(end_how_names, COUNT(end_how_names), s);

	if (v < 0)
		return -EINVAL;
	*out = (enum rec_end)v;
	return 0;
}

const char *rec_names__end(enum rec_end end, int code, int core, char *buf, size_t len)
{
	const char *sig;

	switch (end) {
	case REC_END_RUNNING:
		snprintf(buf, len, "running");
		break;
	case REC_END_EXIT:
		snprintf(buf, len, "exited with status %d", code);
		break;
	case REC_END_SIGNAL:
		sig = rec_names__signal(code);
		if (sig)
			snprintf(buf, len, "killed by %s%s", sig, core ? " (core dumped)" : "");
		else
			snprintf(buf, len, "killed by signal %d%s", code,
				 core ? " (core dumped)" : "");
		break;
	default:
		snprintf(buf, len, "ended (how was not seen)");
		break;
	}
	return buf;
}

/*
 * The system calls a thread is commonly blocked in, by number (this
 * machine's: the recorder and its target share the kernel).
 */
#define NAME(c)                                                                                    \
	{                                                                                          \
		SYS_##c, #c                                                                        \
	}
static const struct {
	long nr;
	const char *name;
} syscall_names[] = {
	NAME(read),
	NAME(write),
	NAME(open),
	NAME(close),
	NAME(stat),
	NAME(fstat),
	NAME(poll),
	NAME(lseek),
	NAME(mmap),
	NAME(mprotect),
	NAME(munmap),
	NAME(brk),
	NAME(ioctl),
	NAME(pread64),
	NAME(pwrite64),
	NAME(readv),
	NAME(writev),
	NAME(access),
	NAME(pipe),
	NAME(select),
	NAME(sched_yield),
	NAME(msync),
	NAME(madvise),
	NAME(nanosleep),
	NAME(pause),
	NAME(getitimer),
	NAME(alarm),
	NAME(sendfile),
	NAME(socket),
	NAME(connect),
	NAME(accept),
	NAME(sendto),
	NAME(recvfrom),
	NAME(sendmsg),
	NAME(recvmsg),
	NAME(shutdown),
	NAME(wait4),
	NAME(kill),
	NAME(fcntl),
	NAME(flock),
	NAME(fsync),
	NAME(fdatasync),
	NAME(openat),
	NAME(epoll_wait),
	NAME(epoll_pwait),
	NAME(epoll_pwait2),
	NAME(futex),
	NAME(futex_waitv),
	NAME(clock_nanosleep),
	NAME(rt_sigsuspend),
	NAME(rt_sigtimedwait),
	NAME(ppoll),
	NAME(pselect6),
	NAME(accept4),
	NAME(recvmmsg),
	NAME(sendmmsg),
	NAME(waitid),
	NAME(io_getevents),
	NAME(io_uring_enter),
	NAME(splice),
	NAME(tee),
	NAME(vmsplice),
	NAME(sync),
	NAME(syncfs),
	NAME(fallocate),
	NAME(copy_file_range),
	NAME(preadv),
	NAME(pwritev),
	NAME(preadv2),
	NAME(pwritev2),
	NAME(exit_group),
	NAME(mlock),
	NAME(munlock),
	NAME(semop),
	NAME(semtimedop),
	NAME(msgsnd),
	NAME(msgrcv),
	NAME(mq_timedsend),
	NAME(mq_timedreceive),
	NAME(pidfd_open),
	NAME(unlink),
	NAME(rename),
	NAME(mkdir),
	NAME(rmdir),
	NAME(getdents64),
	NAME(statx),
	NAME(newfstatat),
	NAME(sched_setaffinity),
	NAME(getrandom),
};
#undef NAME

/* The names of enum rec_offcpu_cause, from REC_OFF_RUNQ (-1) down. */
static const char *const offcpu_names[] = { "runq", "kernel", "fault" };

const char *rec_names__offcpu_cause(int32_t cause, char *buf, size_t len)
{
	if (cause < 0) {
		if ((size_t)-cause <= COUNT(offcpu_names))
			return offcpu_names[-cause - 1];
		snprintf(buf, len, "cause_%d", -cause);
		return buf;
	}
	for (size_t i = 0; i < COUNT(syscall_names); i++)
		if (syscall_names[i].nr == cause)
			return syscall_names[i].name;
	snprintf(buf, len, "syscall_%d", cause);
	return buf;
}

int rec_names__parse_offcpu_cause(const char *s, int32_t *out)
{
	char *end;
	long v;

	for (size_t i = 0; i < COUNT(offcpu_names); i++)
		if (!strcmp(s, offcpu_names[i])) {
			*out = -(int32_t)i - 1;
			return 0;
		}
	for (size_t i = 0; i < COUNT(syscall_names); i++)
		if (!strcmp(s, syscall_names[i].name)) {
			*out = (int32_t)syscall_names[i].nr;
			return 0;
		}
	if (strncmp(s, "syscall_", 8) || !s[8] || s[8] == '-' || s[8] == '+')
		return -EINVAL;
	errno = 0;
	v = strtol(s + 8, &end, 10);
	if (errno || *end || v < 0 || v > INT32_MAX)
		return -EINVAL;
	*out = (int32_t)v;
	return 0;
}
