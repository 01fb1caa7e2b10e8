// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the control protocol (user/serving/control.c): the input is
 * what a client sends on the control socket, fed to rec_control__recv() through
 * a socketpair whose other end is then closed, and given whole to
 * rec_control__parse() (what recorder-attach calls on the bytes it collected).
 * They must agree. A request they accept is
 * answered, as recorder-attach answers it (rec_query__answer), from a fixed
 * model: a small real dump, embedded below. Checked beyond memory safety: fewer
 * bytes than a request, or a wrong magic or size, or a --where condition the
 * parser could not have made, are refused with -EPROTO; an accepted request
 * is the bytes sent, with its subject NUL-terminated.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serving/control.h"
#include "fuzz.h"
#include "serving/query.h"

/* tests/fuzz/corpus/dump/all_fields.json, shortened, with a retired recording and a stack. */
static const char model_dump[] =
	"{\"format\":\"recorder-dump\",\"version\":1,\"pid\":25013,\"ns_pid\":0,"
	"\"ended\":{\"how\":\"running\"},\"dumped_at\":\"2026-12-03T08:36:09.499082Z\","
	"\"clock_offset_ns\":1796285282696121951,\"malformed\":0,\"orphans\":0,"
	"\"callsites\":["
	"{\"addr\":\"0x558be4b9af28\",\"kind\":\"E\",\"level\":2,\"name\":\"event a\","
	"\"target\":\"tests/targets/scenario.c\",\"file\":\"tests/targets/scenario.c\","
	"\"line\":345,\"message\":\"all types\","
	"\"fields\":[\"s\",\"i\",\"u\",\"f\",\"b\",\"err\",\"quote\",\"last\"]},"
	"{\"addr\":\"0x558be4b9afb0\",\"kind\":\"E\",\"level\":2,\"name\":\"event b\","
	"\"target\":\"tests/targets/scenario.c\",\"file\":\"tests/targets/scenario.c\","
	"\"line\":354,\"message\":\"strings\",\"fields\":[\"buf\",\"lit\",\"null\",\"long_lit\"]},"
	"{\"addr\":\"0x558201653008\",\"kind\":\"S\",\"level\":2,\"name\":\"recording\","
	"\"target\":\"recorder\",\"file\":\"recorder.h\",\"line\":0,\"message\":\"\","
	"\"fields\":[\"recording\",\"recorder\",\"subject\"]}],"
	"\"recordings\":["
	"{\"key\":\"0x8d88056100000002\",\"recorder\":\"0x8d88056100000001\",\"subject\":"
	"\"fields\","
	"\"cap\":10,\"state\":\"live\",\"seen\":7,\"kept\":6,\"dropped\":1,\"stale\":0,\"events\":["
	"{\"seq\":0,\"tid\":25013,\"time_ns\":1686789802400,\"callsite\":\"0x558be4b9af28\","
	"\"values\":[{\"type\":\"str\",\"value\":\"text\",\"status\":\"ok\"},"
	"{\"type\":\"i64\",\"value\":-42},{\"type\":\"u64\",\"value\":42},"
	"{\"type\":\"f64\",\"value\":1.5},{\"type\":\"bool\",\"value\":true},"
	"{\"type\":\"str\",\"value\":\"bad thing\",\"status\":\"ok\"},"
	"{\"type\":\"str\",\"value\":\"a \\\"quoted\\\"\\nline\",\"status\":\"ok\"},"
	"{\"type\":\"u64\",\"value\":8}]},"
	"{\"seq\":2,\"tid\":25014,\"time_ns\":1686789821386,\"callsite\":\"0x558be4b9afb0\","
	"\"values\":[{\"type\":\"str\",\"value\":\"copied 1\",\"status\":\"ok\"},"
	"{\"type\":\"str\",\"value\":\"literal\",\"status\":\"ok\"},"
	"{\"type\":\"str\",\"value\":\"\",\"status\":\"null\"},"
	"{\"type\":\"str\",\"value\":\"0123456789\",\"status\":\"truncated\"}]},"
	"{\"seq\":3,\"tid\":25013,\"time_ns\":1686789837536,\"callsite\":\"0x12345\","
	"\"values\":[{\"type\":\"str\",\"value\":\"\",\"status\":\"fault\"}]}]},"
	"{\"key\":\"0x8d88056100000003\",\"recorder\":\"0x8d88056100000001\",\"subject\":\"old\","
	"\"cap\":2,\"state\":\"retired\",\"seen\":1,\"kept\":1,\"dropped\":0,\"stale\":0,"
	"\"events\":[{\"seq\":0,\"tid\":25013,\"time_ns\":1686789852294,"
	"\"callsite\":\"0x558be4b9afb0\",\"values\":[]}]}],"
	"\"stacks\":[{\"tid\":25013,\"overflow\":1,\"frames\":["
	"{\"span\":\"0x7ffc0000\",\"callsite\":\"0x558201653008\","
	"\"recording\":\"0x8d88056100000002\"},"
	"{\"span\":\"0x7ffc0100\",\"callsite\":\"0x999\",\"recording\":\"0x0\"}]}]}";

static struct rec_proc model;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512];

	(void)argc;
	(void)argv;
	if (fuzz_dump__read(model_dump, sizeof(model_dump) - 1, &model, NULL, err, sizeof(err))) {
		fprintf(stderr, "fuzz_control: the model dump is refused: %s\n", err);
		abort();
	}
	devnull = fopen("/dev/null", "we");
	if (!devnull)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_request req;
	struct rec_query q, parsed;
	size_t off = 0;
	int sv[2], rc, prc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	while (off < size) {
		ssize_t n = write(sv[1], data + off, size - off);

		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	close(sv[1]);
	memset(&q, 0xa5, sizeof(q));
	rc = rec_control__recv(sv[0], &q);
	close(sv[0]);

	memset(&parsed, 0x5a, sizeof(parsed));
	prc = rec_control__parse(data, size, &parsed);
	FUZZ_CHECK(size == sizeof(req) ? prc == rc : prc == -EPROTO,
		   "parse gave %d for %zu bytes, recv %d", prc, size, rc);
	FUZZ_CHECK(prc || memcmp(&parsed, &q, sizeof(q)) == 0, "parse and recv differ");

	if (size < sizeof(req)) {
		FUZZ_CHECK(rc == -EPROTO, "%zu bytes, not a whole request, gave %d", size, rc);
		return 0;
	}
	memcpy(&req, data, sizeof(req));
	if (req.magic != REC_REQUEST_MAGIC || req.size != sizeof(req)) {
		FUZZ_CHECK(rc == -EPROTO, "magic 0x%x size %u accepted (%d)", req.magic, req.size,
			   rc);
		return 0;
	}
	/* Its --where conditions: as many as fit, each one the parser could have made. */
	prc = req.q.nwhere > REC_QUERY_WHERE_MAX;
	for (uint32_t i = 0; !prc && i < req.q.nwhere; i++)
		prc = rec_cond__check(&req.q.where[i]) != 0;
	if (prc) {
		FUZZ_CHECK(rc == -EPROTO, "%u --where, one unchecked, accepted (%d)", req.q.nwhere,
			   rc);
		return 0;
	}
	FUZZ_CHECK(rc == 0, "a well-formed request refused (%d)", rc);
	FUZZ_CHECK(memchr(q.subject, '\0', sizeof(q.subject)), "the subject is not terminated");
	FUZZ_CHECK(q.flags == req.q.flags && q.n == req.q.n && q.recording == req.q.recording &&
			   q.recorder == req.q.recorder &&
			   strncmp(q.subject, req.q.subject, sizeof(q.subject) - 1) == 0,
		   "the request is not what was sent");

	/* recorder-attach writes the dump itself for REC_Q_DUMP; everything else is this. */
	if (!(q.flags & REC_Q_DUMP)) {
		rc = rec_query__answer(devnull, &model, &q);
		FUZZ_CHECK(rc == 0, "answering flags 0x%x failed (%d)", q.flags, rc);
	}
	return 0;
}
