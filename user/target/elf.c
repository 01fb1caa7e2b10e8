// SPDX-License-Identifier: MIT
/* Reading a target's ELF files (elf.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/elf.h"

int rec_elf__open(const char *path, int *fd, Elf **elf)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	*elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		rec_elf__close(*fd, *elf);
		return -ENOEXEC;
	}
	return 0;
}

void rec_elf__close(int fd, Elf *elf)
{
	if (elf)
		elf_end(elf);
	close(fd);
}

int rec_elf__file_offset(Elf *elf, uint64_t vaddr, bool exec, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (exec && !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* The value of the defined TLS symbol name in elf's symbol tables, or -ENOENT. */
static int tls_symbol(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *sname;
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_TLS || sym.st_shndx == SHN_UNDEF)
				continue;
			sname = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (sname && strcmp(sname, name) == 0) {
				*value = sym.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int rec_elf__tls_offset(const char *path, const char *name, int64_t *off)
{
	uint64_t value, firstbyte, align, block;
	GElf_Phdr tls = { 0 };
	size_t nph;
	Elf *elf;
	int fd, err;

	err = rec_elf__open(path, &fd, &elf);
	if (err)
		return err;
	err = -ENOENT;
	if (gelf_getclass(elf) != ELFCLASS64 || elf_getphdrnum(elf, &nph))
		goto out;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_TLS)
			tls = ph;
	}
	if (tls.p_type != PT_TLS || tls_symbol(elf, name, &value))
		goto out;
	/*
	 * x86-64 keeps the thread pointer above the TLS blocks, the executable's
	 * first, so its block ends at the thread pointer (glibc's
	 * _dl_determine_tlsoffset for the first module, TLS_TCB_AT_TP).
	 */
	align = tls.p_align ? tls.p_align : 1;
	if (align & (align - 1))
		goto out;
	firstbyte = (0 - (tls.p_vaddr & (align - 1))) & (align - 1);
	block = ((tls.p_memsz - firstbyte + align - 1) & ~(align - 1)) + firstbyte;
	if (value >= tls.p_memsz)
		goto out;
	*off = (int64_t)value - (int64_t)block;
	err = 0;
out:
	rec_elf__close(fd, elf);
	return err;
}

int rec_elf__image_maps(const char *path, uint64_t inode, uint64_t start_code, struct rec_maps *out)
{
	uint64_t lowest_exec = UINT64_MAX, bias;
	size_t nph, n = 0;
	GElf_Phdr ph;
	Elf *elf;
	int fd, err;

	out->v = NULL;
	out->n = 0;
	err = rec_elf__open(path, &fd, &elf);
	if (err)
		return err;
	err = -ENOEXEC;
	if (gelf_getclass(elf) != ELFCLASS64 || elf_getphdrnum(elf, &nph) || nph == 0)
		goto out;
	/* The kernel's start_code is the lowest executable PT_LOAD's address plus the bias. */
	for (size_t i = 0; i < nph; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    ph.p_vaddr < lowest_exec)
			lowest_exec = ph.p_vaddr;
	if (lowest_exec == UINT64_MAX || start_code < lowest_exec)
		goto out;
	bias = start_code - lowest_exec;
	err = -ENOMEM;
	out->v = calloc(nph, sizeof(*out->v));
	if (!out->v)
		goto out;
	for (size_t i = 0; i < nph; i++) {
		struct rec_mapping *m = &out->v[n];

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		/* Only the bytes the file has: the reads this serves are of .rodata. */
		*m = (struct rec_mapping){
			.start = bias + ph.p_vaddr,
			.end = bias + ph.p_vaddr + ph.p_filesz,
			.offset = ph.p_offset,
			.inode = inode,
			.exec = !!(ph.p_flags & PF_X),
			.path = strdup(path),
		};
		if (!m->path)
			goto out;
		out->n = ++n;
	}
	err = n ? 0 : -ENOEXEC;
out:
	if (err)
		rec_maps__free(out);
	rec_elf__close(fd, elf);
	return err;
}
