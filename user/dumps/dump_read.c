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
 * (enum + names, beside its reader; the top level's enum is in dump_reader.h).
 * One walk of the object finds them, skipping any other
 * member without reading it; they are then read in the order the checks need,
 * wherever they are in the file. A new member is one more entry in a table.
 *
 * This file reads the top level; the parts of a dump are read by
 * dump_read_process.c (how the process ended, its counters, limits and
 * stacks), dump_read_events.c (callsites and events), dump_read_recordings.c
 * (recordings and their spans) and dump_read_triggers.c (the triggers that
 * fired), each with the checks of dump_read_members.c; dump_reader.h has what
 * they share.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dumps/dump_reader.h"
#include "base/text.h"

_Static_assert(REC_DUMP_READ_MAX_STACKS >= REC_MAX_DEAD_STACKS_LIMIT,
	       "a dump must hold every dead-thread stack kept");
_Static_assert(REC_DUMP_READ_MAX_RECORDINGS >= REC_DUMP_MAX_RECORDINGS &&
		       REC_DUMP_READ_MAX_STACKS >= REC_DUMP_MAX_STACKS,
	       "the reader must take what the writer writes");

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
