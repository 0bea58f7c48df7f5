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

/*
 * The container a cgroup path names, compactly, raw (escape it):
 * "containerd:0123456789ab" (container__short()); NULL when it names none.
 */
const char *report_text_container(const char *cgroup, char *buf, size_t size);

#endif /* REPORT_TEXT_INT_H */
