/* SPDX-License-Identifier: MIT */
/* Finding the USDT probes of one provider in an ELF file (.note.stapsdt). */
#ifndef REC_USDT_H
#define REC_USDT_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "target/maps.h"

#define REC_PROBE_NAME_MAX 64
#define REC_PROBE_NAMES_MAX 32

struct rec_probe_names {
	struct {
		char name[REC_PROBE_NAME_MAX];
		unsigned int sites;
	} v[REC_PROBE_NAMES_MAX];
	size_t n;
	unsigned int sites;	/* all sites of the provider */
};

/* One stapsdt note of a 64-bit ELF file. */
struct rec_usdt_note {
	uint64_t pc;		/* the site's address */
	uint64_t base;		/* .stapsdt.base as the note saw it */
	uint64_t sema;		/* the semaphore's address, 0 if none */
	const char *provider;
	const char *name;
	const char *args;
};

/* Return non-zero to stop; rec_usdt__for_each_note() returns that value. */
typedef int (*rec_usdt_note_fn)(const struct rec_usdt_note *note, void *ctx);

/*
 * Calls fn for every well-formed note in the .note.stapsdt sections of elf
 * (malformed ones are skipped). Returns 0, fn's non-zero value, or -ENOEXEC.
 */
int rec_usdt__for_each_note(Elf *elf, rec_usdt_note_fn fn, void *ctx);

/* Opens path as an ELF file. Returns 0, -ENOEXEC if it is not ELF, or -errno. */
int rec_elf__open(const char *path, int *fd, Elf **elf);
void rec_elf__close(int fd, Elf *elf);

/*
 * Where the TLS variable name of the executable at path is in a thread's
 * memory, as an offset from its thread pointer (fs base), for a variable the
 * executable defines itself. Returns 0, or -ENOENT if it does not.
 */
int rec_elf__tls_offset(const char *path, const char *name, int64_t *off);

/*
 * The mappings of the ELF executable at path (whose inode is inode) in a
 * process whose mm->start_code was start_code: one per PT_LOAD segment with
 * bytes in the file, so that addresses in it can be read from the file once
 * the process is gone and its maps with it. Returns 0, -ENOEXEC if the file or
 * start_code does not fit, or another negative errno.
 */
int rec_elf__image_maps(const char *path, uint64_t inode, uint64_t start_code,
			struct rec_maps *out);

/*
 * Collects the probe names of provider in the ELF file at path, with how many
 * sites each has. Returns 0 (out->sites may be 0), -ENOEXEC if the file is not
 * ELF, -E2BIG if there are more distinct names than fit, or another negative errno.
 */
int rec_usdt__scan(const char *path, const char *provider, struct rec_probe_names *out);

#endif /* REC_USDT_H */
