// SPDX-License-Identifier: GPL-2.0
/*
 * User frames' names for the -T log, read as root from files that any user
 * may own. A mapped file is never opened by its path: the path is the traced
 * process's to change (a FIFO or a device link at "<path> (deleted)" would
 * block root's open, or trigger the device's). The kernel's own link to the
 * mapping, /proc/PID/map_files/START-END, reaches the mapped file itself, even
 * deleted; and only on a filesystem that cannot make root wait: not FUSE,
 * whose server is whoever mounted it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsyms.h"
#include "grow.h"
#include "monotonic.h"
#include "umaps.h"

struct umap {
	__u64 start, end, offset, ino;
	unsigned int major, minor; /* the file's filesystem, as maps and mountinfo give it */
	char *path;		   /* the mapped file, as maps names it */
	const char *name;	   /* its basename */
	bool fs_seen;		   /* a mount table shows its filesystem */
	bool fuse;		   /* and shows it as FUSE (its server: whoever mounted it) */
	struct elfsyms *syms;	   /* opened at its first frame, closed if least used */
	int syms_err;		   /* why it could not be: not tried again */
	unsigned long used;	   /* when a frame last needed syms: um->frames then */
};

struct umaps {
	int pid; /* 0: a fixture, no process to read files of */
	struct umap *maps;
	size_t nr, cap;
	size_t path_bytes;    /* of every map's path */
	unsigned int open;    /* maps whose syms are open: at most UMAPS_FDS_MAX */
	__u64 bytes;	      /* what libelf holds for them: at most UMAPS_TOTAL_BYTES */
	unsigned long frames; /* frames described, to find the least used file */
};

/*
 * What one process's mappings may cost: a process has up to
 * vm.max_map_count of them (65530), each with a path up to PATH_MAX, which
 * its owner chooses; past these, a frame in a mapping not kept is its
 * address. A large real process has a few thousand file mappings.
 */
#define UMAPS_MAX_MAPS	     16384
#define UMAPS_MAX_PATH_BYTES (4U << 20)

static int add_map(struct umaps *um, const struct umap *parsed, const char *path)
{
	size_t len = strlen(path) + 1;
	const char *base;
	struct umap *m;

	if (um->nr == UMAPS_MAX_MAPS || um->path_bytes + len > UMAPS_MAX_PATH_BYTES)
		return 0;
	if (grow((void **)&um->maps, um->nr, &um->cap, sizeof(*um->maps), 64))
		return -ENOMEM;
	m = &um->maps[um->nr];
	*m = *parsed;
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	base = strrchr(m->path, '/');
	m->name = base ? base + 1 : m->path;
	um->path_bytes += len;
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

/* The kernel's own link to the file mapped at start-end of pid. */
static void map_file_link(char *buf, size_t size, int pid, const struct umap *m)
{
	snprintf(buf, size, "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)m->start,
		 (unsigned long long)m->end);
}

/*
 * The mapped file's real name. /proc/PID/maps writes a newline in it as \012
 * (show_map_vma(): seq_file_path(m, file, "\n")) and escapes nothing else, not
 * even a backslash: a name may hold a real "\012" too. The mapping's link says
 * which (readlink() reads the kernel's name, the file is not looked up);
 * without it (no CAP_SYS_ADMIN), the name decoded.
 */
static const char *real_path(const char *raw, int pid, const struct umap *m, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	if (!strstr(raw, NEWLINE_ESCAPE))
		return raw;
	if (pid > 0) {
		map_file_link(link, sizeof(link), pid, m);
		n = readlink(link, buf, size - 1);
		if (n > 0) {
			buf[n] = '\0';
			return buf;
		}
	}
	decode_newlines(raw, buf);
	return buf;
}

/* "55d0c5a00000-55d0c5a02000 r-xp 00002000 fd:01 123 /usr/bin/x": file mappings only. */
static int parse_line(struct umaps *um, const char *line, char *buf, size_t size)
{
	unsigned long long start, end, offset, ino;
	struct umap m = {};
	char perms[8];
	int path_at = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &offset, &m.major,
		   &m.minor, &ino, &path_at) < 7 ||
	    !path_at || line[path_at] != '/')
		return 0;
	m.start = start;
	m.end = end;
	m.offset = offset;
	m.ino = ino;
	return add_map(um, &m, real_path(line + path_at, um->pid, &m, buf, size));
}

/*
 * The mappings on the filesystems of a mount table, /proc/PID/mountinfo: "36
 * 35 0:53 / /mnt rw - fuse.sshfs ...", the type after " - " (a mount point
 * holds no space: the kernel writes one as \040). FUSE is "fuse", "fuseblk"
 * or "fuse.<name>". A device number is one filesystem, whichever table shows
 * it: a table read in part marks fewer mappings, never a wrong one.
 */
static void mark_mounts(struct umaps *um, const char *path)
{
	char *line = NULL, *type;
	unsigned int major, minor;
	size_t cap = 0, i;
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		type = strstr(line, " - ");
		if (!type || sscanf(line, "%*d %*d %u:%u", &major, &minor) != 2)
			continue;
		for (i = 0; i < um->nr; i++) {
			struct umap *m = &um->maps[i];

			if (m->major == major && m->minor == minor) {
				m->fs_seen = true;
				m->fuse |= !strncmp(type + 3, "fuse", 4);
			}
		}
	}
	free(line);
	fclose(f);
}

/*
 * A file can be read without waiting on a user where a mount table shows its
 * filesystem, and not as FUSE; one no table shows (a mount hidden from both)
 * is not read. The traced process's table, and ours: a container's files may
 * sit on a filesystem only the host mounts, and a process may have left ours
 * (either may fail: the process gone, or no procfs).
 */
static void mark_readable(struct umaps *um)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/%d/mountinfo", um->pid);
	mark_mounts(um, proc);
	mark_mounts(um, "/proc/self/mountinfo");
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
	um->pid = path ? 0 : pid;
	snprintf(proc, sizeof(proc), "/proc/%d/maps", pid);
	f = fopen(path ? path : proc, "re");
	if (!f) {
		err = -errno;
		free(um);
		return err;
	}
	while (!err && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		/* room for a name readlink() gives, where maps wrote \012 as 4 bytes */
		if (buf_cap < cap + PATH_MAX) {
			free(path_buf);
			buf_cap = cap + PATH_MAX;
			path_buf = malloc(buf_cap);
		}
		err = path_buf ? parse_line(um, line, path_buf, buf_cap) : -ENOMEM;
	}
	free(line);
	free(path_buf);
	fclose(f);
	if (err) {
		umaps__free(um);
		return err;
	}
	if (um->pid > 0)
		mark_readable(um);
	*out = um;
	return 0;
}

void umaps__free(struct umaps *um)
{
	size_t i;

	if (!um)
		return;
	for (i = 0; i < um->nr; i++) {
		free(um->maps[i].path);
		elfsyms__free(um->maps[i].syms);
	}
	free(um->maps);
	free(um);
}

/* The regular file with the mapping's inode, and nothing else. */
static bool mapped_file(const struct stat *st, const struct umap *m)
{
	return S_ISREG(st->st_mode) && st->st_ino == m->ino;
}

/*
 * The mapped file itself, open for its symbols: looked at through the link
 * first (stat() opens nothing), so that a mapped device is never opened; then
 * opened without waiting (O_NONBLOCK: a user's lease on the file does not
 * hold the open) and checked again, a mapping may have replaced it.
 * Needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE): -EPERM without.
 */
static int open_mapped(int pid, const struct umap *m, struct elfsyms **syms)
{
	char link[64];
	struct stat st;
	int fd;

	if (pid <= 0 || !m->fs_seen || m->fuse)
		return -EACCES;
	map_file_link(link, sizeof(link), pid, m);
	if (stat(link, &st))
		return -errno;
	if (!mapped_file(&st, m))
		return -EINVAL;
	fd = open(link, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !mapped_file(&st, m)) {
		close(fd);
		return -EINVAL;
	}
	return elfsyms__open(fd, UMAPS_FILE_BYTES, syms);
}

/* Closes the open file other than keep a frame needed least lately: 0, or -ENOENT if none. */
static int close_least_used(struct umaps *um, const struct umap *keep)
{
	struct umap *least = NULL;
	size_t i;

	for (i = 0; i < um->nr; i++)
		if (um->maps[i].syms && &um->maps[i] != keep &&
		    (!least || um->maps[i].used < least->used))
			least = &um->maps[i];
	if (!least)
		return -ENOENT;
	um->bytes -= elfsyms__bytes(least->syms);
	elfsyms__free(least->syms);
	least->syms = NULL;
	um->open--;
	return 0;
}

/* What m's file may hold: its own budget, others closed until the total has that room. */
static __u64 make_room(struct umaps *um, const struct umap *m)
{
	__u64 held = m->syms ? elfsyms__bytes(m->syms) : 0;

	while (um->bytes - held > UMAPS_TOTAL_BYTES - UMAPS_FILE_BYTES && !close_least_used(um, m))
		;
	return UMAPS_FILE_BYTES - held;
}

/*
 * The mapping's symbols, opened at its first frame; NULL if they cannot be.
 * At most UMAPS_FDS_MAX files stay open (the run's fd budget counts them): a
 * stack alternates between a few files, one closed is opened again if needed.
 */
static struct elfsyms *syms_of(struct umaps *um, struct umap *m)
{
	m->used = ++um->frames;
	if (m->syms || m->syms_err)
		return m->syms;
	if (um->open == UMAPS_FDS_MAX)
		close_least_used(um, NULL);
	make_room(um, m);
	m->syms_err = open_mapped(um->pid, m, &m->syms);
	um->open += m->syms != NULL;
	um->bytes += m->syms ? elfsyms__bytes(m->syms) : 0;
	return m->syms;
}

__u64 umaps__bytes(const struct umaps *um)
{
	return um->bytes;
}

void umaps__event_budget(struct umaps_budget *b)
{
	*b = (struct umaps_budget){.work = UMAPS_EVENT_WORK,
				   .deadline_ns = now_ns() + UMAPS_EVENT_NS};
}

/* A frame's share of b: UMAPS_FRAME_WORK and UMAPS_FRAME_NS at most; false if none. */
static bool frame_budget(const struct umaps_budget *b, struct elfsyms_budget *fb)
{
	__u64 now = b->deadline_ns ? now_ns() : 0;

	if (!b->work || (b->deadline_ns && now >= b->deadline_ns))
		return false;
	fb->bytes = 0;
	fb->work = b->work < UMAPS_FRAME_WORK ? b->work : UMAPS_FRAME_WORK;
	fb->deadline_ns = 0;
	if (b->deadline_ns)
		fb->deadline_ns =
		    b->deadline_ns < now + UMAPS_FRAME_NS ? b->deadline_ns : now + UMAPS_FRAME_NS;
	return true;
}

/* The function at file_off of m's file, within b: 0, -E2BIG past it, or -errno. */
static int lookup(struct umaps *um, struct umap *m, __u64 file_off, char *fn, size_t size,
		  __u64 *off, struct umaps_budget *b)
{
	struct elfsyms_budget fb;
	struct elfsyms *syms;
	__u64 held, work;
	int err;

	if (m->syms_err)
		return m->syms_err;
	if (!frame_budget(b, &fb))
		return -E2BIG;
	syms = syms_of(um, m);
	if (!syms)
		return m->syms_err;
	held = elfsyms__bytes(syms);
	fb.bytes = make_room(um, m);
	work = fb.work;
	err = elfsyms__lookup(syms, file_off, fn, size, off, &fb);
	b->work -= work - fb.work;
	um->bytes += elfsyms__bytes(syms) - held;
	return err;
}

const char *umaps__describe(struct umaps *um, __u64 addr, char *buf, size_t size,
			    struct umaps_budget *b)
{
	size_t i;

	for (i = 0; um && i < um->nr; i++) {
		struct umap *m = &um->maps[i];

		if (addr >= m->start && addr < m->end) {
			__u64 file_off = addr - m->start + m->offset, off;
			char fn[128];
			int err = lookup(um, m, file_off, fn, sizeof(fn), &off, b);

			if (!err)
				snprintf(buf, size, "%s+0x%llx (%s)", fn, (unsigned long long)off,
					 m->name);
			else
				snprintf(buf, size, "%s+0x%llx%s", m->name,
					 (unsigned long long)file_off,
					 err == -E2BIG ? " " UMAPS_BUDGET_MARK : "");
			b->over += err == -E2BIG;
			return buf;
		}
	}
	snprintf(buf, size, "0x%llx", (unsigned long long)addr);
	return buf;
}
