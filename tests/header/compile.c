/* SPDX-License-Identifier: MIT */
/*
 * Compiled by tests/run-all.sh as C11 and C++17 with -Wall -Wextra -Werror
 * -pedantic: every public form of include/recorder.h must stay warning-free.
 */
#include "recorder.h"

/*
 * The batch path's record of one REC_STRN field of len bytes at p (what the
 * BPF side gets): its slot's length and status, and its bytes in *out.
 */
static int strn_record(const char *p, uint64_t len, const char **out, uint64_t *slot)
{
	static struct rec__tbuf tb;
	static struct rec_span span;
	uint64_t v[1] = { REC__U(p) }, lens[1] = { len };
	const struct rec__brec *r = (const struct rec__brec *)(const void *)tb.data;
	const uint64_t *w = (const uint64_t *)(const void *)(r + 1);

	tb.len = 0;
	if (!rec__batch_event(&tb, "meta", REC__TYPE_STR, 1, &span, 1, v, 1, lens))
		return 0;
	*slot = w[5];
	*out = (const char *)(w + 6) + (w[5] & 0xffff);
	return r->kind == REC__BK_EVENT && r->nvals == 1 && r->size == tb.len;
}

/* Checks the record of REC_STRN(p, len): want (its length and status), or NULL with status. */
static int strn_is(const char *p, uint64_t len, const char *want, unsigned int status)
{
	const char *got = NULL;
	uint64_t slot = 0;
	size_t n = want ? strlen(want) : 0;

	if (!strn_record(p, len, &got, &slot))
		return 0;
	if (((slot >> 16) & 0xffff) != n || (slot >> 32) != status)
		return 0;
	return !want || (memcmp(got, want, n) == 0 && got[n] == '\0');
}

/* REC_STRN on the batch path: no byte past len, cut at a NUL, marked only past 255. */
static int strn_checks(void)
{
	static char buf[400];
	static char want[256];
	int ok = 1;

	memset(buf, 'x', sizeof(buf));
	memcpy(buf, "GET user:42\r\n", 13);
	memset(want, 'x', 255);
	ok &= strn_is(buf + 4, 7, "user:42", 0);	    /* other bytes follow: not read */
	ok &= strn_is(buf, 0, "", 0);			    /* nothing */
	ok &= strn_is("ab\0cd", 5, "ab", 0);		    /* a NUL among them ends it */
	ok &= strn_is(buf + 100, 255, want, 0);		    /* 255: whole, not truncated */
	ok &= strn_is(buf + 100, 256, want, 1);		    /* 256: cut to 255, truncated */
	ok &= strn_is(buf + 100, 300, want, 1);		    /* longer: the same */
	ok &= strn_is(NULL, 3, NULL, 3);		    /* NULL: REC_STR_NULL */
	ok &= strn_is(buf, (uint64_t)(int64_t)-1, NULL, 3); /* a negative length: the same */
	buf[100 + 255] = '\0';
	ok &= strn_is(buf + 100, 300, want, 0); /* a NUL right after 255 bytes: whole */
	return ok;
}

int main(void)
{
	struct rec_recorder *r = rec_recorder_new();
	struct rec_recording *rec = rec_recording_new(r, 10);
	struct rec_span span, child;

	if (!r || !rec)
		return 1;
	rec_recording_span(&span, rec, "subject");
	rec_span_enter(&span);
	REC_TRACE("trace");
	REC_DEBUG("debug", REC_I64(a, -1));
	REC_INFO("info", REC_U64(a, 1), REC_STR(b, "s"));
	REC_WARN("warn", REC_F64(a, 1.5), REC_BOOL(b, 1), REC_ERR(c, "e"));
	REC_ERROR("eight", REC_I64(a, 1), REC_U64(b, 2), REC_F64(c, 3.0), REC_BOOL(d, 0),
		  REC_STR(e, "5"), REC_ERR(f, "6"), REC_I64(g, 7), REC_U64(h, 8));
	REC_INFOF("formatted %d %s", 1, "x");
	{
		char key[4] = { 'k', 'e', 'y', '!' };
		const char *none = NULL;
		int n = 3;

		REC_INFO("strn", REC_STRN(key, key, n), REC_STRN(k2, key + 1, sizeof(key) - 1),
			 REC_STRN(none, none, 0), REC_STR(lit, "x"), REC_I64(i, 1));
		const unsigned char ukey[2] = { 'u', 'k' };
		const void *vkey = key;

		/* Any pointer: protocol buffers are often unsigned char or void. */
		REC_INFO("pointers", REC_STRN(u, ukey, sizeof(ukey)), REC_STRN(v, vkey, 2));
		REC_ERROR("eight", REC_STRN(a, key, 1), REC_U64(b, 2), REC_F64(c, 3.0),
			  REC_BOOL(d, 0), REC_STR(e, "5"), REC_ERR(f, "6"), REC_I64(g, 7),
			  REC_STRN(h, key, 4u));
	}
	if (!strn_checks())
		return 1;
	REC_SPAN_INIT(&child, DEBUG, "child");
	rec_span_enter(&child);
	{
		REC_SPAN_SCOPED(scoped, INFO, "scoped");
		REC_INFO("in scope");
	}
	rec_span_exit(&child);
	rec_span_close(&child);
	rec_span_exit(&span);
	if (rec_current_span() != NULL || rec_is_attached())
		return 1;
	if (rec_recording_new(r, 1) != NULL || errno != EINVAL)
		return 1;
	rec_recording_free(rec);
	rec_recorder_free(r);
	return 0;
}
