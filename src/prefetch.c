// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prefetch.h"

/*
 * A read-ahead thread: the kernel takes as long to produce /proc/kallsyms as we
 * take to parse it (about 26 ms each for 122k lines), so a second thread reads
 * the next chunks while this one parses. A ring of a few chunks, reused, keeps
 * the memory (and its first-touch page faults) small.
 */
#define PREFETCH_CHUNK (64 * 1024)
#define PREFETCH_SLOTS 4

struct prefetch {
	int fd;
	pthread_t thread;
	sem_t free, full;
	struct {
		ssize_t n; /* bytes, 0 at the end, -errno on error */
		char data[PREFETCH_CHUNK];
	} slot[PREFETCH_SLOTS];
	unsigned int next; /* the slot the reader takes next */
	size_t off;	   /* bytes of it already taken */
	bool stopped;	   /* its end or error was taken: nothing more will come */
	bool threaded;	   /* the thread runs; without one, reads are made as asked */
};

/* read(2) through EINTR: bytes, 0 at the end, -errno. */
static ssize_t read_some(int fd, void *buf, size_t size)
{
	ssize_t n;

	do
		n = read(fd, buf, size);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/*
 * A chunk filled to its end, or to the file's: bytes, 0 at the end, -errno.
 * /proc/kallsyms gives a page a read whatever is asked (seq_file), and each
 * chunk handed over is a wakeup of the other thread: 1,300 of them for 6.18's
 * file a page at a time, 84 a chunk at a time.
 */
static ssize_t read_chunk(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n = 0;

	while (len < size && (n = read_some(fd, buf + len, size - len)) > 0)
		len += (size_t)n;
	return len ? (ssize_t)len : n;
}

static void *prefetch__run(void *arg)
{
	struct prefetch *p = arg;
	unsigned int i;
	ssize_t n;

	for (i = 0;; i = (i + 1) % PREFETCH_SLOTS) {
		while (sem_wait(&p->free) && errno == EINTR)
			;
		n = read_chunk(p->fd, p->slot[i].data, PREFETCH_CHUNK);
		p->slot[i].n = n;
		sem_post(&p->full);
		if (n <= 0)
			return NULL;
	}
}

/* Up to size bytes into buf: like read(2), 0 at the end, -errno on error. */
ssize_t prefetch__read(struct prefetch *p, char *buf, size_t size)
{
	unsigned int i = p->next;
	size_t n;

	if (!p->threaded)
		return read_some(p->fd, buf, size);
	if (!p->off && !p->stopped)
		while (sem_wait(&p->full) && errno == EINTR)
			;
	if (p->slot[i].n <= 0) {
		p->stopped = true; /* the slot stays taken: waiting again would never end */
		return p->slot[i].n;
	}
	n = (size_t)p->slot[i].n - p->off;
	n = n < size ? n : size;
	memcpy(buf, p->slot[i].data + p->off, n);
	p->off += n;
	if (p->off == (size_t)p->slot[i].n) {
		p->off = 0;
		p->next = (i + 1) % PREFETCH_SLOTS;
		sem_post(&p->free);
	}
	return (ssize_t)n;
}

/* Lets the reader run to the end of the file so that it can be joined. */
static void prefetch__drain(struct prefetch *p)
{
	char sink[4096];

	while (prefetch__read(p, sink, sizeof(sink)) > 0)
		;
}

int prefetch__open(const char *path, struct prefetch **out)
{
	struct prefetch *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p->fd < 0) {
		int err = -errno;

		free(p);
		return err;
	}
	sem_init(&p->free, 0, PREFETCH_SLOTS);
	sem_init(&p->full, 0, 0);
	/* no thread (no memory for its stack, RLIMIT_NPROC): the reads are made as asked */
	p->threaded = !pthread_create(&p->thread, NULL, prefetch__run, p);
	*out = p;
	return 0;
}

void prefetch__close(struct prefetch *p)
{
	if (!p)
		return;
	if (p->threaded) {
		if (!p->stopped)
			prefetch__drain(p);
		pthread_join(p->thread, NULL);
	}
	sem_destroy(&p->free);
	sem_destroy(&p->full);
	close(p->fd);
	free(p);
}
