/* SPDX-License-Identifier: Apache-2.0
 *
 * context.c - the workers' contexts, by index: the pipeline's control-side
 * code (traces, sFlow samples) reads them from the main lcore.
 */
#include "pipeline/context.h"

struct e3_worker *e3_workers[E3_MAX_WORKERS];
