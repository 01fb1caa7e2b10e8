// SPDX-License-Identifier: MIT
/* USDT probes in an ELF file: notes, sites and argument specs (usdt.h). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "target/elf.h"
#include "usdt/usdt.h"

/* A stapsdt note (NT_STAPSDT): its owner's name, and its descriptor's layout. */
#define NT_STAPSDT 3
#define STAPSDT_NAME "stapsdt"
#define STAPSDT_ADDR_SIZE 8 /* pc, base and semaphore, one after the other */
/* Three addresses, then provider, name and args, each with its NUL. */
#define STAPSDT_DESC_MIN (3 * STAPSDT_ADDR_SIZE + 3)

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
		if (!sname || strcmp(sname, ".note.stapsdt") != 0 ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		/* Each descriptor: pc, base, semaphore, then three strings. */
		while ((off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off;
			const char *end = desc + nhdr.n_descsz;
			struct rec_usdt_note n;

			if (nhdr.n_type != NT_STAPSDT || nhdr.n_namesz != sizeof(STAPSDT_NAME) ||
			    nhdr.n_descsz < STAPSDT_DESC_MIN ||
			    memcmp((const char *)data->d_buf + name_off, STAPSDT_NAME,
				   sizeof(STAPSDT_NAME)) != 0)
				continue;
			memcpy(&n.pc, desc, STAPSDT_ADDR_SIZE);
			memcpy(&n.base, desc + STAPSDT_ADDR_SIZE, STAPSDT_ADDR_SIZE);
			memcpy(&n.sema, desc + 2 * STAPSDT_ADDR_SIZE, STAPSDT_ADDR_SIZE);
			n.provider = desc + 3 * STAPSDT_ADDR_SIZE;
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

struct site_ctx {
	Elf *elf;
	const char *provider, *name;
	uint64_t base_addr; /* where .stapsdt.base is, 0 if absent */
	rec_usdt_site_fn fn;
	void *ctx;
};

static int site_of_note(const struct rec_usdt_note *n, void *arg)
{
	struct site_ctx *c = arg;
	struct rec_usdt_site site = { .args = n->args };
	uint64_t pc = n->pc, sema = n->sema;
	int err;

	if (strcmp(n->provider, c->provider) || strcmp(n->name, c->name))
		return 0;
	/* Prelinked files moved .stapsdt.base; the notes did not. */
	if (n->base && c->base_addr) {
		pc += c->base_addr - n->base;
		if (sema)
			sema += c->base_addr - n->base;
	}
	err = rec_elf__file_offset(c->elf, pc, true, &site.off);
	if (!err && sema)
		err = rec_elf__file_offset(c->elf, sema, false, &site.sema_off);
	return err ? err : c->fn(&site, c->ctx);
}

int rec_usdt__for_each_site(Elf *elf, const char *provider, const char *name, rec_usdt_site_fn fn,
			    void *ctx)
{
	struct site_ctx c = { elf, provider, name, 0, fn, ctx };
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (gelf_getshdr(scn, &sh) && (sname = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(sname, ".stapsdt.base") == 0)
			c.base_addr = sh.sh_addr;
	}
	return rec_usdt__for_each_note(elf, site_of_note, &c);
}

/* Where each register is in the kernel's struct pt_regs (x86-64), as uprobes see it. */
static const struct {
	const char *name;
	int16_t off;
} regs[] = {
	{ "rax", 80 },	{ "eax", 80 },	{ "rbx", 40 },	{ "ebx", 40 },	{ "rcx", 88 },
	{ "ecx", 88 },	{ "rdx", 96 },	{ "edx", 96 },	{ "rsi", 104 }, { "esi", 104 },
	{ "rdi", 112 }, { "edi", 112 }, { "rbp", 32 },	{ "ebp", 32 },	{ "rsp", 152 },
	{ "esp", 152 }, { "r8", 72 },	{ "r8d", 72 },	{ "r9", 64 },	{ "r9d", 64 },
	{ "r10", 56 },	{ "r10d", 56 }, { "r11", 48 },	{ "r11d", 48 }, { "r12", 24 },
	{ "r12d", 24 }, { "r13", 16 },	{ "r13d", 16 }, { "r14", 8 },	{ "r14d", 8 },
	{ "r15", 0 },	{ "r15d", 0 },	{ "rip", 128 },
};

static int reg_offset(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (strlen(regs[i].name) == len && memcmp(regs[i].name, name, len) == 0)
			return regs[i].off;
	return -1;
}

int rec_usdt__parse_arg(const char *spec, struct rec_usdt_arg *a)
{
	const char *p = spec, *r;
	long long v;
	char *end;
	int size, off;

	memset(a, 0, sizeof(*a));
	size = (int)strtol(p, &end, 10);
	if (end == p || *end != '@')
		return -EINVAL;
	a->is_signed = size < 0;
	if (size < 0)
		size = -size;
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return -EINVAL;
	a->size = (unsigned int)size;
	p = end + 1;
	if (*p == '$') {
		v = strtoll(p + 1, &end, 0);
		if (end == p + 1 || *end)
			return -EINVAL;
		a->kind = REC_USDT_ARG_CONST;
		a->val = v;
		return 0;
	}
	if (*p == '%') {
		off = reg_offset(p + 1, strlen(p + 1));
		if (off < 0)
			return -EINVAL;
		a->kind = REC_USDT_ARG_REG;
		a->reg_off = off;
		return 0;
	}
	/* off(%reg) or (%reg): memory at a register plus an offset */
	v = 0;
	if (*p != '(') {
		v = strtoll(p, &end, 0);
		if (end == p || *end != '(')
			return -EINVAL;
		p = end;
	}
	if (p[1] != '%')
		return -EINVAL;
	r = strchr(p, ')');
	if (!r || r[1])
		return -EINVAL;
	off = reg_offset(p + 2, r - (p + 2));
	if (off < 0)
		return -EINVAL;
	a->kind = REC_USDT_ARG_REG_DEREF;
	a->reg_off = off;
	a->val = v;
	return 0;
}

int rec_usdt__parse_args(const char *args, struct rec_usdt_arg *v, size_t max)
{
	char buf[REC_USDT_ARGS_MAX], *save = NULL, *tok;
	size_t n = 0;

	if (strlen(args) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, args);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (n == max || rec_usdt__parse_arg(tok, &v[n]))
			return -EINVAL;
		n++;
	}
	return (int)n;
}
