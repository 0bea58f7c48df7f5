/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text report's insides, shared by its files only: report_text.c (the
 * report) and report_text_drain.c (the drains one by one).
 */
#ifndef REPORT_TEXT_INT_H
#define REPORT_TEXT_INT_H

#include <stdbool.h>
#include <stdio.h>
#include "model.h"

/* The report's drains in flight, their works and with stacks their stacks. */
void report_text_in_flight(FILE *f, const struct model *m, bool stacks);

/* report_text_container()'s buffer: "pod/", a namespace, '/', a pod's name */
#define REPORT_TEXT_CONTAINER_LEN 336

/*
 * The pod or container a cgroup names, compactly, raw (escape it):
 * "pod/default/web-0" where its pod's name is known, else the container's
 * "containerd:0123456789ab" (container__short()); NULL when it names neither.
 */
const char *report_text_container(const char *cgroup, const struct model_pod *pod, char *buf,
				  size_t size);

#endif /* REPORT_TEXT_INT_H */
