/* SPDX-License-Identifier: Apache-2.0
 *
 * ctl_int.h - what the control files share between themselves (not part of
 * ctl.h's API).
 */
#ifndef E3_CTL_INT_H
#define E3_CTL_INT_H

#include <stdbool.h>
#include <stdint.h>

/* Record whether the operation changed anything; returns 0. */
int e3_ctl_ok(bool changed);
bool e3_ctl_nexthop_used(uint32_t id);
/* A BFD session takes (1) or drops (-1) a reference on its nexthop. */
void e3_ctl_nexthop_ref(uint32_t id, int d);

#endif
