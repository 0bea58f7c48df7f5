// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"

__u8 bytes__u8(struct bytes *b)
{
	if (!b->left)
		return 0;
	b->left--;
	return *b->p++;
}

bool bytes__bool(struct bytes *b)
{
	return bytes__u8(b) & 1;
}

__u64 bytes__range(struct bytes *b, __u64 lo, __u64 hi)
{
	__u64 span = hi - lo, v = 0;
	int shift;

	if (lo >= hi)
		return lo;
	for (shift = 0; shift < 64 && span >> shift; shift += 8)
		v |= (__u64)bytes__u8(b) << shift;
	return span == ~0ULL ? v : lo + v % (span + 1);
}

__u64 bytes__u64(struct bytes *b)
{
	return bytes__range(b, 0, ~0ULL);
}

size_t bytes__string(struct bytes *b, char *buf, size_t size)
{
	size_t len = bytes__u8(b) % size;

	len = len < b->left ? len : b->left;
	memcpy(buf, b->p, len);
	buf[len] = '\0';
	b->p += len;
	b->left -= len;
	return len;
}

int memfile__open(struct memfile *mf)
{
	if (mf->path[0])
		return 0;
	mf->fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	if (mf->fd < 0)
		return -errno;
	snprintf(mf->path, sizeof(mf->path), "/proc/self/fd/%d", mf->fd);
	return 0;
}

int memfile__reset(struct memfile *mf)
{
	if (ftruncate(mf->fd, 0) || lseek(mf->fd, 0, SEEK_SET))
		return -errno;
	return 0;
}

int memfile__append(struct memfile *mf, const void *data, size_t len)
{
	const char *p = data;
	ssize_t n;

	while (len) {
		n = write(mf->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	__u32 cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* RFC 3629: the shortest form only, no surrogates, nothing past U+10FFFF */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000))
		return 0;
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}
