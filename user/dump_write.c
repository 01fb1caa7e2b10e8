// SPDX-License-Identifier: MIT
/*
 * Writing black-box dumps (dump.h, docs/dump-format.md): plain fprintf into a
 * temporary file, renamed when whole. dump_read.c reads them back.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dump.h"
#include "output/names.h"
#include "render.h"

#define NSEC_PER_SEC 1000000000LL

/* ---- writing ---- */

static void write_cstr(FILE *out, const char *s)
{
	rec_json__string(out, s ? s : "", s ? strlen(s) : 0);
}

static void write_key(FILE *out, uint64_t key)
{
	char buf[20];

	fprintf(out, "\"%s\"", rec_key__format(key, buf));
}

static void write_ended(FILE *out, const struct rec_proc *p)
{
	const char *name = rec_names__signal(p->end_code);
	char buf[16];

	switch (p->end) {
	case REC_END_EXIT:
		fprintf(out, "{\"how\":\"exit\",\"code\":%d}", p->end_code);
		break;
	case REC_END_SIGNAL:
		fprintf(out, "{\"how\":\"signal\",\"signal\":%d,\"name\":\"%s\","
			"\"core_dumped\":%s}",
			p->end_code, name ? name : (snprintf(buf, sizeof(buf), "SIG%d", p->end_code), buf),
			p->end_core ? "true" : "false");
		break;
	case REC_END_RUNNING:
		fputs("{\"how\":\"running\"}", out);
		break;
	default:
		fputs("{\"how\":\"unknown\"}", out);
		break;
	}
}

/* RFC 3339 UTC with microseconds, quoted. */
static void write_time(FILE *out, int64_t time_ns)
{
	int64_t s = time_ns / NSEC_PER_SEC, ns = time_ns % NSEC_PER_SEC;
	time_t sec;
	struct tm tm;

	if (ns < 0) {
		ns += NSEC_PER_SEC;
		s--;
	}
	sec = (time_t)s;
	if (!gmtime_r(&sec, &tm)) {
		fputs("\"\"", out);
		return;
	}
	fprintf(out, "\"%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ\"", tm.tm_year + 1900, tm.tm_mon + 1,
		tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)(ns / 1000));
}

static void write_value(FILE *out, const struct rec_value *v)
{
	switch (v->type) {
	case REC_TYPE_STR:
		fputs("{\"type\":\"str\",\"value\":", out);
		rec_json__string(out, v->str.ptr, v->str.len);
		fprintf(out, ",\"status\":\"%s\"}", rec_names__str_status(v->str.status));
		break;
	case REC_TYPE_I64:
		fprintf(out, "{\"type\":\"i64\",\"value\":%" PRId64 "}", v->i64);
		break;
	case REC_TYPE_U64:
		fprintf(out, "{\"type\":\"u64\",\"value\":%" PRIu64 "}", v->u64);
		break;
	case REC_TYPE_F64:
		fputs("{\"type\":\"f64\",\"value\":", out);
		rec_json__f64(out, v->f64);
		fputc('}', out);
		break;
	case REC_TYPE_BOOL:
		fprintf(out, "{\"type\":\"bool\",\"value\":%s}", v->b ? "true" : "false");
		break;
	default:
		/* rec_event__decode never yields another type. */
		break;
	}
}

static void write_callsite(FILE *out, uint64_t addr, const struct rec_callsite *cs)
{
	fputs("{\"addr\":", out);
	write_key(out, addr);
	fprintf(out, ",\"kind\":\"%c\",\"level\":%u,\"name\":", cs->kind, (unsigned int)cs->level);
	write_cstr(out, cs->name);
	fputs(",\"target\":", out);
	write_cstr(out, cs->target);
	fputs(",\"file\":", out);
	write_cstr(out, cs->file);
	fprintf(out, ",\"line\":%u,\"message\":", cs->line);
	write_cstr(out, cs->message);
	fputs(",\"fields\":[", out);
	for (uint32_t i = 0; i < cs->nfields && i < REC_MAX_FIELDS; i++) {
		if (i)
			fputc(',', out);
		write_cstr(out, cs->field_names[i]);
	}
	fputs("]}", out);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct event_walk {
	FILE *out;
	struct rec_proc *p;
	int first;
	/* Callsites referred to that the cache has no room for (address -> itself). */
	struct rec_u64map uncached;
	int err;
};

/*
 * Every readable callsite in p's cache, and those in w->uncached (read again
 * now), by address. Returns 0 or -ENOMEM.
 */
static int write_callsites(FILE *out, struct rec_proc *p, const struct event_walk *w)
{
	const struct rec_u64map *maps[] = { &p->callsites, &w->uncached };
	size_t total = p->callsites.live + w->uncached.live, n = 0;
	uint64_t *addrs = NULL;
	int first = 1;

	if (total) {
		addrs = malloc(total * sizeof(*addrs));
		if (!addrs)
			return -ENOMEM;
	}
	for (size_t m = 0; m < 2; m++)
		for (size_t i = 0; i < maps[m]->cap && n < total; i++) {
			uint64_t k = maps[m]->keys[i];

			if (k && k != UINT64_MAX)
				addrs[n++] = k;
		}
	if (n)
		qsort(addrs, n, sizeof(*addrs), cmp_u64);
	fputs("\"callsites\":[", out);
	for (size_t i = 0; i < n; i++) {
		/* A cached address that could not be read comes back NULL: skip it. */
		const struct rec_callsite *cs = rec_proc__callsite(p, addrs[i]);

		if (!cs)
			continue;
		fputs(first ? "\n" : ",\n", out);
		write_callsite(out, addrs[i], cs);
		first = 0;
	}
	fputs("],\n", out);
	free(addrs);
	return 0;
}

/*
 * Reads the callsite at addr into the cache (it usually is already); one that
 * does not fit is remembered in w->uncached, to be written all the same.
 */
static void resolve_callsite(struct event_walk *w, uint64_t addr)
{
	if (!rec_proc__callsite(w->p, addr) || rec_proc__cached_callsite(w->p, addr) ||
	    rec_u64map__get(&w->uncached, addr))
		return;
	if (rec_u64map__put(&w->uncached, addr, w))
		w->err = -ENOMEM;
}

static int resolve_visit(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct event_walk *w = ctx;
	struct rec_decoded d;

	(void)seq;
	if (rec_event__decode(data, len, &d) == 0)
		resolve_callsite(w, d.meta);
	return 0;
}

static int event_visit(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct event_walk *w = ctx;
	struct rec_decoded d;

	(void)seq;
	if (rec_event__decode(data, len, &d) != 0)
		return 0;
	fputs(w->first ? "\n" : ",\n", w->out);
	w->first = 0;
	fprintf(w->out, "{\"seq\":%" PRIu64 ",\"tid\":%u,\"time_ns\":%" PRIu64 ",\"callsite\":",
		d.seq, d.tid, d.time_ns);
	write_key(w->out, d.meta);
	fputs(",\"values\":[", w->out);
	for (uint32_t i = 0; i < d.nfields; i++) {
		if (i)
			fputc(',', w->out);
		write_value(w->out, &d.values[i]);
	}
	fputs("]}", w->out);
	return 0;
}

static void write_recording(FILE *out, struct rec_proc *p, const struct rec_rstate *rs)
{
	struct event_walk w = { .out = out, .p = p, .first = 1 };

	fputs("{\"key\":", out);
	write_key(out, rs->key);
	fputs(",\"recorder\":", out);
	write_key(out, rs->recorder);
	fputs(",\"subject\":", out);
	rec_json__string(out, rs->subject, strnlen(rs->subject, sizeof(rs->subject)));
	fprintf(out, ",\"cap\":%" PRIu64 ",\"state\":\"%s\",\"seen\":%" PRIu64 ",\"kept\":%" PRIu64
		",\"dropped\":%" PRIu64 ",\"invalid\":%" PRIu64 ",\"stale\":%" PRIu64,
		rs->cap, rs->retired ? "retired" : "live", rs->produced, rs->received,
		rec_rstate__dropped(rs), rs->invalid, rs->stale);
	if (rs->untracked)
		fprintf(out, ",\"untracked\":\"%s\"", rec_names__untracked(rs->untracked));
	fputs(",\"events\":[", out);
	rec_spool__tail(rs->spool, 0, event_visit, &w);
	fputs("]}", out);
}

static void write_stack(FILE *out, const struct rec_thread_stack *ts)
{
	uint32_t depth = ts->depth < REC_MAX_DEPTH ? ts->depth : REC_MAX_DEPTH;

	fprintf(out, "{\"tid\":%u,\"overflow\":%u,\"frames\":[", ts->tid, ts->overflow);
	for (uint32_t i = 0; i < depth; i++) {
		const struct rec_frame *f = &ts->frames[i];

		fputs(i ? ",{\"span\":" : "{\"span\":", out);
		write_key(out, f->span);
		fputs(",\"callsite\":", out);
		write_key(out, f->meta);
		fputs(",\"recording\":", out);
		write_key(out, f->recording);
		fputc('}', out);
	}
	fputs("]}", out);
}

/* Each limit of p, its use and what did not fit ("limits"). */
static void write_limits(FILE *out, const struct rec_proc *p)
{
	fputs("\"limits\":{", out);
	for (int l = 0; l < REC_L_MAX; l++)
		fprintf(out, "%s\"%s\":{\"limit\":%" PRIu64 ",\"used\":%" PRIu64
			",\"over\":%" PRIu64 ",\"events\":%" PRIu64 "}", l ? "," : "",
			rec_names__limit(l), p->use[l].limit, p->use[l].used, p->use[l].over,
			p->use[l].events);
	fputs("},\n", out);
}

/* The tally of recordings forgotten to make room, per recorder ("forgotten"). */
static int write_forgotten(FILE *out, const struct rec_proc *p)
{
	struct rec_forgotten *v;
	ssize_t n = rec_proc__forgotten(p, &v);

	if (n < 0)
		return (int)n;
	fputs("\"forgotten\":[", out);
	for (ssize_t i = 0; i < n; i++) {
		fputs(i ? ",{\"recorder\":" : "{\"recorder\":", out);
		write_key(out, v[i].recorder);
		fprintf(out, ",\"recordings\":%" PRIu64 ",\"seen\":%" PRIu64 ",\"kept\":%" PRIu64
			",\"dropped\":%" PRIu64 "}", v[i].recordings, v[i].seen, v[i].kept,
			v[i].dropped);
	}
	fputs("],\n", out);
	free(v);
	return 0;
}

/*
 * Writes p as a dump to out. counters may be NULL. now_ns is the CLOCK_REALTIME
 * time of the dump. The callsites of held events and stack frames are read into
 * p's cache first (from the process if it is alive), so that the dump has every
 * callsite that can still be read. Returns 0, -ENOMEM, or -EIO if a write failed.
 */
int rec_dump__write(FILE *out, struct rec_proc *p, const struct rec_dump_counters *counters,
		    int64_t now_ns)
{
	struct event_walk w = { .out = out, .p = p };
	size_t nrec = 0, nuntracked = 0, skip_untracked, written = 0, nstacks;
	struct rec_rstate *rs;
	int err;

	for (rs = p->first; rs; rs = rs->next)
		rec_spool__tail(rs->spool, 0, resolve_visit, &w);
	for (size_t t = 0; t < p->nstacks; t++) {
		const struct rec_thread_stack *ts = &p->stacks[t];

		for (uint32_t i = 0; i < ts->depth && i < REC_MAX_DEPTH; i++)
			resolve_callsite(&w, ts->frames[i].meta);
	}
	if (w.err) {
		rec_u64map__free(&w.uncached);
		return w.err;
	}

	fprintf(out, "{\"format\":\"recorder-dump\",\"version\":%d,\"pid\":%d,\"ns_pid\":%d,\n",
		REC_DUMP_VERSION, (int)p->pid, (int)p->ns_pid);
	fputs("\"ended\":", out);
	write_ended(out, p);
	fputs(",\n\"dumped_at\":", out);
	write_time(out, now_ns);
	fprintf(out, ",\"clock_offset_ns\":%" PRId64 ",\n", p->clock_offset_ns);
	if (counters) {
		fputs("\"counters\":{", out);
		for (int c = 0; c < REC_C_MAX; c++)
			fprintf(out, "%s\"%s\":%" PRIu64, c ? "," : "", rec_names__counter(c),
				counters->v[c]);
		fputs("},\n", out);
	}
	fprintf(out, "\"malformed\":%" PRIu64 ",\"orphans\":%" PRIu64 ",\n", p->malformed,
		p->orphans);
	/* What a reader accepts: the untracked recordings (no events) go first. */
	for (rs = p->first; rs; rs = rs->next) {
		nrec++;
		nuntracked += rs->untracked != 0;
	}
	skip_untracked = nrec > REC_DUMP_MAX_RECORDINGS ? nrec - REC_DUMP_MAX_RECORDINGS : 0;
	if (skip_untracked > nuntracked)
		skip_untracked = nuntracked;
	nstacks = p->nstacks < REC_DUMP_MAX_STACKS ? p->nstacks : REC_DUMP_MAX_STACKS;
	write_limits(out, p);
	fprintf(out, "\"recordings_omitted\":%zu,\"stacks_omitted\":%zu,\n",
		nrec > REC_DUMP_MAX_RECORDINGS ? nrec - REC_DUMP_MAX_RECORDINGS : 0,
		p->nstacks - nstacks);
	err = write_forgotten(out, p);
	if (err) {
		rec_u64map__free(&w.uncached);
		return err;
	}

	err = write_callsites(out, p, &w);
	rec_u64map__free(&w.uncached);
	if (err)
		return err;

	fputs("\"recordings\":[", out);
	for (rs = p->first; rs && written < REC_DUMP_MAX_RECORDINGS; rs = rs->next) {
		if (rs->untracked && skip_untracked) {
			skip_untracked--;
			continue;
		}
		fputs(written ? ",\n" : "\n", out);
		write_recording(out, p, rs);
		written++;
	}
	fputs("],\n\"stacks\":[", out);
	/* The last ones: for a process that is gone, the threads that died last. */
	for (size_t t = p->nstacks - nstacks; t < p->nstacks; t++) {
		fputs(t > p->nstacks - nstacks ? ",\n" : "\n", out);
		write_stack(out, &p->stacks[t]);
	}
	fputs("]}\n", out);

	if (fflush(out) != 0 || ferror(out))
		return -EIO;
	return 0;
}

/*
 * Creates dir and its missing parents: parents 0755 (as mkdir -p), dir itself
 * 0711, so that the owner of a dump can open it by its path and nobody else can
 * list the directory. A directory that exists is left as it is: recorder never
 * changes the mode or the owner of a directory it did not create.
 */
static int mkdir_p(const char *dir)
{
	char buf[4096];
	size_t len;

	len = (size_t)snprintf(buf, sizeof(buf), "%s", dir);
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0711) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Whether the effective user may create files in the directory st through its
 * mode alone, as the kernel decides without CAP_DAC_OVERRIDE: owner bits for
 * its owner, else group bits for its group, else the others' bits.
 */
static int writable_by_mode(const struct stat *st)
{
	gid_t groups[256];
	int n = getgroups(sizeof(groups) / sizeof(groups[0]), groups);

	if (st->st_uid == geteuid())
		return (st->st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR);
	for (int i = -1; i < n; i++) {
		if (st->st_gid == (i < 0 ? getegid() : groups[i]))
			return (st->st_mode & (S_IWGRP | S_IXGRP)) == (S_IWGRP | S_IXGRP);
	}
	return (st->st_mode & (S_IWOTH | S_IXOTH)) == (S_IWOTH | S_IXOTH);
}

int rec_dump__prepare_dir(const char *dir)
{
	char probe[4200];
	struct stat st;
	int fd, err = 0;

	err = mkdir_p(dir);
	if (err)
		return err;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	/* recorder-attach gives up CAP_DAC_OVERRIDE once attached: root needs the mode too. */
	if (!writable_by_mode(&st))
		return -EACCES;
	/* A file is created and written as a dump would be: this finds EROFS, EACCES, ENOSPC. */
	if (snprintf(probe, sizeof(probe), "%s/.recorder-probe-%d", dir, (int)getpid()) >=
	    (int)sizeof(probe))
		return -ENAMETOOLONG;
	unlink(probe);
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, "{}\n", 3) != 3)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	unlink(probe);
	return err;
}

/* A stdio stream onto a descriptor that remembers why a write failed (stdio says EIO). */
struct sink {
	int fd;
	int err;	/* the first failed write, a negative errno */
};

static ssize_t sink_write(void *cookie, const char *buf, size_t size)
{
	struct sink *s = cookie;
	size_t done = 0;

	while (done < size) {
		ssize_t n = write(s->fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!s->err)
				s->err = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int rec_dump__write_file(const char *dir, struct rec_proc *p,
			 const struct rec_dump_counters *counters, char *path, size_t len)
{
	cookie_io_functions_t io = { .write = sink_write };
	struct sink sink = { .fd = -1 };
	char tmp[4200], stamp[32];
	struct timespec now;
	struct tm tm;
	FILE *f;
	int err;

	err = mkdir_p(dir);
	if (err)
		return err;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	if (snprintf(path, len, "%s/recorder-%d-%s.%06ldZ.json", dir, (int)p->pid, stamp,
		     now.tv_nsec / 1000) >= (int)len)
		return -ENAMETOOLONG;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* 0600 from the start, whatever the umask: the temporary file is never wider. */
	sink.fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (sink.fd < 0)
		return -errno;
	if (fchmod(sink.fd, 0600)) {
		err = -errno;
		goto out;
	}
	f = fopencookie(&sink, "w", io);
	if (!f) {
		err = -ENOMEM;
		goto out;
	}
	err = rec_dump__write(f, p, counters, now.tv_sec * 1000000000LL + now.tv_nsec);
	if (fclose(f) && !err)
		err = -EIO;
	/* The reason a write failed: ENOSPC, EDQUOT, EIO... */
	if (err == -EIO && sink.err)
		err = sink.err;
	if (err)
		goto out;
	/* Given to the target's owner once whole, never before. */
	if (p->uid != (uid_t)-1 && p->uid != 0 && fchown(sink.fd, p->uid, (gid_t)-1)) {
		/* An owner that cannot be given files here: the dump stays root's, 0600. */
	}
out:
	if (close(sink.fd) && !err)
		err = -errno;
	/* Renamed only when whole: a reader never sees half a dump. */
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}
