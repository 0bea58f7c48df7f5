// SPDX-License-Identifier: GPL-2.0
/*
 * The text report of a random model, with -s and -H, and the event of each of
 * its drains in flight: nothing unprintable may reach a terminal, whatever bytes
 * a kernel module named its functions or a task its comm; every drain in flight
 * has its line. An odd first byte instead escapes the rest of the input alone with
 * escape__text() into a buffer of random size.
 */
#include <string.h>

#include "container.h"
#include "escape.h"
#include "random_model.h"
#include "report_text.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026: where the CGROUP column cuts a path */

/* Printable ASCII, '\n' and drainstat's own "…" only, and a '\n' at the end. */
static void check_printable(const char *text, size_t len)
{
	size_t i;

	FUZZ_CHECK(len && text[len - 1] == '\n', "no '\\n' at the end");
	for (i = 0; i < len; i++) {
		if (!strncmp(text + i, ELLIPSIS, 3)) {
			i += 2;
			continue;
		}
		FUZZ_CHECK(text[i] == '\n' || (text[i] >= 0x20 && text[i] < 0x7f),
			   "byte 0x%02x at %zu of:\n%s", (unsigned char)text[i], i, text);
	}
}

/*
 * " (pod/NS/NAME, containerd:0123456789ab)", " (pod/NS/NAME)" or
 * " (containerd:0123456789ab)" for what cgroup and pod name, escaped; else "".
 */
static const char *container_shown(const char *cgroup, const struct model_pod *pod, char *buf,
				   size_t size)
{
	char raw[CONTAINER_ID_MAX + 32], shown[ESCAPE_SIZE(sizeof(raw))], pods[700];
	struct container c;
	bool has = cgroup && container__parse(cgroup, &c) && container__short(&c, raw, sizeof(raw));

	buf[0] = '\0';
	if (has)
		escape__text(raw, sizeof(raw), shown, sizeof(shown));
	if (pod->name) {
		snprintf(pods, sizeof(pods), "pod/%s/%s", pod->namespace, pod->name);
		snprintf(buf, size, " (%s%s%s)", pods, has ? ", " : "", has ? shown : "");
	} else if (has) {
		snprintf(buf, size, " (%s)", shown);
	}
	return buf;
}

/*
 * Each drain in flight has its line, comm, site and cgroup escaped (and the
 * container it names): the drains in flight were printed, so
 * check_printable() saw them.
 */
static void check_in_flight_shown(const char *text, const struct model *m)
{
	char comm[ESCAPE_SIZE(DRAINSTAT_COMM_LEN)], site[ESCAPE_SIZE(MODEL_NAME_LEN)];
	char line[sizeof(comm) + sizeof(site) + ESCAPE_SIZE(301) + 1200], *cgroup;
	char container[ESCAPE_SIZE(CONTAINER_ID_MAX + 32) + 720];
	int i;

	for (i = 0; i < m->nr_in_flight; i++) {
		const struct model_drain *md = &m->in_flight[i];

		cgroup = escape__dup(md->cgroup ? md->cgroup : "");
		FUZZ_CHECK(cgroup, "escape__dup");
		snprintf(
		    line, sizeof(line), "\n  %s pid %u tid %u on CPU %d, site %s%s%s%s: in flight ",
		    escape__text(md->comm, sizeof(md->comm), comm, sizeof(comm)), md->pid, md->tid,
		    md->caller_cpu, escape__text(md->site, sizeof(md->site), site, sizeof(site)),
		    !md->cgroup				? ""
		    : strncmp(md->cgroup, "cgroup:", 7) ? ", cgroup "
							: ", ",
		    cgroup, container_shown(md->cgroup, &md->pod, container, sizeof(container)));
		free(cgroup);
		FUZZ_CHECK(strstr(text, line), "no line for drain in flight %d:%s\nin:\n%s", i,
			   line, text);
	}
}

/* The slow-drain log's event of each drain in flight: printable too. */
static void fuzz_events(const struct model *m)
{
	char *text;
	size_t len;
	FILE *f;
	int i;

	for (i = 0; i < m->nr_in_flight; i++) {
		f = open_memstream(&text, &len);
		FUZZ_CHECK(f, "open_memstream");
		report_text__drain_in_flight(f, &m->in_flight[i], m->info.stuck_ns, "12:34:56");
		fclose(f);
		check_printable(text, len);
		free(text);
	}
}

/*
 * The CPU table: a row for every CPU, or above 16 of them (without all) 5 to
 * 10 rows and "rest" for the others, whose works add up to every CPU's; none
 * with Queue PerCPU Work.
 */
static void check_cpu_rows(const char *text, const struct model *m, bool all)
{
	const char *table = strstr(text, "\nCPU   WORKS"), *p;
	unsigned long long works = 0, sum = 0, n;
	int rows = 0, i, rest = 0;

	for (i = 0; i < m->nr_cpus; i++)
		works += m->cpus[i].count[CPU_WORKS];
	FUZZ_CHECK((m->nr_cpus && !m->info.works_unseen) == !!table,
		   "a CPU table for %d CPUs%s: %s", m->nr_cpus,
		   m->info.works_unseen ? " (Queue PerCPU Work)" : "", table ? "shown" : "missing");
	for (p = table ? strchr(table + 1, '\n') : NULL; p && p[1] && p[1] != '\n';
	     p = strchr(p + 1, '\n')) {
		if (sscanf(p + 1, "%*d %llu", &n) == 1 || sscanf(p + 1, "rest %llu", &n) == 1)
			sum += n;
		rest += !strncmp(p + 1, "rest ", 5);
		rows += !strncmp(p + 1, "rest ", 5) ? 0 : 1;
	}
	if (!table)
		return;
	if (all || m->nr_cpus <= 16) {
		FUZZ_CHECK(rows == m->nr_cpus && !rest, "%d CPU rows and %d rest for %d CPUs", rows,
			   rest, m->nr_cpus);
	} else {
		FUZZ_CHECK(rows >= 5 && rows <= 10 && rest == 1,
			   "%d CPU rows and %d rest for %d CPUs", rows, rest, m->nr_cpus);
	}
	FUZZ_CHECK(sum == works, "the CPU table's works add up to %llu, not %llu", sum, works);
}

static void fuzz_report(struct bytes *b)
{
	struct random_model rm;
	struct text_opts opts = {};
	char *text;
	size_t len;
	FILE *f;

	opts.stacks = bytes__bool(b);
	opts.histograms = bytes__bool(b);
	opts.all_cpus = bytes__bool(b);
	opts.timestamp = bytes__bool(b) ? "12:34:56" : NULL;
	FUZZ_CHECK(!random_model__fill(&rm, b, true), "out of memory");
	f = open_memstream(&text, &len);
	FUZZ_CHECK(f, "open_memstream");
	report_text__header(f, &rm.m.info, "0.1.0");
	report_text__print(f, &rm.m, &opts);
	fclose(f);
	check_printable(text, len);
	check_in_flight_shown(text, &rm.m);
	check_cpu_rows(text, &rm.m, opts.all_cpus);
	free(text);
	fuzz_events(&rm.m);
	random_model__free(&rm);
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Printable, within size, and \xHH read back gives a prefix of the bytes before a NUL. */
static void fuzz_escape(struct bytes *b)
{
	size_t size = (size_t)bytes__range(b, 1, 256), i, o = 0, n;
	char *s = malloc(b->left ? b->left : 1), *buf = malloc(size);

	FUZZ_CHECK(s && buf, "out of memory");
	memcpy(s, b->p, b->left);
	n = strnlen(s, b->left);
	escape__text(s, b->left, buf, size);
	FUZZ_CHECK(strnlen(buf, size) < size, "no NUL within %zu bytes", size);
	for (i = 0; buf[i]; i++, o++) {
		int hi, lo;

		FUZZ_CHECK(buf[i] >= 0x20 && buf[i] < 0x7f, "byte 0x%02x escaped", buf[i]);
		if (buf[i] != '\\') {
			FUZZ_CHECK(o < n && buf[i] == s[o], "'%s' is not the input", buf);
			continue;
		}
		FUZZ_CHECK(buf[i + 1] == 'x', "'%s': a backslash without x", buf);
		hi = hex_value(buf[i + 2]);
		lo = hex_value(buf[i + 3]);
		FUZZ_CHECK(hi >= 0 && lo >= 0 && o < n && (unsigned char)s[o] == (hi << 4 | lo),
			   "'%s' does not read back", buf);
		i += 3;
	}
	free(buf);
	free(s);
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	struct bytes b = {data, size};

	if (bytes__u8(&b) & 1)
		fuzz_escape(&b);
	else
		fuzz_report(&b);
	return 0;
}
