/* SPDX-License-Identifier: MIT */
/*
 * Reading a target's ELF files: opening one, the offset of a TLS variable of
 * the executable, the file offset of an address, and the mappings an
 * executable had, rebuilt from its program headers once its process is gone.
 */
#ifndef REC_TARGET_ELF_H
#define REC_TARGET_ELF_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "target/maps.h"

/* Opens path as an ELF file. Returns 0, -ENOEXEC if it is not ELF, or -errno. */
int rec_elf__open(const char *path, int *fd, Elf **elf);
void rec_elf__close(int fd, Elf *elf);

/*
 * The file offset of the virtual address vaddr in elf, from the PT_LOAD
 * segment that maps it (an executable one if exec). Returns 0, -ENOENT if no
 * segment maps it, or -ENOEXEC.
 */
int rec_elf__file_offset(Elf *elf, uint64_t vaddr, bool exec, uint64_t *off);

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

#endif /* REC_TARGET_ELF_H */
