// SPDX-License-Identifier: MIT
/*
 * Reading black-box dumps (dump.h, docs/dump-format.md). The dump is walked
 * with the pull reader of json_read.h, which builds nothing: the only memory
 * that grows is the model itself, and a 64 KiB window on the file. Every
 * callsite blob and every event record is rebuilt byte for byte and handed to
 * the same parser and decoder as live data, so a dump is never trusted more
 * than a target is.
 *
 * Each object of the dump has a table of the members this version knows
 * (enum + names, beside its reader; the top level's enum is in dump_read.h).
 * One walk of the object finds them, skipping any other
 * member without reading it; they are then read in the order the checks need,
 * wherever they are in the file. A new member is one more entry in a table.
 *
 * The parts of a dump are read by dump_read_process.c (how the process ended,
 * its counters, limits and stacks), dump_read_events.c (callsites and events),
 * dump_read_recordings.c (recordings and their spans) and dump_read_triggers.c
 * (the triggers that fired); dump_read.h has what they share.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dumps/dump_read.h"
#include "base/text.h"

_Static_assert(REC_DUMP_READ_MAX_STACKS >= REC_MAX_DEAD_STACKS_LIMIT,
	       "a dump must hold every dead-thread stack kept");
_Static_assert(REC_DUMP_READ_MAX_RECORDINGS >= REC_DUMP_MAX_RECORDINGS &&
		       REC_DUMP_READ_MAX_STACKS >= REC_DUMP_MAX_STACKS,
	       "the reader must take what the writer writes");

/* Room for a member's name: longer names are no member this version knows. */
#define REC_DUMP_KEY_MAX 32

/* Sets the message "<path>.<key>: <fmt...>" (key may be NULL). */
void rec_dump_read__set_error(struct rec_dump_read *r, const char *path, const char *key,
			      const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!r->err || !r->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!*path && !key)
		snprintf(r->err, r->errlen, "%s", msg);
	else
		snprintf(r->err, r->errlen, "%s%s%s: %s", path, *path && key ? "." : "",
			 key ? key : "", msg);
}

int rec_dump_read__fail_nomem(struct rec_dump_read *r)
{
	if (r->err && r->errlen)
		snprintf(r->err, r->errlen, "out of memory");
	return -ENOMEM;
}

/* An error of the JSON reader: not JSON (-EINVAL), or a failed read (its errno). */
int rec_dump_read__fail_input(struct rec_dump_read *r, int err)
{
	if (err == -EINVAL)
		return rec_dump_read__fail_at(r, "", NULL, "not JSON: %s",
					      rec_json_read__error(r->jr));
	if (err == -ENOMEM)
		return rec_dump_read__fail_nomem(r);
	if (r->err && r->errlen)
		snprintf(r->err, r->errlen, "%s", strerror(-err));
	return err;
}

/* ---- objects and their members ---- */

/*
 * Finds o's members in the object v, in one walk. A member this version does
 * not know is skipped without being read; one it knows twice is refused.
 */
int rec_dump_read__scan_object(struct rec_dump_read *r, const struct rec_json_value *v,
			       struct rec_dump_object *o)
{
	struct rec_json_value m;
	struct rec_json_iter it;
	char key[REC_DUMP_KEY_MAX];
	size_t keylen, i;
	int ret;

	for (i = 0; i < o->nkeys; i++)
		o->m[i].type = REC_JSON_NONE;
	ret = rec_json_read__iter(r->jr, v, &it);
	if (ret)
		return rec_dump_read__fail_input(r, ret);
	while ((ret = rec_json_read__next(r->jr, &it, &m, key, sizeof(key), &keylen)) > 0) {
		if (keylen >= sizeof(key))
			continue;
		for (i = 0; i < o->nkeys; i++)
			if (keylen == strlen(o->keys[i]) && !memcmp(key, o->keys[i], keylen))
				break;
		if (i == o->nkeys)
			continue;
		if (o->m[i].type != REC_JSON_NONE)
			return rec_dump_read__fail_at(r, o->path, NULL, "\"%s\" appears twice",
						      o->keys[i]);
		o->m[i] = m;
	}
	return ret ? rec_dump_read__fail_input(r, ret) : 0;
}

/* o's member i, which must be there. */
int rec_dump_read__get_member(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			      const struct rec_json_value **v)
{
	if (o->m[i].type == REC_JSON_NONE)
		return rec_dump_read__fail_at(r, o->path, NULL, "missing \"%s\"", o->keys[i]);
	*v = &o->m[i];
	return 0;
}

/* Checks that v (named path.key) is an unsigned integer in [min, max] and stores it. */
int rec_dump_read__as_u64(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			  const char *key, uint64_t min, uint64_t max, uint64_t *out)
{
	struct rec_json_number n;
	int err;

	if (v->type != REC_JSON_NUMBER)
		return rec_dump_read__fail_at(r, path, key, "expected an unsigned integer");
	err = rec_json_read__number(r->jr, v, &n);
	if (err)
		return rec_dump_read__fail_input(r, err);
	/* -0 is 0. */
	if (!n.integer || (n.negative && (n.overflow || n.magnitude)))
		return rec_dump_read__fail_at(r, path, key, "expected an unsigned integer");
	if (n.overflow)
		return rec_dump_read__fail_at(r, path, key,
					      "%s is out of range (%" PRIu64 "..%" PRIu64 ")",
					      n.text, min, max);
	if (n.magnitude < min || n.magnitude > max)
		return rec_dump_read__fail_at(
			r, path, key, "%" PRIu64 " is out of range (%" PRIu64 "..%" PRIu64 ")",
			n.magnitude, min, max);
	*out = n.magnitude;
	return 0;
}

int rec_dump_read__get_u64(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			   uint64_t min, uint64_t max, uint64_t *out)
{
	const struct rec_json_value *v;

	return rec_dump_read__get_member(r, o, i, &v)
		       ?: rec_dump_read__as_u64(r, v, o->path, o->keys[i], min, max, out);
}

int rec_dump_read__get_u32(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			   uint32_t *out)
{
	uint64_t v;
	int err = rec_dump_read__get_u64(r, o, i, 0, UINT32_MAX, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

/* Checks that v is an integer that fits int64_t and stores it. */
int rec_dump_read__as_i64(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			  const char *key, int64_t *out)
{
	struct rec_json_number n;
	int err;

	if (v->type != REC_JSON_NUMBER)
		return rec_dump_read__fail_at(r, path, key, "expected an integer");
	err = rec_json_read__number(r->jr, v, &n);
	if (err)
		return rec_dump_read__fail_input(r, err);
	if (!n.integer)
		return rec_dump_read__fail_at(r, path, key, "expected an integer");
	if (n.overflow || n.magnitude > (uint64_t)INT64_MAX + n.negative)
		return rec_dump_read__fail_at(r, path, key,
					      "%s is out of range for a signed integer", n.text);
	/* Through unsigned arithmetic: -2^63 has no positive twin. */
	*out = n.negative ? (int64_t)(0 - n.magnitude) : (int64_t)n.magnitude;
	return 0;
}

/*
 * Checks that v is a string and reads it into buf (size bytes, see
 * rec_json_read__string: a longer one is cut, *info has its whole length).
 */
int rec_dump_read__as_str(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
			  const char *key, char *buf, size_t size, struct rec_json_str *info)
{
	int err;

	if (v->type != REC_JSON_STRING)
		return rec_dump_read__fail_at(r, path, key, "expected a string");
	err = rec_json_read__string(r->jr, v, buf, size, info);
	return err ? rec_dump_read__fail_input(r, err) : 0;
}

/* A string member without NUL bytes, of at most max bytes, into buf (max + 1 bytes). */
int rec_dump_read__get_cstr(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			    size_t max, char *buf)
{
	const struct rec_json_value *v;
	struct rec_json_str info;
	int err;

	err = rec_dump_read__get_member(r, o, i, &v)
		      ?: rec_dump_read__as_str(r, v, o->path, o->keys[i], buf, max + 1, &info);
	if (err)
		return err;
	if (info.has_nul)
		return rec_dump_read__fail_at(r, o->path, o->keys[i], "contains a NUL byte");
	if (info.len > max)
		return rec_dump_read__fail_at(r, o->path, o->keys[i], "longer than %zu bytes", max);
	return 0;
}

/* Parses a "0x…" key: 1 to 16 hex digits. */
static int as_key(struct rec_dump_read *r, const struct rec_json_value *v, const char *path,
		  const char *key, uint64_t *out)
{
	struct rec_json_str info;
	char s[20];
	uint64_t k = 0;

	if (rec_dump_read__as_str(r, v, path, key, s, sizeof(s), &info))
		return -EINVAL;
	if (info.len < 3 || info.len > 18 || s[0] != '0' || s[1] != 'x')
		goto bad;
	for (size_t i = 2; i < info.len; i++) {
		char c = s[i];
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned int)(c - 'A' + 10);
		else
			goto bad;
		k = k << 4 | d;
	}
	*out = k;
	return 0;
bad:
	return rec_dump_read__fail_at(r, path, key,
				      "expected a \"0x\" hex string of at most 16 digits");
}

int rec_dump_read__get_key(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			   uint64_t *out)
{
	const struct rec_json_value *v;

	return rec_dump_read__get_member(r, o, i, &v) ?: as_key(r, v, o->path, o->keys[i], out);
}

/* An array member of at most max elements. */
int rec_dump_read__get_array(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			     uint64_t max, const struct rec_json_value **v)
{
	int err = rec_dump_read__get_member(r, o, i, v);

	if (err)
		return err;
	if ((*v)->type != REC_JSON_ARRAY)
		return rec_dump_read__fail_at(r, o->path, o->keys[i], "expected an array");
	if ((*v)->count > max)
		return rec_dump_read__fail_at(r, o->path, o->keys[i],
					      "%" PRIu64 " elements, more than %" PRIu64,
					      (*v)->count, max);
	return 0;
}

int rec_dump_read__get_object(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			      const struct rec_json_value **v)
{
	int err = rec_dump_read__get_member(r, o, i, v);

	if (!err && (*v)->type != REC_JSON_OBJECT)
		return rec_dump_read__fail_at(r, o->path, o->keys[i], "expected an object");
	return err;
}

int rec_dump_read__get_bool(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			    int *out)
{
	const struct rec_json_value *v;
	int err = rec_dump_read__get_member(r, o, i, &v);

	if (err)
		return err;
	if (v->type != REC_JSON_TRUE && v->type != REC_JSON_FALSE)
		return rec_dump_read__fail_at(r, o->path, o->keys[i], "expected true or false");
	*out = v->type == REC_JSON_TRUE;
	return 0;
}

/*
 * Calls fn for each element of arr, o's member i (at most arr->count of them,
 * which rec_dump_read__get_array checked), naming each "<o's path>.<key>[<i>]" in path (size
 * bytes). Each must be an object.
 */
int rec_dump_read__each_object(struct rec_dump_read *r, const struct rec_dump_object *o, int i,
			       const struct rec_json_value *arr, char *path, size_t size,
			       rec_dump_element_fn fn, void *ctx)
{
	struct rec_json_value elem;
	struct rec_json_iter it;
	size_t n = 0;
	int ret;

	ret = rec_json_read__iter(r->jr, arr, &it);
	if (ret)
		return rec_dump_read__fail_input(r, ret);
	while ((ret = rec_json_read__next(r->jr, &it, &elem, NULL, 0, NULL)) > 0) {
		/* Only if the file changed since it was checked. */
		if (n == arr->count)
			return rec_dump_read__fail_at(r, o->path, o->keys[i],
						      "changed while it was read");
		snprintf(path, size, "%s%s%s[%zu]", o->path, *o->path ? "." : "", o->keys[i], n);
		if (elem.type != REC_JSON_OBJECT)
			return rec_dump_read__fail_at(r, path, NULL, "expected an object");
		ret = fn(r, &elem, path, n++, ctx);
		if (ret)
			return ret;
	}
	return ret ? rec_dump_read__fail_input(r, ret) : 0;
}

/* ---- the top level ---- */

static const char *const top_keys[TOP_N] = {
	[TOP_FORMAT] = "format",
	[TOP_VERSION] = "version",
	[TOP_PID] = "pid",
	[TOP_NS_PID] = "ns_pid",
	[TOP_ENDED] = "ended",
	[TOP_DUMPED_AT] = "dumped_at",
	[TOP_CLOCK_OFFSET_NS] = "clock_offset_ns",
	[TOP_COUNTERS] = "counters",
	[TOP_MALFORMED] = "malformed",
	[TOP_ORPHANS] = "orphans",
	[TOP_SPAN_ORPHANS] = "span_orphans",
	[TOP_SCHED] = "sched",
	[TOP_CALLSITES] = "callsites",
	[TOP_RECORDINGS] = "recordings",
	[TOP_STACKS] = "stacks",
	[TOP_LIMITS] = "limits",
	[TOP_FORGOTTEN] = "forgotten",
	[TOP_RECORDINGS_OMITTED] = "recordings_omitted",
	[TOP_STACKS_OMITTED] = "stacks_omitted",
	[TOP_SCOPE] = "scope",
	[TOP_TRIGGER] = "trigger",
	[TOP_TRIGGERS_PENDING] = "triggers_pending",
	[TOP_ATTACHED_NS] = "attached_ns",
	[TOP_SPANS_BEFORE_ATTACH] = "spans_before_attach",
	[TOP_FIELDS_LEFT_OUT] = "fields_left_out",
};

static int read_dump(struct rec_dump_read *r, const struct rec_json_value *root, struct rec_proc *p,
		     struct rec_dump_counters *counters)
{
	struct rec_json_value m[TOP_N];
	struct rec_dump_object o = { "", top_keys, TOP_N, m };
	const struct rec_json_value *v;
	struct rec_json_str info;
	uint64_t version, pid, ns_pid;
	char path[REC_DUMP_PATH1], format[16], dumped_at[65];
	int err;

	if (root->type != REC_JSON_OBJECT)
		return rec_dump_read__fail_at(r, "", NULL,
					      "not a recorder dump: expected a JSON object");
	err = rec_dump_read__scan_object(r, root, &o);
	if (err)
		return err;
	if (m[TOP_FORMAT].type == REC_JSON_NONE)
		return rec_dump_read__fail_at(r, "", NULL,
					      "not a recorder dump: missing \"format\"");
	if (m[TOP_FORMAT].type != REC_JSON_STRING ||
	    (err = rec_json_read__string(r->jr, &m[TOP_FORMAT], format, sizeof(format), &info)) ||
	    info.len != strlen("recorder-dump") || strcmp(format, "recorder-dump") != 0) {
		if (err)
			return rec_dump_read__fail_input(r, err);
		return rec_dump_read__fail_at(
			r, "", NULL, "not a recorder dump: \"format\" is not \"recorder-dump\"");
	}
	err = rec_dump_read__get_u64(r, &o, TOP_VERSION, 0, UINT64_MAX, &version);
	if (err)
		return err;
	if (version < 1 || version > REC_DUMP_VERSION)
		return rec_dump_read__fail_at(
			r, "", NULL,
			"version %" PRIu64 " is not supported (this build reads versions 1 to %d)",
			version, REC_DUMP_VERSION);

	err = rec_dump_read__get_u64(r, &o, TOP_PID, 1, INT_MAX, &pid)
		      ?: rec_dump_read__get_u64(r, &o, TOP_NS_PID, 0, INT_MAX, &ns_pid);
	if (err)
		return err;
	p->pid = (pid_t)pid;
	p->ns_pid = (pid_t)ns_pid;
	p->alive = 0;
	p->uid = (uid_t)-1;
	err = rec_dump_read__get_object(r, &o, TOP_ENDED, &v) ?: rec_dump_read__ended(r, v, p);
	if (err)
		return err;
	err = rec_dump_read__get_cstr(r, &o, TOP_DUMPED_AT, 64, dumped_at) ?:
	      rec_dump_read__get_member(r, &o, TOP_CLOCK_OFFSET_NS, &v) ?:
	      rec_dump_read__as_i64(r, v, "", "clock_offset_ns", &p->clock_offset_ns);
	if (err)
		return err;
	/* When it was written: what the ages of its stacks' frames are measured at. */
	if (rec_text__parse_rfc3339(dumped_at, &p->dumped_at_ns))
		p->dumped_at_ns = 0;
	/* Optional: a dump written without counters reads as all zero. */
	if (m[TOP_COUNTERS].type != REC_JSON_NONE) {
		err = rec_dump_read__get_object(r, &o, TOP_COUNTERS, &v)
			      ?: rec_dump_read__counters(r, v, p, counters);
		if (err)
			return err;
	}
	err = rec_dump_read__get_u64(r, &o, TOP_MALFORMED, 0, UINT64_MAX, &p->malformed) ?:
	      rec_dump_read__get_u64(r, &o, TOP_ORPHANS, 0, UINT64_MAX, &p->orphans) ?:
	      rec_dump_read__limit_keys(r, &o, p);
	if (err)
		return err;
	err = rec_dump_read__triggers(r, &o, p);
	if (err)
		return err;
	/* Optional (version 2): a dump without it had none. */
	if (m[TOP_SPAN_ORPHANS].type != REC_JSON_NONE) {
		err = rec_dump_read__get_u64(r, &o, TOP_SPAN_ORPHANS, 0, UINT64_MAX,
					     &p->span_orphans);
		if (err)
			return err;
	}
	/* Optional: when it was attached, and the spans of recordings older than that. */
	if (m[TOP_ATTACHED_NS].type != REC_JSON_NONE) {
		err = rec_dump_read__get_u64(r, &o, TOP_ATTACHED_NS, 0, UINT64_MAX,
					     &p->attached_ns);
		if (err)
			return err;
	}
	if (m[TOP_SPANS_BEFORE_ATTACH].type != REC_JSON_NONE) {
		err = rec_dump_read__get_u64(r, &o, TOP_SPANS_BEFORE_ATTACH, 0, UINT64_MAX,
					     &p->spans_before_attach);
		if (err)
			return err;
	}
	/* Optional: events' fields past their callsite's 8th (the Rust layer's). */
	if (m[TOP_FIELDS_LEFT_OUT].type != REC_JSON_NONE) {
		err = rec_dump_read__get_u64(r, &o, TOP_FIELDS_LEFT_OUT, 0, UINT64_MAX,
					     &p->fields_left_out);
		if (err)
			return err;
	}
	/* Optional (version 3): kept with --sched only. */
	if (m[TOP_SCHED].type != REC_JSON_NONE) {
		err = rec_dump_read__get_object(r, &o, TOP_SCHED, &v)
			      ?: rec_dump_read__sched_counts(r, v, p);
		if (err)
			return err;
	}

	/* No limit on callsites but the file's size: each takes over 90 bytes of it. */
	err = rec_dump_read__get_array(r, &o, TOP_CALLSITES, UINT64_MAX, &v)
		      ?: rec_dump_read__each_object(r, &o, TOP_CALLSITES, v, path, sizeof(path),
						    rec_dump_read__callsite, p);
	if (err)
		return err;
	err = rec_dump_read__get_array(r, &o, TOP_RECORDINGS, REC_DUMP_READ_MAX_RECORDINGS, &v)
		      ?: rec_dump_read__each_object(r, &o, TOP_RECORDINGS, v, path, sizeof(path),
						    rec_dump_read__recording, p);
	if (err)
		return err;
	return rec_dump_read__stacks(r, &o, p);
}

/* Reads the dump jr holds, as rec_dump__read() promises. */
static int read_input(struct rec_json_read *jr, struct rec_proc *p,
		      struct rec_dump_counters *counters, char *err, size_t errlen)
{
	struct rec_dump_read r = { .jr = jr, .err = err, .errlen = errlen };
	struct rec_json_value root;
	int ret;

	ret = rec_json_read__check(jr, &root);
	if (ret)
		return rec_dump_read__fail_input(&r, ret);
	ret = read_dump(&r, &root, p, counters);
	if (ret) {
		rec_proc__fini(p);
		memset(p, 0, sizeof(*p));
		if (counters)
			memset(counters, 0, sizeof(*counters));
	}
	return ret;
}

static void start(struct rec_proc *p, struct rec_dump_counters *counters, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (counters)
		memset(counters, 0, sizeof(*counters));
	if (err && errlen)
		err[0] = '\0';
}

int rec_dump__read_mem(const char *buf, size_t len, struct rec_proc *p,
		       struct rec_dump_counters *counters, char *err, size_t errlen)
{
	struct rec_json_read *jr;
	int ret;

	start(p, counters, err, errlen);
	ret = rec_json_read__new_mem(&jr, buf, len);
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return ret;
	}
	ret = read_input(jr, p, counters, err, errlen);
	rec_json_read__free(jr);
	return ret;
}

/* What a file that is not a regular file is, for a message. */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a regular file";
}

/*
 * Opens path for reading if it is a regular file, and measures it. Anything
 * else is refused before it is opened (a FIFO would block the open, a device
 * would never end), and what was opened must be the file that was looked at.
 * Returns the descriptor, or a negative errno with a message in err.
 */
static int open_regular(const char *path, uint64_t *size, char *err, size_t errlen)
{
	struct stat before, st;
	int fd, ret;

	if (stat(path, &before)) {
		ret = -errno;
		goto fail;
	}
	if (!S_ISREG(before.st_mode)) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s, not a regular file", path,
				 file_kind(before.st_mode));
		return -ENOTSUP;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_dev != before.st_dev || st.st_ino != before.st_ino) {
		close(fd);
		if (err && errlen)
			snprintf(err, errlen, "%s: replaced while it was being opened", path);
		return -EAGAIN;
	}
	*size = (uint64_t)st.st_size;
	return fd;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
	return ret;
}

int rec_dump__read(const char *path, struct rec_proc *p, struct rec_dump_counters *counters,
		   char *err, size_t errlen)
{
	struct rec_json_read *jr;
	uint64_t size;
	int fd, ret;

	start(p, counters, err, errlen);
	fd = open_regular(path, &size, err, errlen);
	if (fd < 0)
		return fd;
	ret = rec_json_read__new_fd(&jr, fd, size);
	if (ret) {
		close(fd);
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return ret;
	}
	ret = read_input(jr, p, counters, err, errlen);
	rec_json_read__free(jr);
	close(fd);
	/* A failed read names the file. */
	if (ret && ret != -EINVAL && ret != -ENOMEM && err && errlen)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
	return ret;
}
