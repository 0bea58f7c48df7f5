// SPDX-License-Identifier: GPL-2.0
/*
 * drainstat: who triggers lru_add_drain_all(), from where, and what it costs.
 * main() parses the options and routes libbpf's messages; the run itself, its
 * checks (src/setup.c), the tracing and the reports, is src/session.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "session.h"

/* libbpf's messages only with -vv: the print callback takes no context. */
static int libbpf_verbosity;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && libbpf_verbosity < 3)
		return 0;
	if (libbpf_verbosity < 2)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * stderr line-buffered in a buffer of its own: unbuffered, every fprintf() to
 * it takes an 8 KB buffer on the stack (glibc), too much under a small
 * ulimit -s; and a message is then one write.
 */
static char stderr_buf[1024];

/* Not on the stack either: its -C mask is 1 KB (8192 CPUs), and every KB counts under ulimit -s 24.
 */
static struct options opts;

int main(int argc, char **argv)
{

	setvbuf(stderr, stderr_buf, _IOLBF, sizeof(stderr_buf));

	cli__parse(argc, argv, &opts);
	libbpf_verbosity = opts.verbose;
	libbpf_set_print(print_libbpf);
	return session__run(&opts);
}
