/*
 * strmap.c - a map from strings to indexes, hashed (open addressing, FNV-1a), for the lookups
 * that would otherwise scan a list inside a loop over another: the requested specs of
 * conda-meta/history by name, a lock's records by name, installed records by name or dist.
 * menv keeps its inputs linear (100,000 history specs or lock entries in well under a
 * second); a list lookup inside a loop over an input-sized list is quadratic.
 */
#include <stdlib.h>
#include <string.h>

#include "specs.h"

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603ull; /* FNV-1a, 64 bit */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static size_t slot_of(const struct menv_strmap_slot *slots, size_t cap, const char *key, size_t h)
{
	size_t i = h & (cap - 1);
	while (slots[i].key && (slots[i].hash != h || strcmp(slots[i].key, key)))
		i = (i + 1) & (cap - 1);
	return i;
}

/* The map given room for `want` keys (at most half its slots used). */
static void grow(struct menv_strmap *m, size_t want)
{
	if (2 * want > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		while (cap < 2 * want)
			cap *= 2;
		struct menv_strmap_slot *slots = menv_xcalloc(cap, sizeof(*slots));
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].key) {
				size_t j = m->slots[i].hash & (cap - 1);
				while (slots[j].key)
					j = (j + 1) & (cap - 1);
				slots[j] = m->slots[i];
			}
		free(m->slots);
		m->slots = slots;
		m->cap = cap;
	}
}

/* The slot of key (hash h) once the map has room for one more key. */
static size_t room_for(struct menv_strmap *m, const char *key, size_t h)
{
	grow(m, m->n + 1);
	return slot_of(m->slots, m->cap, key, h);
}

void menv_strmap_borrowing(struct menv_strmap *m, size_t n)
{
	*m = (struct menv_strmap)MENV_STRMAP_INIT;
	m->borrowed = true;
	grow(m, n);
}

bool menv_strmap_put(struct menv_strmap *m, const char *key, size_t val)
{
	size_t h = hash(key), i = room_for(m, key, h);
	bool fresh = !m->slots[i].key;
	if (fresh) {
		m->slots[i].key = m->borrowed ? (char *)key : menv_xstrdup(key);
		m->slots[i].hash = h;
		m->n++;
	}
	m->slots[i].val = val;
	return fresh;
}

bool menv_strmap_add(struct menv_strmap *m, const char *key, size_t val)
{
	size_t h = hash(key), i = room_for(m, key, h);
	if (m->slots[i].key)
		return false;
	m->slots[i] =
	        (struct menv_strmap_slot){m->borrowed ? (char *)key : menv_xstrdup(key), val, h};
	m->n++;
	return true;
}

size_t *menv_strmap_get(const struct menv_strmap *m, const char *key)
{
	if (!m->cap || !key)
		return NULL;
	size_t i = slot_of(m->slots, m->cap, key, hash(key));
	return m->slots[i].key ? &m->slots[i].val : NULL;
}

void menv_strmap_clear(struct menv_strmap *m)
{
	for (size_t i = 0; i < m->cap && !m->borrowed; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->n = m->cap = 0;
	m->borrowed = false;
}
