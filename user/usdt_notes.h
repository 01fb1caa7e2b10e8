/* SPDX-License-Identifier: MIT */
/* Finding the USDT probes of one provider in an ELF file (.note.stapsdt). */
#ifndef REC_USDT_NOTES_H
#define REC_USDT_NOTES_H

#include <stddef.h>

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

/*
 * Collects the probe names of provider in the ELF file at path, with how many
 * sites each has. Returns 0 (out->sites may be 0), -ENOEXEC if the file is not
 * ELF, -E2BIG if there are more distinct names than fit, or another negative errno.
 */
int rec_usdt__scan(const char *path, const char *provider, struct rec_probe_names *out);

#endif /* REC_USDT_NOTES_H */
