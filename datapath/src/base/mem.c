/* SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <sys/mman.h>

#include <rte_common.h>

#include "base/mem.h"

#define HUGE_2M ((size_t)2 << 20)

void *e3_table_alloc(size_t bytes)
{
	/* Whole 2 MiB pages from a 2 MiB boundary (one more mapped, then the
	 * slack either side unmapped), so the advice covers all of it. */
	size_t len = RTE_ALIGN_CEIL(bytes, HUGE_2M);
	uint8_t *m = mmap(NULL, len + HUGE_2M, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	uint8_t *p = RTE_PTR_ALIGN_CEIL(m, HUGE_2M);

	if (p > m)
		munmap(m, (size_t)(p - m));
	munmap(p + len, (size_t)(m + HUGE_2M - p));
	/* Advice only: with THP off, the table lives on 4 KiB pages. */
	(void)madvise(p, len, MADV_HUGEPAGE);
	return p;
}
