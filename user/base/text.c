// SPDX-License-Identifier: MIT
/*
 * Text primitives (text.h): escaping of what came from the target, so that
 * one event is always one line and no byte of it moves a terminal's cursor;
 * times; keys; callsites that could not be read.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "base/text.h"

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
	static const char digits[] = "0123456789abcdef";
	char hex[16], *at = hex + sizeof(hex);
	size_t n;

	/* Without printf: a dump writes one for every event's callsite and span. */
	do {
		*--at = digits[key & 15];
		key >>= 4;
	} while (key);
	n = (size_t)(hex + sizeof(hex) - at);
	buf[0] = '0';
	buf[1] = 'x';
	memcpy(buf + 2, at, n);
	buf[n + 2] = '\0';
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

/* The n decimal digits at s as a number, or -1 if one is not a digit. */
static long digits(const char *s, int n)
{
	long v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int rec_text__parse_rfc3339(const char *s, int64_t *time_ns)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.ddddddZ";
	long year, mon, day, hour, min, sec, usec;
	struct tm tm = { 0 }, back;
	int64_t ns;
	time_t t;

	if (strlen(s) != sizeof(shape) - 1)
		return -EINVAL;
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] != 'd' && s[i] != shape[i])
			return -EINVAL;
	year = digits(s, 4);
	mon = digits(s + 5, 2);
	day = digits(s + 8, 2);
	hour = digits(s + 11, 2);
	min = digits(s + 14, 2);
	sec = digits(s + 17, 2);
	usec = digits(s + 20, 6);
	if (year < 0 || mon < 1 || mon > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
	    min < 0 || min > 59 || sec < 0 || sec > 59 || usec < 0)
		return -EINVAL;
	tm.tm_year = (int)year - 1900;
	tm.tm_mon = (int)mon - 1;
	tm.tm_mday = (int)day;
	tm.tm_hour = (int)hour;
	tm.tm_min = (int)min;
	tm.tm_sec = (int)sec;
	t = timegm(&tm);
	/* A day the month does not have (February 30th) comes back as another date. */
	if (!gmtime_r(&t, &back) || back.tm_mday != (int)day || back.tm_mon != (int)mon - 1)
		return -EINVAL;
	/* Before 1970, from the second after: the earliest time's second alone is out of range. */
	if (t < 0 ? __builtin_mul_overflow((int64_t)t + 1, NSEC_PER_SEC, &ns) ||
			    __builtin_sub_overflow(ns, NSEC_PER_SEC - usec * 1000, &ns)
		  : __builtin_mul_overflow((int64_t)t, NSEC_PER_SEC, &ns) ||
			    __builtin_add_overflow(ns, (int64_t)usec * 1000, &ns))
		return -ERANGE;
	*time_ns = ns;
	return 0;
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
