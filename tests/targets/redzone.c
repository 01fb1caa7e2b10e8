/* SPDX-License-Identifier: MIT */
/*
 * redzone.c: proves that recorder probe sites are safe for the x86-64 red zone.
 *
 * Kernel 6.18 optimizes a uprobe on a 5-byte nop into a call to a trampoline
 * after its first hit. The call pushes below %rsp, which is where a leaf function
 * may keep data without moving %rsp (the 128-byte red zone). recorder.h's sites
 * are 1-byte nops, which the kernel never optimizes (they stay int3 breakpoints,
 * handled on the kernel stack; see docs/uprobe-fork.md for why); this program
 * checks that, with a bare 5-byte-nop site as the negative control:
 *
 *	redzone recorder|bare ITERATIONS
 *	  -> "pid N"
 *	  waits for SIGUSR1 (the test attaches first, then signals)
 *	  recorder: exits 3 unless a recorder is attached, then runs leaf_recorder()
 *	  bare:     runs leaf_bare() (attach e.g. bpftrace to usdt:...:redzone_test:bare)
 *	  -> "corrupted K of N", exit 0; on stderr, whether a trampoline is mapped
 *
 * Expected while attached: recorder 0 of N, no trampoline; bare about N - 1 of N
 * (the first hit traps through int3 and is not optimized yet). With nothing
 * attached, 0 for both.
 *
 * How the leaves were checked (gcc 12, -O2, see the Makefile):
 *	objdump -d --no-show-raw-insn build/tests/targets/redzone |
 *		sed -n '/<leaf_recorder>:/,/^$/p;/<leaf_bare>:/,/^$/p'
 * shows that neither leaf contains a call or a "sub ...,%rsp", that the only
 * %rsp-relative accesses are the fill and check of -8..-64(%rsp) below, and that
 * the probe site sits between them. rec__current is read %fs-relative, not
 * through __tls_get_addr.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <recorder.h>

/*
 * Writes pattern to the eight quadwords at -8(%rsp)..-64(%rsp), red-zone slots
 * that the compiler does not know about: only these asm blocks touch them.
 */
/* Laid out by hand: inline assembly and the note. */
/* clang-format off */
#define REDZONE_FILL(pattern)                                                                     \
	__asm__ __volatile__("movq %0, -8(%%rsp)\n\t"                                             \
			     "movq %0, -16(%%rsp)\n\t"                                            \
			     "movq %0, -24(%%rsp)\n\t"                                            \
			     "movq %0, -32(%%rsp)\n\t"                                            \
			     "movq %0, -40(%%rsp)\n\t"                                            \
			     "movq %0, -48(%%rsp)\n\t"                                            \
			     "movq %0, -56(%%rsp)\n\t"                                            \
			     "movq %0, -64(%%rsp)\n\t"                                            \
			     :                                                                    \
			     : "r"(pattern)                                                       \
			     : "memory")

#define REDZONE_CHECK_SLOT(off)                                                                   \
	"movq " #off "(%%rsp), %[t]\n\t"                                                          \
	"xorq %[p], %[t]\n\t"                                                                     \
	"orq %[t], %[d]\n\t"

/* Sets diff to the OR of (slot ^ pattern) over the slots REDZONE_FILL wrote. */
#define REDZONE_CHECK(pattern, diff)                                                              \
	do {                                                                                      \
		uint64_t redzone_tmp;                                                             \
		__asm__ __volatile__("xorl %k[d], %k[d]\n\t" REDZONE_CHECK_SLOT(-8)              \
				     REDZONE_CHECK_SLOT(-16) REDZONE_CHECK_SLOT(-24)              \
				     REDZONE_CHECK_SLOT(-32) REDZONE_CHECK_SLOT(-40)              \
				     REDZONE_CHECK_SLOT(-48) REDZONE_CHECK_SLOT(-56)              \
				     REDZONE_CHECK_SLOT(-64)                                      \
				     : [d] "=&r"(diff), [t] "=&r"(redzone_tmp)                    \
				     : [p] "r"(pattern)                                           \
				     : "memory");                                                 \
	} while (0)

/*
 * A bare USDT site, redzone_test:bare: a 5-byte nop the kernel can optimize,
 * with no semaphore and no %rsp adjustment, as user code without recorder.h
 * would have. 8-byte aligned so it never crosses a page and is always optimized.
 */
#define BARE_SITE()                                                                               \
	__asm__ __volatile__(                                                                     \
		".balign 8\n"                                                                     \
		"990:\n\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"                                  \
		".pushsection .note.stapsdt,\"?\",\"note\"\n\t"                                   \
		".balign 4\n\t"                                                                   \
		".4byte 992f-991f, 994f-993f, 3\n"                                                \
		"991:\n\t.asciz \"stapsdt\"\n"                                                    \
		"992:\n\t.balign 4\n"                                                             \
		"993:\n\t.8byte 990b\n\t"                                                         \
		".8byte _.stapsdt.base\n\t"                                                       \
		".8byte 0\n\t"                                                                    \
		".asciz \"redzone_test\"\n\t"                                                     \
		".asciz \"bare\"\n\t"                                                             \
		".asciz \"\"\n"                                                                   \
		"994:\n\t.balign 4\n\t"                                                           \
		".popsection\n\t"                                                                 \
		".ifndef _.stapsdt.base\n\t"                                                      \
		".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n\t"         \
		".weak _.stapsdt.base\n\t"                                                        \
		".hidden _.stapsdt.base\n"                                                        \
		"_.stapsdt.base:\n\t.space 1\n\t"                                                 \
		".size _.stapsdt.base, 1\n\t"                                                     \
		".popsection\n\t"                                                                 \
		".endif\n")
/* clang-format on */

/*
 * Leaf functions: no calls and no frame, so the red zone is theirs. Each returns
 * true when a red-zone slot changed across its probe site.
 */
static __attribute__((noinline, noclone)) bool leaf_recorder(uint64_t pattern)
{
	uint64_t diff;

	REDZONE_FILL(pattern);
	REC_INFO("redzone");
	REDZONE_CHECK(pattern, diff);
	return diff != 0;
}

static __attribute__((noinline, noclone)) bool leaf_bare(uint64_t pattern)
{
	uint64_t diff;

	REDZONE_FILL(pattern);
	BARE_SITE();
	REDZONE_CHECK(pattern, diff);
	return diff != 0;
}

/* Whether the kernel has optimized a probe site of this process. */
static bool trampoline_mapped(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "[uprobes-trampoline]") != NULL;
	fclose(f);
	return found;
}

static void usage(void)
{
	fprintf(stderr, "usage: redzone recorder|bare ITERATIONS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct rec_recorder *recorder = NULL;
	struct rec_recording *recording = NULL;
	struct rec_span span;
	uint64_t iterations, corrupted = 0;
	bool recorder_mode;
	sigset_t go;
	char *end;
	int sig;

	if (argc != 3)
		usage();
	if (!strcmp(argv[1], "recorder"))
		recorder_mode = true;
	else if (!strcmp(argv[1], "bare"))
		recorder_mode = false;
	else
		usage();
	errno = 0;
	iterations = strtoull(argv[2], &end, 10);
	if (argv[2][0] < '0' || argv[2][0] > '9' || errno || *end || iterations == 0) {
		fprintf(stderr, "redzone: invalid ITERATIONS '%s': expected an integer >= 1\n",
			argv[2]);
		return 2;
	}

	/* Blocked before the pid is printed, so an early SIGUSR1 waits for sigwait(). */
	sigemptyset(&go);
	sigaddset(&go, SIGUSR1);
	sigprocmask(SIG_BLOCK, &go, NULL);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	while (sigwait(&go, &sig) != 0)
		;

	if (recorder_mode) {
		if (!rec_is_attached()) {
			fprintf(stderr, "redzone: no recorder attached when SIGUSR1 arrived\n");
			return 3;
		}
		recorder = rec_recorder_new();
		recording = recorder ? rec_recording_new(recorder, 10) : NULL;
		if (!recording) {
			perror("redzone: cannot create a recording");
			return 1;
		}
		rec_recording_span(&span, recording, "redzone");
		rec_span_enter(&span);
	}

	for (uint64_t i = 0; i < iterations; i++) {
		/* A fresh pattern each time: a slot left over from the last call never matches. */
		uint64_t pattern = 0x5ed2c0de00000000ULL ^ i;

		corrupted += recorder_mode ? leaf_recorder(pattern) : leaf_bare(pattern);
	}

	if (recorder_mode) {
		rec_span_exit(&span);
		rec_recording_free(recording);
		rec_recorder_free(recorder);
	}
	fprintf(stderr, "redzone: uprobes trampoline %s\n",
		trampoline_mapped() ? "mapped" : "not mapped");
	printf("corrupted %" PRIu64 " of %" PRIu64 "\n", corrupted, iterations);
	return 0;
}
