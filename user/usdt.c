// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "usdt.h"

static int add_site(struct rec_probe_names *out, const char *name)
{
	size_t i;

	for (i = 0; i < out->n; i++)
		if (strcmp(out->v[i].name, name) == 0)
			break;
	if (i == out->n) {
		if (out->n == REC_PROBE_NAMES_MAX || strlen(name) >= REC_PROBE_NAME_MAX)
			return -E2BIG;
		strcpy(out->v[i].name, name);
		out->v[i].sites = 0;
		out->n++;
	}
	out->v[i].sites++;
	out->sites++;
	return 0;
}

int rec_usdt__for_each_note(Elf *elf, rec_usdt_note_fn fn, void *ctx)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int ret;

	if (elf_getshdrstrndx(elf, &shstrndx) || gelf_getclass(elf) != ELFCLASS64)
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t off = 0, name_off, desc_off;
		const char *sname;
		GElf_Nhdr nhdr;
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt") != 0 || !(data = elf_getdata(scn, NULL)))
			continue;
		/* Each descriptor: pc, base, semaphore (8 bytes each), then three strings. */
		while ((off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off;
			const char *end = desc + nhdr.n_descsz;
			struct rec_usdt_note n;

			if (nhdr.n_type != 3 || nhdr.n_namesz != 8 || nhdr.n_descsz < 27 ||
			    memcmp((const char *)data->d_buf + name_off, "stapsdt", 8) != 0)
				continue;
			memcpy(&n.pc, desc, 8);
			memcpy(&n.base, desc + 8, 8);
			memcpy(&n.sema, desc + 16, 8);
			n.provider = desc + 24;
			n.name = memchr(n.provider, '\0', end - n.provider);
			if (!n.name || ++n.name >= end)
				continue;
			n.args = memchr(n.name, '\0', end - n.name);
			if (!n.args || ++n.args >= end || !memchr(n.args, '\0', end - n.args))
				continue;
			ret = fn(&n, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

struct scan_ctx {
	const char *provider;
	struct rec_probe_names *out;
};

static int scan_note(const struct rec_usdt_note *n, void *arg)
{
	struct scan_ctx *c = arg;

	return strcmp(n->provider, c->provider) == 0 ? add_site(c->out, n->name) : 0;
}

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

int rec_usdt__scan(const char *path, const char *provider, struct rec_probe_names *out)
{
	Elf *elf;
	int fd, err;

	memset(out, 0, sizeof(*out));
	err = rec_elf__open(path, &fd, &elf);
	if (err)
		return err;
	err = rec_usdt__for_each_note(elf, scan_note, &(struct scan_ctx){ provider, out });
	rec_elf__close(fd, elf);
	return err;
}

/* The value of the defined TLS symbol name in elf's symbol tables, or -ENOENT. */
static int tls_symbol(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *sname;
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_TLS ||
			    sym.st_shndx == SHN_UNDEF)
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

int rec_elf__image_maps(const char *path, uint64_t inode, uint64_t start_code,
			struct rec_maps *out)
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
			.start = bias + ph.p_vaddr, .end = bias + ph.p_vaddr + ph.p_filesz,
			.offset = ph.p_offset, .inode = inode, .exec = !!(ph.p_flags & PF_X),
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
