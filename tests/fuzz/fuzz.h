/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libFuzzer harnesses in tests/fuzz: a property check that
 * aborts (libFuzzer saves the input as a crash), and the dump reader on bytes
 * in memory.
 */
#ifndef REC_FUZZ_H
#define REC_FUZZ_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/dump.h"

/* A property the code under test promises; broken, it is a finding like a crash. */
#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: property broken: %s: ", __FILE__, __LINE__,        \
				#cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* Makes every byte of [p, p + len) be read: ASan reports any that is not ours. */
static inline void fuzz__touch(const void *p, size_t len)
{
	const volatile unsigned char *b = p;
	unsigned char sum = 0;

	for (size_t i = 0; i < len; i++)
		sum ^= b[i];
	(void)sum;
}

/*
 * The dump reader on len bytes at buf, with rec_dump__read()'s contract: read
 * from memory, and through a memfd (a regular file, read by the file reader's
 * window) too, which must give the same answer and the same message.
 */
static inline int fuzz_dump__read(const char *buf, size_t len, struct rec_proc *p,
				  struct rec_dump_counters *counters, char *err, size_t errlen)
{
	char path[64], ferr[256];
	struct rec_proc fp;
	size_t off = 0;
	int fd, ret, fret;

	ret = rec_dump__read_mem(buf, len, p, counters, err, errlen);
	fd = memfd_create("fuzz-dump", MFD_CLOEXEC);
	if (fd < 0) {
		perror("fuzz: memfd_create");
		abort();
	}
	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n <= 0) {
			perror("fuzz: write to the memfd");
			abort();
		}
		off += (size_t)n;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	fret = rec_dump__read(path, &fp, NULL, ferr, sizeof(ferr));
	close(fd);
	if (fret != ret || (ret == -EINVAL && errlen && strncmp(err, ferr, errlen - 1) != 0)) {
		fprintf(stderr, "fuzz: the memory reader said %d (%s), the file reader %d (%s)\n",
			ret, ret ? err : "", fret, fret ? ferr : "");
		abort();
	}
	if (!fret)
		rec_proc__fini(&fp);
	return ret;
}

#endif /* REC_FUZZ_H */
