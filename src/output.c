// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "output.h"
#include "report_json.h"
#include "report_text.h"

struct prom_job {
	const struct model *model;
	struct prom_opts opts;
};

static void emit_prom(FILE *f, const void *arg)
{
	const struct prom_job *job = arg;

	report_prom__print(f, job->model, &job->opts);
}

int output__flush(FILE *f)
{
	errno = 0;
	if (fflush(f) == 0 && !ferror(f))
		return 0;
	return errno ? -errno : -EIO;
}

int output__start(const struct options *o, const struct model_info *info)
{
	if (o->json || o->prom_path)
		return 0;
	report_text__header(stdout, info, DRAINSTAT_VERSION);
	return output__flush(stdout);
}

static void print_text(const struct options *o, const struct model *m)
{
	struct text_opts topts = {.stacks = o->stacks,
				  .histograms = o->histograms,
				  .all_cpus = o->all_cpus || o->victims_set};
	char stamp[16];
	time_t t = time(NULL);

	if (o->interval_ns) {
		strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&t));
		topts.timestamp = stamp;
		fputc('\n', stdout);
	}
	report_text__print(stdout, m, &topts);
}

int output__report(const struct options *o, const struct model *m)
{
	if (o->json)
		report_json__print(stdout, m, DRAINSTAT_VERSION);
	else
		print_text(o, m);
	return output__flush(stdout);
}

int output__export(struct export *e, const struct options *o, const struct model *m,
		   struct prom_memory *memory)
{
	struct prom_job job = {m,
			       {.max_sites = (int)o->prom_sites,
				.cgroup = o->prom_cgroup,
				.version = DRAINSTAT_VERSION,
				.memory = memory}};

	return export__write(e, emit_prom, &job);
}
