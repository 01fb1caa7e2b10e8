/* SPDX-License-Identifier: MIT */
/*
 * uprobe_fork.c: a minimal reproducer of a kernel 6.18 defect, with nothing of
 * recorder in it (docs/uprobe-fork.md). Build it alone with
 *
 *	cc -O2 -o uprobe_fork uprobe_fork.c
 *
 * and run, as root:
 *
 *	./uprobe_fork &                                 # -> "pid N"
 *	bpftrace -p N -e 'usdt:./uprobe_fork:repro:site {}' &
 *	kill -USR1 N                                    # once bpftrace has attached
 *
 * The process hits a USDT site on a 5-byte nop a few times while it is traced,
 * so the kernel optimizes the site into a call into a [uprobes-trampoline]
 * page. Then it forks; the child inherits the rewritten text, but not that page
 * (the mapping is VM_DONTCOPY), runs the site and dies with SIGSEGV at the
 * trampoline's address. It prints "child killed by SIGSEGV" (the defect) or
 * "child exited with status 0", and whether the trampoline was mapped.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A USDT site on a 5-byte nop, provider "repro", name "site", no arguments. */
/* Laid out by hand: the note. */
/* clang-format off */
#define SITE()                                                                                    \
	__asm__ __volatile__(".balign 8\n"                                                        \
			     "990:\n\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"                     \
			     ".pushsection .note.stapsdt,\"?\",\"note\"\n\t"                      \
			     ".balign 4\n\t"                                                      \
			     ".4byte 992f-991f, 994f-993f, 3\n"                                   \
			     "991:\n\t.asciz \"stapsdt\"\n"                                       \
			     "992:\n\t.balign 4\n"                                                \
			     "993:\n\t.8byte 990b\n\t"                                            \
			     ".8byte 0\n\t"                                                       \
			     ".8byte 0\n\t"                                                       \
			     ".asciz \"repro\"\n\t"                                               \
			     ".asciz \"site\"\n\t"                                                \
			     ".asciz \"\"\n"                                                      \
			     "994:\n\t.balign 4\n\t"                                              \
			     ".popsection\n")
/* clang-format on */

__attribute__((noinline)) static void site(void)
{
	SITE();
}

static int trampoline_mapped(void)
{
	char line[512];
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "[uprobes-trampoline]") != NULL;
	if (f)
		fclose(f);
	return found;
}

int main(void)
{
	sigset_t go;
	int sig, status;
	pid_t pid;

	sigemptyset(&go);
	sigaddset(&go, SIGUSR1);
	sigprocmask(SIG_BLOCK, &go, NULL);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	sigwait(&go, &sig);

	/* The first hit traps through int3; the kernel optimizes the site after it. */
	for (int i = 0; i < 3; i++)
		site();
	fprintf(stderr, "uprobe_fork: trampoline %s\n",
		trampoline_mapped() ? "mapped" : "not mapped");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		site();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		perror("uprobe_fork");
		return 1;
	}
	if (WIFSIGNALED(status))
		printf("child killed by SIG%s\n", sigabbrev_np(WTERMSIG(status)));
	else
		printf("child exited with status %d\n", WEXITSTATUS(status));
	return 0;
}
