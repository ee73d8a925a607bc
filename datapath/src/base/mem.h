/* SPDX-License-Identifier: Apache-2.0
 *
 * mem.h - memory for the tables the workers read on every frame.
 */
#ifndef E3_MEM_H
#define E3_MEM_H

#include <stddef.h>

/* bytes of zeroed memory for the life of the process, on 2 MiB pages
 * where the kernel gives them (transparent huge pages, asked for), else on
 * 4 KiB ones; NULL if none. A lookup at a random place in a big table then
 * costs a cache miss, not also a TLB miss and a page walk. Pages are
 * backed when first touched. */
void *e3_table_alloc(size_t bytes);

#endif
