// SPDX-License-Identifier: GPL-2.0
/*
 * Queue PerCPU Work found in a kernel's BTF, without such a kernel: small BTF
 * files written here, like a kernel's with and without the series' struct
 * qpw_struct, go through the parse setup falls back to
 * (probe__btf_facts_of_file()); what it finds then goes through setup's blind
 * spots and the text header, whose first lines must say it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "check.h"
#include "model.h"
#include "probe.h"
#include "report_text.h"
#include "setup_int.h"

enum qpw_variant {
	QPW_NONE,	/* no series */
	QPW_CONFIG_OFF, /* the series without CONFIG_QPW: struct qpw_struct { work } */
	QPW_CONFIG_ON,	/* with CONFIG_QPW: struct qpw_struct { work; cpu } */
	QPW_NOT_STRUCT, /* a typedef and a longer struct name: neither is the series' type */
};

/* The work_struct, qpw_struct pair of include/linux/{workqueue_types,qpw}.h. */
static void add_qpw_struct(struct btf *b, int int_id, bool with_cpu)
{
	int work = btf__add_struct(b, "work_struct", 32);

	CHECK(work > 0);
	CHECK(btf__add_field(b, "data", int_id, 0, 0) == 0);
	CHECK(btf__add_struct(b, "qpw_struct", with_cpu ? 40 : 32) > 0);
	CHECK(btf__add_field(b, "work", work, 0, 0) == 0);
	if (with_cpu)
		CHECK(btf__add_field(b, "cpu", int_id, 256, 0) == 0);
}

/* A raw BTF file like a kernel's of that variant, with lru_add_drain_all(): its path. */
static void write_btf(enum qpw_variant v, char *path, size_t size)
{
	struct btf *b = btf__new_empty();
	const void *raw;
	__u32 len = 0;
	int id, proto, fd;

	CHECK(b != NULL);
	if (!b)
		return;
	id = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	proto = btf__add_func_proto(b, 0);
	CHECK(id > 0 && proto > 0);
	CHECK(btf__add_func(b, "lru_add_drain_all", BTF_FUNC_GLOBAL, proto) > 0);
	if (v == QPW_CONFIG_OFF || v == QPW_CONFIG_ON)
		add_qpw_struct(b, id, v == QPW_CONFIG_ON);
	if (v == QPW_NOT_STRUCT) {
		CHECK(btf__add_typedef(b, "qpw_struct", id) > 0);
		CHECK(btf__add_struct(b, "qpw_struct_x", 4) > 0);
	}
	raw = btf__raw_data(b, &len);
	snprintf(path, size, "/tmp/drainstat-test-btf-XXXXXX");
	fd = mkstemp(path);
	CHECK(raw && fd >= 0);
	if (raw && fd >= 0)
		CHECK(write(fd, raw, len) == (ssize_t)len);
	if (fd >= 0)
		close(fd);
	btf__free(b);
}

static struct btf_facts facts_of(enum qpw_variant v)
{
	struct btf_facts f;
	char path[64];

	write_btf(v, path, sizeof(path));
	probe__btf_facts_of_file(path, &f);
	unlink(path);
	CHECK(f.err == 0 && f.parsed);
	CHECK(f.drain_all_id > 0);
	CHECK(!f.ipi_send_cpu);
	return f;
}

/*
 * Found whether or not CONFIG_QPW is on: the kernel's lookup gives no members,
 * and setup says the same either way it finds the facts.
 */
static void test_btf_qpw(void)
{
	CHECK(!facts_of(QPW_NONE).qpw);
	CHECK(!facts_of(QPW_NOT_STRUCT).qpw);
	CHECK(facts_of(QPW_CONFIG_OFF).qpw);
	CHECK(facts_of(QPW_CONFIG_ON).qpw);
}

static void test_btf_unreadable(void)
{
	struct btf_facts f;

	probe__btf_facts_of_file("/nonexistent/vmlinux", &f);
	CHECK(f.err == -ENOENT && f.drain_all_id == -ENOENT && !f.qpw);
}

#define QPW_BLIND                                                                                  \
	"the works of drains, which Queue PerCPU Work may run on the caller's CPU without "        \
	"queueing them: no WORKS, SELF, dispatch, run, lock time, EMPTY, IPIs, victim CPUs or "    \
	"mutex waiters"

/* The header of a run in mode f->mode on a kernel with facts b. */
static char *header(const struct tracer_features *f, const struct btf_facts *b)
{
	char blind[1024], *got = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&got, &len);
	struct model_info info = {
	    .mode = f->mode == MODE_TRACEPOINT ? "tracepoint" : "full",
	    .kernel = "7.4.0-qpw",
	    .entry_visible = f->mode != MODE_TRACEPOINT,
	    .qpw = b->qpw,
	};

	describe__blind_spots(f, false, b->qpw, NULL, blind, sizeof(blind));
	info.blind_spots = blind[0] ? blind : NULL;
	report_text__header(out, &info, "0.0.0");
	fclose(out);
	return got;
}

static void test_header_says_qpw(void)
{
	struct tracer_features full = {
	    .mode = MODE_FULL, .fadvise = true, .ipi = true, .local = true, .own = true};
	struct tracer_features tp = {.mode = MODE_TRACEPOINT, .fadvise = true, .ipi = true};
	struct btf_facts on = facts_of(QPW_CONFIG_ON), none = facts_of(QPW_NONE);
	char *got;

	got = header(&full, &on);
	CHECK_STR(got, "drainstat 0.0.0: mode full, kernel 7.4.0-qpw with Queue PerCPU Work\n"
		       "full mode cannot see " QPW_BLIND "\n");
	free(got);
	got = header(&tp, &on);
	CHECK_STR(got, "drainstat 0.0.0: mode tracepoint, kernel 7.4.0-qpw with Queue PerCPU Work\n"
		       "tracepoint mode cannot see " QPW_BLIND "; nor such drains: DRAINS, WAIT~ "
		       "and ESCALATED count only those that queued works; drain entry or "
		       "exit: WAIT~ is first queue to last work end (a lower bound); no lock "
		       "time, piggybacked or empty drains, local drains\n");
	free(got);
	got = header(&full, &none);
	CHECK_STR(got, "drainstat 0.0.0: mode full, kernel 7.4.0-qpw\n");
	free(got);
}

int main(void)
{
	int failed = 0;

	RUN(test_btf_qpw);
	RUN(test_btf_unreadable);
	RUN(test_header_says_qpw);
	return failed ? 1 : 0;
}
