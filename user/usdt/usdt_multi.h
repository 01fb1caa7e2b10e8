/* SPDX-License-Identifier: MIT */
/*
 * THE workaround for libbpf 1.1: attaching a BPF program to every site of one
 * USDT probe in one file with a single uprobe_multi link (kernel 6.6+).
 * libbpf 1.1's bpf_program__attach_usdt() makes one perf-event uprobe per
 * site, and each of those detaches with its own grace period, one after the
 * other: seconds for a hundred sites. One link detaches all its sites at once.
 *
 * To do it, this corner does what libbpf keeps private: it writes the argument
 * specs into libbpf's own __bpf_usdt_specs map in the layout of usdt.bpf.h
 * (re-declared here), gives each site its spec id as BPF cookie, so that
 * bpf_usdt_arg() in BPF code works unchanged, and loads the USDT programs with
 * the expected attach type BPF_TRACE_UPROBE_MULTI, newer than the build's
 * kernel headers (linux-libc-dev 6.1): the number 48 lives here, and only here.
 *
 * Remove it once the build's libbpf is 1.3 or newer: its
 * bpf_program__attach_usdt() then attaches with uprobe_multi itself (one link
 * per probe and file), sets the attach type and manages the specs map.
 * attach.c then calls that instead of rec_usdt_multi__attach(), bpfstate.c no
 * longer calls rec_usdt_multi__prepare(), and this folder goes, with what only
 * it uses: rec_usdt__for_each_site() and rec_usdt__parse_arg(s) (usdt.h). The
 * BPF_USDT_MAX_SPEC_CNT that bpf/recorder.bpf.c raises stays. One difference to
 * settle first: libbpf refuses a whole probe when one site's argument spec is
 * not supported, where this skips that site and reports it
 * (rec_usdt_multi_skipped, recorder-attach's "skipped N sites" warning).
 */
#ifndef REC_COMPAT_USDT_MULTI_H
#define REC_COMPAT_USDT_MULTI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "usdt/usdt.h"

struct bpf_object;

/* Argument specs already in the specs map, shared by every attach of a session. */
struct rec_usdt_multi {
	int map_fd;			 /* __bpf_usdt_specs */
	uint32_t max;			 /* its max_entries */
	uint32_t n;			 /* ids in use */
	char (*args)[REC_USDT_ARGS_MAX]; /* the spec string of each id, to share ids */
};

/* Sites left out of an attach because their argument spec is not supported. */
struct rec_usdt_multi_skipped {
	unsigned int n;		      /* how many */
	char spec[REC_USDT_ARGS_MAX]; /* the first one's argument spec */
};

/*
 * Before obj is loaded: its USDT programs get the expected attach type
 * BPF_TRACE_UPROBE_MULTI, and libbpf's IP-to-spec map, unused since sites
 * find their spec by cookie, one entry. Returns 0 or a negative errno.
 */
int rec_usdt_multi__prepare(struct bpf_object *obj);

/* After obj is loaded: um uses its specs map. Returns 0 or -ENOENT. */
int rec_usdt_multi__init(struct rec_usdt_multi *um, struct bpf_object *obj);
void rec_usdt_multi__fini(struct rec_usdt_multi *um);

/*
 * Attaches prog_fd (made ready by rec_usdt_multi__prepare) to every site of
 * provider:name in the ELF file at path, for process pid (0 = every process).
 * A site whose argument spec cannot be parsed is left out and counted in
 * *skipped (which the call fills); the others are attached. Returns the link
 * fd, with the number of sites attached in *nsites; -ENOENT if there is no site
 * to attach (no such probe, or every site was skipped), -E2BIG when the specs
 * map is full, or another negative errno.
 */
int rec_usdt_multi__attach(struct rec_usdt_multi *um, int prog_fd, const char *path,
			   const char *provider, const char *name, pid_t pid, unsigned int *nsites,
			   struct rec_usdt_multi_skipped *skipped);

#endif /* REC_COMPAT_USDT_MULTI_H */
