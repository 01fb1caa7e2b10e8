// SPDX-License-Identifier: MIT
/* rec_machine__read() and rec_machine__pti(): the facts read from a sysfs tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/machine.h"

static void pti_words(void **state)
{
	(void)state;
	assert_string_equal(rec_machine__pti("Mitigation: PTI"), "on");
	assert_string_equal(rec_machine__pti("Not affected"), "not needed");
	assert_string_equal(rec_machine__pti("Vulnerable"), "off");
	assert_string_equal(rec_machine__pti(""), "unknown");
	assert_string_equal(rec_machine__pti(NULL), "unknown");
	assert_string_equal(rec_machine__pti("Mitigation: something else"), "unknown");
}

/* A sysfs tree under a temporary directory: root/rel holds text. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[512], dir[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(p - path), path);
		mkdir(dir, 0700);
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void reads_a_sysfs_tree(void **state)
{
	char root[] = "/tmp/test_machine.XXXXXX";
	struct rec_machine m;
	char line[512];

	(void)state;
	assert_non_null(mkdtemp(root));
	put(root, "devices/system/clocksource/clocksource0/current_clocksource", "kvm-clock\n");
	put(root, "devices/system/clocksource/clocksource0/available_clocksource",
	    "kvm-clock tsc acpi_pm \n");
	put(root, "devices/system/cpu/vulnerabilities/meltdown", "Mitigation: PTI\n");
	rec_machine__read(&m, root);
	assert_string_equal(m.clocksource, "kvm-clock");
	assert_string_equal(m.clocksources, "kvm-clock tsc acpi_pm");
	assert_string_equal(m.meltdown, "Mitigation: PTI");
	assert_string_equal(m.pti, "on");
	/* Nothing is measured by reading. */
	assert_true(m.syscall_ns < 0);
	assert_true(m.uprobe_ns < 0);
	rec_machine__format(&m, line, sizeof(line));
	assert_string_equal(line,
			    "clocksource kvm-clock (available: kvm-clock tsc acpi_pm), pti on, "
			    "system call not measured, uprobe hit not measured");
	m.syscall_ns = 1200;
	m.uprobe_ns = 5500.4;
	rec_machine__format(&m, line, sizeof(line));
	assert_string_equal(line,
			    "clocksource kvm-clock (available: kvm-clock tsc acpi_pm), pti on, "
			    "system call 1200 ns, uprobe hit 5500 ns");
	assert_int_equal(system("rm -rf /tmp/test_machine.*"), 0);
}

static void an_unreadable_tree_is_unknown(void **state)
{
	struct rec_machine m;
	char line[512];

	(void)state;
	rec_machine__read(&m, "/nonexistent/sysfs");
	assert_string_equal(m.clocksource, "");
	assert_string_equal(m.pti, "unknown");
	m.uprobe_err = -EPERM;
	rec_machine__format(&m, line, sizeof(line));
	assert_string_equal(line, "clocksource unknown (available: unknown), pti unknown, "
				  "system call not measured, uprobe hit not measured "
				  "(Operation not permitted)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pti_words),
		cmocka_unit_test(reads_a_sysfs_tree),
		cmocka_unit_test(an_unreadable_tree_is_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
