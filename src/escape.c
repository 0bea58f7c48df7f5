// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

const char *escape__text(const char *s, size_t len, char *buf, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		bool plain = c >= 0x20 && c < 0x7f && c != '\\';

		if (o + (plain ? 1 : 4) >= size)
			break;
		if (plain)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
	}
	buf[o] = '\0';
	return buf;
}

char *escape__dup(const char *path)
{
	size_t len = strnlen(path, PATH_MAX);
	char *buf = malloc(ESCAPE_SIZE(len));

	return buf ? (char *)escape__text(path, len, buf, ESCAPE_SIZE(len)) : NULL;
}
