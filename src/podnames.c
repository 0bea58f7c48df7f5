// SPDX-License-Identifier: GPL-2.0
/*
 * The kubelet names each pod's log directory "<namespace>_<pod>_<uid>"
 * (kubelet/kuberuntime BuildPodLogsDirectory); neither a namespace (a DNS
 * label) nor a pod's name (a DNS subdomain) nor a UID holds '_', so the
 * name splits in exactly three.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "grow.h"
#include "podnames.h"

struct podnames {
	uid_t owner;
	__u64 refresh_ns, read_ns;
	bool read_once;
	struct podname *pods; /* by uid */
	size_t nr, cap;
	char root[];
};

struct podnames *podnames__new(const char *root, uid_t owner, __u64 refresh_ns)
{
	struct podnames *pn = calloc(1, sizeof(*pn) + strlen(root) + 1);

	if (!pn)
		return NULL;
	strcpy(pn->root, root);
	pn->owner = owner;
	pn->refresh_ns = refresh_ns;
	return pn;
}

void podnames__free(struct podnames *pn)
{
	if (pn)
		free(pn->pods);
	free(pn);
}

/* s[0..len) of the characters allowed, 1 to max of them. */
static bool name_ok(const char *s, size_t len, size_t max, bool dots)
{
	size_t i;

	if (!len || len > max)
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      (dots && s[i] == '.')))
			return false;
	return true;
}

bool podnames__parse(const char *entry, struct podname *out)
{
	const char *a = strchr(entry, '_'), *b = a ? strchr(a + 1, '_') : NULL;
	size_t ns_len, name_len;

	if (!b || strchr(b + 1, '_'))
		return false;
	ns_len = (size_t)(a - entry);
	name_len = (size_t)(b - a - 1);
	if (!name_ok(entry, ns_len, PODNAMES_NAMESPACE_MAX, false) ||
	    !name_ok(a + 1, name_len, PODNAMES_NAME_MAX, true) ||
	    !container__pod_uid(b + 1, strlen(b + 1), out->uid))
		return false;
	memcpy(out->namespace, entry, ns_len);
	out->namespace[ns_len] = '\0';
	memcpy(out->name, a + 1, name_len);
	out->name[name_len] = '\0';
	return true;
}

/*
 * root opened, if it is a directory (not a symlink: O_NOFOLLOW) owned by
 * owner that no one else may write to: the fd, or -errno (-EPERM: not such).
 */
static int open_root(const char *root, uid_t owner)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), err;
	struct stat st;

	if (fd < 0)
		return errno == ELOOP || errno == ENOTDIR ? -EPERM : -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (st.st_uid != owner || (st.st_mode & (S_IWGRP | S_IWOTH)))
		err = -EPERM;
	else
		return fd;
	close(fd);
	return err;
}

/* Whether the entry is a directory: by its type, or where the file system does not give it, by
 * lstat. */
static bool is_dir(DIR *d, const struct dirent *e)
{
	struct stat st;

	if (e->d_type != DT_UNKNOWN)
		return e->d_type == DT_DIR;
	return !fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
}

static int by_uid(const void *a, const void *b)
{
	return strcmp(((const struct podname *)a)->uid, ((const struct podname *)b)->uid);
}

/* d's pods into pn (sorted by uid): 0, -E2BIG past PODNAMES_SCAN entries, -ENOMEM. */
static int read_pods(struct podnames *pn, DIR *d)
{
	struct podname pod;
	struct dirent *e;
	size_t scanned = 0;
	int err = 0;

	pn->nr = 0;
	while ((e = readdir(d))) {
		if (++scanned > PODNAMES_SCAN) {
			err = -E2BIG;
			break;
		}
		if (pn->nr == PODNAMES_MAX || !is_dir(d, e) || !podnames__parse(e->d_name, &pod))
			continue;
		err = grow((void **)&pn->pods, pn->nr, &pn->cap, sizeof(pod), 64);
		if (err)
			break;
		pn->pods[pn->nr++] = pod;
	}
	if (pn->nr) /* pods is NULL until the first */
		qsort(pn->pods, pn->nr, sizeof(*pn->pods), by_uid);
	return err;
}

int podnames__refresh(struct podnames *pn, __u64 now_ns)
{
	DIR *d;
	int fd, err;

	if (pn->read_once && now_ns - pn->read_ns < pn->refresh_ns)
		return 0;
	pn->read_once = true;
	pn->read_ns = now_ns;
	fd = open_root(pn->root, pn->owner);
	if (fd < 0) {
		pn->nr = 0;
		return fd;
	}
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		pn->nr = 0;
		return err;
	}
	err = read_pods(pn, d);
	closedir(d);
	if (err == -ENOMEM)
		pn->nr = 0;
	return err;
}

const struct podname *podnames__find(const struct podnames *pn, const char *uid)
{
	struct podname key;

	if (!pn || !pn->nr || strlen(uid) > CONTAINER_POD_UID_MAX)
		return NULL;
	strcpy(key.uid, uid);
	return bsearch(&key, pn->pods, pn->nr, sizeof(*pn->pods), by_uid);
}

size_t podnames__count(const struct podnames *pn)
{
	return pn ? pn->nr : 0;
}
