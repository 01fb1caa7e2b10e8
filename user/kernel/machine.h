/* SPDX-License-Identifier: MIT */
/*
 * What decides what recording costs on this machine (issue 25): the clocksource
 * (the batch path stamps events with the TSC only where the kernel keeps time
 * with it), page-table isolation (it makes every kernel entry dearer), and what
 * a system call and a uprobe hit cost, measured here. recorder-attach -v says
 * them at start, and --machine prints them for the bench.
 */
#ifndef REC_MACHINE_H
#define REC_MACHINE_H

#include <stddef.h>
#include <stdio.h>

struct bpf_object;
struct bpf_program;

struct rec_machine {
	char clocksource[32];	/* current_clocksource, or "" if unreadable */
	char clocksources[128]; /* available_clocksource */
	char meltdown[96];	/* vulnerabilities/meltdown, as the kernel says it */
	const char *pti;	/* "on", "off", "not needed" or "unknown" */
	double syscall_ns;	/* one getppid() system call; < 0 if not measured */
	double uprobe_ns; /* one hit of a uprobe with a BPF program on a 1-byte nop; < 0 if not */
	int uprobe_err;	  /* why uprobe_ns was not measured (a negative errno), or 0 */
};

/*
 * Reads the clocksource and the kernel's word on Meltdown from the sysfs tree
 * at root (NULL: "/sys"). What cannot be read is left empty ("unknown" for
 * pti). Measures nothing.
 */
void rec_machine__read(struct rec_machine *m, const char *root);

/* The pti word for a vulnerabilities/meltdown text: "on", "off", "not needed" or "unknown". */
const char *rec_machine__pti(const char *meltdown);

/* m->syscall_ns: the median of a few rounds of getppid() system calls (about 1 ms in all). */
void rec_machine__time_syscall(struct rec_machine *m);

/*
 * m->uprobe_ns: attaches prog, obj's uprobe_cost program, to a nop of this process's
 * own and times hits of it (2,000 at most, about 1 ms where a hit costs 0.5 µs
 * and 12 ms where it costs 6 µs), less the same calls unattached. Run it
 * before anything else is attached through obj: it takes an id of obj's USDT
 * specs map, which the session's attach then reuses. Returns 0 or a negative
 * errno (also in m->uprobe_err).
 */
int rec_machine__time_uprobe(struct rec_machine *m, struct bpf_object *obj,
			     struct bpf_program *prog);

/* m as one line of text, "clocksource tsc (available: ...), pti ..., ...", into buf. */
void rec_machine__format(const struct rec_machine *m, char *buf, size_t len);

/* m as one JSON line on out (rec_json__): the keys of recorder-attach --machine. */
void rec_machine__write_json(const struct rec_machine *m, FILE *out);

#endif /* REC_MACHINE_H */
