/* SPDX-License-Identifier: GPL-2.0 */
/* One run of drainstat: setup (setup.c), then reports until the end; returns the exit code. */
#ifndef SESSION_H
#define SESSION_H

#include "cli.h"

int session__run(const struct options *opts);

#endif /* SESSION_H */
