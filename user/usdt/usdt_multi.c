// SPDX-License-Identifier: MIT
/* The libbpf 1.1 workaround: USDT probes attached with uprobe_multi (usdt_multi.h). */
#include <errno.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "usdt/usdt_multi.h"
#include "target/elf.h"
#include "usdt/usdt.h"

/* BPF_TRACE_UPROBE_MULTI of enum bpf_attach_type (Linux 6.6), newer than these headers. */
#define ATTACH_UPROBE_MULTI 48

/* libbpf's maps of usdt.bpf.h. */
#define USDT_SPECS_MAP "__bpf_usdt_specs"
#define USDT_IP_MAP "__bpf_usdt_ip_to_spec_id"

/* Mirrors of usdt.bpf.h's private structs, checked below. */
#define BPF_USDT_MAX_ARG_CNT 12

enum usdt_arg_type {
	BPF_USDT_ARG_CONST,
	BPF_USDT_ARG_REG,
	BPF_USDT_ARG_REG_DEREF,
};

struct arg_spec {
	uint64_t val_off;
	uint32_t arg_type; /* enum usdt_arg_type */
	int16_t reg_off;
	bool arg_signed;
	char arg_bitshift;
};

struct usdt_spec {
	struct arg_spec args[BPF_USDT_MAX_ARG_CNT];
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

int rec_usdt_multi__prepare(struct bpf_object *obj)
{
	struct bpf_map *ip_map = bpf_object__find_map_by_name(obj, USDT_IP_MAP);
	struct bpf_program *prog;
	int err;

	if (!ip_map)
		return -ENOENT;
	/* Sites find their spec by cookie; the IP-to-spec map is never used. */
	err = bpf_map__set_max_entries(ip_map, 1);
	if (err)
		return err;
	bpf_object__for_each_program(prog, obj)
		if (bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE)
			bpf_program__set_expected_attach_type(prog, ATTACH_UPROBE_MULTI);
	return 0;
}

int rec_usdt_multi__init(struct rec_usdt_multi *um, struct bpf_object *obj)
{
	struct bpf_map *specs = bpf_object__find_map_by_name(obj, USDT_SPECS_MAP);

	memset(um, 0, sizeof(*um));
	um->map_fd = -1;
	if (!specs)
		return -ENOENT;
	um->map_fd = bpf_map__fd(specs);
	um->max = bpf_map__max_entries(specs);
	return 0;
}

void rec_usdt_multi__fini(struct rec_usdt_multi *um)
{
	free(um->args);
	um->args = NULL;
	um->n = 0;
}

/* The spec of args in usdt.bpf.h's layout. Returns 0 or -EINVAL. */
static int parse_spec(const char *args, struct usdt_spec *spec)
{
	struct rec_usdt_arg v[BPF_USDT_MAX_ARG_CNT];
	int n = rec_usdt__parse_args(args, v, BPF_USDT_MAX_ARG_CNT);

	memset(spec, 0, sizeof(*spec));
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct arg_spec *a = &spec->args[i];

		a->arg_type = v[i].kind == REC_USDT_ARG_CONST ? BPF_USDT_ARG_CONST
			      : v[i].kind == REC_USDT_ARG_REG ? BPF_USDT_ARG_REG
							      : BPF_USDT_ARG_REG_DEREF;
		a->val_off = (uint64_t)v[i].val;
		a->reg_off = v[i].reg_off;
		a->arg_signed = v[i].is_signed;
		/* usdt.bpf.h shifts the value left, then right, by this many bits. */
		a->arg_bitshift = (char)(64 - v[i].size * 8);
	}
	spec->arg_cnt = (int16_t)n;
	return 0;
}

/* The spec id for args: shared with every earlier site that has the same string. */
static int spec_id(struct rec_usdt_multi *um, const char *args, uint64_t *id)
{
	struct usdt_spec spec;
	uint32_t key;
	int err;

	for (uint32_t i = 0; i < um->n; i++) {
		if (strcmp(um->args[i], args) == 0) {
			*id = i;
			return 0;
		}
	}
	/* Unsupported (-EINVAL) before full (-E2BIG): the caller skips only the former. */
	if (strlen(args) >= sizeof(um->args[0]))
		return -EINVAL;
	err = parse_spec(args, &spec);
	if (err)
		return err;
	if (um->n == um->max)
		return -E2BIG;
	if (!um->args) {
		um->args = calloc(um->max, sizeof(um->args[0]));
		if (!um->args)
			return -ENOMEM;
	}
	key = um->n;
	if (syscall(SYS_bpf, BPF_MAP_UPDATE_ELEM,
		    &(union bpf_attr){ .map_fd = um->map_fd,
				       .key = (uintptr_t)&key,
				       .value = (uintptr_t)&spec },
		    sizeof(union bpf_attr)))
		return -errno;
	strcpy(um->args[key], args);
	*id = um->n++;
	return 0;
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
	struct rec_usdt_multi *um;
	struct sites *out;
	struct rec_usdt_multi_skipped *skipped;
};

static int collect_site(const struct rec_usdt_site *site, void *arg)
{
	struct collect_ctx *c = arg;
	uint64_t id = 0;
	int err;

	err = spec_id(c->um, site->args, &id);
	/* One site we cannot read the arguments of costs that site, not the file. */
	if (err == -EINVAL) {
		if (!c->skipped->n++)
			snprintf(c->skipped->spec, sizeof(c->skipped->spec), "%s", site->args);
		return 0;
	}
	return err ? err : add_site(c->out, site->off, site->sema_off, id);
}

int rec_usdt_multi__attach(struct rec_usdt_multi *um, int prog_fd, const char *path,
			   const char *provider, const char *name, pid_t pid, unsigned int *nsites,
			   struct rec_usdt_multi_skipped *skipped)
{
	struct link_create_uprobe_multi attr = {};
	struct sites s = {};
	struct collect_ctx c = { um, &s, skipped };
	Elf *elf;
	int fd, err;

	memset(skipped, 0, sizeof(*skipped));
	err = rec_elf__open(path, &fd, &elf);
	if (err)
		return err;
	err = rec_usdt__for_each_site(elf, provider, name, collect_site, &c);
	if (!err && !s.n)
		err = -ENOENT;
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
