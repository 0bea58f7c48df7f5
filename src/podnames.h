/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pods named by their UIDs, from the kubelet's log directories,
 * /var/log/pods/<namespace>_<pod>_<uid>/: the names a node has without asking
 * the API server. Read as root next to untrusted users, so: the directory
 * must be owned by its expected owner (root), writable by no one else, and
 * not a symlink; only its entries' names are read (no path under it is
 * opened), at most PODNAMES_SCAN of them, at most PODNAMES_MAX kept; and it is
 * read again at most once per refresh interval.
 */
#ifndef PODNAMES_H
#define PODNAMES_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "container.h"

/* The kubelet's directory of pod logs */
#define PODNAMES_ROOT "/var/log/pods"
/* Entries read at most (a directory a bug or an attack filled stays cheap) */
#define PODNAMES_SCAN 65536
/* The -T log's pods are read again at most this often (the reports': once an interval) */
#define PODNAMES_REFRESH_NS 1000000000ULL
/* Pods kept at most: far over the kubelet's --max-pods (110 by default) */
#define PODNAMES_MAX 4096
/* A namespace is a DNS label (63), a pod's name a DNS subdomain (253) */
#define PODNAMES_NAMESPACE_MAX 63
#define PODNAMES_NAME_MAX      253

struct podname {
	char uid[CONTAINER_POD_UID_MAX + 1];
	char namespace[PODNAMES_NAMESPACE_MAX + 1];
	char name[PODNAMES_NAME_MAX + 1];
};

struct podnames;

/*
 * A cache of root's entries (PODNAMES_ROOT; a test's directory), which must
 * be owned by owner (0), read again at most every refresh_ns. NULL: ENOMEM.
 */
struct podnames *podnames__new(const char *root, uid_t owner, __u64 refresh_ns);
void podnames__free(struct podnames *pn);

/*
 * Reads root again if refresh_ns have passed since the last read (or none
 * was made). 0 when read or not due; -ENOENT (no such directory: not a
 * Kubernetes node), -EPERM (a symlink, another owner, writable by others),
 * -E2BIG (more than PODNAMES_SCAN entries: those past it unread), or -errno
 * of the open. On an error the pods read before are forgotten, except for
 * -E2BIG, which keeps what it read.
 */
int podnames__refresh(struct podnames *pn, __u64 now_ns);

/* The pod of uid (dashes, as container__parse() gives it), or NULL. */
const struct podname *podnames__find(const struct podnames *pn, const char *uid);

/* Pods known now. */
size_t podnames__count(const struct podnames *pn);

/*
 * Reads one entry's name, "<namespace>_<pod>_<uid>", into *out: false unless
 * it has the three parts, each of the characters and length Kubernetes allows.
 */
bool podnames__parse(const char *entry, struct podname *out);

#endif /* PODNAMES_H */
