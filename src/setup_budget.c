// SPDX-License-Identifier: GPL-2.0
/*
 * The run's budget: the fds and memory it needs, counted before the load and
 * checked against what this process may have (ulimit -n, ulimit -v, a memory
 * cgroup), the heap for libbpf's BTF parse faulted in, and the one message
 * that says which ran short and by how much.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "export.h"
#include "setup_int.h"
#include "umaps.h"

/*
 * The most fds setup and the run open at once beside the tracer's, those open
 * at start included: -p's pidfd; kallsyms (its scan, then its load) or a CPU
 * list read at a report; -T's ring buffer and the mapped files it names user
 * frames from; --prom's export (export.h); the cgroup tree's walk (cgroups.h).
 */
unsigned int budget__fds_beside(const struct session *s)
{
	const struct options *o = s->opts;

	return s->fds_at_start + (o->pid != 0) + 1 + (o->slow_ns ? 1 + UMAPS_FDS_MAX : 0) +
	       (o->prom_path ? EXPORT_FDS_MAX : 0) + (s->cgroups ? CGROUPS_FDS_MAX : 0);
}

/*
 * What the run needs, found when first asked: a message may ask before
 * budget__fit_needs() has, from the options setup has so far (s->topts).
 */
static const struct tracer_needs *needs_of(struct session *s)
{
	if (!s->needs.fds)
		tracer__needs(&s->topts, &s->needs);
	return &s->needs;
}

/*
 * Out of memory: a memory cgroup that leaves less than the run needs (its
 * limit is met with the OOM killer, not an error: see budget__fit_needs()), else
 * ulimit -v.
 */
static int memory_error(struct session *s)
{
	unsigned long long as = probe__address_space_limit();
	__u64 need = needs_of(s)->memory;
	struct memory_room room;
	char what[64] = "";

	/* unknown when even the BPF object could not be opened to count it */
	if (need)
		snprintf(what, sizeof(what), ": drainstat needs about %.1f MB free", MB(need));
	probe__memory_room(&room);
	if (room.limit != ~0ULL && (room.free < need || as == ~0ULL))
		return say_error(
		    EXIT_RUNTIME,
		    "not enough memory (memory cgroup limit %.1f MB, %.1f MB of it free)%s",
		    MB(room.limit), MB(room.free), what);
	if (as != ~0ULL)
		return say_error(EXIT_RUNTIME,
				 "not enough memory (ulimit -v %llu): raise the limit", as / 1024);
	return say_error(EXIT_RUNTIME, "not enough memory%s", what);
}

/* Short of fds or memory (probe__short_of_resources(err)): which, and what the run needs. */
int budget__resource_error(struct session *s, int err)
{
	if (err == -EMFILE)
		return say_error(
		    EXIT_RUNTIME,
		    "too few file descriptors (ulimit -n %llu): drainstat needs at least %u",
		    probe__fds_limit(), needs_of(s)->fds);
	if (err == -ENFILE)
		return say_error(EXIT_RUNTIME,
				 "the system is out of file descriptors (fs.file-max)");
	return memory_error(s);
}

/*
 * What the run needs, counted into s->needs, checked against the memory room.
 * A memory cgroup's limit is met with the OOM killer, not an error: in the
 * heap's page faults, in the verifier. So the room is checked before: the
 * heap for libbpf's parse of the kernel's BTF, the maps, the load's own.
 */
int budget__fit_needs(struct session *s, size_t heap)
{
	struct memory_room room;
	int err = tracer__needs(&s->topts, &s->needs);

	if (err)
		return probe__short_of_resources(err)
			   ? budget__resource_error(s, err)
			   : say_error(EXIT_BPF, "cannot open the BPF programs: %s",
				       strerror(-err));
	s->needs.memory += heap;
	probe__memory_room(&room);
	note(s->opts->verbose,
	     "the run needs %u fds and about %.1f MB of memory (maps per CPU for %d possible CPUs)",
	     s->needs.fds, MB(s->needs.memory), s->needs.nr_cpus);
	return room.free < s->needs.memory ? memory_error(s) : EXIT_OK;
}

/*
 * Parsing the kernel's BTF (libbpf reads it whole, then copies it) takes about
 * twice its size of heap.
 */
size_t budget__btf_parse_size(void)
{
	struct stat st;

	return stat(BTF_PATH, &st) ? 0 : 2 * (size_t)st.st_size + (1 << 20);
}

/*
 * Faults in size bytes of heap in one call rather than page by page (a fault
 * is dear in a virtual machine), and leaves them free for libbpf's BTF parse
 * that comes next: setup keeps freed memory in the heap (see setup__run()). Not
 * asked for huge pages, though they would save a third of libbpf's load in a
 * guest whose 4 KB pages are dear to touch: MADV_HUGEPAGE enlists the process
 * with khugepaged, which then drains every CPU's LRU batches every 10 s for as
 * long as drainstat runs, and MADV_COLLAPSE drains them itself.
 */
int budget__prefault_heap(size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start, end;
	char *p = size ? malloc(size) : NULL;

	/* libbpf would run short in the same place, and say ESRCH */
	if (!p)
		return size ? -ENOMEM : 0;
	start = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
	end = ((uintptr_t)p + size) & ~(uintptr_t)(page - 1);
	if (end > start)
		madvise((void *)start, end - start, MADV_POPULATE_WRITE);
	free(p);
	return 0;
}
