/* SPDX-License-Identifier: Apache-2.0
 *
 * defs.h - the types every layer of e3-vswitchd shares: limits, error
 * codes, the drop reasons, and the configuration of each object as the
 * control operations (node/node.h) take it and the tables hold it.
 */
#ifndef E3_DEFS_H
#define E3_DEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define E3_ERRLEN 256

/* Limits: datapath/api/schema.yaml. */
#include "base/drops_gen.h"
#include "base/limits_gen.h"

#define E3_VLAN_UNTAGGED  4096     /* circuit "vlan" meaning: the whole untagged port */
#define E3_NONE           UINT32_MAX

/* Error codes (negative on return). The RPC layer maps them to JSON-RPC
 * error codes: see docs/control-api.md. */
enum e3_err {
	E3_OK = 0,
	E3_EINVAL = 1,   /* a parameter is missing, of the wrong type or out of range */
	E3_ENOENT = 2,   /* the object (or one it refers to) does not exist */
	E3_EEXIST = 3,   /* conflict: e.g. (port, VLAN) already used by another circuit */
	E3_EBUSY = 4,    /* the object is referenced by another and cannot be deleted */
	E3_ENOSPC = 5,   /* a table or pool is full */
	E3_EIO = 6,      /* DPDK refused (device probe, queue setup, ...) */
};

enum e3_port_kind { E3_PORT_CUSTOMER = 0, E3_PORT_FABRIC = 1 };

enum e3_poll_mode { E3_POLL_BUSY = 0, E3_POLL_ADAPTIVE = 1 };

/* Label entry types (DESIGN.md "Tables and label semantics"). */
enum e3_label_type {
	E3_LBL_NONE = 0,
	E3_LBL_SWAP = 1,      /* transit: write nhlfe's label/MACs, TTL-1, send */
	E3_LBL_ELINE = 2,     /* terminate into an E-Line's local circuit */
	E3_LBL_ELAN = 3,      /* terminate known unicast into an E-LAN, learn against source */
	E3_LBL_REPLICATE = 4, /* tree: RPF check, copy to other branches, maybe deliver locally */
	E3_LBL_OAM = 5,       /* end of a path check's LSP: its G-ACh goes to BFD session `session` */
	E3_LBL_CIRCUIT = 6,   /* deliver to a multi-homed site's circuit here (another leaf's redirect) */
};

enum e3_service_type { E3_SVC_ELINE = 1, E3_SVC_ELAN = 2 };

/* Storm control: limits in frames per second on what an E-LAN floods from
 * a circuit, by class; 0 = no limit. The classes' order is their drop
 * reasons' (E3_DROP_STORM_BROADCAST + class). */
enum e3_storm_class { E3_STORM_BROADCAST, E3_STORM_MULTICAST, E3_STORM_UNKNOWN, E3_STORM_MAX };
struct e3_storm {
	union {
		struct { uint32_t broadcast, multicast, unknown; };
		uint32_t pps[E3_STORM_MAX];
	};
};

/* The objects' conf structs: datapath/api/schema.yaml. */
#include "base/conf_gen.h"

/* Every reason a frame is dropped; each has a counter (per port and total).
 * A stage declares the reasons it drops for beside its code
 * (E3_DROP_REASON); datapath/api/gen.py gathers them into E3_DROPS. */
enum e3_drop {
#define E3_DROP_ENUM(e, name, meaning) E3_DROP_##e,
	E3_DROPS(E3_DROP_ENUM)
#undef E3_DROP_ENUM
	E3_DROP_MAX
};

const char *e3_drop_name(enum e3_drop d);

/* E3_DROP_REASON(ENUM, name, meaning): a stage drops frames for this reason.
 * It compiles only if E3_DROPS (drops_gen.h) has the reason. */
#define E3_DROP_REASON(e, name, meaning) \
	_Static_assert(E3_DROP_##e < E3_DROP_MAX, name ": " meaning)

/* ---- ports ---------------------------------------------------------------- */
struct e3_port_info {
	struct e3_port_conf conf;
	uint16_t dpdk_port_id;
	bool link_up;
	uint32_t speed_mbps;
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
	uint64_t tx_retries;     /* extra TX bursts after a partial one (vhost-user) */
	uint64_t drops[E3_DROP_MAX];
	/* The device's own count per receive queue (0 where it keeps none):
	 * shows a multi-queue port's traffic spread. */
	uint16_t n_rxq;
	uint64_t rxq_pkts[E3_MAX_QUEUES];
};

/* ---- BFD sessions (in-band OAM, docs/ha.md) --------------------------------- */
struct e3_bfd_info {
	struct e3_bfd_conf conf;
	char port[32];
	const char *state, *remote_state, *diag;
	uint32_t local_disc, remote_disc;
	uint32_t tx_interval_us, detect_time_us, remote_min_rx_us, remote_min_tx_us;
	uint8_t remote_multiplier;
	bool usable;             /* the protection byte: primary paths watching it are used */
	bool paused;             /* the neighbour is pausing (oam.h) */
	uint64_t tx_pkts, rx_pkts, ups, downs, pauses;
	uint64_t since_ms;       /* time since the last state change */
};

/* ---- services ------------------------------------------------------------- */
/* A service's counters, as every reader names them. Refused learning has
 * one per reason: the service's MAC limit, a full table, a frozen
 * (flapping) MAC, a full learn queue. */
#define E3_SVC_COUNTERS(X) \
	X(rx_pkts) X(rx_bytes) X(tx_pkts) X(tx_bytes) X(flooded) X(learned) X(moves) \
	X(limit_hits) X(table_full) X(moves_refused) X(learn_lost) X(bum_filtered) X(redirected)

struct e3_service_info {
	const struct e3_service_conf *conf;
	uint32_t n_circuits;
	uint32_t n_macs;
	uint32_t frozen;         /* MACs frozen now (move damping) */
#define E3_SVC_COUNTER_FIELD(name) uint64_t name;
	E3_SVC_COUNTERS(E3_SVC_COUNTER_FIELD)
#undef E3_SVC_COUNTER_FIELD
};

/* ---- circuits: (customer port, VLAN or untagged) -> service ---------------- */
static inline bool e3_site_peer(const struct e3_site *f, uint16_t source)
{
	for (unsigned i = 0; i < f->n_peers; i++)
		if (f->peers[i] == source)
			return true;
	return false;
}

/* Whether BUM from the fabric that carries source stays out of the site;
 * flooded: it came by a flood tree, of which every leaf has a copy (not
 * by a unicast label, which only this leaf got). */
static inline bool e3_site_filtered(const struct e3_site *f, uint16_t source, bool flooded)
{
	return (flooded && f->non_df) || (f->source != 0 && source == f->source) ||
	       e3_site_peer(f, source);
}

static inline bool e3_site_any(const struct e3_site *f)
{
	return f->non_df || f->floods || f->source || f->label || f->redirect || f->n_peers;
}

struct e3_circuit_info {
	struct e3_circuit_conf conf;
	uint32_t macs;           /* learned on it now */
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
	uint64_t limit_hits;     /* MACs refused at its mac_limit */
	uint64_t announced;      /* MACs announced into it (e3_circuit_conf.announce) */
};

/* ---- label entries ---------------------------------------------------------- */
struct e3_label_info {
	const struct e3_label_conf *conf;
	uint64_t pkts;
};

/* ---- MAC table ---------------------------------------------------------------- */
struct e3_mac_info {
	uint32_t service;
	uint8_t mac[6];
	bool remote;             /* false: local circuit; true: remote endpoint */
	uint32_t circuit;        /* when !remote */
	uint16_t source;         /* when remote */
	uint32_t age_s;          /* seconds since last seen */
	uint32_t frozen_s;       /* frozen for flapping: seconds left; 0 = not frozen */
};
typedef void (*e3_mac_walk_fn)(const struct e3_mac_info *m, void *arg);

/* ---- counters ------------------------------------------------------------------- */
struct e3_worker_info {
	unsigned lcore;
	uint64_t polls, busy_polls, idle_sleeps, rx_pkts;
	uint16_t n_queues;
	struct { uint16_t port_id; uint16_t queue; char port[32]; } queues[E3_MAX_PORTS * E3_MAX_QUEUES];
};

/* ---- packet trace ------------------------------------------------------------------ */
struct e3_trace_filter {
	char port[32];           /* "" = any port */
	int32_t vlan;            /* -1 = any; outermost VLAN on a customer port */
	int64_t label;           /* -1 = any; the label on a fabric port */
};
struct e3_trace_record {
	uint64_t seq;            /* order of arrival */
	uint64_t tsc_ns;         /* time since start, ns */
	char rx_port[32];
	uint16_t len;            /* frame length on arrival */
	uint16_t cap_len;        /* bytes kept in data[] */
	uint8_t data[256];       /* the frame as received */
	char path[512];          /* one line per stage: "customer-in port=c1 vlan=1000\nelan-lookup ...\n" */
	char verdict[64];        /* "tx fab0 label 100" | "drop ttl_expired" | "flood 3 copies" */
};
typedef void (*e3_trace_walk_fn)(const struct e3_trace_record *r, void *arg);

#endif
