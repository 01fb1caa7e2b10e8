/* SPDX-License-Identifier: MIT */
/*
 * A pull reader of strict JSON (RFC 8259) that builds nothing: the caller walks
 * the document and copies out only the scalars it wants, so memory stays at a
 * window of the input plus what the caller builds, whatever the document holds.
 *
 * The input is a buffer, or a regular file read through a 64 KiB window (pread),
 * so any place of the document can be read again: every value is known by its
 * mark (where it starts), and iterating a container first skips (and checks)
 * each element, then hands out its mark, type and element count. The caller
 * reads the members of an object in the order it likes, by going back to their
 * marks. Each byte is read about twice per level of nesting above it: the time
 * stays proportional to the input.
 *
 * Strict: one value with only whitespace around it; no comments, no trailing
 * commas, no leading zeros or bare dots in numbers, no control characters in
 * strings; \u escapes must pair their surrogates. Limits (on top of RFC 8259,
 * which allows them): REC_JSON_MAX_DEPTH levels of nesting and numbers of at
 * most REC_JSON_NUMBER_MAX characters. Bytes of strings other than control
 * characters are taken as they are, UTF-8 or not (a dump holds the bytes read
 * from the target).
 */
#ifndef REC_JSON_READ_H
#define REC_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Arrays and objects nested in one another: at most this deep. */
#define REC_JSON_MAX_DEPTH 64
/* Characters of a number, sign and exponent included. */
#define REC_JSON_NUMBER_MAX 128
/* Bytes of the input read at once from a file. */
#define REC_JSON_WINDOW 65536

enum rec_json_type {
	REC_JSON_NONE = 0, /* no value (an absent member) */
	REC_JSON_NULL,
	REC_JSON_FALSE,
	REC_JSON_TRUE,
	REC_JSON_NUMBER,
	REC_JSON_STRING,
	REC_JSON_ARRAY,
	REC_JSON_OBJECT,
};

/* A value of the document: where it starts, what it is and, for a container, its size. */
struct rec_json_value {
	uint64_t pos;	/* byte offset of its first character */
	uint32_t depth; /* containers around it */
	enum rec_json_type type;
	uint64_t count; /* elements of an array, members of an object, else 0 */
};

/* A walk through the elements of an array or the members of an object. */
struct rec_json_iter {
	uint64_t pos;	/* where the next element (or the end) is looked for */
	uint32_t depth; /* of the elements */
	uint64_t index; /* elements handed out so far */
	bool object;
	bool done;
};

/* A string's length once unescaped, and whether it holds a NUL byte (\u0000). */
struct rec_json_str {
	size_t len;
	bool has_nul;
};

struct rec_json_number {
	char text[REC_JSON_NUMBER_MAX + 1]; /* as written, NUL-terminated */
	bool integer;			    /* no fraction and no exponent */
	bool negative;
	bool overflow;	    /* an integer whose magnitude is above UINT64_MAX */
	uint64_t magnitude; /* of an integer without overflow */
};

struct rec_json_read;

/*
 * A reader of the len bytes at buf (kept, not copied), or of the first size
 * bytes of the regular file open at fd (not closed by the reader). Returns 0
 * or -ENOMEM.
 */
int rec_json_read__new_mem(struct rec_json_read **jrp, const char *buf, size_t len);
int rec_json_read__new_fd(struct rec_json_read **jrp, int fd, uint64_t size);
void rec_json_read__free(struct rec_json_read *jr);

/*
 * Checks that the input is one JSON value with only whitespace around it, and
 * describes that value in *root. Returns 0, -EINVAL if it is not (see
 * rec_json_read__error), or the negative errno of a failed read.
 */
int rec_json_read__check(struct rec_json_read *jr, struct rec_json_value *root);

/*
 * Starts a walk through the array or object v. Each rec_json_read__next hands
 * out the next element in *elem and returns 1 (for an object, its key goes to
 * key, unescaped, cut to keysize - 1 bytes and NUL-terminated, its full length
 * to *keylen), or returns 0 after the last one. The element has been skipped
 * and checked whole, so the caller may read it at once, later, or never.
 * Every function below returns -EINVAL for input that is not JSON (possible
 * after rec_json_read__check only if a file changed meanwhile) and the
 * negative errno of a failed read.
 */
int rec_json_read__iter(struct rec_json_read *jr, const struct rec_json_value *v,
			struct rec_json_iter *it);
int rec_json_read__next(struct rec_json_read *jr, struct rec_json_iter *it,
			struct rec_json_value *elem, char *key, size_t keysize, size_t *keylen);

/*
 * Reads the string v, unescaped, into buf: at most size - 1 bytes, then a NUL.
 * *info gets its whole length, which may be more, and whether it holds a NUL.
 * buf may be NULL if size is 0.
 */
int rec_json_read__string(struct rec_json_read *jr, const struct rec_json_value *v, char *buf,
			  size_t size, struct rec_json_str *info);

/* Reads the number v. */
int rec_json_read__number(struct rec_json_read *jr, const struct rec_json_value *v,
			  struct rec_json_number *n);

/*
 * What was wrong with the input, for the last -EINVAL: "expected ',' or ']' at
 * byte 17", "the document ends early", ...
 */
const char *rec_json_read__error(const struct rec_json_read *jr);

#endif /* REC_JSON_READ_H */
