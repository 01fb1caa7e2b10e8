// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * The kernel half of recorder: USDT handlers for the probes of
 * include/recorder.h (docs/probe-abi.md), per-thread span stacks, the table of
 * live recordings, and the ring buffer that carries events to user space.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/*
 * Big programs have many distinct argument specs (registers and immediates vary
 * per site); libbpf's default is 256. User space shrinks the IP map, unused with
 * cookies, to one entry.
 */
#include "recorder_abi.h"
#define BPF_USDT_MAX_SPEC_CNT REC_USDT_MAX_SPECS
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Wake the consumer only once this many bytes wait in the ring (set before load). */
const volatile __u64 wakeup_bytes = 1 << 20;

/*
 * --binary: probes fire in processes nobody named (the executable's, and its
 * libraries' for every process that maps them); adopt each process that runs
 * a traced executable on its first probe, and ignore the others.
 */
const volatile bool follow_new = false;

/* Entries one process may hold in the recordings table (set before load). */
const volatile __u64 max_per_process = 16384;

/*
 * The programs, one file per concern. Each uses only what the files before it
 * define: none declares a function ahead of its definition.
 */
#include "maps.bpf.h"
#include "args.bpf.h"
#include "adopt.bpf.h"
#include "recordings.bpf.h"
#include "stacks.bpf.h"
#include "events.bpf.h"
#include "batch.bpf.h"
#include "process.bpf.h"
#include "sched.bpf.h"
