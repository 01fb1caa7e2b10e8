// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "base/u64map.h"

#define DELETED UINT64_MAX

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return key & (cap - 1);
}

void *rec_u64map__get(const struct rec_u64map *m, uint64_t key)
{
	size_t i;

	if (!m->cap || key == 0 || key == DELETED)
		return NULL;
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (m->keys[i] == 0)
			return NULL;
	}
}

static int grow(struct rec_u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 16, i, j;
	uint64_t *keys;
	void **vals;

	/* Rehash in place size when mostly tombstones. */
	if (m->cap && m->live * 4 < m->cap)
		ncap = m->cap;
	keys = calloc(ncap, sizeof(*keys));
	vals = calloc(ncap, sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (m->keys[i] == 0 || m->keys[i] == DELETED)
			continue;
		for (j = slot_of(m->keys[i], ncap); keys[j]; j = (j + 1) & (ncap - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = ncap;
	m->used = m->live;
	return 0;
}

int rec_u64map__put(struct rec_u64map *m, uint64_t key, void *val)
{
	size_t i, tomb = SIZE_MAX;
	int err;

	if (key == 0 || key == DELETED)
		return -EINVAL;
	if ((m->used + 1) * 4 >= m->cap * 3) {
		err = grow(m);
		if (err)
			return err;
	}
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
		if (m->keys[i] == DELETED && tomb == SIZE_MAX)
			tomb = i;
		if (m->keys[i] == 0)
			break;
	}
	if (tomb != SIZE_MAX) {
		i = tomb;
	} else {
		m->used++;
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->live++;
	return 0;
}

void *rec_u64map__del(struct rec_u64map *m, uint64_t key)
{
	size_t i;
	void *val;

	if (!m->cap || key == 0 || key == DELETED)
		return NULL;
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == 0)
			return NULL;
		if (m->keys[i] == key)
			break;
	}
	val = m->vals[i];
	m->keys[i] = DELETED;
	m->vals[i] = NULL;
	m->live--;
	return val;
}

void rec_u64map__free(struct rec_u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->used = m->live = 0;
}
