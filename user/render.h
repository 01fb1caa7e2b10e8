/* SPDX-License-Identifier: MIT */
/* Rendering of events, recording lists and span stacks as glog-style text or JSON. */
#ifndef REC_RENDER_H
#define REC_RENDER_H

#include <stdint.h>
#include <stdio.h>

#include "event.h"

/*
 * Writes s (len bytes, may hold NULs) for a terminal: control bytes (below 0x20,
 * and DEL) and the C1 controls in UTF-8 (U+0080..U+009F) as JSON escapes ("\n",
 * "\u001b", "\u009b"), every other byte as it is. Returns the number of bytes
 * written. Every text output of something that came from the target (subjects,
 * callsite names, targets and files, field names, strings) goes through it.
 */
size_t rec_text__escape(FILE *out, const char *s, size_t len);

/*
 * Writes s (len bytes, may hold NULs) as a JSON string literal, quotes included,
 * with the escapes of rec_text__escape().
 */
void rec_json__string(FILE *out, const char *s, size_t len);

/*
 * Writes v as the shortest JSON number that reads back to the same bits, always
 * with a '.' or an exponent so that it reads back as a double; "nan", "inf" and
 * "-inf" as strings.
 */
void rec_json__f64(FILE *out, double v);

/*
 * One glog-style line, newline included:
 *	I1202 14:03:12.123456 4242 server.c:88] <actor[0]> handled request, id: 7, ok: true
 * Level letter, local month/day and time with microseconds, tid, basename of the
 * file, line, the subject in angle brackets (omitted when empty), the message,
 * then ", name: value" per field. Text is escaped (rec_text__escape); a string
 * that was not read whole is followed by a marker: "…[truncated]",
 * "<unreadable>", "(null)", "<no space>".
 * f64 uses %g; bool true/false. With cs NULL, the file is "?", the line 0 and
 * the message "<callsite 0x…>".
 */
void rec_render__glog(FILE *out, const struct rec_event_view *ev);

/*
 * One JSON object per line, keys in this order: pid, tid, recording, recorder,
 * subject, seq, time, level, target, name, file, line, fields. ns_pid is added
 * after pid when non-zero. recording and recorder are "0x…" strings (lower-case
 * hex, no padding), time is RFC 3339 UTC with microseconds
 * ("2026-12-02T14:03:12.123456Z"), level is "INFO" etc. fields is an object
 * whose first key is "message" (the callsite's message, or the field named
 * message when the callsite has none), then each field by name. A string is
 * its bytes (the first 255 of a truncated one) or null when none were read
 * (NULL, unreadable, no space); each string not read whole is named with its
 * status in "field_status", after "fields" and only when there is one:
 * {"long":"truncated","p":"null","q":"fault","r":"nospace"}. f64 that are not
 * finite print as strings ("nan", "inf", "-inf").
 */
void rec_render__json(FILE *out, const struct rec_event_view *ev);

/* The part of path after its last '/'. */
const char *rec_path__base(const char *path);

/* "0x" followed by lower-case hex without padding, into buf (at least 19 bytes). */
const char *rec_key__format(uint64_t key, char *buf);

#endif /* REC_RENDER_H */
