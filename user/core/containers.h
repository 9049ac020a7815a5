/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The containers every layer shares: a growing array and the one hash map
 * ((u64, u32) keys, u64 values: an index or a pointer), open addressing
 * with linear probing and backward-shift deletion, so there are no
 * tombstones and one allocation per resize rather than per entry.
 */
#ifndef TT_CONTAINERS_H
#define TT_CONTAINERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

/* Grows *p (of *cap elements of size bytes) to hold need: 0 or -ENOMEM. */
int tt_grow(void **p, size_t *cap, size_t need, size_t size);

struct tt_hmap_ent {
	__u64 k1;
	__u32 k2;
	__u32 used; /* 0: an empty slot */
	__u64 val;
};

struct tt_hmap {
	struct tt_hmap_ent *e;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

/* The entry of (k1, k2), or NULL. */
struct tt_hmap_ent *tt_hmap_find(const struct tt_hmap *m, __u64 k1, __u32 k2);
/* The entry of (k1, k2), inserted with val when absent; NULL on -ENOMEM.
 * Entries move when the map grows: the pointer lasts until the next
 * insert or delete. */
struct tt_hmap_ent *tt_hmap_insert(struct tt_hmap *m, __u64 k1, __u32 k2,
				   __u64 val);
/* Inserts or replaces; 0 or -ENOMEM. */
int tt_hmap_put(struct tt_hmap *m, __u64 k1, __u32 k2, __u64 val);
void tt_hmap_del(struct tt_hmap *m, __u64 k1, __u32 k2);
void tt_hmap_free(struct tt_hmap *m);

/* Maps of pointers keyed by one u64 (k2 = 0). */
static inline void *tt_hmap_ptr(const struct tt_hmap *m, __u64 key)
{
	struct tt_hmap_ent *e = tt_hmap_find(m, key, 0);

	return e ? (void *)(uintptr_t)e->val : NULL;
}

static inline int tt_hmap_put_ptr(struct tt_hmap *m, __u64 key, void *p)
{
	return tt_hmap_put(m, key, 0, (uintptr_t)p);
}

#endif /* TT_CONTAINERS_H */
