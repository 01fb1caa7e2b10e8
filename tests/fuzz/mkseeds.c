// SPDX-License-Identifier: MIT
/*
 * Writes seeds for the fuzz corpora (tests/fuzz/mkseeds.sh runs it):
 *	mkseeds OUT DUMP...
 * From each real dump: every event record its spools keep (as the reader
 * rebuilt and validated them) into OUT/event, every callsite blob into
 * OUT/callsite. Then event records as the BPF side writes them (three string
 * area sizes, literals for fuzz_event's fake reader, every string status) into
 * OUT/event, and valid and invalid control requests into OUT/control.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serving/control.h"
#include "model/dump.h"

static const char *out_dir;

static void write_seed(const char *kind, const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", out_dir, kind, name);
	f = fopen(path, "we");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "mkseeds: failed to write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

struct walk {
	const char *base;
	int recording; /* its place in creation order */
};

static int event_seed(uint64_t seq, const void *data, size_t len, void *ctx)
{
	struct walk *w = ctx;
	char name[512];

	snprintf(name, sizeof(name), "%s-r%d-seq%llu", w->base, w->recording,
		 (unsigned long long)seq);
	write_seed("event", name, data, len);
	return 0;
}

static int cmp_site(const void *a, const void *b)
{
	const struct rec_callsite *x = *(const struct rec_callsite *const *)a;
	const struct rec_callsite *y = *(const struct rec_callsite *const *)b;

	return x->line < y->line ? -1 : x->line > y->line ? 1 : strcmp(x->name, y->name);
}

/* Writes the event records and callsite blobs of the dump at path (names do not depend on
 * the addresses and keys of the run, so that a new run overwrites the seeds of the last). */
static void from_dump(const char *path)
{
	const struct rec_callsite *sites[1024];
	char err[512], name[512], *copy = strdup(path), *base, *dot;
	struct rec_proc p;
	struct walk w = { 0 };
	size_t nsites = 0;
	int rc;

	base = basename(copy);
	dot = strrchr(base, '.');
	if (dot)
		*dot = '\0';
	w.base = base;
	rc = rec_dump__read(path, &p, NULL, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "mkseeds: %s: %s\n", path, err);
		exit(1);
	}
	for (struct rec_rstate *rs = p.first; rs; rs = rs->next, w.recording++)
		rec_spool__tail(rs->spool, 0, event_seed, &w);
	for (size_t i = 0; i < p.callsites.cap && nsites < 1024; i++) {
		const struct rec_callsite *cs = p.callsites.vals[i];
		uint64_t addr = p.callsites.keys[i];

		if (addr != 0 && addr != UINT64_MAX && cs && cs->blob_len)
			sites[nsites++] = cs;
	}
	qsort(sites, nsites, sizeof(sites[0]), cmp_site);
	for (size_t i = 0; i < nsites; i++) {
		char read[REC_CALLSITE_MAX + 64];
		size_t len = 0;

		snprintf(name, sizeof(name), "%s-cs%zu", base, i);
		write_seed("callsite", name, sites[i]->blob, sites[i]->blob_len);
		/*
		 * What the model reads at the address: REC_CALLSITE_MAX bytes, the blob and
		 * whatever follows it (here, the other blobs). A blob of the largest size
		 * also gets a read past that limit.
		 */
		for (size_t j = i; len < sizeof(read); j = (j + 1) % nsites) {
			size_t n = sites[j]->blob_len;

			if (n > sizeof(read) - len)
				n = sizeof(read) - len;
			memcpy(read + len, sites[j]->blob, n);
			len += n;
		}
		snprintf(name, sizeof(name), "%s-cs%zu-read", base, i);
		write_seed("callsite", name, read,
			   sites[i]->blob_len < REC_CALLSITE_MAX ? REC_CALLSITE_MAX : sizeof(read));
	}
	rec_proc__fini(&p);
	free(copy);
}

/* Reads the dump text (which must be valid) and writes it as OUT/dump/NAME.json. */
static void dump_seed(const char *name, const char *text)
{
	char path[4096], err[512];
	struct rec_dump_counters counters;
	struct rec_proc p;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/dump/%s.tmp", out_dir, name);
	f = fopen(path, "we");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "mkseeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	rc = rec_dump__read(path, &p, &counters, err, sizeof(err));
	unlink(path);
	if (rc) {
		fprintf(stderr, "mkseeds: the %s dump is refused: %s\n", name, err);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/dump/%s.json", out_dir, name);
	f = fopen(path, "we");
	rc = f ? rec_dump__write(f, &p, &counters, 1796220192123456789LL) : -errno;
	if (!f || fclose(f) || rc) {
		fprintf(stderr, "mkseeds: failed to write %s\n", path);
		exit(1);
	}
	rec_proc__fini(&p);
	from_dump(path);
}

#define DUMP_HEAD                                                                                  \
	"{\"format\":\"recorder-dump\",\"version\":1,\"pid\":42,\"ns_pid\":0,"                     \
	"\"ended\":{\"how\":\"unknown\"},\"dumped_at\":\"2026-12-03T08:36:09.499082Z\","           \
	"\"clock_offset_ns\":1796285282696121951,\"malformed\":0,\"orphans\":0,"

/*
 * Small dumps, each at one limit of docs/dump-format.md, so that one mutation
 * takes a step past it: a full string area (strings of 255, 255 and 254 bytes
 * and an empty one: 768 bytes with their NULs), a callsite blob of exactly 2048
 * bytes with 8 fields, 32 frames, and the largest numbers everywhere. Read back
 * and written by the real writer.
 */
static void edge_dumps(void)
{
	char text[16384], msg[2004], a[256], b[256], c[256], subject[64];
	size_t len;

	memset(a, 'a', 255);
	memset(b, 'b', 255);
	memset(c, 'c', 254);
	a[255] = b[255] = c[254] = '\0';
	snprintf(text, sizeof(text),
		 DUMP_HEAD
		 "\"callsites\":[],\"recordings\":["
		 "{\"key\":\"0x2\",\"recorder\":\"0x1\",\"subject\":\"\",\"cap\":2,"
		 "\"state\":\"live\",\"seen\":1,\"kept\":1,\"dropped\":0,\"stale\":0,"
		 "\"events\":[{\"seq\":0,\"tid\":1,\"time_ns\":1,\"callsite\":\"0x10\",\"values\":["
		 "{\"type\":\"str\",\"value\":\"%s\",\"status\":\"ok\"},"
		 "{\"type\":\"str\",\"value\":\"%s\",\"status\":\"truncated\"},"
		 "{\"type\":\"str\",\"value\":\"%s\",\"status\":\"ok\"},"
		 "{\"type\":\"str\",\"value\":\"\",\"status\":\"ok\"}]}]}],\"stacks\":[]}\n",
		 a, b, c);
	dump_seed("edge-string-area", text);

	/* 5 + 2 + 2 + 2 + 2 + 2 + 11 + (2003 + 1) + 2 + 16 = 2048 blob bytes. */
	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	snprintf(text, sizeof(text),
		 DUMP_HEAD
		 "\"callsites\":["
		 "{\"addr\":\"0x10\",\"kind\":\"E\",\"level\":4,\"name\":\"n\",\"target\":\"t\","
		 "\"file\":\"f\",\"line\":4294967295,\"message\":\"%s\","
		 "\"fields\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\"]}],"
		 "\"recordings\":[],\"stacks\":[]}\n",
		 msg);
	dump_seed("edge-callsite", text);

	len = (size_t)snprintf(text, sizeof(text),
			       DUMP_HEAD
			       "\"callsites\":["
			       "{\"addr\":\"0x1\",\"kind\":\"S\",\"level\":0,\"name\":\"\","
			       "\"target\":\"\",\"file\":\"\",\"line\":0,\"message\":\"\","
			       "\"fields\":[]}],\"recordings\":[],\"stacks\":["
			       "{\"tid\":4294967295,\"overflow\":4294967295,\"frames\":[");
	for (int i = 0; i < REC_MAX_DEPTH; i++)
		len += (size_t)snprintf(
			text + len, sizeof(text) - len,
			"%s{\"span\":\"0x%x\",\"callsite\":\"0x1\",\"recording\":\"0x0\"}",
			i ? "," : "", 0x7ffc0000 + 64 * i);
	snprintf(text + len, sizeof(text) - len, "]}]}\n");
	dump_seed("edge-frames", text);

	memset(subject, 's', 63);
	subject[63] = '\0';
	snprintf(text, sizeof(text),
		 "{\"format\":\"recorder-dump\",\"version\":1,\"pid\":2147483647,\"ns_pid\":1,"
		 "\"ended\":{\"how\":\"signal\",\"signal\":127,\"name\":\"SIG127\","
		 "\"core_dumped\":true},\"dumped_at\":\"2026-12-03T08:36:09.499082Z\","
		 "\"clock_offset_ns\":0,"
		 "\"counters\":{\"ring_full\":18446744073709551615,\"bad_arg\":1},"
		 "\"malformed\":18446744073709551615,\"orphans\":18446744073709551615,"
		 "\"callsites\":[],\"recordings\":["
		 "{\"key\":\"0xfffffffffffffffe\",\"recorder\":\"0xffffffffffffffff\","
		 "\"subject\":\"%s\",\"cap\":2,\"state\":\"retired\","
		 "\"seen\":18446744073709551615,\"kept\":18446744073709551615,"
		 "\"dropped\":18446744073709551615,\"stale\":18446744073709551615,\"events\":["
		 "{\"seq\":18446744073709551613,\"tid\":4294967295,"
		 "\"time_ns\":9223372036854775807,\"callsite\":\"0xffffffffffffffe\",\"values\":["
		 "{\"type\":\"i64\",\"value\":-9223372036854775808},"
		 "{\"type\":\"u64\",\"value\":18446744073709551615},"
		 "{\"type\":\"f64\",\"value\":\"-inf\"},{\"type\":\"bool\",\"value\":false},"
		 "{\"type\":\"str\",\"value\":\"\",\"status\":\"nospace\"},"
		 "{\"type\":\"str\",\"value\":\"\",\"status\":\"fault\"},"
		 "{\"type\":\"str\",\"value\":\"\",\"status\":\"null\"},"
		 "{\"type\":\"f64\",\"value\":1.7976931348623157e308}]},"
		 "{\"seq\":18446744073709551614,\"tid\":0,\"time_ns\":0,"
		 "\"callsite\":\"0xffffffffffffffe\",\"values\":["
		 "{\"type\":\"f64\",\"value\":-0.0},{\"type\":\"f64\",\"value\":\"nan\"},"
		 "{\"type\":\"str\",\"value\":\"\\u0000\\u001b[31m\\n\",\"status\":\"ok\"}]}]}],"
		 "\"stacks\":[]}\n",
		 subject);
	dump_seed("edge-numbers", text);
}

/* ---- event records as the BPF side writes them ---- */

struct rec {
	union {
		struct rec_event_rec e;
		unsigned char bytes[REC_EVENT_MAX];
	} u;
	int n;
	uint32_t used;
};

static void rec_init(struct rec *r, uint64_t seq)
{
	memset(r, 0, sizeof(*r));
	r->u.e.hdr.type = REC_RT_EVENT;
	r->u.e.hdr.tgid = 4242;
	r->u.e.hdr.tid = 4243;
	r->u.e.hdr.time_ns = 123456789012ULL;
	r->u.e.recording = 0x8000000000000002ULL;
	r->u.e.seq = seq;
	r->u.e.meta = 0x5555555592a0ULL;
}

static void rec_raw(struct rec *r, enum rec_field_type type, uint64_t raw)
{
	r->u.e.types |= (uint64_t)type << (4 * r->n);
	r->u.e.values[r->n++] = raw;
}

/* A copied string: its bytes go into the string area, as the BPF side packs them. */
static void rec_str(struct rec *r, const char *s, uint32_t len, enum rec_str_status st)
{
	if (st != REC_STR_OK && st != REC_STR_TRUNCATED) {
		rec_raw(r, REC_TYPE_STR, REC_STR_SLOT(0, 0, st));
		return;
	}
	memcpy(r->u.e.strings + r->used, s, len);
	r->u.e.strings[r->used + len] = '\0';
	rec_raw(r, REC_TYPE_STR, REC_STR_SLOT(r->used, len, st));
	r->used += len + 1;
}

/* Writes r with a string area of area bytes (0, REC_STR_MAX or REC_STR_AREA). */
static void rec_write(struct rec *r, uint32_t area, const char *name)
{
	size_t len = sizeof(struct rec_event_rec) + area;

	r->u.e.hdr.size = (uint16_t)len;
	write_seed("event", name, r->u.bytes, len);
}

/* The literal address fuzz_event's fake reader maps to len bytes at off of the input. */
static uint64_t lit_addr(uint32_t off, uint32_t len)
{
	return (uint64_t)off | (uint64_t)len << 16;
}

static void synth_events(void)
{
	const size_t fixed = sizeof(struct rec_event_rec);
	char big[REC_STR_MAX];
	struct rec r;
	double f = 1.5;
	uint64_t raw;

	memset(big, 'x', sizeof(big));
	memcpy(&raw, &f, sizeof(raw));

	rec_init(&r, 0);
	rec_write(&r, 0, "bpf-no-fields");

	rec_init(&r, 1);
	rec_raw(&r, REC_TYPE_I64, (uint64_t)-42);
	rec_raw(&r, REC_TYPE_U64, 42);
	rec_raw(&r, REC_TYPE_F64, raw);
	rec_raw(&r, REC_TYPE_BOOL, 1);
	rec_write(&r, 0, "bpf-numbers");

	rec_init(&r, 2);
	rec_str(&r, "text", 4, REC_STR_OK);
	rec_raw(&r, REC_TYPE_I64, 7);
	rec_write(&r, REC_STR_MAX, "bpf-one-string");

	rec_init(&r, 3);
	rec_str(&r, big, REC_STR_MAX - 1, REC_STR_TRUNCATED);
	rec_write(&r, REC_STR_MAX, "bpf-truncated-string");

	rec_init(&r, 4);
	rec_str(&r, "a \"quoted\"\nline", 15, REC_STR_OK);
	rec_str(&r, NULL, 0, REC_STR_FAULT);
	rec_str(&r, NULL, 0, REC_STR_NULL);
	rec_str(&r, NULL, 0, REC_STR_NOSPACE);
	rec_str(&r, "with\0nul", 8, REC_STR_OK);
	rec_raw(&r, REC_TYPE_BOOL, 0);
	rec_write(&r, REC_STR_AREA, "bpf-string-statuses");

	/* Literals: fuzz_event reads them from the input; here, the strings' bytes. */
	rec_init(&r, 5);
	rec_str(&r, "copied", 6, REC_STR_OK);
	rec_raw(&r, REC_TYPE_STR_LIT, lit_addr((uint32_t)fixed, 6));
	rec_raw(&r, REC_TYPE_STR_LIT, 0);
	rec_raw(&r, REC_TYPE_STR_LIT, 1ULL << 63);
	rec_raw(&r, REC_TYPE_STR_LIT, lit_addr(0, 300));
	rec_raw(&r, REC_TYPE_U64, 8);
	rec_write(&r, REC_STR_AREA, "bpf-literals");

	rec_init(&r, 6);
	rec_raw(&r, REC_TYPE_STR_LIT, lit_addr(8, 16));
	rec_write(&r, 0, "bpf-literal-only");

	/* Eight strings that do not all fit once literals are added. */
	rec_init(&r, 7);
	for (int i = 0; i < 4; i++)
		rec_str(&r, big, 180, REC_STR_OK);
	for (int i = 0; i < 4; i++)
		rec_raw(&r, REC_TYPE_STR_LIT, lit_addr(0, 255));
	rec_write(&r, REC_STR_AREA, "bpf-literals-nospace");
}

/* ---- control requests ---- */

/* Writes what rec_control__send() sends for q, then len bytes of extra. */
static void request(const char *name, const struct rec_query *q, const void *extra, size_t len)
{
	char buf[sizeof(struct rec_request) + 64];
	ssize_t n = -1;
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		perror("mkseeds: socketpair");
		exit(1);
	}
	rc = rec_control__send(sv[1], q);
	if (!rc && len && write(sv[1], extra, len) != (ssize_t)len)
		rc = -errno;
	close(sv[1]);
	if (!rc)
		n = read(sv[0], buf, sizeof(buf));
	close(sv[0]);
	if (rc || n != (ssize_t)(sizeof(struct rec_request) + len)) {
		fprintf(stderr, "mkseeds: failed to make the request %s: %s\n", name,
			rc ? strerror(-rc) : "short read");
		exit(1);
	}
	write_seed("control", name, buf, (size_t)n);
}

static void synth_requests(void)
{
	struct rec_request req = { .magic = REC_REQUEST_MAGIC, .size = sizeof(req) };
	struct rec_query q = { 0 };

	request("tail", &q, NULL, 0);
	q.n = 1;
	q.flags = REC_Q_JSON;
	request("json-n1", &q, NULL, 0);
	q.n = -1;
	q.flags = REC_Q_LIST;
	request("list-n-1", &q, NULL, 0);
	q.n = 0;
	q.flags = REC_Q_LIST | REC_Q_JSON;
	request("list-json", &q, NULL, 0);
	q.flags = REC_Q_STACKS | REC_Q_JSON;
	request("stacks-json", &q, NULL, 0);
	q.flags = REC_Q_STATS;
	request("stats", &q, NULL, 0);
	q.flags = REC_Q_FOLLOW | REC_Q_JSON;
	request("follow", &q, NULL, 0);
	q.flags = REC_Q_DUMP;
	request("dump", &q, NULL, 0);
	q.flags = REC_Q_HAS_RECORDING | REC_Q_HAS_RECORDER;
	q.recording = 0x8000000000000002ULL;
	q.recorder = 0x8000000000000001ULL;
	snprintf(q.subject, sizeof(q.subject), "fields");
	request("selected", &q, NULL, 0);
	request("trailing-bytes", &q, "more", 4);
	q.nwhere = 2;
	if (rec_cond__parse("u>=42", &q.where[0], NULL, 0) ||
	    rec_cond__parse("s=te*", &q.where[1], NULL, 0)) {
		fprintf(stderr, "mkseeds: a --where of the seeds does not parse\n");
		exit(1);
	}
	request("where", &q, NULL, 0);
	q.nwhere = 0;

	/* Invalid: short, bad magic, bad size, a subject without its NUL. */
	write_seed("control", "empty", "", 0);
	req.q = q;
	write_seed("control", "short", &req, sizeof(req) / 2);
	req.magic = 0x52515152u;
	write_seed("control", "bad-magic", &req, sizeof(req));
	req.magic = REC_REQUEST_MAGIC;
	req.size = sizeof(req) + 8;
	write_seed("control", "bad-size", &req, sizeof(req));
	req.size = sizeof(req);
	memset(req.q.subject, 'A', sizeof(req.q.subject));
	write_seed("control", "subject-unterminated", &req, sizeof(req));
	/* Invalid: more --where than fit, and one whose operator is out of range. */
	req.q = q;
	req.q.nwhere = REC_QUERY_WHERE_MAX + 1;
	write_seed("control", "where-too-many", &req, sizeof(req));
	req.q.nwhere = 1;
	rec_cond__parse("u>=42", &req.q.where[0], NULL, 0);
	req.q.where[0].op = (enum rec_cond_op)99;
	write_seed("control", "where-bad-op", &req, sizeof(req));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: mkseeds OUT DUMP...\n");
		return 2;
	}
	out_dir = argv[1];
	for (int i = 2; i < argc; i++)
		from_dump(argv[i]);
	edge_dumps();
	synth_events();
	synth_requests();
	return 0;
}
