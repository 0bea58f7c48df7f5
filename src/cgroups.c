// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup v2 ids named by their paths: by the kernel where it can
 * (cgroups__name_by(): the cgroup's own levels' names, read from kernfs by a
 * cgroup iterator, so nothing a user makes elsewhere in the tree can hide a
 * name or slow it), else by a walk of the tree. On 64-bit kernels a cgroup's id is its
 * directory's inode number (kernfs), so an id is found by walking the tree and
 * reading inodes: no open_by_handle_at(), which needs CAP_DAC_READ_SEARCH, and
 * cgroupfs directories are readable by all. The tree holds names chosen by
 * users (delegated subtrees): the walk goes from directory fd to directory fd
 * (openat(), never a path from the root again), follows no symlink, opens
 * nothing but directories, and is bounded in depth, cgroups and bytes. The
 * names are kept raw; the emitters escape them.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/stat.h>

#include "cgroups.h"
#include "container.h"
#include "drainstat.h"

/*
 * An id and its path; path NULL: gone (failed_ns 0: the kernel or a whole
 * walk did not find it), or not named at failed_ns; gone with a path: named
 * by an ancestor. id 0 marks a free slot.
 */
struct cg_entry {
	__u64 id;
	char *path;
	__u64 failed_ns;
	bool gone;
};

/* Open addressing over a power of two of slots, at most half of them used. */
struct cg_table {
	struct cg_entry *slots;
	size_t mask, nr, bytes;
};

struct cgroups {
	char *root;
	struct cg_table known;
	unsigned int walks, asked;
	struct cgroups_namer namer; /* name NULL: the tree is walked */
	__u64 retry_ns;
	struct cgroup_level levels[CGROUP_NAME_HEAD + CGROUP_NAME_TAIL]; /* the namer's answer */
};

/* One walk: the table it fills, and whether it saw the whole tree. */
struct cg_walk {
	struct cg_table *t;
	size_t dirs;
	bool cut; /* a bound stopped it somewhere: what it did not find may exist */
};

static size_t slot_of(const struct cg_table *t, __u64 id)
{
	size_t i = (size_t)(id * 0x9e3779b97f4a7c15ULL) & t->mask;

	while (t->slots[i].id && t->slots[i].id != id)
		i = (i + 1) & t->mask;
	return i;
}

static struct cg_entry *table_find(const struct cg_table *t, __u64 id)
{
	struct cg_entry *e;

	if (!t->slots || !id)
		return NULL;
	e = &t->slots[slot_of(t, id)];
	return e->id ? e : NULL;
}

static int table_grow(struct cg_table *t)
{
	struct cg_table bigger = {.mask = t->slots ? 2 * t->mask + 1 : 255};
	size_t i;

	bigger.slots = calloc(bigger.mask + 1, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (i = 0; t->slots && i <= t->mask; i++)
		if (t->slots[i].id)
			bigger.slots[slot_of(&bigger, t->slots[i].id)] = t->slots[i];
	bigger.nr = t->nr;
	bigger.bytes = t->bytes;
	free(t->slots);
	*t = bigger;
	return 0;
}

/*
 * id's entry with path (taken: freed with the table), unless id has one;
 * without a path, failed_ns tells gone (0) from not named. 0 or -ENOMEM.
 */
static int table_add_failed(struct cg_table *t, __u64 id, char *path, __u64 failed_ns)
{
	size_t i;

	if (!id || table_find(t, id)) {
		free(path);
		return 0;
	}
	if ((!t->slots || 2 * (t->nr + 1) > t->mask + 1) && table_grow(t)) {
		free(path);
		return -ENOMEM;
	}
	i = slot_of(t, id);
	t->slots[i] = (struct cg_entry){id, path, path ? 0 : failed_ns, false};
	t->nr++;
	t->bytes += path ? strlen(path) + 1 : 0;
	return 0;
}

static int table_add(struct cg_table *t, __u64 id, char *path)
{
	return table_add_failed(t, id, path, 0);
}

/* id's entry, gone, with its ancestor's name or none (path NULL). 0 or -ENOMEM. */
static int table_add_gone(struct cg_table *t, __u64 id, char *path)
{
	struct cg_entry *e;
	int err = table_add(t, id, path);

	e = err ? NULL : table_find(t, id);
	if (e)
		e->gone = true;
	return err;
}

static const char *table_path(const struct cg_table *t, __u64 id)
{
	const struct cg_entry *e = table_find(t, id);

	return e ? e->path : NULL;
}

static void table_free(struct cg_table *t)
{
	size_t i;

	for (i = 0; t->slots && i <= t->mask; i++)
		free(t->slots[i].path);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

struct cgroups *cgroups__new(const char *root)
{
	struct cgroups *cg = calloc(1, sizeof(*cg));

	if (cg && !(cg->root = strdup(root))) {
		free(cg);
		cg = NULL;
	}
	if (cg)
		cg->retry_ns = 1000000000ULL;
	return cg;
}

void cgroups__name_by(struct cgroups *cg, const struct cgroups_namer *namer)
{
	cg->namer = *namer;
}

void cgroups__set_retry(struct cgroups *cg, __u64 retry_ns)
{
	cg->retry_ns = retry_ns;
}

bool cgroups__gone(const struct cgroups *cg, __u64 id)
{
	const struct cg_entry *e = cg ? table_find(&cg->known, id) : NULL;

	return e && (e->gone || (!e->path && !e->failed_ns));
}

void cgroups__free(struct cgroups *cg)
{
	if (!cg)
		return;
	table_free(&cg->known);
	free(cg->root);
	free(cg);
}

const char *cgroups__root(const struct cgroups *cg)
{
	return cg ? cg->root : NULL;
}

const char *cgroups__path(const struct cgroups *cg, __u64 id)
{
	return cg ? table_path(&cg->known, id) : NULL;
}

unsigned int cgroups__walks(const struct cgroups *cg)
{
	return cg->walks;
}

unsigned int cgroups__asked(const struct cgroups *cg)
{
	return cg->asked;
}

/* Now, for the retries of ids not named; never 0 (0 marks a cgroup gone). */
static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec + 1;
}

/* parent + "/" + name, the root's children without a double slash; NULL: ENOMEM or too long. */
static char *child_path(const char *parent, const char *name)
{
	size_t lp = strcmp(parent, "/") ? strlen(parent) : 0, ln = strlen(name);
	char *p;

	if (lp + 1 + ln >= CGROUPS_PATH_MAX)
		return NULL;
	p = malloc(lp + ln + 2);
	if (p) {
		memcpy(p, parent, lp);
		p[lp] = '/';
		memcpy(p + lp + 1, name, ln + 1);
	}
	return p;
}

static void walk_dir(struct cg_walk *w, DIR *dir, const char *path, int depth);

/* A subdirectory name of dir (at path): named, then walked while the bounds allow. */
static void walk_child(struct cg_walk *w, DIR *dir, const char *path, const char *name, int depth)
{
	int dfd = dirfd(dir), fd;
	struct stat st;
	char *child;
	DIR *sub;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
		return;
	if (w->dirs >= CGROUPS_WALK_MAX || w->t->bytes >= CGROUPS_PATHS_MAX) {
		w->cut = true;
		return;
	}
	if (table_find(w->t, (__u64)st.st_ino)) /* seen: a bind mount, or a loop */
		return;
	child = child_path(path, name);
	if (!child || table_add(w->t, (__u64)st.st_ino, child)) {
		w->cut = true;
		return;
	}
	w->dirs++;
	if (depth >= CGROUPS_WALK_DEPTH) {
		w->cut = true;
		return;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	sub = fd >= 0 ? fdopendir(fd) : NULL;
	if (!sub) {
		if (fd >= 0)
			close(fd);
		/* gone meanwhile, or out of fds: the rest may hold what was asked */
		w->cut |= errno != ENOENT;
		return;
	}
	walk_dir(w, sub, child, depth + 1); /* the table owns child, in place as it grows */
	closedir(sub);
}

/* Every subdirectory of dir, whose path is path, depth levels under the root. */
static void walk_dir(struct cg_walk *w, DIR *dir, const char *path, int depth)
{
	struct dirent *de;

	if (!path)
		return;
	while ((de = readdir(dir))) {
		/* cgroupfs gives d_type: its many files are passed over without a stat */
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		walk_child(w, dir, path, de->d_name, depth);
	}
}

/* The root named "/" and its tree walked into t. 0, or -errno of the root's open. */
static int walk(const char *root, struct cg_walk *w)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), err;
	struct stat st;
	char *slash;
	DIR *dir;

	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir || fstat(fd, &st)) {
		err = -errno;
		if (dir)
			closedir(dir);
		else
			close(fd);
		return err;
	}
	slash = strdup("/");
	if (!slash || table_add(w->t, (__u64)st.st_ino, slash))
		w->cut = true;
	walk_dir(w, dir, table_path(w->t, (__u64)st.st_ino), 1);
	closedir(dir);
	return 0;
}

/* Whether id is to be named: not in t, or not named for retry_ns. */
static bool unknown(const struct cg_table *t, __u64 id, __u64 now, __u64 retry_ns)
{
	const struct cg_entry *e = table_find(t, id);

	return id && (!e || (e->failed_ns && now - e->failed_ns >= retry_ns));
}

/* Whether one of ids is to be named. */
static bool any_unknown(const struct cgroups *cg, const __u64 *ids, size_t n, __u64 now)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (unknown(&cg->known, ids[i], now, cg->retry_ns))
			return true;
	return false;
}

/* id's path, known before, into t. 0 or -ENOMEM. */
static int keep_name(struct cg_table *t, __u64 id, const char *path)
{
	char *copy = strdup(path);

	return copy ? table_add(t, id, copy) : -ENOMEM;
}

/* e, named before, into t, gone as it was. 0 or -ENOMEM. */
static int keep_entry(struct cg_table *t, const struct cg_entry *e)
{
	char *copy = strdup(e->path);

	if (!copy)
		return -ENOMEM;
	return e->gone ? table_add_gone(t, e->id, copy) : table_add(t, e->id, copy);
}

/*
 * The path of the levels the kernel gave, top first: "/" for the root, the
 * levels left out between head and tail marked. NULL: ENOMEM.
 */
static char *join_levels(const struct cgroup_level *levels, int nr)
{
	size_t size = 2, at = 0, len;
	char *path;
	int i;

	for (i = 0; i < nr; i++)
		size += 1 + sizeof(CGROUPS_ELIDED) + levels[i].len;
	path = malloc(size);
	if (!path)
		return NULL;
	for (i = 0; i < nr; i++) {
		if (levels[i].level != (i ? levels[i - 1].level + 1 : 1)) {
			memcpy(path + at, CGROUPS_ELIDED, sizeof(CGROUPS_ELIDED) - 1);
			at += sizeof(CGROUPS_ELIDED) - 1;
		}
		len = levels[i].len < CGROUP_NAME_LEN ? levels[i].len : CGROUP_NAME_LEN - 1;
		path[at++] = '/';
		memcpy(path + at, levels[i].name, len);
		at += len;
	}
	if (!at)
		path[at++] = '/';
	path[at] = '\0';
	return path;
}

/*
 * id, gone, named by its nearest ancestor the kernel still has, where it kept
 * their parents: that ancestor's path, then "//cgroup:ID" (an empty
 * component: no cgroup's name). NULL: none, or ENOMEM.
 */
static char *name_gone(struct cgroups *cg, __u64 id)
{
	int nr = -ENOENT, hop, max = (int)(sizeof(cg->levels) / sizeof(cg->levels[0]));
	__u64 up = id;
	char *ancestor, *path;

	for (hop = 0; nr == -ENOENT && hop < CGROUPS_GONE_HOPS; hop++) {
		if (!cg->namer.parent || cg->namer.parent(cg->namer.arg, up, &up))
			return NULL;
		cg->asked++;
		nr = cg->namer.name(cg->namer.arg, up, cg->levels, max);
	}
	ancestor = nr >= 0 ? join_levels(cg->levels, nr > max ? max : nr) : NULL;
	if (!ancestor)
		return NULL;
	if (asprintf(&path, "%s//cgroup:%llu", strcmp(ancestor, "/") ? ancestor : "",
		     (unsigned long long)id) < 0)
		path = NULL;
	free(ancestor);
	return path;
}

/* id named by the kernel into t: its path, its ancestor's, gone, or not named at now. */
static int name_by_kernel(struct cgroups *cg, struct cg_table *t, __u64 id, __u64 now)
{
	int nr, max = (int)(sizeof(cg->levels) / sizeof(cg->levels[0]));
	char *path;

	cg->asked++;
	nr = cg->namer.name(cg->namer.arg, id, cg->levels, max);
	if (nr == -ENOENT)
		return table_add_gone(t, id, name_gone(cg, id));
	if (nr < 0)
		return table_add_failed(t, id, NULL, now);
	path = join_levels(cg->levels, nr > max ? max : nr);
	return path ? table_add(t, id, path) : -ENOMEM;
}

/* ids named by the kernel where not known: no walk, each its own levels' cost. */
static int learn_from_kernel(struct cgroups *cg, const __u64 *ids, size_t n, __u64 now)
{
	struct cg_table fresh = {};
	struct cg_entry *e;
	size_t i;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		if (!ids[i] || table_find(&fresh, ids[i]))
			continue;
		e = table_find(&cg->known, ids[i]);
		if (e && e->path)
			err = keep_entry(&fresh, e);
		else if (e && !unknown(&cg->known, ids[i], now, cg->retry_ns))
			err = table_add_failed(&fresh, ids[i], NULL, e->failed_ns);
		else
			err = name_by_kernel(cg, &fresh, ids[i], now);
	}
	table_free(&cg->known);
	cg->known = fresh;
	return err;
}

/*
 * ids the walk did not find into fresh: a name known before is kept; an id
 * the whole tree lacks is gone; one a cut walk did not reach is not named at
 * now, and not walked for again for retry_ns.
 */
static int walk_missed(struct cgroups *cg, const struct cg_walk *w, const __u64 *ids, size_t n,
		       __u64 now)
{
	struct cg_entry *e;
	size_t i;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		if (!ids[i] || table_find(w->t, ids[i]))
			continue;
		e = table_find(&cg->known, ids[i]);
		if (e && e->path)
			err = keep_name(w->t, ids[i], e->path);
		else if ((e && !e->failed_ns) || !w->cut)
			err = table_add(w->t, ids[i], NULL);
		else
			err = table_add_failed(w->t, ids[i], NULL, now);
	}
	return err;
}

int cgroups__learn(struct cgroups *cg, const __u64 *ids, size_t n)
{
	struct cg_table fresh = {};
	struct cg_walk w = {.t = &fresh};
	__u64 now = now_ns();
	int err;

	if (!any_unknown(cg, ids, n, now))
		return 0;
	if (cg->namer.name)
		return learn_from_kernel(cg, ids, n, now);
	cg->walks++;
	err = walk(cg->root, &w);
	if (err) {
		table_free(&fresh);
		return err;
	}
	err = walk_missed(cg, &w, ids, n, now);
	table_free(&cg->known);
	cg->known = fresh;
	return err;
}

/* A mountinfo field unescaped in place: the kernel writes space, tab, newline and \\ as \ooo. */
static void unescape_octal(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/*
 * A mountinfo line's mount point if its type is cgroup2: "36 25 0:31 / MOUNT
 * OPTIONS [OPTIONAL...] - cgroup2 SOURCE SUPEROPTIONS". NULL otherwise.
 */
static char *cgroup2_mount_of(char *line)
{
	char *save = NULL, *field, *mount = NULL;
	int i;

	for (i = 0, field = strtok_r(line, " \n", &save); field;
	     i++, field = strtok_r(NULL, " \n", &save)) {
		if (i == 4)
			mount = field;
		if (i > 5 && !strcmp(field, "-")) {
			field = strtok_r(NULL, " \n", &save);
			return field && !strcmp(field, "cgroup2") ? mount : NULL;
		}
	}
	return NULL;
}

int cgroups__find_mount(const char *mountinfo, char *path, size_t size)
{
	FILE *f = fopen(mountinfo, "re");
	char *line = NULL, *mount;
	size_t cap = 0;
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err == -ENOENT && getline(&line, &cap, f) > 0) {
		mount = cgroup2_mount_of(line);
		if (!mount)
			continue;
		unescape_octal(mount);
		err = strlen(mount) < size ? 0 : -ENAMETOOLONG;
		if (!err)
			strcpy(path, mount);
	}
	free(line);
	fclose(f);
	return err;
}

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

/* Where text may be cut at or after i: not inside a \xNN escape. */
static size_t cut_point(const char *text, size_t i)
{
	size_t k, len = strlen(text);

	for (k = 1; k <= 3 && k <= i; k++)
		if (text[i - k] == '\\')
			return i - k + 4 < len ? i - k + 4 : len;
	return i;
}

/* text[from..from + n), not cut inside a \xNN escape: at most n bytes; returns how many. */
static size_t whole_escapes(const char *text, size_t from, size_t n)
{
	size_t i, end = from + n;

	for (i = from; i < end;)
		if (text[i] == '\\' && i + 4 > end)
			return i - from;
		else
			i += text[i] == '\\' ? 4 : 1;
	return n;
}

/*
 * The last component alone is wider than room: its head and its tail about
 * "…" ("cri-containerd-01234…def.scope": the runtime, the id's start, the
 * kind), after "…/".
 */
static const char *cut_component(const char *text, size_t last, int room, char *buf, size_t size,
				 int *columns)
{
	size_t len = strlen(text), tail_want = (size_t)(room - 3) / 3, head, tail;

	head = whole_escapes(text, last, (size_t)room - 3 - tail_want);
	tail = len - cut_point(text, len - tail_want);
	snprintf(buf, size, ELLIPSIS "/%.*s" ELLIPSIS "%s", (int)head, text + last,
		 text + len - tail);
	*columns = 3 + (int)(head + tail);
	return buf;
}

const char *cgroups__shorten(const char *text, int width, char *buf, size_t size, int *columns)
{
	size_t len = strlen(text), room = width > 8 ? (size_t)width : 8, from, i;
	const char *last = strrchr(text, '/');

	if (len <= room) {
		snprintf(buf, size, "%s", text);
		*columns = (int)len;
		return buf;
	}
	if (last && (size_t)(text + len - last) + 1 > room) /* "…" and "/last" do not fit */
		return cut_component(text, (size_t)(last + 1 - text), (int)room, buf, size,
				     columns);
	/* the first '/' after which the rest fits beside "…" */
	from = cut_point(text, len - (room - 1));
	for (i = from; i < len && text[i] != '/'; i++)
		;
	if (i < len - 1)
		from = i;
	snprintf(buf, size, ELLIPSIS "%s", text + from);
	*columns = 1 + (int)(len - from);
	return buf;
}

size_t cgroups__unit(const char *path)
{
	static const char service[] = ".service";
	const size_t lsv = sizeof(service) - 1;
	const char *c = path, *end, *last = path;
	size_t len;

	/* each component: from c to end */
	for (; *c; c = *end ? end + 1 : end) {
		while (*c == '/')
			c++;
		end = strchrnul(c, '/');
		len = (size_t)(end - c);
		if (len > lsv && !memcmp(end - lsv, service, lsv))
			return (size_t)(end - path);
		if (len)
			last = c;
	}
	if (last > path && container__is_own(last, strlen(last)))
		return last - path > 1 ? (size_t)(last - path - 1)
				       : 1; /* "/docker-<id>.scope": "/" */
	return strlen(path);
}
