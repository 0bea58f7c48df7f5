// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <string.h>

#include "hooks.h"
#include "site.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Every way a drain reaches the workqueue tracepoint, 5.10 to 6.18: the
 * workqueue's functions here, the drain hooks' in hooks.c's table.
 */
static const char *const queue_functions[] = {"queue_work_on", "__queue_work"};

/* What a tracepoint, raw tracepoint or kprobe program puts on top of the stack. */
static const char *const glue_prefixes[] = {
    "bpf_trace_run", "__bpf_trace_", "__traceiter_", "bpf_prog_", "trace_", "__probestub_",
};

static bool is_drain_function(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(queue_functions); i++)
		if (hooks__same_function(name, queue_functions[i]))
			return true;
	for (i = 0; i < nr_hook_fns; i++)
		if (hook_fns[i].on_stacks && hooks__same_function(name, hook_fns[i].name))
			return true;
	return false;
}

static bool is_glue(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(glue_prefixes); i++) {
		if (!strncmp(name, glue_prefixes[i], strlen(glue_prefixes[i])))
			return true;
	}
	return false;
}

bool site__is_machinery(const char *name)
{
	return name && (is_drain_function(name) || is_glue(name));
}

/*
 * The site is the frame right after the outermost drain function. Scanning for
 * that frame, rather than for the first non-machinery one, also skips what sits
 * on top of the stack unnamed: the BPF program itself, loaded after the symbols
 * were read. A stack with no drain function (a hook on some other path) gets
 * its first named frame that is not tracing glue.
 */
int site__pick(const char *const *frames, int n)
{
	int i, last_drain = -1;

	for (i = 0; i < n; i++)
		if (frames[i] && is_drain_function(frames[i]))
			last_drain = i;
	if (last_drain >= 0)
		return last_drain + 1 < n ? last_drain + 1 : -1;
	for (i = 0; i < n; i++)
		if (frames[i] && !is_glue(frames[i]))
			return i;
	return -1;
}

/*
 * Where a stack worth showing starts: at its first drain function, past the BPF
 * program and tracing glue on top. Without one (a stack taken at a drain's
 * fentry begins in the trampoline, past the traced function: its caller comes
 * next), at the first named frame that is not glue; 0 if none is.
 */
int site__first_frame(const char *const *frames, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (frames[i] && is_drain_function(frames[i]))
			return i;
	for (i = 0; i < n; i++)
		if (frames[i] && !is_glue(frames[i]))
			return i;
	return 0;
}

void site__put_back_caller(__u64 *ips, int *nr, int max, __u64 ret_ip)
{
	int n = *nr;

	if (!ret_ip || n < 1 || (n > 1 && ips[1] == ret_ip))
		return;
	if (n == max)
		n--;
	memmove(&ips[2], &ips[1], (size_t)(n - 1) * sizeof(*ips));
	ips[1] = ret_ip;
	*nr = n + 1;
}
