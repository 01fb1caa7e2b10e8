/* SPDX-License-Identifier: MIT */
/*
 * odd_note.c: an instrumented target whose executable also holds one
 * recorder:event site with an argument spec recorder-attach does not support
 * (a scaled index, as sys/sdt.h emits for some operands). That site must be
 * skipped with a warning, and every other site attached.
 *
 *	odd_note
 *	  -> "pid N"
 *	  waits until recorder-attach arms the probes
 *	  emits one event into a recording "odd"
 *	  -> "ready"
 *	  waits for SIGTERM or SIGINT, then exits 0
 *
 * Exit status: 0 done, 3 nothing attached within 20 s, 1 other errors.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <recorder.h>

/*
 * A recorder:event site with the spec "8@(%rax,%rbx,8)", written by hand (no
 * semaphore, no base) so that it does not depend on how recorder.h emits its
 * sites. The function is never called.
 */
__attribute__((used, noinline)) static void odd_site(void)
{
	__asm__ __volatile__("990:\n\tnop\n\t"
			     ".pushsection .note.stapsdt,\"?\",\"note\"\n\t"
			     ".balign 4\n\t"
			     ".4byte 992f-991f, 994f-993f, 3\n"
			     "991:\n\t.asciz \"stapsdt\"\n"
			     "992:\n\t.balign 4\n"
			     "993:\n\t.8byte 990b\n\t"
			     ".8byte 0\n\t"
			     ".8byte 0\n\t"
			     ".asciz \"recorder\"\n\t"
			     ".asciz \"event\"\n\t"
			     ".asciz \"8@(%rax,%rbx,8)\"\n"
			     "994:\n\t.balign 4\n\t"
			     ".popsection\n");
}

int main(void)
{
	const struct timespec tick = { .tv_nsec = 1000000 };
	struct rec_recorder *r;
	struct rec_recording *rec;
	struct rec_span span;
	sigset_t stop;
	int sig;

	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; !rec_is_attached(); i++) {
		if (i == 20000) {
			fprintf(stderr, "odd_note: no recorder attached after 20 s\n");
			return 3;
		}
		nanosleep(&tick, NULL);
	}

	r = rec_recorder_new();
	rec = r ? rec_recording_new(r, 10) : NULL;
	if (!rec) {
		perror("odd_note");
		return 1;
	}
	rec_recording_span(&span, rec, "odd");
	rec_span_enter(&span);
	REC_INFO("the other sites work", REC_I64(n, 7));
	rec_span_exit(&span);
	printf("ready\n");
	fflush(stdout);

	while (sigwait(&stop, &sig) != 0)
		;
	rec_recording_free(rec);
	rec_recorder_free(r);
	return 0;
}
