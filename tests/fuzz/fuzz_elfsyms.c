// SPDX-License-Identifier: GPL-2.0
/*
 * elfsyms__open() and elfsyms__lookup() on an arbitrary file: the -T log names user frames from the
 * ELF files of whatever process drained, whoever built them. The input is two
 * file offsets to look up (8 bytes each, little-endian), the size of the name
 * buffer (1 byte: 1 to 128), then the file. Whatever it claims, the file holds
 * no more than its budget and a lookup does no more than its work (umaps.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "elfsyms.h"
#include "harness.h"
#include "umaps.h"

#define NAME_MAX_SIZE 128 /* what umaps__describe() gives */

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	static struct memfile mf;
	struct bytes b = {data, size};
	struct elfsyms *es = NULL;
	struct elfsyms_budget budget;
	__u64 offsets[2], off;
	size_t name_size;
	char *name;
	int i, err, fd;

	offsets[0] = bytes__u64(&b);
	offsets[1] = bytes__u64(&b);
	name_size = (size_t)bytes__range(&b, 1, NAME_MAX_SIZE);
	FUZZ_CHECK(!memfile__open(&mf) && !memfile__reset(&mf) &&
		       !memfile__append(&mf, b.p, b.left),
		   "memfd: %s", strerror(errno));
	name = malloc(name_size); /* exactly: ASan sees a write past it */
	FUZZ_CHECK(name, "out of memory");
	fd = open(mf.path, O_RDONLY | O_CLOEXEC);
	FUZZ_CHECK(fd >= 0, "%s: %s", mf.path, strerror(errno));
	err = elfsyms__open(fd, UMAPS_FILE_BYTES, &es);
	FUZZ_CHECK(!err || err == -EINVAL || err == -E2BIG, "open: %d", err);
	for (i = 0; es && i < 2; i++) {
		memset(name, 'x', name_size);
		budget = (struct elfsyms_budget){.bytes = UMAPS_FILE_BYTES - elfsyms__bytes(es),
						 .work = UMAPS_FRAME_WORK};
		err = elfsyms__lookup(es, offsets[i], name, name_size, &off, &budget);
		FUZZ_CHECK(!err || err == -ENOENT || err == -EINVAL || err == -E2BIG,
			   "lookup of 0x%llx: %d", (unsigned long long)offsets[i], err);
		FUZZ_CHECK(elfsyms__bytes(es) <= UMAPS_FILE_BYTES, "%llu bytes held",
			   (unsigned long long)elfsyms__bytes(es));
		FUZZ_CHECK(err || memchr(name, '\0', name_size), "name at 0x%llx not terminated",
			   (unsigned long long)offsets[i]);
	}
	elfsyms__free(es);
	free(name);
	return 0;
}
