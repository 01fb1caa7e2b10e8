/* SPDX-License-Identifier: MIT */
/*
 * The one table of names: every word recorder shows for a value of one of its
 * enums (levels, signals, BPF counters, limits, string statuses, field types,
 * recording states, how a process ended), in text, JSON lines and dumps alike.
 * The dump reader parses names back with the same table.
 *
 * A name function returns a static string; for a value it does not know, the
 * fallback its comment gives. A parse function returns 0 and sets *out, or
 * -EINVAL for a name that is not in the table.
 */
#ifndef REC_NAMES_H
#define REC_NAMES_H

#include <stdint.h>
#include <stddef.h>

#include "recorder_abi.h"
#include "model/proc.h"

/* "TRACE".."ERROR", or "?". */
const char *rec_names__level(enum rec_level level);
/* glog's letter: 'T', 'D', 'I', 'W', 'E', or '?'. */
char rec_names__level_letter(enum rec_level level);
/* A level's name, any case ("warn", "WARN"): 0, or -EINVAL. */
int rec_names__parse_level(const char *s, enum rec_level *out);

/* "SIGHUP".."SIGSYS" (Linux's standard signals 1..31), or NULL: a real-time signal, say. */
const char *rec_names__signal(int sig);

/* The BPF side's counters, as --stats and dumps name them: "ring_full", ..., or "unknown". */
const char *rec_names__counter(enum rec_counter c);

/* The limits, as --stats and dumps name them: "recordings", "callsites", ..., or "unknown". */
const char *rec_names__limit(enum rec_limit l);

/* How a string field was read: "ok", "truncated", "fault", "null", "nospace", or "?". */
const char *rec_names__str_status(enum rec_str_status st);
int rec_names__parse_str_status(const char *s, enum rec_str_status *out);
/*
 * What text shows after a string not read whole: "…[truncated]", "<unreadable>",
 * "(null)", "<no space>"; "" for one read whole, "<?>" for an unknown status.
 */
const char *rec_names__str_mark(enum rec_str_status st);

/* A field type of a dump's value: "str", "i64", "u64", "f64", "bool", or "?". */
const char *rec_names__field_type(enum rec_field_type t);
/* Only the types above: never REC_TYPE_NONE or REC_TYPE_STR_LIT. */
int rec_names__parse_field_type(const char *s, enum rec_field_type *out);

/* Why a recording is untracked (enum rec_untracked_reason): "over-quota", "table-full", or "". */
const char *rec_names__untracked(int reason);
int rec_names__parse_untracked(const char *s, int *out);

/* A recording's life in a dump: "live" (retired 0) or "retired". */
const char *rec_names__retired(int retired);
int rec_names__parse_retired(const char *s, int *out);
/* What --list shows: "live", "retired", or why it is untracked ("over-quota", "table-full"). */
const char *rec_names__recording_state(int retired, int untracked);

/*
 * The kind of a trigger rule (enum rec_dump_trigger_kind, dump.h): "level",
 * "span", "event", "code", or "?".
 */
const char *rec_names__trigger_kind(int kind);
int rec_names__parse_trigger_kind(const char *s, int *out);

/* What a dump holds ("scope"): "process" (one_recording 0) or "recording". */
const char *rec_names__scope(int one_recording);
int rec_names__parse_scope(const char *s, int *out);

/* How a process ended, as a dump's "how" names it: "running", "exit", "signal", "unknown". */
const char *rec_names__end_how(enum rec_end end);
int rec_names__parse_end_how(const char *s, enum rec_end *out);
/*
 * How a process ended, for people, into buf: "running", "exited with status 7",
 * "killed by SIGKILL (core dumped)", "killed by signal 40", "ended (how was not
 * seen)". code is the exit status or the signal; core, whether it dumped core.
 * Returns buf.
 */
const char *rec_names__end(enum rec_end end, int code, int core, char *buf, size_t len);

/*
 * What a thread was off the CPU for (rec_offcpu_rec.cause): a system call's
 * name ("futex", "read", or "syscall_N" for one not in the table), "runq",
 * "kernel" or "fault". buf (16 bytes do) holds a name made up. The parser
 * takes any of those back.
 */
const char *rec_names__offcpu_cause(int32_t cause, char *buf, size_t len);
int rec_names__parse_offcpu_cause(const char *s, int32_t *out);

#endif /* REC_NAMES_H */
