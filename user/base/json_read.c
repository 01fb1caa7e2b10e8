// SPDX-License-Identifier: MIT
/*
 * A pull reader of strict JSON (json_read.h). The input is a buffer, or a file
 * seen through a window that pread() moves wherever the reader goes. Nothing
 * is built: skipping a value checks it and counts its elements, reading a
 * string or a number copies it into the caller's bounded buffer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json_read.h"

struct rec_json_read {
	const char *buf; /* bytes [base, base + len) of the input */
	uint64_t base;
	size_t len;
	uint64_t pos;  /* the next byte to read */
	uint64_t size; /* of the input */
	int fd;	       /* -1 for a buffer */
	int io_err;    /* the first failed read, a negative errno */
	char msg[128];
	char window[]; /* REC_JSON_WINDOW bytes, for a file */
};

static int reader_new(struct rec_json_read **jrp, size_t window)
{
	struct rec_json_read *jr = calloc(1, sizeof(*jr) + window);

	if (!jr)
		return -ENOMEM;
	jr->fd = -1;
	*jrp = jr;
	return 0;
}

int rec_json_read__new_mem(struct rec_json_read **jrp, const char *buf, size_t len)
{
	int err = reader_new(jrp, 0);

	if (err)
		return err;
	(*jrp)->buf = buf;
	(*jrp)->len = len;
	(*jrp)->size = len;
	return 0;
}

int rec_json_read__new_fd(struct rec_json_read **jrp, int fd, uint64_t size)
{
	int err = reader_new(jrp, REC_JSON_WINDOW);

	if (err)
		return err;
	(*jrp)->buf = (*jrp)->window;
	(*jrp)->fd = fd;
	(*jrp)->size = size;
	return 0;
}

void rec_json_read__free(struct rec_json_read *jr)
{
	free(jr);
}

const char *rec_json_read__error(const struct rec_json_read *jr)
{
	return jr->msg;
}

/* Sets the message and returns -EINVAL, or the read error that made the input look short. */
__attribute__((format(printf, 2, 3))) static int fail(struct rec_json_read *jr, const char *fmt,
						      ...)
{
	va_list ap;

	if (jr->io_err)
		return jr->io_err;
	va_start(ap, fmt);
	vsnprintf(jr->msg, sizeof(jr->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * Moves the file's window to hold jr->pos: from the 4 KiB boundary below it, so
 * that going back a little, as the caller does to read an object's members, is
 * usually still inside. Returns the byte at jr->pos, or -1 at the end or on a
 * read error (kept in jr->io_err).
 */
static int refill(struct rec_json_read *jr)
{
	uint64_t start = jr->pos & ~(uint64_t)4095;
	size_t want, got = 0;

	if (jr->fd < 0 || jr->pos >= jr->size || jr->io_err)
		return -1;
	want = jr->size - start < REC_JSON_WINDOW ? (size_t)(jr->size - start) : REC_JSON_WINDOW;
	while (got < want) {
		ssize_t n = pread(jr->fd, jr->window + got, want - got, (off_t)(start + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			jr->io_err = -errno;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	/* A file that shrank since it was measured ends here. */
	if (got < want)
		jr->size = start + got;
	jr->base = start;
	jr->len = got;
	if (jr->pos - start >= got)
		return -1;
	return (unsigned char)jr->buf[jr->pos - start];
}

/* The byte at jr->pos, or -1 at the end of the input. */
static inline int peek(struct rec_json_read *jr)
{
	if (jr->pos >= jr->base && jr->pos - jr->base < jr->len)
		return (unsigned char)jr->buf[jr->pos - jr->base];
	return refill(jr);
}

static inline int get(struct rec_json_read *jr)
{
	int c = peek(jr);

	if (c >= 0)
		jr->pos++;
	return c;
}

static int skip_ws(struct rec_json_read *jr)
{
	int c;

	while ((c = peek(jr)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		jr->pos++;
	return c;
}

/* The message for c found at jr->pos where what was expected. */
static int unexpected(struct rec_json_read *jr, int c, const char *what)
{
	if (c < 0)
		return fail(jr, "the document ends early");
	return fail(jr, "expected %s at byte %llu", what, (unsigned long long)jr->pos);
}

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The four hex digits of a \u escape. Returns the code unit, or a negative errno. */
static int read_u_escape(struct rec_json_read *jr)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		int d = hex_digit(peek(jr));

		if (d < 0)
			return unexpected(jr, peek(jr), "4 hex digits after \\u");
		jr->pos++;
		v = v << 4 | d;
	}
	return v;
}

/* Appends a byte of a string being read: kept if there is room, counted always. */
static inline void put(char *buf, size_t size, struct rec_json_str *info, unsigned char c)
{
	if (info->len + 1 < size)
		buf[info->len] = (char)c;
	info->len++;
	if (!c)
		info->has_nul = true;
}

/* Appends code point cp as UTF-8. */
static void put_utf8(char *buf, size_t size, struct rec_json_str *info, uint32_t cp)
{
	if (cp < 0x80) {
		put(buf, size, info, (unsigned char)cp);
	} else if (cp < 0x800) {
		put(buf, size, info, (unsigned char)(0xc0 | cp >> 6));
		put(buf, size, info, (unsigned char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		put(buf, size, info, (unsigned char)(0xe0 | cp >> 12));
		put(buf, size, info, (unsigned char)(0x80 | (cp >> 6 & 0x3f)));
		put(buf, size, info, (unsigned char)(0x80 | (cp & 0x3f)));
	} else {
		put(buf, size, info, (unsigned char)(0xf0 | cp >> 18));
		put(buf, size, info, (unsigned char)(0x80 | (cp >> 12 & 0x3f)));
		put(buf, size, info, (unsigned char)(0x80 | (cp >> 6 & 0x3f)));
		put(buf, size, info, (unsigned char)(0x80 | (cp & 0x3f)));
	}
}

/*
 * Reads the string at jr->pos (its opening quote), unescaped, into buf as
 * rec_json_read__string() promises; buf may be NULL with size 0 to only check
 * and measure it.
 */
static int read_string(struct rec_json_read *jr, char *buf, size_t size, struct rec_json_str *info)
{
	int c;

	info->len = 0;
	info->has_nul = false;
	if (peek(jr) != '"')
		return unexpected(jr, peek(jr), "a string");
	jr->pos++;
	for (;;) {
		c = get(jr);
		if (c < 0)
			return fail(jr, "the document ends early");
		if (c == '"')
			break;
		if (c < 0x20)
			return fail(jr, "a control character (0x%02x) in a string at byte %llu", c,
				    (unsigned long long)(jr->pos - 1));
		if (c != '\\') {
			put(buf, size, info, (unsigned char)c);
			continue;
		}
		c = get(jr);
		switch (c) {
		case '"':
		case '\\':
		case '/':
			put(buf, size, info, (unsigned char)c);
			break;
		case 'b':
			put(buf, size, info, '\b');
			break;
		case 'f':
			put(buf, size, info, '\f');
			break;
		case 'n':
			put(buf, size, info, '\n');
			break;
		case 'r':
			put(buf, size, info, '\r');
			break;
		case 't':
			put(buf, size, info, '\t');
			break;
		case 'u': {
			uint64_t at = jr->pos - 2;
			int hi = read_u_escape(jr), lo;

			if (hi < 0)
				return hi;
			if (hi >= 0xdc00 && hi <= 0xdfff)
				return fail(jr, "an unpaired surrogate \\u%04x at byte %llu", hi,
					    (unsigned long long)at);
			if (hi < 0xd800 || hi > 0xdbff) {
				put_utf8(buf, size, info, (uint32_t)hi);
				break;
			}
			if (get(jr) != '\\' || get(jr) != 'u')
				return fail(jr, "an unpaired surrogate \\u%04x at byte %llu", hi,
					    (unsigned long long)at);
			lo = read_u_escape(jr);
			if (lo < 0)
				return lo;
			if (lo < 0xdc00 || lo > 0xdfff)
				return fail(jr, "an unpaired surrogate \\u%04x at byte %llu", hi,
					    (unsigned long long)at);
			put_utf8(buf, size, info,
				 0x10000 + (((uint32_t)hi - 0xd800) << 10) +
					 ((uint32_t)lo - 0xdc00));
			break;
		}
		default:
			if (c < 0)
				return fail(jr, "the document ends early");
			return fail(jr, "an invalid escape in a string at byte %llu",
				    (unsigned long long)(jr->pos - 2));
		}
	}
	if (size)
		buf[info->len < size ? info->len : size - 1] = '\0';
	return 0;
}

static inline bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/*
 * Reads the number at jr->pos: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
 * n may be NULL to only check it.
 */
static int read_number(struct rec_json_read *jr, struct rec_json_number *n)
{
	struct rec_json_number scratch;
	uint64_t start = jr->pos;
	size_t len = 0;
	int c;

	if (!n)
		n = &scratch;
	memset(n, 0, sizeof(*n));
	n->integer = true;

#define TAKE()                                                                                     \
	do {                                                                                       \
		if (len == REC_JSON_NUMBER_MAX)                                                    \
			return fail(jr, "a number longer than %d characters at byte %llu",         \
				    REC_JSON_NUMBER_MAX, (unsigned long long)start);               \
		n->text[len++] = (char)get(jr);                                                    \
	} while (0)

	if (peek(jr) == '-') {
		n->negative = true;
		TAKE();
	}
	c = peek(jr);
	if (!is_digit(c))
		return unexpected(jr, c, "a digit");
	if (c == '0') {
		TAKE();
		if (is_digit(peek(jr)))
			return fail(jr, "a number with a leading zero at byte %llu",
				    (unsigned long long)start);
	} else {
		while (is_digit(peek(jr))) {
			unsigned int d = (unsigned int)(peek(jr) - '0');

			if (n->magnitude > (UINT64_MAX - d) / 10)
				n->overflow = true;
			n->magnitude = n->magnitude * 10 + d;
			TAKE();
		}
	}
	if (peek(jr) == '.') {
		n->integer = false;
		TAKE();
		if (!is_digit(peek(jr)))
			return unexpected(jr, peek(jr), "a digit after '.'");
		while (is_digit(peek(jr)))
			TAKE();
	}
	if (peek(jr) == 'e' || peek(jr) == 'E') {
		n->integer = false;
		TAKE();
		if (peek(jr) == '+' || peek(jr) == '-')
			TAKE();
		if (!is_digit(peek(jr)))
			return unexpected(jr, peek(jr), "a digit in the exponent");
		while (is_digit(peek(jr)))
			TAKE();
	}
#undef TAKE
	n->text[len] = '\0';
	if (!n->integer || n->overflow)
		n->magnitude = 0;
	return 0;
}

static int read_literal(struct rec_json_read *jr, const char *word)
{
	uint64_t start = jr->pos;

	for (const char *w = word; *w; w++) {
		int c = get(jr);

		if (c < 0)
			return fail(jr, "the document ends early");
		if (c != *w)
			return fail(jr, "expected a value at byte %llu", (unsigned long long)start);
	}
	return 0;
}

/* Reads the key of an object member and its ':', at jr->pos (whitespace skipped). */
static int read_key(struct rec_json_read *jr, char *key, size_t keysize, size_t *keylen)
{
	struct rec_json_str info;
	int err, c;

	if (peek(jr) != '"')
		return unexpected(jr, peek(jr), "a string (an object's key)");
	err = read_string(jr, key, keysize, &info);
	if (err)
		return err;
	if (keylen)
		*keylen = info.len;
	c = skip_ws(jr);
	if (c != ':')
		return unexpected(jr, c, "':'");
	jr->pos++;
	return 0;
}

/*
 * Skips the value at jr->pos (whitespace skipped), whose depth (containers
 * around it) is depth, checking all of it; describes it in *v. Containers
 * are walked with a stack of their closing brackets, not by recursion.
 */
static int skip_value(struct rec_json_read *jr, uint32_t depth, struct rec_json_value *v)
{
	char closers[REC_JSON_MAX_DEPTH];
	uint32_t open = 0; /* containers entered inside v */
	int c, err;

	v->pos = jr->pos;
	v->depth = depth;
	v->count = 0;
	v->type = REC_JSON_NONE;
	for (;;) {
		/* A value is due. */
		err = 0;
		c = skip_ws(jr);
		if (!open)
			v->pos = jr->pos;
		switch (c) {
		case '{':
		case '[':
			if (depth + open >= REC_JSON_MAX_DEPTH)
				return fail(jr, "nested deeper than %d levels at byte %llu",
					    REC_JSON_MAX_DEPTH, (unsigned long long)jr->pos);
			if (!open)
				v->type = c == '{' ? REC_JSON_OBJECT : REC_JSON_ARRAY;
			closers[open++] = c == '{' ? '}' : ']';
			jr->pos++;
			c = skip_ws(jr);
			if (c == closers[open - 1]) {
				jr->pos++;
				open--;
				break;
			}
			if (open == 1)
				v->count++;
			if (closers[open - 1] == '}') {
				err = read_key(jr, NULL, 0, NULL);
				if (err)
					return err;
			}
			continue;
		case '"':
			err = read_string(jr, NULL, 0, &(struct rec_json_str){ 0 });
			if (!open)
				v->type = REC_JSON_STRING;
			break;
		case 't':
			err = read_literal(jr, "true");
			if (!open)
				v->type = REC_JSON_TRUE;
			break;
		case 'f':
			err = read_literal(jr, "false");
			if (!open)
				v->type = REC_JSON_FALSE;
			break;
		case 'n':
			err = read_literal(jr, "null");
			if (!open)
				v->type = REC_JSON_NULL;
			break;
		default:
			if (c != '-' && !is_digit(c))
				return unexpected(jr, c, "a value");
			err = read_number(jr, NULL);
			if (!open)
				v->type = REC_JSON_NUMBER;
			break;
		}
		if (err)
			return err;
		/* A value ended: close what ends with it, then a ',' may bring the next one. */
		for (;;) {
			if (!open)
				return 0;
			c = skip_ws(jr);
			if (c == closers[open - 1]) {
				jr->pos++;
				open--;
				continue;
			}
			if (c != ',')
				return unexpected(jr, c,
						  closers[open - 1] == '}' ? "',' or '}'"
									   : "',' or ']'");
			jr->pos++;
			if (open == 1)
				v->count++;
			if (closers[open - 1] == '}') {
				skip_ws(jr);
				err = read_key(jr, NULL, 0, NULL);
				if (err)
					return err;
			}
			break;
		}
	}
}

int rec_json_read__check(struct rec_json_read *jr, struct rec_json_value *root)
{
	int err, c;

	jr->pos = 0;
	if (skip_ws(jr) < 0)
		return fail(jr, "the document ends early");
	err = skip_value(jr, 0, root);
	if (err)
		return err;
	c = skip_ws(jr);
	if (c >= 0)
		return fail(jr, "trailing data at byte %llu", (unsigned long long)jr->pos);
	return jr->io_err;
}

int rec_json_read__iter(struct rec_json_read *jr, const struct rec_json_value *v,
			struct rec_json_iter *it)
{
	memset(it, 0, sizeof(*it));
	jr->pos = v->pos;
	if (v->type != REC_JSON_ARRAY && v->type != REC_JSON_OBJECT)
		return fail(jr, "expected an array or an object at byte %llu",
			    (unsigned long long)v->pos);
	if (get(jr) != (v->type == REC_JSON_ARRAY ? '[' : '{'))
		return fail(jr, "the input changed at byte %llu", (unsigned long long)v->pos);
	it->object = v->type == REC_JSON_OBJECT;
	it->depth = v->depth + 1;
	it->pos = jr->pos;
	return 0;
}

int rec_json_read__next(struct rec_json_read *jr, struct rec_json_iter *it,
			struct rec_json_value *elem, char *key, size_t keysize, size_t *keylen)
{
	char closer = it->object ? '}' : ']';
	int c, err;

	if (it->done)
		return 0;
	jr->pos = it->pos;
	c = skip_ws(jr);
	if (c == closer) {
		jr->pos++;
		it->done = true;
		return 0;
	}
	if (it->index) {
		if (c != ',')
			return unexpected(jr, c, it->object ? "',' or '}'" : "',' or ']'");
		jr->pos++;
		skip_ws(jr);
	}
	if (it->object) {
		err = read_key(jr, key, keysize, keylen);
		if (err)
			return err;
	}
	err = skip_value(jr, it->depth, elem);
	if (err)
		return err;
	it->pos = jr->pos;
	it->index++;
	return 1;
}

int rec_json_read__string(struct rec_json_read *jr, const struct rec_json_value *v, char *buf,
			  size_t size, struct rec_json_str *info)
{
	jr->pos = v->pos;
	return read_string(jr, buf, size, info);
}

int rec_json_read__number(struct rec_json_read *jr, const struct rec_json_value *v,
			  struct rec_json_number *n)
{
	jr->pos = v->pos;
	return read_number(jr, n);
}
