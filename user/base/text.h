/* SPDX-License-Identifier: MIT */
/*
 * Text primitives of every output format: the one escaping of what came from
 * the target, times (glog's local time, RFC 3339 in UTC), recording keys
 * ("0x…"), unreadable callsites ("<callsite 0x…>"), a file's basename.
 */
#ifndef REC_TEXT_H
#define REC_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Room for rec_text__key(): "0x" and 16 hex digits. */
#define REC_TEXT_KEY_MAX 19
/* Room for rec_text__rfc3339() (any int of a struct tm), and rec_text__callsite(). */
#define REC_TEXT_TIME_MAX 64
#define REC_TEXT_CALLSITE_MAX 32

/*
 * Writes s (len bytes, may hold NULs) for a terminal: control bytes (below 0x20,
 * and DEL) and the C1 controls in UTF-8 (U+0080..U+009F) as JSON escapes ("\n",
 * "\u001b", "\u009b"), every other byte as it is. Returns the number of bytes
 * written. Every text output of something that came from the target (subjects,
 * callsite names, targets and files, field names, strings) goes through it,
 * and so does every JSON string (json.h).
 */
size_t rec_text__escape(FILE *out, const char *s, size_t len);

/* Writes the NUL-terminated s escaped, then spaces up to width columns. */
void rec_text__pad(FILE *out, const char *s, size_t width);

/* The part of path after its last '/'. */
const char *rec_text__basename(const char *path);

/* "0x" followed by lower-case hex without padding, into buf (REC_TEXT_KEY_MAX bytes). */
const char *rec_text__key(uint64_t key, char *buf);

/* What stands for a callsite that could not be read: "<callsite 0x401000>", into buf. */
const char *rec_text__callsite(uint64_t addr, char *buf);

/*
 * time_ns (since the epoch, may be negative) in RFC 3339, UTC, with
 * microseconds: "2026-12-02T14:03:12.123456Z", into buf (REC_TEXT_TIME_MAX bytes).
 */
const char *rec_text__rfc3339(int64_t time_ns, char *buf);
/*
 * Parses what rec_text__rfc3339() writes, exactly: "YYYY-MM-DDTHH:MM:SS.uuuuuuZ"
 * (27 bytes, a real date, seconds 00..59), into *time_ns. Returns 0, or
 * -EINVAL for any other text and -ERANGE for a time that int64_t nanoseconds
 * cannot hold (before 1677-09-21, after 2262-04-11).
 */
int rec_text__parse_rfc3339(const char *s, int64_t *time_ns);

/*
 * The head of a glog line, up to the text: level letter, local month and day,
 * time with microseconds, tid, the basename of file (escaped) and line:
 *	I1202 14:03:12.123456 4242 server.c:88]
 * and one space.
 */
void rec_text__glog_head(FILE *out, char level, int64_t time_ns, uint32_t tid, const char *file,
			 uint32_t line);

#endif /* REC_TEXT_H */
