/* SPDX-License-Identifier: MIT */
/*
 * The probe ABI as the BPF programs (bpf/recorder.bpf.c) and user space (user/)
 * see it, in one place: the limits and enums of include/recorder.h's probes
 * (docs/probe-abi.md), mirrors of its target-side structs, and the records BPF
 * writes to user space. Records have fixed-width fields only, no pointers, and
 * are 8-byte aligned; user space validates every type, size and length before
 * reading one. tests/header/abi.c checks every constant and layout that
 * include/recorder.h also defines against it, at compile time.
 *
 * Split by wire into three headers, each self-contained, all included here:
 * an includer needs only this one.
 */
#ifndef RECORDER_ABI_H
#define RECORDER_ABI_H

/* What the target writes: its probes' arguments, its structs, its batch buffers. */
#include "recorder_abi_probe.h"
/* What BPF writes to user space: the ring records. */
#include "recorder_abi_ring.h"
/* The maps user space reads and writes: their keys, values and sizes. */
#include "recorder_abi_maps.h"

#endif /* RECORDER_ABI_H */
