// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define CHUNK_SIZE (64 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	size_t size, used;
	_Alignas(8) unsigned char data[];
};

static struct arena_chunk *chunk_new(size_t size)
{
	struct arena_chunk *c;

	if (size < CHUNK_SIZE)
		size = CHUNK_SIZE;
	c = malloc(sizeof(*c) + size);
	if (!c)
		return NULL;
	c->next = NULL;
	c->size = size;
	c->used = 0;
	return c;
}

/* The chunk to take size from: the current, the next kept one (emptied), or a new one. */
static struct arena_chunk *chunk_with_room(struct arena *a, size_t size)
{
	struct arena_chunk *c = a->cur, *n;

	if (!c)
		return a->first = chunk_new(size);
	while (c->size - c->used < size && c->next) {
		c = c->next;
		c->used = 0;
	}
	if (c->size - c->used >= size)
		return c;
	n = chunk_new(size);
	if (!n)
		return NULL;
	n->next = c->next;
	c->next = n;
	return n;
}

void *arena__alloc_uninit(struct arena *a, size_t size)
{
	struct arena_chunk *c;
	void *p;

	size = (size + 7) & ~(size_t)7;
	c = chunk_with_room(a, size);
	if (!c)
		return NULL;
	a->cur = c;
	p = c->data + c->used;
	c->used += size;
	return p;
}

void *arena__alloc(struct arena *a, size_t size)
{
	void *p = arena__alloc_uninit(a, size);

	return p ? memset(p, 0, size) : NULL;
}

void arena__reset(struct arena *a)
{
	a->cur = a->first;
	if (a->cur)
		a->cur->used = 0;
}

void arena__free(struct arena *a)
{
	struct arena_chunk *c = a->first, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	a->first = a->cur = NULL;
}
