/* SPDX-License-Identifier: MIT */
/*
 * The BPF side of a session: the programs, loaded in order (open, read-only
 * config, load, then the iterator and exit links), and what their maps hold for
 * each traced process: whether BPF traces it, its entries in the recordings
 * table and their slots, the counters, the span stacks its threads are in
 * (read by iterator), the seeding of the stacks of threads asleep inside
 * spans, and forgetting it once it is gone. Only the session (session.c) uses
 * it; it never consumes the ring (the session does, before asking it).
 */
#ifndef REC_BPFSTATE_H
#define REC_BPFSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/proc.h"

struct bpf_object;
struct bpf_program;
struct rec_bpfstate;

struct rec_bpfstate_opts {
	size_t ring_bytes;	  /* the ring buffer's size, a power of two */
	bool follow_new;	  /* adopt the processes of the --binary files */
	uint64_t max_recordings;  /* entries of the recordings table */
	uint64_t max_per_process; /* of those, one process's */
	bool verbose;		  /* show libbpf's own messages */
	bool sched;		  /* attach the scheduler hooks (kernel time per span) */
};

/* Opens, configures and loads the BPF programs. Returns 0 or a negative errno. */
int rec_bpfstate__open(struct rec_bpfstate **bsp, const struct rec_bpfstate_opts *opts);
/* Unloads everything. NULL is ignored. */
void rec_bpfstate__free(struct rec_bpfstate *bs);

/* The loaded object: its maps (the USDT argument specs attach.h fills among them). */
struct bpf_object *rec_bpfstate__object(const struct rec_bpfstate *bs);
/* The loaded program name (attach.h attaches the USDT ones), or NULL. */
struct bpf_program *rec_bpfstate__program(const struct rec_bpfstate *bs, const char *name);
/* The ring buffer map's fd (ring.h). */
int rec_bpfstate__ring_fd(const struct rec_bpfstate *bs);

/*
 * BPF traces tgid from now on: its records and its exit are reported. One it
 * traces already (adopted by BPF) keeps its entry and its count of recordings.
 * Returns 0 or a negative errno.
 */
int rec_bpfstate__trace(struct rec_bpfstate *bs, pid_t tgid);

/*
 * Every probe of tgid is attached: BPF keeps its threads' span stacks from
 * now on, each read first from the thread's own chain of spans at its next
 * probe. Until then none is kept, so that a span entered and left while only
 * some of the probes were attached is never left open (bpf ready_bits).
 * rec_bpfstate__untrace() takes it back.
 */
void rec_bpfstate__ready(struct rec_bpfstate *bs, pid_t tgid);

/*
 * This session waits for tgid while another recorder-attach holds it (on), or
 * no more (off): while it waits, the batch buffers its threads announced to
 * that one are taken here too. Any other buffer this session was not told of
 * is left (a dead recorder-attach's, after a restart: counted batch_foreign).
 */
void rec_bpfstate__wait(struct rec_bpfstate *bs, pid_t tgid, bool on);

/*
 * --binary: every link of the file (ino, dev, as rec_bpfstate__add_binary()
 * was given) is attached; each process of it adopted from now on is ready.
 * Returns 0 or a negative errno.
 */
int rec_bpfstate__binary_ready(struct rec_bpfstate *bs, uint64_t ino, uint64_t dev);
/* Stops reporting tgid's exit and forgets its count of recordings (struct rec_pstat). */
void rec_bpfstate__untrace(struct rec_bpfstate *bs, pid_t tgid);
/*
 * BPF adopts the processes that run the file whose inode is ino on the device
 * dev (the kernel's encoding, major << 20 | minor). Returns 0 or a negative errno.
 */
int rec_bpfstate__add_binary(struct rec_bpfstate *bs, uint64_t ino, uint64_t dev);

/* Takes a recording record r of p's into p, its BPF entry forgotten first if it retires. */
void rec_bpfstate__take_recording(struct rec_bpfstate *bs, struct rec_proc *p,
				  struct rec_recording_rec *r);
/*
 * Learns recording key of p from the BPF table, for an event whose recording's
 * announcement was lost (the ring was full). Returns 0, -ENOENT or -ENOMEM.
 */
int rec_bpfstate__recover_recording(struct rec_bpfstate *bs, struct rec_proc *p, uint64_t key);

/*
 * Brings p up to date with the BPF side: the counts of its recordings (and the
 * retirements and untracked ones whose records were lost), the counters, the
 * use of its limits, and, while it lives, its threads' span stacks. now
 * (CLOCK_MONOTONIC ns) paces the look for recordings the ring never delivered.
 */
void rec_bpfstate__refresh(struct rec_bpfstate *bs, struct rec_proc *p, uint64_t now);

/*
 * Gives every thread of tgid that sleeps inside spans its stack now, read from
 * its rec__current, which is at tls_off from its thread pointer (bpf
 * seed_stacks). Run after the probes are attached: from then on the probes
 * keep the stacks right. A thread that is running is passed over (it seeds
 * itself at its next probe): returns how many inside spans were, or a
 * negative errno.
 */
int rec_bpfstate__seed_stacks(struct rec_bpfstate *bs, pid_t tgid, int64_t tls_off);

/*
 * Checks the stack of every thread of tgid that sleeps with no records
 * pending against its own chain of spans (rec__current at tls_off, as
 * rec_bpfstate__seed_stacks): where they part, the stack takes the chain's
 * spans, marked uncertain (REC_FF_UNCERTAIN), and what it held beyond them
 * is dropped and counted (stale_spans). Run after a collect. Returns how
 * many threads asleep inside spans it could not check (records pending, or
 * it ran while its chain was read; running ones are not looked at), or a
 * negative errno.
 */
int rec_bpfstate__verify_stacks(struct rec_bpfstate *bs, pid_t tgid, int64_t tls_off);

/*
 * Has BPF take the records that the sleeping threads of tgid have pending in
 * their batch buffers (docs/probe-abi.md, "Batches") into the ring, so that a
 * read after the next drain sees every event they emitted. Returns 0 or -errno.
 */
int rec_bpfstate__collect(struct rec_bpfstate *bs, pid_t tgid);

/*
 * Removes tgid, which is gone, from the recordings table, freeing its slots,
 * and from the untracked and released tables, so that a long --binary session
 * does not fill them with the dead.
 */
void rec_bpfstate__forget(struct rec_bpfstate *bs, pid_t tgid);

#endif /* REC_BPFSTATE_H */
