// SPDX-License-Identifier: MIT
/* What decides what recording costs on this machine (machine.h). */
#include "kernel/machine.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "usdt/usdt_multi.h"
#include "base/json.h"
#include "wire/clock.h"

/* Rounds of each timing: the median is kept, so one preempted round does not count. */
#define ROUNDS 5
#define SYSCALLS_PER_ROUND 200
/* Hits of the uprobe in all, at most: 12 ms where a hit costs 6 µs. */
#define UPROBE_HITS 2000

static uint64_t now_ns(void)
{
	return (uint64_t)rec_clock__mono_ns();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* ns to a tenth: what the timing can resolve, and no more digits than that in the JSON. */
static double tenths(double ns)
{
	return (double)(int64_t)(ns * 10 + 0.5) / 10;
}

/* The first line of root/rel into buf, without its newline ("" if unreadable). */
static void read_line(const char *root, const char *rel, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

const char *rec_machine__pti(const char *meltdown)
{
	if (!meltdown || !*meltdown)
		return "unknown";
	if (strstr(meltdown, "PTI"))
		return "on";
	if (!strncmp(meltdown, "Not affected", 12))
		return "not needed";
	if (!strncmp(meltdown, "Vulnerable", 10))
		return "off";
	return "unknown";
}

void rec_machine__read(struct rec_machine *m, const char *root)
{
	if (!root)
		root = "/sys";
	memset(m, 0, sizeof(*m));
	m->syscall_ns = -1;
	m->uprobe_ns = -1;
	read_line(root, "devices/system/clocksource/clocksource0/current_clocksource",
		  m->clocksource, sizeof(m->clocksource));
	read_line(root, "devices/system/clocksource/clocksource0/available_clocksource",
		  m->clocksources, sizeof(m->clocksources));
	/* The list ends in a space. */
	m->clocksources[strcspn(m->clocksources, "\n")] = '\0';
	for (size_t n = strlen(m->clocksources); n && m->clocksources[n - 1] == ' '; n--)
		m->clocksources[n - 1] = '\0';
	read_line(root, "devices/system/cpu/vulnerabilities/meltdown", m->meltdown,
		  sizeof(m->meltdown));
	m->pti = rec_machine__pti(m->meltdown);
}

void rec_machine__time_syscall(struct rec_machine *m)
{
	double per[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < SYSCALLS_PER_ROUND; i++)
			syscall(SYS_getppid);
		per[r] = (double)(now_ns() - t0) / SYSCALLS_PER_ROUND;
	}
	m->syscall_ns = tenths(median(per, ROUNDS));
}

/*
 * The site timed: a 1-byte nop with a stapsdt note (sys/sdt.h), as every
 * recorder probe site is, provider recorder_attach so that no tool takes it
 * for a program's recorder probe.
 */
__attribute__((noinline)) static void cost_site(void)
{
	STAP_PROBE(recorder_attach, uprobe_cost);
}

/* Median ns per call of cost_site over ROUNDS rounds of n calls each. */
static double time_site(int n)
{
	double per[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < n; i++)
			cost_site();
		per[r] = (double)(now_ns() - t0) / n;
	}
	return median(per, ROUNDS);
}

int rec_machine__time_uprobe(struct rec_machine *m, struct bpf_object *obj,
			     struct bpf_program *prog)
{
	struct rec_usdt_multi_skipped skipped;
	struct rec_usdt_multi um;
	unsigned int nsites = 0;
	double bare, hit;
	int fd, err;

	m->uprobe_ns = -1;
	if (!prog) {
		err = -ENOENT;
		goto out;
	}
	err = rec_usdt_multi__init(&um, obj);
	if (err)
		goto out;
	bare = time_site(UPROBE_HITS / ROUNDS);
	fd = rec_usdt_multi__attach(&um, bpf_program__fd(prog), "/proc/self/exe", "recorder_attach",
				    "uprobe_cost", getpid(), &nsites, &skipped);
	if (fd < 0) {
		err = fd;
		rec_usdt_multi__fini(&um);
		goto out;
	}
	/* The first hit of a site traps to install it: not what every later hit costs. */
	cost_site();
	hit = time_site(UPROBE_HITS / ROUNDS);
	close(fd);
	rec_usdt_multi__fini(&um);
	m->uprobe_ns = tenths(hit > bare ? hit - bare : 0);
out:
	m->uprobe_err = err;
	return err;
}

static void ns_text(char *buf, size_t len, double ns, const char *what)
{
	if (ns < 0)
		snprintf(buf, len, "%s not measured", what);
	else
		snprintf(buf, len, "%s %.0f ns", what, ns);
}

void rec_machine__format(const struct rec_machine *m, char *buf, size_t len)
{
	char sc[48], up[96];

	ns_text(sc, sizeof(sc), m->syscall_ns, "system call");
	if (m->uprobe_ns < 0 && m->uprobe_err)
		snprintf(up, sizeof(up), "uprobe hit not measured (%s)", strerror(-m->uprobe_err));
	else
		ns_text(up, sizeof(up), m->uprobe_ns, "uprobe hit");
	snprintf(buf, len, "clocksource %s (available: %s), pti %s, %s, %s",
		 m->clocksource[0] ? m->clocksource : "unknown",
		 m->clocksources[0] ? m->clocksources : "unknown", m->pti ? m->pti : "unknown", sc,
		 up);
}

static void member_ns(struct rec_json *w, const char *key, double ns)
{
	rec_json__key(w, key);
	if (ns < 0)
		rec_json__null(w);
	else
		rec_json__f64(w, ns);
}

void rec_machine__write_json(const struct rec_machine *m, FILE *out)
{
	struct rec_json w;

	rec_json__init(&w, out);
	rec_json__begin_object(&w);
	rec_json__key(&w, "clocksource");
	rec_json__cstr(&w, m->clocksource);
	rec_json__key(&w, "clocksources");
	rec_json__cstr(&w, m->clocksources);
	rec_json__key(&w, "pti");
	rec_json__cstr(&w, m->pti ? m->pti : "unknown");
	rec_json__key(&w, "meltdown");
	rec_json__cstr(&w, m->meltdown);
	member_ns(&w, "syscall_ns", m->syscall_ns);
	member_ns(&w, "uprobe_ns", m->uprobe_ns);
	if (m->uprobe_err) {
		rec_json__key(&w, "uprobe_error");
		rec_json__cstr(&w, strerror(-m->uprobe_err));
	}
	rec_json__end_object(&w);
	rec_json__newline(&w);
}
