/* SPDX-License-Identifier: MIT */
/*
 * The consumer side of the fast-path prototypes (tools/bench/proto/run.sh):
 *
 *	loader bpf PID BINARY reserve|output walk|copy|noop
 *	    loads proto.bpf.c, attaches it to proto:batch in BINARY for PID, drains
 *	    its ring buffer until PID exits, prints what BPF counted
 *	loader memfd PID FD BYTES
 *	    takes the target's memfd FD with pidfd_getfd, seals its size, maps it and
 *	    reads its ring until PID exits, prints the records read
 *
 * Prints "ready" once attached or mapped; the runner then signals the target.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "proto.skel.h"

static int count_record(void *ctx, void *data, size_t size)
{
	(*(uint64_t *)ctx) += size;
	(void)data;
	return 0;
}

static int run_bpf(pid_t pid, const char *binary, int in_place, const char *work)
{
	struct ring_buffer *rb;
	uint64_t bytes = 0;
	struct proto *sk;

	libbpf_set_print(NULL);
	sk = proto__open();
	if (!sk)
		return 1;
	sk->rodata->reserve_in_place = in_place;
	sk->rodata->walk = !strcmp(work, "walk");
	sk->rodata->noop = !strcmp(work, "noop");
	if (proto__load(sk)) {
		fprintf(stderr, "loader: load failed\n");
		return 1;
	}
	sk->links.on_batch =
		bpf_program__attach_usdt(sk->progs.on_batch, pid, binary, "proto", "batch", NULL);
	if (!sk->links.on_batch) {
		fprintf(stderr, "loader: attach failed: %s\n", strerror(errno));
		return 1;
	}
	rb = ring_buffer__new(bpf_map__fd(sk->maps.rb), count_record, &bytes, NULL);
	printf("ready\n");
	fflush(stdout);
	while (kill(pid, 0) == 0) {
		ring_buffer__consume(rb);
		usleep(1000);
	}
	ring_buffer__consume(rb);
	printf("events %llu batches %llu bad %llu ring_full %llu ring_bytes %llu\n",
	       (unsigned long long)sk->bss->nevents, (unsigned long long)sk->bss->nbatches,
	       (unsigned long long)sk->bss->bad, (unsigned long long)sk->bss->ring_full,
	       (unsigned long long)bytes);
	ring_buffer__free(rb);
	proto__destroy(sk);
	return 0;
}

struct mring {
	uint64_t head;
	uint64_t pad1[7];
	uint64_t tail;
	uint64_t pad2[7];
	uint64_t dropped;
	uint64_t pad3[7];
	unsigned char data[];
};

static int run_memfd(pid_t pid, int target_fd, size_t size)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), fd;
	uint64_t records = 0;
	struct mring *mr;

	if (pidfd < 0)
		return 1;
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, target_fd, 0);
	if (fd < 0) {
		perror("loader: pidfd_getfd");
		return 1;
	}
	/* The target can no longer shrink it under us (SIGBUS) or grow it. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))
		perror("loader: F_ADD_SEALS");
	mr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mr == MAP_FAILED)
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		uint64_t head = __atomic_load_n(&mr->head, __ATOMIC_ACQUIRE), tail = mr->tail;
		int alive = kill(pid, 0) == 0;

		if (head != tail) {
			records += (head - tail) / 72;
			__atomic_store_n(&mr->tail, head, __ATOMIC_RELEASE);
		} else if (!alive) {
			break;
		}
	}
	printf("records %llu dropped %llu\n", (unsigned long long)records,
	       (unsigned long long)mr->dropped);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "bpf"))
		return run_bpf(atoi(argv[2]), argv[3], !strcmp(argv[4], "reserve"), argv[5]);
	if (argc == 5 && !strcmp(argv[1], "memfd"))
		return run_memfd(atoi(argv[2]), atoi(argv[3]), strtoull(argv[4], NULL, 10));
	fprintf(stderr, "usage: loader bpf PID BINARY reserve|output walk|copy|noop | "
			"loader memfd PID FD BYTES\n");
	return 2;
}
