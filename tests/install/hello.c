// SPDX-License-Identifier: MIT
/*
 * Built by tests/e2e/test_install.sh against the installed header only
 * (pkg-config --cflags recorder): one recording, one event every 10 ms for
 * up to 20 s, or until SIGTERM.
 */
#include <recorder.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct rec_recorder *r = rec_recorder_new();
	struct rec_recording *rec = rec_recording_new(r, 100);
	struct rec_span span;

	signal(SIGTERM, on_term);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	rec_recording_span(&span, rec, "installed");
	rec_span_enter(&span);
	for (int i = 0; i < 2000 && !stop; i++) {
		REC_INFO("hello from the installed header", REC_I64(i, i));
		usleep(10000);
	}
	rec_span_exit(&span);
	rec_recording_free(rec);
	rec_recorder_free(r);
	return 0;
}
