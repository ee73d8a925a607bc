/* SPDX-License-Identifier: Apache-2.0
 *
 * rcu.h - publishing configuration to the workers.
 *
 * Workers hold pointers to immutable objects (services, nexthops, replicate
 * entries, poll lists) only between two quiescent-state reports. The main
 * lcore replaces an object by storing a new pointer and hands the old one to
 * e3_rcu_defer(): it is freed once every worker has reported quiescence.
 */
#ifndef E3_RCU_H
#define E3_RCU_H

#include <stdint.h>

int e3_rcu_init(unsigned n_threads);
/* Call fn(arg) after a grace period (on the main lcore). */
void e3_rcu_defer(void (*fn)(void *), void *arg);
/* free(p) after a grace period. */
void e3_rcu_free(void *p);
/* Run the callbacks whose grace period is over. */
void e3_rcu_reclaim(void);
/* Block until every worker has passed a quiescent state. */
void e3_rcu_sync(void);

#define E3_RCU_GET(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define E3_RCU_SET(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

#endif
