/* SPDX-License-Identifier: MIT */
/* The BPF ring buffer's consumer, batched (see ring.h). */
#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kernel/ring.h"

struct rec_ring {
	int map_fd;
	rec_ring_fn fn;
	void *ctx;
	size_t page;
	size_t size;		     /* data bytes, a power of two */
	unsigned long *consumer_pos; /* our page, the one we may write */
	unsigned long *producer_pos; /* the kernel's page, read-only */
	unsigned char *data;	     /* size bytes, mapped twice back to back */
	int busy;		     /* inside rec_ring__consume() */
	int mapped;		     /* the pages above are our mmaps of map_fd */
};

/* A consumer of the ring at these addresses; the callers map or own them. */
static struct rec_ring *ring_new(unsigned long *consumer_pos, unsigned long *producer_pos,
				 unsigned char *data, size_t size, rec_ring_fn fn, void *ctx)
{
	struct rec_ring *r;

	if (!size || (size & (size - 1))) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->map_fd = -1;
	r->fn = fn;
	r->ctx = ctx;
	r->size = size;
	r->consumer_pos = consumer_pos;
	r->producer_pos = producer_pos;
	r->data = data;
	return r;
}

struct rec_ring *rec_ring__new_mem(unsigned long *consumer_pos, unsigned long *producer_pos,
				   unsigned char *data, size_t size, rec_ring_fn fn, void *ctx)
{
	return ring_new(consumer_pos, producer_pos, data, size, fn, ctx);
}

struct rec_ring *rec_ring__new(int map_fd, rec_ring_fn fn, void *ctx)
{
	struct bpf_map_info info = { 0 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size;
	__u32 len = sizeof(info);
	void *cons, *prod;
	struct rec_ring *r;
	int err;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return NULL;
	if (info.type != BPF_MAP_TYPE_RINGBUF) {
		errno = EINVAL;
		return NULL;
	}
	size = info.max_entries;
	cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (cons == MAP_FAILED)
		return NULL;
	/* The producer page, then the data twice: a record that wraps reads contiguously. */
	prod = mmap(NULL, page + 2 * size, PROT_READ, MAP_SHARED, map_fd, (off_t)page);
	if (prod == MAP_FAILED) {
		err = errno;
		munmap(cons, page);
		errno = err;
		return NULL;
	}
	r = ring_new(cons, prod, (unsigned char *)prod + page, size, fn, ctx);
	if (!r) {
		err = errno;
		munmap(prod, page + 2 * size);
		munmap(cons, page);
		errno = err;
		return NULL;
	}
	r->map_fd = map_fd;
	r->page = page;
	r->mapped = 1;
	return r;
}

void rec_ring__free(struct rec_ring *r)
{
	if (!r)
		return;
	if (r->mapped) {
		munmap(r->producer_pos, r->page + 2 * r->size);
		munmap(r->consumer_pos, r->page);
	}
	free(r);
}

int rec_ring__fd(const struct rec_ring *r)
{
	return r->map_fd;
}

int64_t rec_ring__consume(struct rec_ring *r)
{
	const unsigned long publish_every = r->size / 8;
	unsigned long cons = __atomic_load_n(r->consumer_pos, __ATOMIC_RELAXED);
	unsigned long published = cons, start = cons;
	unsigned long prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
	int64_t n = 0;
	int err = 0;

	/* From inside fn: the records in hand are not consumed yet, they would come twice. */
	if (r->busy)
		return -EBUSY;
	r->busy = 1;
	for (;;) {
		__u32 *hdr, len;

		/* At most a ring's worth per call, so producers that never pause can't keep us here. */
		if (cons - start >= r->size)
			break;
		if (cons >= prod) {
			/* Caught up: look once more before ending the batch. */
			prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
			if (cons >= prod)
				break;
		}
		hdr = (__u32 *)(r->data + (cons & (r->size - 1)));
		len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		/* Reserved but not yet submitted: it and everything after it wait. */
		if (len & BPF_RINGBUF_BUSY_BIT)
			break;
		cons += (BPF_RINGBUF_HDR_SZ + (len & ~BPF_RINGBUF_DISCARD_BIT) + 7) & ~7UL;
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			n++;
			err = r->fn(r->ctx, hdr + BPF_RINGBUF_HDR_SZ / sizeof(*hdr),
				    len & ~BPF_RINGBUF_DISCARD_BIT);
		}
		if (err || cons - published >= publish_every) {
			__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
			published = cons;
		}
		if (err)
			break;
	}
	if (cons != published)
		__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
	r->busy = 0;
	return err < 0 ? err : n;
}
