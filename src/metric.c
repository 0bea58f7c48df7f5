// SPDX-License-Identifier: GPL-2.0
#include "metric.h"
#include "model.h"

/* over p50, p99 and max: a site's and a CPU's alike */
#define DISPATCH_TITLE "---- DISPATCH ---"

const struct metric_desc metric__site_count[SITE_COUNTS] = {
    [SITE_DRAINS] = {"drains", "drains_total", PROM_COUNTER,
		     "Calls of lru_add_drain_all() and lru_cache_disable().", SEEN_ALWAYS,
		     .text = "DRAINS", .text_width = 6},
    [SITE_FORCED_DRAINS] = {"forced_drains", "forced_drains_total", PROM_COUNTER,
			    "Forced drains: lru_cache_disable(), every CPU.", SEEN_ENTRY,
			    .text = "FORCED", .text_width = 6},
    [SITE_EMPTY_DRAINS] =
	{"empty_drains", "empty_drains_total", PROM_COUNTER,
	 "Drains that queued no work and drained nothing (piggybacked, or nothing "
	 "batched).",
	 SEEN_ENTRY | SEEN_WORKS, .text = "EMPTY", .text_width = 5},
    [SITE_OWN_ONLY_DRAINS] = {"own_only_drains", "own_only_drains_total", PROM_COUNTER,
			      "Drains that queued no work but drained the caller's own CPU, "
			      "before the mutex (Linux 6.18 and later).",
			      SEEN_ENTRY | SEEN_LOCAL | SEEN_WORKS, .text = "OWN-ONLY",
			      .text_width = 8},
    [SITE_WORKS] = {"works", "works_total", PROM_COUNTER_BY_KIND,
		    "Works queued by drains; kind=self: on the caller's own CPU.", SEEN_WORKS,
		    .text = "WORKS", .text_width = 5},
    /* in works_total{kind="self"} and {kind="remote"} */
    [SITE_SELF_WORKS] = {"self_works", NULL, PROM_COUNTER, NULL, SEEN_WORKS, .text = "SELF",
			 .text_width = 4},
    [SITE_REMOTE_WORKS] = {"remote_works", NULL, PROM_COUNTER, NULL, SEEN_WORKS, .text = NULL},
    [SITE_IPIS] = {"ipis", "ipis_total", PROM_COUNTER, "IPIs sent to wake the CPUs that got works.",
		   SEEN_IPI | SEEN_WORKS, .text = "IPIS", .text_width = 5},
    [SITE_IN_PLACE] = {"in_place", "in_place_total", PROM_COUNTER,
		       "Other CPUs a drain's caller drained itself, in place, with no work "
		       "(the Per-CPU Work helpers).",
		       SEEN_IN_PLACE, .text = "INPLACE", .text_width = 7},
};

const struct metric_desc metric__site_hist[SITE_HISTS] = {
    [SITE_DISPATCH_NS] = {"dispatch_ns", "dispatch_seconds", PROM_HISTOGRAM,
			  "Work queued to work started on the target CPU.", SEEN_WORKS,
			  .text = DISPATCH_TITLE, .text_max = true},
    [SITE_RUN_NS] = {"run_ns", "run_seconds", PROM_HISTOGRAM,
		     "Work started to work ended on the target CPU.", SEEN_WORKS,
		     .text = "------ RUN ------", .text_max = true},
    [SITE_WAIT_NS] = {"wait_ns", "wait_seconds", PROM_HISTOGRAM,
		      "Time a drain held its caller: entry to exit, or in tracepoint mode "
		      "first queue to last work end (a lower bound).",
		      SEEN_ALWAYS, .text = "-- WAIT ---", .text_bound = "-- WAIT~ --"},
    [SITE_LOCK_NS] = {"lock_ns", "lock_seconds", PROM_HISTOGRAM,
		      "The wait for the drain mutex and the checks: entry, or the end of the "
		      "drain's own local drain (6.18 and later), to the first queued work.",
		      SEEN_ENTRY | SEEN_WORKS, .text = "--- LOCK --"},
    [SITE_LOCAL_NS] = {"local_ns", "local_drains_total", PROM_HIST_COUNT,
		       "Calls of lru_add_drain().", SEEN_LOCAL, .text = NULL},
    [SITE_OWN_NS] = {"own_ns", "own_seconds", PROM_HISTOGRAM,
		     "A drain's own local drain of the caller's CPU, before the mutex (Linux "
		     "6.18 and later).",
		     SEEN_ENTRY | SEEN_LOCAL, .text = "--- OWN ---"},
    [SITE_IN_PLACE_NS] = {"in_place_ns", "in_place_seconds", PROM_HISTOGRAM,
			  "The caller's drain of another CPU in place, each CPU apart.",
			  SEEN_IN_PLACE, .text = "- IN PLACE -"},
};

const struct metric_desc metric__cpu_count[CPU_COUNTS] = {
    [CPU_WORKS] = {"works", "victim_works_total", PROM_COUNTER, "Works run by a CPU for drains.",
		   SEEN_WORKS, .text = "WORKS", .text_width = 6},
    [CPU_SELF_WORKS] = {"self_works", NULL, PROM_COUNTER, NULL, SEEN_WORKS, .text = "SELF",
			.text_width = 4},
    [CPU_IPIS] = {"ipis", NULL, PROM_COUNTER, NULL, SEEN_IPI | SEEN_WORKS, .text = "IPIS",
		  .text_width = 5},
};

const struct metric_desc metric__cpu_hist[CPU_HISTS] = {
    [CPU_DISPATCH_NS] = {"dispatch_ns", "victim_dispatch_seconds_total", PROM_HIST_SUM,
			 "Time works for drains waited to start on a CPU.", SEEN_WORKS,
			 .text = DISPATCH_TITLE, .text_max = true},
    [CPU_RUN_NS] = {"run_ns", "victim_run_seconds_total", PROM_HIST_SUM,
		    "Time a CPU spent running works for drains.", SEEN_WORKS,
		    .text = "--------- RUN ---------", .text_max = true, .text_total = true},
};

bool metric__seen(const struct metric_desc *d, const struct model_info *info)
{
	return (!(d->seen & SEEN_ENTRY) || info->entry_visible) &&
	       (!(d->seen & SEEN_LOCAL) || info->has_local) &&
	       (!(d->seen & SEEN_IPI) || info->has_ipi) &&
	       (!(d->seen & SEEN_WORKS) || !info->works_unseen) &&
	       (!(d->seen & SEEN_IN_PLACE) || info->in_place_seen);
}
