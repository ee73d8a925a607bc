/* SPDX-License-Identifier: Apache-2.0
 *
 * pwoam.c - the PW OAM log's queue (workers to the main lcore) and the
 * clocks of MPLS echo (pwoam.h).
 */
#include <string.h>
#include <time.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "pipeline/pwoam.h"

#define QUEUE 1024
#define NTP_UNIX_OFFSET 2208988800ull   /* 1900 to 1970, in seconds */

const char *const e3_pwoam_kind_names[E3_PWOAM_KINDS] = {
	[E3_PWOAM_SENT] = "sent", [E3_PWOAM_TRANSIT] = "transit",
	[E3_PWOAM_EGRESS] = "egress", [E3_PWOAM_REPLY] = "reply",
};

static struct rte_ring *queue;
static uint32_t sent[E3_PWOAM_HANDLES];   /* 0: none (a handle is never 0) */
static unsigned sent_next;

int e3_pwoam_init(void)
{
	queue = rte_ring_create_elem("e3_pwoam", sizeof(struct e3_pwoam_event), QUEUE, SOCKET_ID_ANY,
				     RING_F_SC_DEQ);
	return queue == NULL ? -1 : 0;
}

void e3_pwoam_log(const struct e3_pwoam_event *ev)
{
	rte_ring_mp_enqueue_elem(queue, (void *)ev, sizeof(*ev));
}

void e3_pwoam_sent(uint32_t handle)
{
	for (unsigned k = 0; k < E3_PWOAM_HANDLES; k++)
		if (__atomic_load_n(&sent[k], __ATOMIC_RELAXED) == handle)
			return;
	__atomic_store_n(&sent[sent_next++ % E3_PWOAM_HANDLES], handle, __ATOMIC_RELEASE);
}

bool e3_pwoam_ours(uint32_t handle)
{
	for (unsigned k = 0; k < E3_PWOAM_HANDLES; k++)
		if (handle != 0 && __atomic_load_n(&sent[k], __ATOMIC_ACQUIRE) == handle)
			return true;
	return false;
}

unsigned e3_pwoam_take(struct e3_pwoam_event *out, unsigned n)
{
	return rte_ring_sc_dequeue_burst_elem(queue, out, sizeof(*out), n, NULL);
}

uint64_t e3_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void e3_ntp_write(uint64_t ns, void *at)
{
	rte_be32_t t[2] = {
		rte_cpu_to_be_32((uint32_t)(ns / 1000000000ull + NTP_UNIX_OFFSET)),
		rte_cpu_to_be_32((uint32_t)(((ns % 1000000000ull) << 32) / 1000000000ull)),
	};

	memcpy(at, t, sizeof(t));
}

uint64_t e3_ntp_read(const void *at)
{
	rte_be32_t t[2];

	memcpy(t, at, sizeof(t));
	uint64_t sec = rte_be_to_cpu_32(t[0]) - NTP_UNIX_OFFSET;

	return sec * 1000000000ull + (((uint64_t)rte_be_to_cpu_32(t[1]) * 1000000000ull) >> 32);
}
