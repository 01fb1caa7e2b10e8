/* SPDX-License-Identifier: MIT */
/*
 * USDT probes in an ELF file: the .note.stapsdt notes of one provider, the
 * sites of a probe as a uprobe takes them (file offsets), and the argument
 * specs ("-4@%eax") of a site.
 */
#ifndef REC_USDT_H
#define REC_USDT_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REC_PROBE_NAME_MAX 64
#define REC_PROBE_NAMES_MAX 32

struct rec_probe_names {
	struct {
		char name[REC_PROBE_NAME_MAX];
		unsigned int sites;
	} v[REC_PROBE_NAMES_MAX];
	size_t n;
	unsigned int sites; /* all sites of the provider */
};

/* One stapsdt note of a 64-bit ELF file. */
struct rec_usdt_note {
	uint64_t pc;   /* the site's address */
	uint64_t base; /* .stapsdt.base as the note saw it */
	uint64_t sema; /* the semaphore's address, 0 if none */
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

/*
 * Collects the probe names of provider in the ELF file at path, with how many
 * sites each has. Returns 0 (out->sites may be 0), -ENOEXEC if the file is not
 * ELF, -E2BIG if there are more distinct names than fit, or another negative errno.
 */
int rec_usdt__scan(const char *path, const char *provider, struct rec_probe_names *out);

/* One site of a probe, where a uprobe goes. */
struct rec_usdt_site {
	uint64_t off;	   /* the file offset of the site's instruction */
	uint64_t sema_off; /* the file offset of its semaphore, 0 if none */
	const char *args;  /* its argument specs, e.g. "8@%rax -4@$1" */
};

/* Return non-zero to stop; rec_usdt__for_each_site() returns that value. */
typedef int (*rec_usdt_site_fn)(const struct rec_usdt_site *site, void *ctx);

/*
 * Calls fn for every site of provider:name in elf, its note's addresses moved
 * by where .stapsdt.base is now (a prelinked file) and turned into file
 * offsets. Returns 0, fn's non-zero value, -ENOENT if a site's address is in
 * no segment, or -ENOEXEC.
 */
int rec_usdt__for_each_site(Elf *elf, const char *provider, const char *name, rec_usdt_site_fn fn,
			    void *ctx);

/* How a USDT argument is found (x86-64). */
enum rec_usdt_arg_kind {
	REC_USDT_ARG_CONST,	/* the value is val: "$-1" */
	REC_USDT_ARG_REG,	/* in a register: "%rax" */
	REC_USDT_ARG_REG_DEREF, /* in memory at a register plus val: "-16(%rbp)" */
};

struct rec_usdt_arg {
	enum rec_usdt_arg_kind kind;
	unsigned int size; /* bytes: 1, 2, 4 or 8 */
	bool is_signed;
	int16_t reg_off; /* the register's offset in struct pt_regs */
	int64_t val;
};

/* Parses one argument spec ("8@%rax", "-4@$-1", "8@-16(%rbp)"). Returns 0 or -EINVAL. */
int rec_usdt__parse_arg(const char *spec, struct rec_usdt_arg *out);

/*
 * Parses the argument specs of a site, separated by spaces, into v (at most
 * max). Returns how many, or -EINVAL if one is not supported, there are more
 * than max, or args is too long (REC_USDT_ARGS_MAX bytes and more).
 */
int rec_usdt__parse_args(const char *args, struct rec_usdt_arg *v, size_t max);

/* The longest argument specs string of a site, with its NUL, that is parsed. */
#define REC_USDT_ARGS_MAX 256

#endif /* REC_USDT_H */
