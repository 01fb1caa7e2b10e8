/* SPDX-License-Identifier: MIT */
/*
 * Attaching a BPF program to every site of one USDT probe in one file with a
 * single uprobe_multi link (kernel 6.6+). libbpf 1.1 makes one perf-event uprobe
 * per site, and each of those detaches with its own grace period, one after the
 * other: seconds for a hundred sites. One link detaches all its sites at once.
 *
 * The argument specs go into libbpf's own __bpf_usdt_specs map, and each site's
 * BPF cookie is its spec id, so bpf_usdt_arg() in BPF code works unchanged.
 */
#ifndef REC_COMPAT_USDT_MULTI_H
#define REC_COMPAT_USDT_MULTI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Argument specs already in the specs map, shared by every attach of a session. */
struct rec_usdt_specs {
	int map_fd;		/* __bpf_usdt_specs */
	uint32_t max;		/* its max_entries */
	uint32_t n;		/* ids in use */
	char (*args)[256];	/* the spec string of each id, to share ids */
};

/* Sites left out of an attach because their argument spec is not supported. */
struct rec_usdt_skipped {
	unsigned int n;		/* how many */
	char spec[256];		/* the first one's argument spec */
};

/*
 * Attaches prog_fd (loaded with expected attach type BPF_TRACE_UPROBE_MULTI) to
 * every site of provider:name in the ELF file at path, for process pid (0 = every
 * process). A site whose argument spec cannot be parsed is left out and counted
 * in *skipped (which the call fills); the others are attached. Returns the link
 * fd, with the number of sites attached in *nsites; -ENOENT if there is no site
 * to attach (no such probe, or every site was skipped), -E2BIG when the specs
 * map is full, or another negative errno.
 */
int rec_usdt__attach_multi(struct rec_usdt_specs *specs, int prog_fd, const char *path,
			   const char *provider, const char *name, pid_t pid,
			   unsigned int *nsites, struct rec_usdt_skipped *skipped);

/*
 * Parses one USDT argument ("8@%rax", "-4@$-1", "8@-16(%rbp)") into the 16-byte
 * arg spec of usdt.bpf.h (out). Returns 0 or -EINVAL.
 */
int rec_usdt__parse_arg(const char *arg, void *out);

#endif /* REC_COMPAT_USDT_MULTI_H */
