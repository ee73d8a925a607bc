/* SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tables/label_table.h"
#include "base/mem.h"
#include "base/rcu.h"

uint64_t *e3_label_tbl;
struct e3_replicate **e3_repl_tbl;

/* Free replicate slots: a stack, used only by the main lcore. */
static uint32_t *repl_free;
static uint32_t repl_nfree;
static uint32_t n_labels;

int e3_label_table_init(void)
{
	e3_label_tbl = e3_table_alloc(sizeof(uint64_t) * E3_LABEL_SPACE);
	e3_repl_tbl = calloc(E3_MAX_REPLICATE, sizeof(*e3_repl_tbl));
	repl_free = malloc(sizeof(uint32_t) * E3_MAX_REPLICATE);
	if (!e3_label_tbl || !e3_repl_tbl || !repl_free)
		return -1;
	/* Backed whole at start: a node that starts has the memory for every
	 * label it may be given. */
	memset(e3_label_tbl, 0, sizeof(uint64_t) * E3_LABEL_SPACE);
	for (uint32_t i = 0; i < E3_MAX_REPLICATE; i++)
		repl_free[i] = E3_MAX_REPLICATE - 1 - i;
	repl_nfree = E3_MAX_REPLICATE;
	return 0;
}

void e3_label_set(uint32_t label, struct e3_label_entry e)
{
	union e3_label_word w = { .e = e };
	bool was = e3_label_get(label).type != E3_LBL_NONE;

	__atomic_store_n(&e3_label_tbl[label], w.u64, __ATOMIC_RELEASE);
	n_labels += (e.type != E3_LBL_NONE) - was;
}

uint32_t e3_label_count(void)
{
	return n_labels;
}

int e3_repl_publish(struct e3_replicate *r)
{
	if (repl_nfree == 0)
		return -1;
	uint32_t slot = repl_free[--repl_nfree];

	E3_RCU_SET(e3_repl_tbl[slot], r);
	return (int)slot;
}

static void slot_free(void *arg)
{
	uint32_t slot = (uint32_t)(uintptr_t)arg;

	free(e3_repl_tbl[slot]);
	e3_repl_tbl[slot] = NULL;
	repl_free[repl_nfree++] = slot;
}

void e3_repl_release(uint32_t slot)
{
	/* The label entry no longer points here; workers that read it before
	 * may still use the object until their next quiescent state. */
	e3_rcu_defer(slot_free, (void *)(uintptr_t)slot);
}
