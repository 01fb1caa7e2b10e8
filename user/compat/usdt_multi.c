// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "compat/usdt_multi.h"
#include "usdt.h"

#define MAX_ARGS 12
#define ATTACH_UPROBE_MULTI 48	/* BPF_TRACE_UPROBE_MULTI, newer than these headers */

/* Mirrors of usdt.bpf.h, checked below. */
struct arg_spec {
	uint64_t val_off;
	uint32_t arg_type;	/* 0 const, 1 reg, 2 reg deref */
	int16_t reg_off;
	bool arg_signed;
	char arg_bitshift;
};

struct usdt_spec {
	struct arg_spec args[MAX_ARGS];
	uint64_t usdt_cookie;
	int16_t arg_cnt;
};

_Static_assert(sizeof(struct arg_spec) == 16, "usdt.bpf.h arg spec layout");
_Static_assert(sizeof(struct usdt_spec) == 208, "usdt.bpf.h spec layout");

/* BPF_LINK_CREATE's attr for uprobe_multi, newer than linux-libc-dev 6.1. */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t um_flags;
	uint32_t pid;
	uint32_t pad[9];
};

static const struct {
	const char *name;
	int16_t off;	/* in struct pt_regs, x86-64 */
} regs[] = {
	{ "rax", 80 }, { "eax", 80 }, { "rbx", 40 }, { "ebx", 40 }, { "rcx", 88 }, { "ecx", 88 },
	{ "rdx", 96 }, { "edx", 96 }, { "rsi", 104 }, { "esi", 104 }, { "rdi", 112 },
	{ "edi", 112 }, { "rbp", 32 }, { "ebp", 32 }, { "rsp", 152 }, { "esp", 152 },
	{ "r8", 72 }, { "r8d", 72 }, { "r9", 64 }, { "r9d", 64 }, { "r10", 56 }, { "r10d", 56 },
	{ "r11", 48 }, { "r11d", 48 }, { "r12", 24 }, { "r12d", 24 }, { "r13", 16 },
	{ "r13d", 16 }, { "r14", 8 }, { "r14d", 8 }, { "r15", 0 }, { "r15d", 0 },
	{ "rip", 128 },
};

static int reg_offset(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (strlen(regs[i].name) == len && memcmp(regs[i].name, name, len) == 0)
			return regs[i].off;
	return -1;
}

int rec_usdt__parse_arg(const char *arg, void *out)
{
	struct arg_spec *a = out;
	const char *p = arg, *r;
	long long v;
	char *end;
	int size, off;

	memset(a, 0, sizeof(*a));
	size = (int)strtol(p, &end, 10);
	if (end == p || *end != '@')
		return -EINVAL;
	a->arg_signed = size < 0;
	if (size < 0)
		size = -size;
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return -EINVAL;
	a->arg_bitshift = 64 - size * 8;
	p = end + 1;
	if (*p == '$') {
		v = strtoll(p + 1, &end, 0);
		if (end == p + 1 || *end)
			return -EINVAL;
		a->arg_type = 0;
		a->val_off = (uint64_t)v;
		return 0;
	}
	if (*p == '%') {
		off = reg_offset(p + 1, strlen(p + 1));
		if (off < 0)
			return -EINVAL;
		a->arg_type = 1;
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
	a->arg_type = 2;
	a->reg_off = off;
	a->val_off = (uint64_t)v;
	return 0;
}

static int parse_spec(const char *args, struct usdt_spec *spec)
{
	char buf[256], *save = NULL, *tok;
	int n = 0;

	memset(spec, 0, sizeof(*spec));
	if (strlen(args) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, args);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (n == MAX_ARGS || rec_usdt__parse_arg(tok, &spec->args[n]))
			return -EINVAL;
		n++;
	}
	spec->arg_cnt = n;
	return 0;
}

/* The spec id for args: shared with every earlier site that has the same string. */
static int spec_id(struct rec_usdt_specs *specs, const char *args, uint64_t *id)
{
	struct usdt_spec spec;
	uint32_t key;
	int err;

	for (uint32_t i = 0; i < specs->n; i++) {
		if (strcmp(specs->args[i], args) == 0) {
			*id = i;
			return 0;
		}
	}
	/* Unsupported (-EINVAL) before full (-E2BIG): the caller skips only the former. */
	if (strlen(args) >= sizeof(specs->args[0]))
		return -EINVAL;
	err = parse_spec(args, &spec);
	if (err)
		return err;
	if (specs->n == specs->max)
		return -E2BIG;
	if (!specs->args) {
		specs->args = calloc(specs->max, sizeof(specs->args[0]));
		if (!specs->args)
			return -ENOMEM;
	}
	key = specs->n;
	if (syscall(SYS_bpf, BPF_MAP_UPDATE_ELEM,
		    &(union bpf_attr){ .map_fd = specs->map_fd, .key = (uintptr_t)&key,
				       .value = (uintptr_t)&spec },
		    sizeof(union bpf_attr)))
		return -errno;
	strcpy(specs->args[key], args);
	*id = specs->n++;
	return 0;
}

/* The file offset of vaddr, from the segment that maps it. */
static int file_offset(Elf *elf, uint64_t vaddr, bool exec, uint64_t *off)
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

struct sites {
	uint64_t *offsets, *ref_ctrs, *cookies;
	size_t n, cap;
};

static int add_site(struct sites *s, uint64_t off, uint64_t ref, uint64_t cookie)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		uint64_t *o = realloc(s->offsets, cap * sizeof(*o));
		uint64_t *r = o ? realloc(s->ref_ctrs, cap * sizeof(*r)) : NULL;
		uint64_t *c = r ? realloc(s->cookies, cap * sizeof(*c)) : NULL;

		if (o)
			s->offsets = o;
		if (r)
			s->ref_ctrs = r;
		if (!c)
			return -ENOMEM;
		s->cookies = c;
		s->cap = cap;
	}
	s->offsets[s->n] = off;
	s->ref_ctrs[s->n] = ref;
	s->cookies[s->n++] = cookie;
	return 0;
}

struct collect_ctx {
	Elf *elf;
	struct rec_usdt_specs *specs;
	const char *provider, *name;
	uint64_t base_addr;	/* where .stapsdt.base is, 0 if absent */
	struct sites *out;
	struct rec_usdt_skipped *skipped;
};

static int collect_note(const struct rec_usdt_note *n, void *arg)
{
	struct collect_ctx *c = arg;
	uint64_t pc = n->pc, sema = n->sema, pc_off = 0, sema_off = 0, id = 0;
	int err;

	if (strcmp(n->provider, c->provider) || strcmp(n->name, c->name))
		return 0;
	/* Prelinked files moved .stapsdt.base; the notes did not. */
	if (n->base && c->base_addr) {
		pc += c->base_addr - n->base;
		if (sema)
			sema += c->base_addr - n->base;
	}
	err = file_offset(c->elf, pc, true, &pc_off);
	if (!err && sema)
		err = file_offset(c->elf, sema, false, &sema_off);
	if (!err)
		err = spec_id(c->specs, n->args, &id);
	/* One site we cannot read the arguments of costs that site, not the file. */
	if (err == -EINVAL) {
		if (!c->skipped->n++)
			snprintf(c->skipped->spec, sizeof(c->skipped->spec), "%s", n->args);
		return 0;
	}
	if (!err)
		err = add_site(c->out, pc_off, sema_off, id);
	return err;
}

/* Collects the sites of provider:name from the notes, with their spec ids. */
static int collect(Elf *elf, struct rec_usdt_specs *specs, const char *provider,
		   const char *name, struct sites *out, struct rec_usdt_skipped *skipped)
{
	struct collect_ctx c = { elf, specs, provider, name, 0, out, skipped };
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int err;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (gelf_getshdr(scn, &sh) && (sname = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(sname, ".stapsdt.base") == 0)
			c.base_addr = sh.sh_addr;
	}
	err = rec_usdt__for_each_note(elf, collect_note, &c);
	if (err)
		return err;
	return out->n ? 0 : -ENOENT;
}

int rec_usdt__attach_multi(struct rec_usdt_specs *specs, int prog_fd, const char *path,
			   const char *provider, const char *name, pid_t pid,
			   unsigned int *nsites, struct rec_usdt_skipped *skipped)
{
	struct link_create_uprobe_multi attr = {};
	struct sites s = {};
	Elf *elf;
	int fd, err;

	memset(skipped, 0, sizeof(*skipped));
	err = rec_elf__open(path, &fd, &elf);
	if (err)
		return err;
	err = collect(elf, specs, provider, name, &s, skipped);
	if (err)
		goto out;
	attr.prog_fd = prog_fd;
	attr.attach_type = ATTACH_UPROBE_MULTI;
	attr.path = (uintptr_t)path;
	attr.offsets = (uintptr_t)s.offsets;
	attr.ref_ctr_offsets = (uintptr_t)s.ref_ctrs;
	attr.cookies = (uintptr_t)s.cookies;
	attr.cnt = s.n;
	attr.pid = pid;
	err = syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	if (err < 0)
		err = -errno;
	else
		*nsites = s.n;
out:
	rec_elf__close(fd, elf);
	free(s.offsets);
	free(s.ref_ctrs);
	free(s.cookies);
	return err;
}
