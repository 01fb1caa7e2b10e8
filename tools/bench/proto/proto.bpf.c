// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * The BPF half of the fast-path prototypes (tools/bench/proto/run.sh): the
 * handler of the "proto:batch" probe, which a thread fires with the address
 * and length of its buffer of compact records. It copies the batch, walks it
 * (bounded), gives every event its recording's next seq from an array slot,
 * and pushes the batch into the ring buffer. Two ways to push, chosen before
 * load: reserve a ring record of the largest batch and read the user buffer
 * straight into it (one copy), or read it into a per-CPU scratch buffer and
 * bpf_ringbuf_output() it (two copies, an exact-size record).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define BATCH_MAX 8192
#define WALK_MAX 256

const volatile bool reserve_in_place = true;
const volatile bool walk = true;
/* Returns at once: what the probe alone costs (the kernel entry and the argument reads). */
const volatile bool noop = false;

struct scratch {
	__u8 b[BATCH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} rb SEC(".maps");

struct slot {
	__u64 key;
	__u64 seq;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct slot);
} slots SEC(".maps");

__u64 nevents, nbatches, bad, ring_full;

/* The record of the prototype: what include/recorder.h would write for a 3-field event. */
struct rec {
	__u16 size;
	__u8 kind;
	__u8 nf;
	__u32 pad;
	__u64 tsc;
	__u64 meta;
	__u64 types;
	__u64 key;
	__u64 span;
	__u64 v[3];
};

/* Gives each event of the batch at b (len bytes) its seq; returns the events seen. */
static __always_inline __u32 walk_batch(__u8 *b, __u32 len)
{
	__u32 off = 0, n = 0;

	for (int i = 0; i < WALK_MAX; i++) {
		struct rec *r;
		struct slot *sl;
		__u32 idx;
		__u16 size;

		if (off >= len || off > BATCH_MAX - sizeof(struct rec))
			break;
		r = (void *)(b + off);
		size = r->size;
		if (size < 16 || size > sizeof(struct rec) || (size & 7)) {
			bad++;
			break;
		}
		idx = r->key & 4095;
		sl = bpf_map_lookup_elem(&slots, &idx);
		if (sl) {
			if (sl->key != r->key) {
				sl->key = r->key;
				sl->seq = 0;
			}
			r->pad = (__u32)__sync_fetch_and_add(&sl->seq, 1);
		}
		off += size;
		n++;
	}
	return n;
}

SEC("usdt")
int BPF_USDT(on_batch, void *buf, long len)
{
	__u32 z = 0, n = 0;
	__u8 *b;

	if (noop)
		return 0;
	if (len <= 0 || len > BATCH_MAX) {
		bad++;
		return 0;
	}
	if (reserve_in_place) {
		b = bpf_ringbuf_reserve(&rb, BATCH_MAX, 0);
		if (!b) {
			ring_full++;
			return 0;
		}
		if (bpf_probe_read_user(b, len & (BATCH_MAX - 1) ?: BATCH_MAX, buf)) {
			bad++;
			bpf_ringbuf_discard(b, BPF_RB_NO_WAKEUP);
			return 0;
		}
		if (walk)
			n = walk_batch(b, len);
		bpf_ringbuf_submit(b, BPF_RB_NO_WAKEUP);
	} else {
		struct scratch *s = bpf_map_lookup_elem(&scr, &z);

		if (!s || bpf_probe_read_user(s->b, len & (BATCH_MAX - 1) ?: BATCH_MAX, buf)) {
			bad++;
			return 0;
		}
		if (walk)
			n = walk_batch(s->b, len);
		if (bpf_ringbuf_output(&rb, s->b, len & (BATCH_MAX - 1), BPF_RB_NO_WAKEUP))
			ring_full++;
	}
	__sync_fetch_and_add(&nevents, n);
	__sync_fetch_and_add(&nbatches, 1);
	return 0;
}
