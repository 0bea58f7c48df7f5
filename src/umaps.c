// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	const char *base;
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

/* The kernel's escape of a newline in a mapped file's name. */
#define NEWLINE_ESCAPE "\\012"

/* raw with each NEWLINE_ESCAPE as '\n', into out (as long as raw, at least). */
static void decode_newlines(const char *raw, char *out)
{
	size_t n = strlen(NEWLINE_ESCAPE);

	while (*raw) {
		if (!strncmp(raw, NEWLINE_ESCAPE, n)) {
			*out++ = '\n';
			raw += n;
		} else {
			*out++ = *raw++;
		}
	}
	*out = '\0';
}

static bool is_inode(const char *path, __u64 ino)
{
	struct stat st;

	return !stat(path, &st) && st.st_ino == ino;
}

/*
 * The mapped file's real name. /proc/PID/maps writes a newline in it as \012
 * (show_map_vma(): seq_file_path(m, file, "\n")) and escapes nothing else, not
 * even a backslash: a name may hold a real "\012" too. Decoded, unless only
 * the name as written is the mapping's inode.
 */
static const char *real_path(const char *raw, __u64 ino, char *buf)
{
	if (!strstr(raw, NEWLINE_ESCAPE))
		return raw;
	decode_newlines(raw, buf);
	return !is_inode(buf, ino) && is_inode(raw, ino) ? raw : buf;
}

/* "55d0c5a00000-55d0c5a02000 r-xp 00002000 fd:01 123 /usr/bin/x": file mappings only. */
static int parse_line(struct umaps *um, const char *line, char *buf)
{
	unsigned long long start, end, offset, ino;
	char perms[8];
	int path_at = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %*s %llu %n", &start, &end, perms, &offset, &ino,
		   &path_at) < 5 ||
	    !path_at || line[path_at] != '/')
		return 0;
	return add_map(um, start, end, offset, real_path(line + path_at, ino, buf));
}

/* Lines and their decoded paths in the heap: a small stack limit is no limit on a path. */
int umaps__load(int pid, const char *path, struct umaps **out)
{
	struct umaps *um = calloc(1, sizeof(*um));
	char proc[64], *line = NULL, *path_buf = NULL;
	size_t cap = 0, buf_cap = 0;
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
	while (!err && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (buf_cap < cap) {
			free(path_buf);
			buf_cap = cap;
			path_buf = malloc(buf_cap);
		}
		err = path_buf ? parse_line(um, line, path_buf) : -ENOMEM;
	}
	free(line);
	free(path_buf);
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
