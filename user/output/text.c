// SPDX-License-Identifier: MIT
/*
 * Text primitives (text.h): escaping of what came from the target, so that
 * one event is always one line and no byte of it moves a terminal's cursor;
 * times; keys; callsites that could not be read.
 */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "text.h"

#define NSEC_PER_SEC 1000000000LL

/* Whether byte c at s[i] (of len) starts something rec_text__escape() escapes. */
static int needs_escape(const char *s, size_t i, size_t len)
{
	unsigned char c = (unsigned char)s[i];

	if (c < 0x20 || c == 0x7f)
		return 1;
	return c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] >= 0x80 &&
	       (unsigned char)s[i + 1] <= 0x9f;
}

/* Writes the escape of the control character c (below 0x20, or DEL) as in JSON; its length. */
static size_t put_control(FILE *out, unsigned char c)
{
	const char *named = NULL;

	switch (c) {
	case '\n':
		named = "\\n";
		break;
	case '\t':
		named = "\\t";
		break;
	case '\r':
		named = "\\r";
		break;
	case '\b':
		named = "\\b";
		break;
	case '\f':
		named = "\\f";
		break;
	}
	if (named) {
		fputs(named, out);
		return 2;
	}
	fprintf(out, "\\u%04x", c);
	return 6;
}

size_t rec_text__escape(FILE *out, const char *s, size_t len)
{
	size_t i = 0, n = 0;

	while (i < len) {
		size_t run = i;

		/* The bytes that need nothing go out in one write. */
		while (run < len && !needs_escape(s, run, len))
			run++;
		if (run > i) {
			fwrite(s + i, 1, run - i, out);
			n += run - i;
			i = run;
			continue;
		}
		if ((unsigned char)s[i] == 0xc2) {
			/* A C1 control in UTF-8: c2 80..c2 9f. */
			fprintf(out, "\\u%04x", (unsigned char)s[i + 1]);
			n += 6;
			i += 2;
		} else {
			n += put_control(out, (unsigned char)s[i]);
			i++;
		}
	}
	return n;
}

void rec_text__pad(FILE *out, const char *s, size_t width)
{
	for (size_t n = rec_text__escape(out, s, strlen(s)); n < width; n++)
		fputc(' ', out);
}

const char *rec_text__basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

const char *rec_text__key(uint64_t key, char *buf)
{
	snprintf(buf, REC_TEXT_KEY_MAX, "0x%" PRIx64, key);
	return buf;
}

const char *rec_text__callsite(uint64_t addr, char *buf)
{
	snprintf(buf, REC_TEXT_CALLSITE_MAX, "<callsite 0x%" PRIx64 ">", addr);
	return buf;
}

/* Splits time_ns (since the epoch, may be negative) into seconds and microseconds. */
static void split_time(int64_t time_ns, time_t *sec, long *usec)
{
	int64_t s = time_ns / NSEC_PER_SEC, ns = time_ns % NSEC_PER_SEC;

	if (ns < 0) {
		ns += NSEC_PER_SEC;
		s--;
	}
	*sec = (time_t)s;
	*usec = (long)(ns / 1000);
}

const char *rec_text__rfc3339(int64_t time_ns, char *buf)
{
	struct tm tm;
	time_t sec;
	long usec;

	split_time(time_ns, &sec, &usec);
	/* Never fails for a time_t that an int64_t of ns gives (years 1677..2262). */
	if (!gmtime_r(&sec, &tm)) {
		buf[0] = '\0';
		return buf;
	}
	snprintf(buf, REC_TEXT_TIME_MAX, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, usec);
	return buf;
}

void rec_text__glog_head(FILE *out, char level, int64_t time_ns, uint32_t tid, const char *file,
			 uint32_t line)
{
	const char *base = rec_text__basename(file);
	struct tm tm;
	time_t sec;
	long usec;

	split_time(time_ns, &sec, &usec);
	if (!localtime_r(&sec, &tm))
		memset(&tm, 0, sizeof(tm));
	fprintf(out, "%c%02d%02d %02d:%02d:%02d.%06ld %" PRIu32 " ", level, tm.tm_mon + 1,
		tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, usec, tid);
	rec_text__escape(out, base, strlen(base));
	fprintf(out, ":%" PRIu32 "] ", line);
}
