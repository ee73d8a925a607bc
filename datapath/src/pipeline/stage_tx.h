/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_tx.h - leaving the pipeline (stage_tx.c): the worker's TX buffers,
 * drops, copies, and the slow paths of the output helpers (stage_out.h).
 * Each takes ownership of the mbuf it is given.
 */
#ifndef E3_STAGE_TX_H
#define E3_STAGE_TX_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "base/defs.h"
#include "pipeline/context.h"
#include "pipeline/stages.h"

/* Send port's buffer now (it is full, or the burst is done). */
void e3_tx_flush_port(struct e3_worker *w, uint16_t port);
/* Flushes every buffer; with tsc (not 0) each is timed as its port's tx
 * from TSC tsc, and the TSC when done is returned (else 0). */
uint64_t e3_tx_flush(struct e3_worker *w, uint64_t tsc);

/* Buffer m for port; the buffers go out once per burst (e3_tx_flush). */
static inline void e3_tx(struct e3_worker *w, uint16_t port, struct rte_mbuf *m)
{
	struct e3_txbuf *t = &w->tx[port];

	t->m[t->n++] = m;
	w->tx_dirty |= 1ull << port;
	if (unlikely(t->n == E3_TXBUF))
		e3_tx_flush_port(w, port);
}

/* A private header of hlen bytes in front of m's data from byte skip on:
 * a header mbuf chained to m (or NULL when the pool is empty). The caller
 * fills rte_pktmbuf_mtod(result). */
struct rte_mbuf *e3_hdr_push(struct rte_mbuf *m, uint16_t skip, uint16_t hlen);
/* VLAN tags at the start of a customer frame, at most two (the MTU rule). */
unsigned e3_customer_tags(const struct rte_mbuf *m);

/* Drop frame i of the burst (or an extra copy m of it, on the receiving
 * port's counters). */
void e3_drop(struct e3_burst *b, unsigned i, enum e3_drop why);
void e3_drop_copy(struct e3_burst *b, unsigned i, struct rte_mbuf *m, enum e3_drop why);
/* Drop m (frame i or a copy) counted on port (an egress port's oversize). */
void e3_drop_on(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint16_t port, enum e3_drop why);

/* A copy of m for one more destination, or NULL (counted as no_mbuf): a
 * full copy up to E3_COPY_MAX bytes, else an indirect clone that shares m's
 * data, so the output helpers give it a private header mbuf and never
 * write into shared data. Make every copy before handing m itself on. */
struct rte_mbuf *e3_clone(struct e3_burst *b, unsigned i, struct rte_mbuf *m);

#endif
