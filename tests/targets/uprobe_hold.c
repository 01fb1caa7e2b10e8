/* SPDX-License-Identifier: MIT */
/*
 * uprobe_hold.c: holds a plain uprobe, one without a reference counter (no
 * USDT semaphore), on a file until it is killed. While it holds one on a USDT
 * site, the kernel refuses any other uprobe there that has a reference counter
 * ("ref_ctr_offset mismatch", -EINVAL): recorder-attach's attach of that probe
 * fails until this one is gone. The end-to-end tests use it to make the probes
 * of a library fail to attach at first.
 *
 *	uprobe_hold FILE OFFSET
 *	  -> "holding" once the uprobe is registered at the file offset OFFSET
 *	  waits for a signal that ends it
 *
 * Exit status: 0 never (killed), 2 usage, 1 the uprobe could not be made.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The dynamic PMU of uprobes: config1 is the path, config2 the offset. */
#define UPROBE_TYPE_FILE "/sys/bus/event_source/devices/uprobe/type"

int main(int argc, char **argv)
{
	struct perf_event_attr attr;
	unsigned long long off;
	char *end;
	FILE *f;
	int type, fd;

	if (argc != 3) {
		fprintf(stderr, "usage: uprobe_hold FILE OFFSET\n");
		return 2;
	}
	errno = 0;
	off = strtoull(argv[2], &end, 0);
	if (errno || end == argv[2] || *end) {
		fprintf(stderr, "uprobe_hold: invalid offset '%s'\n", argv[2]);
		return 2;
	}
	f = fopen(UPROBE_TYPE_FILE, "re");
	if (!f || fscanf(f, "%d", &type) != 1) {
		fprintf(stderr, "uprobe_hold: cannot read %s: %s\n", UPROBE_TYPE_FILE,
			strerror(errno));
		return 1;
	}
	fclose(f);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)argv[1];
	attr.config2 = off;
	/* Enabled at once: the uprobe is registered now, on no process in particular. */
	fd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "uprobe_hold: cannot make a uprobe at %s:0x%llx: %s\n", argv[1],
			off, strerror(errno));
		return 1;
	}
	printf("holding\n");
	fflush(stdout);
	for (;;)
		pause();
}
