// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <linux/magic.h>

#include "escape.h"
#include "export.h"
#include "ksyms.h"
#include "model.h"
#include "probe.h"
#include "output.h"
#include "slowlog.h"
#include "session.h"
#include "tracer.h"

#define KALLSYMS      "/proc/kallsyms"
#define BTF_PATH      "/sys/kernel/btf/vmlinux"
#define TRACEFS	      "/sys/kernel/tracing"
#define DRAIN_WORK_FN "lru_add_drain_per_cpu"

/* Set from the signal handler: which signal asked us to stop; SIGHUP asks for a report. */
static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t report_requested;

/* What setup needs from kallsyms: found beside libbpf's load, before attach. */
enum setup_symbol { SYM_WORK_FN, SYM_DRAIN_ALL_INNER, SYM_CACHE_DISABLE, SYM_NR };

/* The scan for them, in a thread of its own while the main thread loads. */
struct symbol_scan {
	pthread_t thread;
	bool running;	     /* started and not joined yet */
	int err;	     /* ksyms__scan()'s */
	__u64 ns;	     /* how long it took */
	__u64 addrs[SYM_NR]; /* 0 for none */
};

struct session {
	const struct options *opts;
	struct ksyms *ksyms;
	struct tracer *tracer;
	int tracefs_mounted;
	struct utsname uts;
	char blind_spots[256];
	__u64 cgroup_id;
	struct symbol_scan scan;
	int symbols_code; /* the exit code when the symbols are not there */
	struct btf_facts btf;
	char filter_cpus[256];	 /* -C as a CPU list */
	struct slowlog *slowlog; /* -T */
	struct model_info info;
	struct prom_memory *prom_memory; /* --prom: what the exports before said */
	struct export *export;		 /* --prom */
	char *prom_shown;		 /* --prom's path, escaped for messages */
	int export_err;			 /* the failure the last export said, 0 */
	int pidfd;			 /* -p: readable once the process has exited; -1 */
	unsigned int fds_at_start;	 /* open before setup: stdio, inherited ones */
	struct tracer_needs needs;	 /* what the run needs, once found */
};

static void on_signal(int sig)
{
	if (sig == SIGHUP) {
		report_requested = 1;
		return;
	}
	/* a second Ctrl-C really kills: the kernel drops fd-based links with us */
	if (stop_signal && sig == SIGINT) {
		signal(SIGINT, SIG_DFL);
		raise(SIGINT);
	}
	stop_signal = sig;
}

static void install_signals(void)
{
	/* SA_RESTART: a write blocked on stdout goes on (ppoll() returns all the same) */
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * Sleeps until deadline or a stop signal, whichever comes first. The signals
 * are blocked between the check of stop_signal and the wait, and ppoll()
 * unblocks them atomically: one that arrives in between is not slept through.
 */
static void sleep_until(__u64 deadline, int slow_fd, int pidfd)
{
	struct pollfd pfd[2] = {{.fd = slow_fd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
	sigset_t block, orig;
	struct timespec ts;
	__u64 now;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &orig);
	now = now_ns();
	if (!stop_signal && !report_requested && now < deadline) {
		ts.tv_sec = (time_t)((deadline - now) / 1000000000ULL);
		ts.tv_nsec = (long)((deadline - now) % 1000000000ULL);
		/* the slow-drain ring buffer (-T) and the traced process's end (-p) wake us too */
		ppoll(pfd, 2, &ts, &orig);
	}
	sigprocmask(SIG_SETMASK, &orig, NULL);
}

/* One line on stderr: "drainstat: " and the message. */
static void say(const char *fmt, va_list ap)
{
	fprintf(stderr, "drainstat: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	return code;
}

/* -v: what setup found, on stderr so the report stays clean. */
static void note(const struct session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void note(const struct session *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->opts->verbose)
		return;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

/* The process group leader of pid (its Tgid), or -errno. */
static int process_of(pid_t pid)
{
	char path[64], line[128];
	int tgid = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/*
 * A cgroup v2 directory's id, what bpf_get_current_cgroup_id() returns: the
 * kernfs node id, read through a file handle.
 */
static int cgroup_id_of(const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h = {.fh.handle_bytes = sizeof(__u64)};
	struct statfs st;
	struct stat dir;
	int mount_id;

	if (statfs(path, &st) || stat(path, &dir))
		return -errno;
	if (st.f_type != CGROUP2_SUPER_MAGIC)
		return -ENOTDIR;
	/* a file in a cgroup (its cgroup.procs) has a kernfs id too, which no task has */
	if (!S_ISDIR(dir.st_mode))
		return -EISDIR;
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	*id = h.id;
	return 0;
}

/* A path from the command line, escaped for a message, in memory of its own. NULL: ENOMEM. */
static char *shown_dup(const char *path)
{
	size_t len = strnlen(path, PATH_MAX);
	char *buf = malloc(ESCAPE_SIZE(len));

	return buf ? (char *)escape__text(path, len, buf, ESCAPE_SIZE(len)) : NULL;
}

static int check_cgroup(struct session *s)
{
	char *shown;
	int err, code;

	if (!s->opts->cgroup)
		return EXIT_OK;
	err = cgroup_id_of(s->opts->cgroup, &s->cgroup_id);
	if (!err)
		return EXIT_OK;
	shown = shown_dup(s->opts->cgroup);
	if (err == -ENOTDIR)
		code = fail(EXIT_NO_CGROUP, "%s is not a cgroup v2 directory", shown ? shown : "?");
	else if (err == -EISDIR)
		code = fail(EXIT_NO_CGROUP,
			    "%s is a file in a cgroup, not a cgroup: give the cgroup's directory",
			    shown ? shown : "?");
	else
		code = fail(EXIT_NO_CGROUP, "cannot use cgroup %s: %s", shown ? shown : "?",
			    strerror(-err));
	free(shown);
	return code;
}

#define ISOLATED_PATH  "/sys/devices/system/cpu/isolated"
#define NOHZ_FULL_PATH "/sys/devices/system/cpu/nohz_full"

/* A kernel CPU list file ("2-3,6\n") into mask; empty, absent or "(null)": none. */
static void read_cpu_list(const char *path, __u64 *mask)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;

	if (f && getline(&line, &cap, f) > 0)
		line[strcspn(line, "\n")] = '\0';
	if (f)
		fclose(f);
	if (!line || cli__parse_cpulist(line, mask))
		memset(mask, 0, DRAINSTAT_MAX_CPUS / 8);
	free(line);
}

#define POSSIBLE_PATH "/sys/devices/system/cpu/possible"

/* mask as a CPU list ("0-3,8"), into buf. */
static void format_cpulist(const __u64 *mask, char *buf, size_t size)
{
	size_t n = 0;
	int c, first = -1;

	buf[0] = '\0';
	for (c = 0; c <= DRAINSTAT_MAX_CPUS && n < size; c++) {
		bool on = c < DRAINSTAT_MAX_CPUS && (mask[c / 64] >> (c % 64) & 1);

		if (on && first < 0)
			first = c;
		if (on || first < 0)
			continue;
		n += (size_t)snprintf(buf + n, size - n, n ? ",%d" : "%d", first);
		if (c - 1 > first && n < size)
			n += (size_t)snprintf(buf + n, size - n, "-%d", c - 1);
		first = -1;
	}
}

/*
 * -C names only CPUs this machine can have (offline ones may come online):
 * another would filter every work out, silently.
 */
static int check_victims(const struct options *o)
{
	__u64 possible[DRAINSTAT_MAX_CPUS / 64], missing[DRAINSTAT_MAX_CPUS / 64];
	char have[128], bad[128];
	bool known = false, any = false;
	int i;

	if (!o->victims_set)
		return EXIT_OK;
	read_cpu_list(POSSIBLE_PATH, possible);
	for (i = 0; i < DRAINSTAT_MAX_CPUS / 64; i++) {
		known |= possible[i] != 0;
		missing[i] = o->victims[i] & ~possible[i];
		any |= missing[i] != 0;
	}
	if (!known || !any)
		return EXIT_OK;
	format_cpulist(missing, bad, sizeof(bad));
	format_cpulist(possible, have, sizeof(have));
	return fail(EXIT_USAGE, "-C names CPUs this machine does not have: %s (its CPUs: %s)", bad,
		    have);
}

static void tracer_options(struct session *s, struct tracer_opts *topts);

/*
 * The most fds setup and the run open at once beside the tracer's, those open
 * at start included: -p's pidfd; kallsyms (its scan, then its load) or a CPU
 * list read at a report; -T's ring buffer; --prom's file held, its temp file
 * and the temp file's stream, while an export is written.
 */
static unsigned int fds_beside(const struct session *s)
{
	const struct options *o = s->opts;

	return s->fds_at_start + (o->pid != 0) + (o->slow_ns != 0) + (o->prom_path ? 3 : 1);
}

/* What the run needs, found when first asked: a message may ask before setup has. */
static const struct tracer_needs *needs_of(struct session *s)
{
	struct tracer_opts topts;

	if (!s->needs.fds) {
		tracer_options(s, &topts);
		tracer__needs(&topts, &s->needs);
	}
	return &s->needs;
}

#define MB(bytes) ((double)(bytes) / (1 << 20))

/*
 * Out of memory: a memory cgroup that leaves less than the run needs (its
 * limit is met with the OOM killer, not an error: see check_memory()), else
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
		return fail(EXIT_RUNTIME,
			    "not enough memory (memory cgroup limit %.1f MB, %.1f MB of it free)%s",
			    MB(room.limit), MB(room.free), what);
	if (as != ~0ULL)
		return fail(EXIT_RUNTIME, "not enough memory (ulimit -v %llu): raise the limit",
			    as / 1024);
	return fail(EXIT_RUNTIME, "not enough memory%s", what);
}

/* Short of fds or memory (probe__short_of_resources(err)): which, and what the run needs. */
static int resource_error(struct session *s, int err)
{
	if (err == -EMFILE)
		return fail(
		    EXIT_RUNTIME,
		    "too few file descriptors (ulimit -n %llu): drainstat needs at least %u",
		    probe__fds_limit(), needs_of(s)->fds);
	if (err == -ENFILE)
		return fail(EXIT_RUNTIME, "the system is out of file descriptors (fs.file-max)");
	return memory_error(s);
}

/* True once the process of pidfd has exited: a zombie, or reaped. */
static bool has_exited(int pidfd)
{
	struct pollfd pfd = {.fd = pidfd, .events = POLLIN};

	return pidfd >= 0 && poll(&pfd, 1, 0) == 1;
}

/*
 * -p takes a process: the BPF side compares the thread group ID. A pidfd
 * (Linux 5.3) tells when it exits, and keeps its PID from being taken for
 * another's meanwhile unnoticed.
 */
static int check_pid(struct session *s)
{
	pid_t pid = s->opts->pid;
	int tgid, open_err;

	if (!pid)
		return EXIT_OK;
	/* the pidfd first: the process it holds is the one checked after */
	s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	open_err = s->pidfd < 0 ? -errno : 0;
	if (probe__short_of_resources(open_err))
		return resource_error(s, open_err);
	if (open_err == -ESRCH)
		return fail(EXIT_NO_PROCESS, "no process with PID %d", pid);
	tgid = process_of(pid);
	if (probe__short_of_resources(tgid))
		return resource_error(s, tgid);
	/* a thread's ID: pidfd_open() says EINVAL, the status names its process */
	if (tgid > 0 && tgid != pid)
		return fail(EXIT_NO_PROCESS, "%d is a thread of process %d: use -p %d", pid, tgid,
			    tgid);
	if (tgid < 0 || has_exited(s->pidfd))
		return fail(EXIT_NO_PROCESS, "process %d has exited%s: nothing to trace", pid,
			    tgid < 0 ? "" : " (a zombie, not yet reaped)");
	if (open_err)
		note(s, "no pidfd for process %d (%s): its exit will not end the run", pid,
		     strerror(-open_err));
	return EXIT_OK;
}

/*
 * What shows kernel addresses: kernel.kptr_restrict 2 to no one, 1 to
 * CAP_SYSLOG, 0 to all while kernel.perf_event_paranoid is 1 or less.
 */
static const char *kallsyms_fix(int kptr_restrict)
{
	int paranoid = 2;

	probe__sysctl("kernel.perf_event_paranoid", &paranoid);
	if (kptr_restrict == 0)
		return "kernel.perf_event_paranoid=1";
	return paranoid > 1 ? "kernel.kptr_restrict=0 and kernel.perf_event_paranoid=1"
			    : "kernel.kptr_restrict=0";
}

static int kallsyms_error(struct session *s, int err)
{
	int kptr_restrict = 1;

	if (probe__short_of_resources(err))
		return resource_error(s, err);
	probe__sysctl("kernel.kptr_restrict", &kptr_restrict);
	if (err == -EPERM && kptr_restrict == 2)
		return fail(EXIT_NO_KALLSYMS,
			    "kernel addresses in %s are hidden even from root "
			    "(kernel.kptr_restrict=2): set kernel.kptr_restrict to 0 or 1",
			    KALLSYMS);
	if (err == -EPERM)
		return fail(EXIT_NO_KALLSYMS,
			    "kernel addresses in %s are hidden: run as root, or with CAP_SYSLOG, "
			    "or set %s",
			    KALLSYMS, kallsyms_fix(kptr_restrict));
	return fail(EXIT_NO_KALLSYMS, "cannot read %s: %s", KALLSYMS, strerror(-err));
}

static const char *const setup_symbol_names[SYM_NR] = {
    [SYM_WORK_FN] = DRAIN_WORK_FN,
    [SYM_DRAIN_ALL_INNER] = "__lru_add_drain_all",
    [SYM_CACHE_DISABLE] = "lru_cache_disable",
};

static void *scan_symbols(void *arg)
{
	struct symbol_scan *scan = arg;
	__u64 start = now_ns();

	scan->err = ksyms__scan(KALLSYMS, setup_symbol_names, scan->addrs, SYM_NR);
	scan->ns = now_ns() - start;
	return NULL;
}

/* The scan thread's stack (see start_symbol_scan()). */
#define SCAN_STACK_SIZE (256 << 10)

/*
 * The addresses setup needs, from a scan that stops once they are found: the
 * full symbol table, for stacks, is read after the programs are attached. The
 * kernel spends 10-15 ms producing the lines up to them, so the scan runs in a
 * thread of its own, beside the BTF lookup and libbpf's load, which do not
 * need them in tracepoint mode (see symbols_ready()). The thread takes no
 * signals. Without a thread it runs here. Its stack has a size of its own, not
 * RLIMIT_STACK's (glibc's default for threads): a small ulimit -s is no limit
 * on it.
 */
static void start_symbol_scan(struct session *s)
{
	pthread_attr_t attr;
	sigset_t all, old;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, SCAN_STACK_SIZE);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	s->scan.running = !pthread_create(&s->scan.thread, &attr, scan_symbols, &s->scan);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (!s->scan.running)
		scan_symbols(&s->scan);
}

static void join_symbol_scan(struct session *s)
{
	if (s->scan.running)
		pthread_join(s->scan.thread, NULL);
	s->scan.running = false;
}

/*
 * The tracer's tracer_opts.symbols: waits for the scan. Without
 * lru_add_drain_per_cpu drain works cannot be told from the others.
 */
static int symbols_ready(void *arg, struct tracer_symbols *syms)
{
	struct session *s = arg;
	const __u64 *addrs = s->scan.addrs;

	join_symbol_scan(s);
	if (s->scan.err) {
		s->symbols_code = kallsyms_error(s, s->scan.err);
		return s->scan.err;
	}
	if (!addrs[SYM_WORK_FN]) {
		s->symbols_code = fail(EXIT_NO_SYMBOL,
				       "this kernel has no %s in %s: cannot tell LRU drain "
				       "works from other work items",
				       DRAIN_WORK_FN, KALLSYMS);
		return -ENOENT;
	}
	note(s, "%s at 0x%llx, found in %.1f ms", DRAIN_WORK_FN,
	     (unsigned long long)addrs[SYM_WORK_FN], (double)s->scan.ns / 1e6);
	*syms = (struct tracer_symbols){
	    .drain_work_fn = addrs[SYM_WORK_FN],
	    .drain_fn = addrs[SYM_DRAIN_ALL_INNER] ? setup_symbol_names[SYM_DRAIN_ALL_INNER] : NULL,
	    .has_cache_disable = addrs[SYM_CACHE_DISABLE] != 0,
	};
	return 0;
}

/*
 * Parsing the kernel's BTF (libbpf reads it whole, then copies it) takes about
 * twice its size of heap.
 */
static size_t btf_parse_size(void)
{
	struct stat st;

	return stat(BTF_PATH, &st) ? 0 : 2 * (size_t)st.st_size + (1 << 20);
}

/*
 * Faults in size bytes of heap in one call rather than page by page (a fault
 * is dear in a virtual machine), and leaves them free for libbpf's BTF parse
 * that comes next: setup keeps freed memory in the heap (see setup()). Not
 * asked for huge pages, though they would save a third of libbpf's load in a
 * guest whose 4 KB pages are dear to touch: MADV_HUGEPAGE enlists the process
 * with khugepaged, which then drains every CPU's LRU batches every 10 s for as
 * long as drainstat runs, and MADV_COLLAPSE drains them itself.
 */
static int heap_prefault(size_t size)
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

/* What the BTF says of the hooks: the kernel looks it up (see probe__btf_facts()). */
static int check_btf(struct session *s)
{
	__u64 start = now_ns();

	probe__btf_facts(&s->btf);
	if (probe__short_of_resources(s->btf.err))
		return resource_error(s, s->btf.err);
	if (s->btf.err)
		return fail(EXIT_NO_BTF, "cannot parse the kernel's BTF (%s): %s", BTF_PATH,
			    strerror(-s->btf.err));
	note(s, "BTF %s in %.1f ms: lru_add_drain_all %s, ipi_send_cpu %s",
	     s->btf.parsed ? "parsed" : "looked up by the kernel", (double)(now_ns() - start) / 1e6,
	     s->btf.drain_all_id > 0 ? "found" : "missing",
	     s->btf.ipi_send_cpu ? "found" : "missing");
	return EXIT_OK;
}

/* Every symbol, to name the frames of kernel stacks. */
static int load_symbols(struct session *s)
{
	__u64 start = now_ns();
	int err = ksyms__load(KALLSYMS, &s->ksyms);

	if (err)
		return kallsyms_error(s, err);
	note(s, "%zu symbols from %s in %.1f ms", ksyms__count(s->ksyms), KALLSYMS,
	     (double)(now_ns() - start) / 1e6);
	return EXIT_OK;
}

static int check_kernel(struct session *s)
{
	int err;

	if (probe__privileges())
		return fail(EXIT_NO_PERM, "need root, or CAP_BPF and CAP_PERFMON");
	if (probe__btf(BTF_PATH))
		return fail(EXIT_NO_BTF,
			    "the kernel exposes no BTF (%s): drainstat needs a kernel "
			    "built with CONFIG_DEBUG_INFO_BTF=y",
			    BTF_PATH);
	err = probe__tracefs(TRACEFS);
	if (err < 0)
		return fail(EXIT_NO_TRACEFS,
			    "tracefs is not mounted at %s and mounting it failed: "
			    "%s",
			    TRACEFS, strerror(-err));
	s->tracefs_mounted = err;
	note(s, "tracefs %s %s", TRACEFS,
	     err ? "mounted by drainstat in a mount namespace of its own" : "already mounted");
	return EXIT_OK;
}

static const char *step_name(enum tracer_step step)
{
	switch (step) {
	case TRACER_OPEN:
		return "open";
	case TRACER_LOAD:
		return "load";
	default:
		return "attach";
	}
}

static void tracer_options(struct session *s, struct tracer_opts *topts)
{
	*topts = (struct tracer_opts){
	    .filter_tgid = (__u32)s->opts->pid,
	    .filter_comm = s->opts->comm,
	    .filter_cgroup_id = s->cgroup_id,
	    .filter_victims = s->opts->victims_set ? s->opts->victims : NULL,
	    .max_sites = s->opts->max_sites,
	    .max_stacks = s->opts->max_stacks,
	    .mode = s->opts->mode,
	    .symbols = symbols_ready,
	    .symbols_arg = s,
	    .drain_all_btf_id = s->btf.drain_all_id,
	    .has_ipi_send_cpu = s->btf.ipi_send_cpu,
	    .tracefs = TRACEFS,
	    .slow_threshold_ns = s->opts->slow_ns,
	    .fds_beside = fds_beside(s),
	    .fds_needed = &s->needs.fds,
	};
}

/*
 * A memory cgroup's limit is met with the OOM killer, not an error: in the
 * heap's page faults, in the verifier. So the room is checked before: the
 * heap for libbpf's parse of the kernel's BTF, the maps, the load's own.
 */
static int check_memory(struct session *s, const struct tracer_opts *topts, size_t heap)
{
	struct memory_room room;
	int err = tracer__needs(topts, &s->needs);

	if (err)
		return probe__short_of_resources(err)
			   ? resource_error(s, err)
			   : fail(EXIT_BPF, "cannot open the BPF programs: %s", strerror(-err));
	s->needs.memory += heap;
	probe__memory_room(&room);
	note(s, "the run needs %u fds and about %.1f MB of memory", s->needs.fds,
	     MB(s->needs.memory));
	return room.free < s->needs.memory ? memory_error(s) : EXIT_OK;
}

static int start_tracer(struct session *s)
{
	struct tracer_opts topts;
	enum tracer_step step;
	size_t heap = btf_parse_size();
	int code, err;

	tracer_options(s, &topts);
	code = check_memory(s, &topts, heap);
	if (code != EXIT_OK)
		return code;
	err = heap_prefault(heap);
	if (err)
		return resource_error(s, err);
	note(s, "%.1f MB of heap faulted in for libbpf's load", MB(heap));
	err = tracer__start(&topts, &s->tracer, &step);
	if (err && step == TRACER_SYMBOLS)
		return s->symbols_code;
	if (probe__short_of_resources(err))
		return resource_error(s, err);
	if (err && s->opts->mode == MODE_AUTO)
		return fail(EXIT_BPF,
			    "cannot %s the BPF programs in any mode (tracepoint, the last tried: "
			    "%s; -vv shows libbpf's log)",
			    step_name(step), strerror(-err));
	if (err)
		return fail(EXIT_BPF,
			    "cannot %s the BPF programs in %s mode: %s (-vv shows libbpf's log)",
			    step_name(step), tracer__mode_name(s->opts->mode), strerror(-err));
	return EXIT_OK;
}

/* What this run cannot see, by mode and by the optional hooks that did not attach. */
static void describe_blind_spots(const struct tracer_features *f, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	if (f->mode == MODE_TRACEPOINT)
		n += (size_t)snprintf(
		    buf, size,
		    "drain entry or exit: WAIT~ is first queue to last work end (a "
		    "lower bound); no lock time, piggybacked or empty drains, local "
		    "drains");
	else if (!f->local)
		n += (size_t)snprintf(buf, size, "local drains (lru_add_drain not hooked)");
	if (!f->ipi && n < size)
		n += (size_t)snprintf(buf + n, size - n, "%sIPIs (no ipi:ipi_send_cpu tracepoint)",
				      n ? "; " : "");
	if (!f->fadvise && n < size)
		snprintf(buf + n, size - n, "%sfadvise calls (no syscalls:sys_enter_fadvise64)",
			 n ? "; " : "");
}

static void describe(struct session *s)
{
	const struct tracer_features *f = tracer__features(s->tracer);

	uname(&s->uts);
	describe_blind_spots(f, s->blind_spots, sizeof(s->blind_spots));
	s->info = (struct model_info){
	    .mode = tracer__mode_name(f->mode),
	    .kernel = s->uts.release,
	    .blind_spots = s->blind_spots[0] ? s->blind_spots : NULL,
	    .wait_is_lower_bound = f->mode == MODE_TRACEPOINT,
	    .entry_visible = f->mode != MODE_TRACEPOINT,
	    .has_fadvise = f->fadvise,
	    .has_ipi = f->ipi,
	    .has_local = f->local,
	    .cumulative = !s->opts->interval_ns,
	    .stuck_ns = s->opts->stuck_ns,
	    .filter_pid = (__u32)s->opts->pid,
	    .filter_comm = s->opts->comm,
	    .filter_cgroup = s->opts->cgroup,
	    .filter_cpus = s->opts->victims_set ? s->filter_cpus : NULL,
	};
	note(s, "mode %s: drain entry/exit %s, local drains %s, IPIs %s, fadvise %s", s->info.mode,
	     s->info.entry_visible ? "hooked" : "not hooked", f->local ? "hooked" : "not hooked",
	     f->ipi ? "counted" : "not counted", f->fadvise ? "traced" : "not traced");
}

/* -T: slow drains come from the ring buffer, read from here on (none is lost meanwhile). */
static int start_slowlog(struct session *s)
{
	int err;

	if (!s->opts->slow_ns)
		return EXIT_OK;
	s->slowlog = slowlog__new(stdout, s->opts->slow_ns, s->opts->json, s->ksyms);
	err = s->slowlog ? tracer__watch_slow(s->tracer, slowlog__slow_drain, s->slowlog) : -ENOMEM;
	if (probe__short_of_resources(err))
		return resource_error(s, err);
	if (err)
		return fail(EXIT_RUNTIME, "cannot start the slow-drain log: %s", strerror(-err));
	return EXIT_OK;
}

/*
 * keep: large blocks come from the heap and freed ones stay there, not mapped
 * and unmapped each time, so they are not page-faulted and zeroed anew; else
 * glibc's small thresholds, and memory goes back to the kernel.
 */
static void heap_keep(bool keep)
{
	mallopt(M_MMAP_THRESHOLD, keep ? 32 << 20 : 128 << 10);
	mallopt(M_TRIM_THRESHOLD, keep ? 64 << 20 : 128 << 10);
}

static int setup(struct session *s)
{
	int code;

	/*
	 * Setup's megabytes (libbpf's BTF parse, in heap faulted in beforehand)
	 * stay in the heap until given back once attached.
	 */
	heap_keep(true);
	format_cpulist(s->opts->victims, s->filter_cpus, sizeof(s->filter_cpus));
	s->fds_at_start = probe__fds_in_use();
	code = check_pid(s);
	if (code == EXIT_OK)
		code = check_victims(s->opts);
	if (code == EXIT_OK)
		code = check_cgroup(s);
	if (code == EXIT_OK)
		code = check_kernel(s);
	/* after check_kernel(): its tracefs mount needs a process of one thread */
	if (code == EXIT_OK)
		start_symbol_scan(s);
	if (code == EXIT_OK)
		code = check_btf(s);
	if (code == EXIT_OK)
		code = start_tracer(s);
	join_symbol_scan(s);
	/* the symbol table's growing buffers are better mapped and given back */
	heap_keep(false);
	malloc_trim(0);
	if (code == EXIT_OK)
		describe(s);
	if (code == EXIT_OK)
		code = load_symbols(s);
	if (code == EXIT_OK)
		code = start_slowlog(s);
	return code;
}

/* --prom exports every 15 s by default: node_exporter's usual scrape interval. */
#define PROM_INTERVAL_NS (15ULL * 1000000000ULL)

static __u64 interval_of(const struct options *o)
{
	if (o->interval_ns)
		return o->interval_ns;
	return o->prom_path ? PROM_INTERVAL_NS : 0;
}

/* A message naming what failed writing the export, with its path escaped. */
static void describe_export_error(const struct session *s, int err, char *msg, size_t size)
{
	export__describe(s->prom_shown, err, export__why(s->export), msg, size);
}

/*
 * An export that fails in flight is said once, and once more when it works
 * again; the run goes on. Not when another writer holds the file or its
 * directory is gone (nothing will come of a next try), nor for the last export
 * (the file would not hold the run's numbers): those end the run, exit 74.
 */
static int export_now(struct session *s, const struct model *m, bool last)
{
	char msg[512];
	int err = output__export(s->export, s->opts, m, s->prom_memory);

	if (!err && s->export_err)
		fprintf(stderr, "drainstat: %s written again\n", s->prom_shown);
	if (!err) {
		s->export_err = 0;
		return EXIT_OK;
	}
	if (export__dir_gone(s->export))
		return fail(EXIT_EXPORT, "the directory of %s is gone: nothing to export to",
			    s->prom_shown);
	describe_export_error(s, err, msg, sizeof(msg));
	if (err == -EBUSY || last)
		return fail(EXIT_EXPORT, "%s%s", msg, last ? " (the final export)" : "");
	if (err != s->export_err)
		fprintf(stderr,
			"drainstat: %s (the previous export stays; trying again every %g s)\n", msg,
			(double)interval_of(s->opts) / 1e9);
	s->export_err = err;
	return EXIT_OK;
}

/* A report that cannot reach stdout ends the run; a reader that closed the pipe, quietly. */
static int stdout_failed(int err)
{
	if (err == -EPIPE)
		return EXIT_RUNTIME;
	return fail(EXIT_RUNTIME, "cannot write the report to stdout: %s", strerror(-err));
}

/* One report: EXIT_OK to go on, or the exit code that ends the run (said). */
static int report(struct session *s, const struct snapshot *cur, const struct snapshot *prev,
		  __u64 start_ns, bool last)
{
	struct model m;
	int err, code;

	/* the export is cumulative (counters), the other outputs per interval */
	err = model__build(cur, s->opts->prom_path ? NULL : prev, start_ns, s->ksyms, &s->info, &m);
	if (err)
		return fail(EXIT_RUNTIME, "cannot build the report: %s", strerror(-err));
	if (s->export) {
		code = export_now(s, &m, last);
	} else {
		err = output__report(s->opts, &m);
		code = err ? stdout_failed(err) : EXIT_OK;
	}
	model__free(&m);
	return code;
}

/* Which CPUs of works in flight are isolated: it can change at run time (cpuset partitions). */
static void read_isolation(struct snap_in_flight *f)
{
	if (!f->nr_works)
		return;
	read_cpu_list(ISOLATED_PATH, f->isolated);
	read_cpu_list(NOHZ_FULL_PATH, f->nohz_full);
}

/*
 * One report from a fresh snapshot read into *spare (its buffers reused); the
 * reading becomes *prev and the old *prev the next spare. EXIT_OK, or the exit
 * code that ends the run.
 */
static int report_now(struct session *s, struct snapshot *prev, struct snapshot *spare,
		      bool since_prev, __u64 start_ns, bool last)
{
	struct snapshot old;
	int err, code;

	err = tracer__snapshot(s->tracer, spare);
	if (err)
		return fail(EXIT_RUNTIME, "cannot read the BPF maps: %s", strerror(-err));
	read_isolation(&spare->in_flight);
	code = report(s, spare, since_prev ? prev : NULL, start_ns, last);
	old = *prev;
	*prev = *spare;
	*spare = old;
	return code;
}

/* -T: the drains in flight past the threshold, logged as they pass it. */
static int watch_in_flight(struct session *s, struct snapshot *snap)
{
	struct model m;
	int err;

	err = tracer__in_flight(s->tracer, snap, s->opts->slow_ns);
	if (err)
		return fail(EXIT_RUNTIME, "cannot read the BPF maps: %s", strerror(-err));
	if (!snap->in_flight.nr_drains)
		return EXIT_OK;
	read_isolation(&snap->in_flight);
	err = model__build(snap, NULL, snap->taken_ns, s->ksyms, &s->info, &m);
	if (err)
		return fail(EXIT_RUNTIME, "cannot build the report: %s", strerror(-err));
	slowlog__in_flight(s->slowlog, &m);
	model__free(&m);
	return EXIT_OK;
}

/* -T: the slow drains the ring buffer holds, and the drains in flight when due. */
static int run_slowlog(struct session *s, struct snapshot *watched, __u64 *next_watch)
{
	int code = EXIT_OK, err;

	if (!s->slowlog)
		return EXIT_OK;
	tracer__consume_slow(s->tracer);
	if (now_ns() >= *next_watch) {
		code = watch_in_flight(s, watched);
		*next_watch = now_ns() + slowlog__watch_ns(s->slowlog);
	}
	err = output__flush(stdout);
	return code == EXIT_OK && err ? stdout_failed(err) : code;
}

/* -p: the traced process has exited; the run ends as -d would. */
static bool traced_exited(const struct session *s)
{
	if (!has_exited(s->pidfd))
		return false;
	fprintf(stderr, "drainstat: process %d exited\n", s->opts->pid);
	return true;
}

/*
 * The next report's time after one due at next: the schedule goes on, unless
 * it fell behind (a SIGSTOP, an overrun): then the report just made covered the
 * gap, and the schedule starts again from now.
 */
static __u64 next_report(__u64 next, __u64 interval)
{
	__u64 now = now_ns();

	return next + interval > now ? next + interval : now + interval;
}

/*
 * Reports until COUNT, -d, a signal or the traced process's exit; always ends
 * with what was not reported yet. SIGHUP reports at once (the interval so far,
 * or the export) and keeps the schedule; it does not count towards COUNT. Not
 * inlined: its snapshots would take stack in session__run() during setup too.
 */
static __attribute__((noinline)) int trace_loop(struct session *s)
{
	const struct options *o = s->opts;
	struct snapshot prev = {}, spare = {}, watched = {};
	__u64 interval = interval_of(o), start = now_ns();
	__u64 end = o->duration_ns ? start + o->duration_ns : ~0ULL;
	__u64 next = interval ? start + interval : end, reports = 0, due;
	__u64 watch = s->slowlog ? slowlog__watch_ns(s->slowlog) : 0, next_watch = start + watch;
	bool scheduled, exited = false, last;
	int code;

	for (;;) {
		due = next < end ? next : end;
		sleep_until(watch && next_watch < due ? next_watch : due,
			    tracer__slow_fd(s->tracer), s->pidfd);
		code = run_slowlog(s, &watched, &next_watch);
		if (code != EXIT_OK)
			break;
		exited = exited || traced_exited(s);
		scheduled = stop_signal || exited || now_ns() >= due;
		if (!scheduled && !report_requested)
			continue;
		report_requested = 0;
		last = stop_signal || exited || now_ns() >= end ||
		       (scheduled && o->count && reports + 1 >= o->count);
		code = report_now(s, &prev, &spare, interval && prev.taken_ns, start, last);
		if (code != EXIT_OK)
			break;
		if (!scheduled)
			continue;
		reports++;
		if (last)
			break;
		next = next_report(next, interval);
	}
	snapshot__free(&prev);
	snapshot__free(&spare);
	snapshot__free(&watched);
	return code;
}

/*
 * A first, empty export at start: a bad path fails now, and node_exporter has
 * a file. Not inlined, as trace_loop().
 */
static __attribute__((noinline)) int start_export(struct session *s)
{
	struct snapshot empty = {.taken_ns = now_ns()};
	struct export_why why;
	char msg[512];
	struct model m;
	int err, n;

	if (!s->opts->prom_path)
		return EXIT_OK;
	s->prom_shown = shown_dup(s->opts->prom_path);
	s->prom_memory = prom_memory__new();
	if (!s->prom_memory || !s->prom_shown)
		return fail(EXIT_RUNTIME, "cannot start the export: %s", strerror(ENOMEM));
	err = export__open(s->opts->prom_path, &s->export, &why);
	if (err) {
		export__describe(s->prom_shown, err, &why, msg, sizeof(msg));
		return fail(EXIT_EXPORT, "%s", msg);
	}
	err = model__build(&empty, NULL, empty.taken_ns, s->ksyms, &s->info, &m);
	if (!err) {
		err = output__export(s->export, s->opts, &m, s->prom_memory);
		model__free(&m);
	}
	if (err) {
		describe_export_error(s, err, msg, sizeof(msg));
		return fail(EXIT_EXPORT, "%s", msg);
	}
	/* ours now: the temp files beside it are a killed writer's */
	n = export__remove_stale(s->export);
	if (n)
		note(s, "removed %d temp file%s a killed drainstat left beside %s", n,
		     n == 1 ? "" : "s", s->prom_shown);
	note(s, "exporting to %s every %g s", s->prom_shown, (double)interval_of(s->opts) / 1e9);
	return EXIT_OK;
}

static void teardown(struct session *s)
{
	tracer__free(s->tracer);
	ksyms__free(s->ksyms);
	slowlog__free(s->slowlog);
	prom_memory__free(s->prom_memory);
	export__free(s->export);
	free(s->prom_shown);
	if (s->pidfd >= 0)
		close(s->pidfd);
}

/*
 * Where the reports go must be there: with stdout closed, a file opened later
 * would take its place (a BPF map's fd, the export). 0, 1 and 2 are kept taken
 * (/dev/null) whatever happens.
 */
static int check_stdio(const struct options *o)
{
	bool out_closed = fcntl(STDOUT_FILENO, F_GETFD) < 0;
	int fd;

	do {
		fd = open("/dev/null", O_RDWR);
	} while (fd >= 0 && fd <= STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
	if (out_closed && (!o->prom_path || o->slow_ns))
		return fail(EXIT_RUNTIME, "stdout is closed: nowhere to print %s",
			    o->prom_path ? "the -T log" : "the report");
	return EXIT_OK;
}

/* The session in the heap, not on the stack: libbpf's load runs deep under it. */
int session__run(const struct options *opts)
{
	struct session *s = calloc(1, sizeof(*s));
	int code, err;

	if (!s)
		return fail(EXIT_RUNTIME, "cannot start: %s", strerror(ENOMEM));
	*s = (struct session){.opts = opts, .pidfd = -1};
	install_signals();
	code = check_stdio(opts);
	if (code == EXIT_OK)
		code = setup(s);
	if (code == EXIT_OK)
		code = start_export(s);
	if (code == EXIT_OK) {
		err = output__start(opts, &s->info);
		if (err)
			code = stdout_failed(err);
	}
	if (code == EXIT_OK) {
		/* every interval frees and allocates megabytes again: the report's rows */
		heap_keep(true);
		code = trace_loop(s);
	}
	teardown(s);
	free(s);
	return code;
}
