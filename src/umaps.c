// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfsyms.h"
#include "umaps.h"

struct umap {
	__u64 start, end, offset;
	char *path;	  /* the mapped file */
	const char *name; /* its basename */
};

struct umaps {
	struct umap *maps;
	size_t nr, cap;
};

static int add_map(struct umaps *um, __u64 start, __u64 end, __u64 offset, const char *path)
{
	const char *base = strrchr(path, '/');
	struct umap *m;

	if (um->nr == um->cap) {
		size_t cap = um->cap ? um->cap * 2 : 64;
		struct umap *maps = realloc(um->maps, cap * sizeof(*maps));

		if (!maps)
			return -ENOMEM;
		um->maps = maps;
		um->cap = cap;
	}
	m = &um->maps[um->nr];
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	base = strrchr(m->path, '/');
	m->name = base ? base + 1 : m->path;
	m->start = start;
	m->end = end;
	m->offset = offset;
	um->nr++;
	return 0;
}

/* "55d0c5a00000-55d0c5a02000 r-xp 00002000 fd:01 123 /usr/bin/x": file mappings only. */
static int parse_line(struct umaps *um, const char *line)
{
	unsigned long long start, end, offset;
	char perms[8];
	int path_at = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &path_at) <
		4 ||
	    !path_at || line[path_at] != '/')
		return 0;
	return add_map(um, start, end, offset, line + path_at);
}

int umaps__load(int pid, const char *path, struct umaps **out)
{
	struct umaps *um = calloc(1, sizeof(*um));
	char proc[64], line[4096];
	FILE *f;
	int err = 0;

	if (!um)
		return -ENOMEM;
	snprintf(proc, sizeof(proc), "/proc/%d/maps", pid);
	f = fopen(path ? path : proc, "r");
	if (!f) {
		err = -errno;
		free(um);
		return err;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		err = parse_line(um, line);
	}
	fclose(f);
	if (err) {
		umaps__free(um);
		return err;
	}
	*out = um;
	return 0;
}

void umaps__free(struct umaps *um)
{
	size_t i;

	if (!um)
		return;
	for (i = 0; i < um->nr; i++)
		free(um->maps[i].path);
	free(um->maps);
	free(um);
}

const char *umaps__describe(const struct umaps *um, __u64 addr, char *buf, size_t size)
{
	size_t i;

	for (i = 0; um && i < um->nr; i++) {
		const struct umap *m = &um->maps[i];

		if (addr >= m->start && addr < m->end) {
			__u64 file_off = addr - m->start + m->offset, off;
			char fn[128];

			if (!elfsyms__lookup(m->path, file_off, fn, sizeof(fn), &off))
				snprintf(buf, size, "%s+0x%llx (%s)", fn, (unsigned long long)off,
					 m->name);
			else
				snprintf(buf, size, "%s+0x%llx", m->name,
					 (unsigned long long)file_off);
			return buf;
		}
	}
	snprintf(buf, size, "0x%llx", (unsigned long long)addr);
	return buf;
}
