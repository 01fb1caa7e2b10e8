// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "usdt_notes.h"

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

/* One .note.stapsdt section: each note's descriptor is pc, base, semaphore, then strings. */
static int scan_notes(Elf_Data *data, size_t addr_size, const char *provider,
		      struct rec_probe_names *out)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nhdr;
	int err;

	while ((off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const char *desc = (const char *)data->d_buf + desc_off;
		const char *prov, *name, *end = desc + nhdr.n_descsz;

		if (nhdr.n_type != 3 || nhdr.n_namesz != 8 ||
		    memcmp((const char *)data->d_buf + name_off, "stapsdt", 8) != 0)
			continue;
		if (nhdr.n_descsz < 3 * addr_size + 3)
			continue;
		prov = desc + 3 * addr_size;
		name = memchr(prov, '\0', end - prov);
		if (!name || ++name >= end || !memchr(name, '\0', end - name))
			continue;
		if (strcmp(prov, provider) != 0)
			continue;
		err = add_site(out, name);
		if (err)
			return err;
	}
	return 0;
}

int rec_usdt__scan(const char *path, const char *provider, struct rec_probe_names *out)
{
	size_t shstrndx, addr_size;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, err = 0;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx)) {
		err = -ENOEXEC;
		goto out;
	}
	addr_size = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt") != 0)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		err = scan_notes(data, addr_size, provider, out);
		if (err)
			break;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}
