// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A growing array and the one hash map (containers.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "containers.h"

int tt_grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 8;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, ncap * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

static __u64 mix64(__u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static size_t home(const struct tt_hmap *m, __u64 k1, __u32 k2)
{
	return mix64(k1 ^ ((__u64)k2 * 0x9e3779b97f4a7c15ULL)) & (m->cap - 1);
}

struct tt_hmap_ent *tt_hmap_find(const struct tt_hmap *m, __u64 k1, __u32 k2)
{
	size_t i;

	if (!m->n)
		return NULL;
	for (i = home(m, k1, k2); m->e[i].used; i = (i + 1) & (m->cap - 1))
		if (m->e[i].k1 == k1 && m->e[i].k2 == k2)
			return &m->e[i];
	return NULL;
}

static int rehash(struct tt_hmap *m, size_t ncap)
{
	struct tt_hmap_ent *e = calloc(ncap, sizeof(*e));
	struct tt_hmap old = *m;
	size_t i, j;

	if (!e)
		return -ENOMEM;
	m->e = e;
	m->cap = ncap;
	for (i = 0; i < old.cap; i++) {
		if (!old.e[i].used)
			continue;
		j = home(m, old.e[i].k1, old.e[i].k2);
		while (e[j].used)
			j = (j + 1) & (ncap - 1);
		e[j] = old.e[i];
	}
	free(old.e);
	return 0;
}

struct tt_hmap_ent *tt_hmap_insert(struct tt_hmap *m, __u64 k1, __u32 k2,
				   __u64 val)
{
	struct tt_hmap_ent *ent = tt_hmap_find(m, k1, k2);
	size_t i;

	if (ent)
		return ent;
	if ((m->n + 1) * 2 > m->cap && rehash(m, m->cap ? m->cap * 2 : 64))
		return NULL;
	i = home(m, k1, k2);
	while (m->e[i].used)
		i = (i + 1) & (m->cap - 1);
	m->e[i] = (struct tt_hmap_ent){
		.k1 = k1, .k2 = k2, .used = 1, .val = val
	};
	m->n++;
	return &m->e[i];
}

int tt_hmap_put(struct tt_hmap *m, __u64 k1, __u32 k2, __u64 val)
{
	struct tt_hmap_ent *ent = tt_hmap_insert(m, k1, k2, val);

	if (!ent)
		return -ENOMEM;
	ent->val = val;
	return 0;
}

void tt_hmap_del(struct tt_hmap *m, __u64 k1, __u32 k2)
{
	struct tt_hmap_ent *ent = tt_hmap_find(m, k1, k2);
	size_t mask = m->cap - 1, i, j, h;

	if (!ent)
		return;
	i = ent - m->e;
	/* shift back the entries of the run that probed past slot i */
	for (j = (i + 1) & mask; m->e[j].used; j = (j + 1) & mask) {
		h = home(m, m->e[j].k1, m->e[j].k2);
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		m->e[i] = m->e[j];
		i = j;
	}
	m->e[i].used = 0;
	m->n--;
}

void tt_hmap_free(struct tt_hmap *m)
{
	free(m->e);
	memset(m, 0, sizeof(*m));
}
