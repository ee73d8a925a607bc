/* SPDX-License-Identifier: Apache-2.0
 *
 * node.h - the control operations of e3-vswitchd.
 *
 * This is the narrow API between the forwarding core (tables, stages,
 * workers, ports) and everything that changes it: the JSON-RPC handlers,
 * config load, and the unit tests. Every function here:
 *   - runs on the main (control) lcore only, never on a worker;
 *   - validates all of its input first and changes nothing on error;
 *   - publishes changes so that workers never see a half-built object
 *     (8-byte atomic stores for table entries, RCU-deferred frees for
 *     replaced objects), so traffic never stops while tables change;
 *   - is idempotent: adding an object that exists with the same
 *     parameters succeeds and changes nothing; adding it with different
 *     parameters replaces it atomically (that is how paths are re-pointed);
 *   - returns 0 or a negative E3_E* code and, on error, writes a one-line
 *     human message into err (size E3_ERRLEN).
 *
 * e3_node_changed() tells whether the last successful *_add / settings_set /
 * trace_start changed anything (the RPC's {"changed": ...}).
 * e3_node_port_get/_walk report the effective MAC in conf.mac and the
 * effective worker per queue in conf.worker[].
 */
#ifndef E3_NODE_H
#define E3_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/defs.h"
#include "pipeline/runtime.h"

/* The control lock: held by the main loop while it runs RPC handlers and
 * housekeeping (learning, aging, RCU reclaim, link polling); taken by any
 * other control thread (DPDK telemetry callbacks) before calling these
 * functions. Workers never take it. */
void e3_node_lock(void);
void e3_node_unlock(void);
/* After a successful *_add / settings_set: did it change anything? (false
 * for an idempotent repeat). */
bool e3_node_changed(void);
enum e3_poll_mode e3_node_poll_mode(void);
/* "adaptive" or "busy". */
const char *e3_node_poll_mode_name(void);

/* ---- global settings ---------------------------------------------------- */
int e3_node_settings_get(struct e3_settings *out);
int e3_node_settings_set(const struct e3_settings *s, char *err);
/* Identity of this datapath run: a random UUID chosen at start, so an agent
 * can tell that the datapath restarted. */
const char *e3_node_boot_id(void);
/* Seconds since this datapath started. */
double e3_node_uptime_s(void);

/* ---- ports ---------------------------------------------------------------- */
int e3_node_port_add(const struct e3_port_conf *c, char *err);
/* The directories a port's files may be in (devargs.c): sockets under
 * ports; net_pcap's files under pcaps, and net_pcap refused without it. */
void e3_node_set_port_dirs(const char *ports, const char *pcaps);
/* Is devargs an allowed device with allowed keys? 0, or -E3_EINVAL with
 * a message naming the device or the key. */
int e3_node_devargs_check(const char *devargs, char *err);
int e3_node_port_del(const char *name, char *err);            /* EBUSY if a nexthop or circuit uses it */
int e3_node_port_get(const char *name, struct e3_port_info *out, char *err);
/* Iterate: calls fn for each port; same pattern for every *_walk below. */
typedef void (*e3_port_walk_fn)(const struct e3_port_info *p, void *arg);
void e3_node_port_walk(e3_port_walk_fn fn, void *arg);

/* ---- nexthops: (fabric port, neighbour MAC) ------------------------------- */
int e3_node_nexthop_add(const struct e3_nexthop_conf *c, char *err);
int e3_node_nexthop_del(uint32_t id, char *err);              /* EBUSY if an nhlfe uses it */
typedef void (*e3_nexthop_walk_fn)(const struct e3_nexthop_conf *c, void *arg);
void e3_node_nexthop_walk(e3_nexthop_walk_fn fn, void *arg);

/* ---- nhlfes: (nexthop, label to write) -------------------------------------- */
int e3_node_nhlfe_add(const struct e3_nhlfe_conf *c, char *err);
int e3_node_nhlfe_del(uint32_t id, char *err);                /* EBUSY if referenced */
typedef void (*e3_nhlfe_walk_fn)(const struct e3_nhlfe_conf *c, void *arg);
void e3_node_nhlfe_walk(e3_nhlfe_walk_fn fn, void *arg);

/* ---- ECMP groups: an nhlfe id over up to E3_MAX_ECMP_MEMBERS nhlfes -------- */
int e3_node_ecmp_add(const struct e3_ecmp_conf *c, char *err); /* EEXIST if a plain/protected id */
int e3_node_ecmp_del(uint32_t id, char *err);                 /* EBUSY if referenced */
typedef void (*e3_ecmp_walk_fn)(const struct e3_ecmp_conf *c, void *arg);
void e3_node_ecmp_walk(e3_ecmp_walk_fn fn, void *arg);

/* ---- BFD sessions (in-band OAM, docs/ha.md) --------------------------------- */
int e3_node_bfd_add(const struct e3_bfd_conf *c, char *err);
int e3_node_bfd_del(uint32_t id, char *err);
typedef void (*e3_bfd_walk_fn)(const struct e3_bfd_info *b, void *arg);
void e3_node_bfd_walk(e3_bfd_walk_fn fn, void *arg);
/* A planned stop (RFC 5880 6.8.16): every session to AdminDown, which the
 * workers send at once, so neighbours move their traffic before we go.
 * Returns how many sessions were Init or Up (0: nobody to tell). */
unsigned e3_node_bfd_admin_down_all(void);
/* A warm restart (docs/ha.md): what an Up session needs to resume in the
 * next process without its neighbour noticing. */
struct e3_bfd_saved {
	uint32_t id;
	uint8_t remote_state, diag, remote_mult;
	uint32_t local_disc, remote_disc, remote_min_rx_us, remote_min_tx_us;
	uint32_t xmit_seq, rcv_seq;
	bool seq_known, usable, failed;
	uint64_t ups, downs;
};
typedef void (*e3_bfd_save_fn)(const struct e3_bfd_saved *st, void *arg);
/* Every Up session's state (others start over in the next process). */
void e3_node_bfd_save_walk(e3_bfd_save_fn fn, void *arg);
/* Resume session st->id (configured already) Up as saved: its
 * discriminators, its neighbour's timers and its protection byte; a Poll
 * advertises the configured interval again (e3_bfd_hold's end). */
int e3_node_bfd_restore(const struct e3_bfd_saved *st, char *err);
/* Before a warm restart: every Up session tells its neighbour to wait
 * detect_us (e3_bfd_hold). Returns how many; e3_node_bfd_polling() is how
 * many have not had the neighbour's Final yet. */
unsigned e3_node_bfd_hold_all(uint64_t detect_us);
unsigned e3_node_bfd_polling(void);

/* ---- services ------------------------------------------------------------- */
int e3_node_service_add(const struct e3_service_conf *c, char *err);
int e3_node_service_del(uint32_t id, char *err);              /* EBUSY if circuits or labels use it */
typedef void (*e3_service_walk_fn)(const struct e3_service_info *s, void *arg);
void e3_node_service_walk(e3_service_walk_fn fn, void *arg);

/* ---- circuits: (customer port, VLAN or untagged) -> service ---------------- */
int e3_node_circuit_add(const struct e3_circuit_conf *c, char *err); /* EEXIST if (port,vlan) taken by another id */
int e3_node_circuit_del(uint32_t id, char *err);              /* also forgets MACs learned on it */
typedef void (*e3_circuit_walk_fn)(const struct e3_circuit_info *c, void *arg);
void e3_node_circuit_walk(e3_circuit_walk_fn fn, void *arg);

/* ---- label entries ---------------------------------------------------------- */
int e3_node_label_add(const struct e3_label_conf *c, char *err);
int e3_node_label_del(uint32_t label, char *err);
typedef void (*e3_label_walk_fn)(const struct e3_label_info *l, void *arg);
void e3_node_label_walk(e3_label_walk_fn fn, void *arg);

/* ---- MAC table ---------------------------------------------------------------- */
/* service == E3_NONE walks all services. */
void e3_node_mac_walk(uint32_t service, e3_mac_walk_fn fn, void *arg);
/* Flush learned MACs: by service (or E3_NONE = all); returns the count removed. */
int e3_node_mac_flush(uint32_t service, char *err);
/* A MAC learned before a warm restart: learned again, as a frame would. */
int e3_node_mac_restore(const struct e3_mac_info *m, char *err);

/* ---- counters ------------------------------------------------------------------- */
int e3_node_worker_count(void);
int e3_node_worker_get(int idx, struct e3_worker_info *out);
void e3_node_drops_total(uint64_t out[E3_DROP_MAX]);
void e3_node_stats_clear(void);
/* Worker idx's runtime profile (pipeline/runtime.h). The clear starts
 * from zero, timing one poll in sample (a power of two, 1..1024). */
int e3_node_runtime_get(int idx, struct e3_runtime *out);
int e3_node_runtime_clear(unsigned sample, char *err);

/* ---- pseudowire ping and trace (node/pwoam.c, pipeline/pwoam.h) ------------------- */
struct e3_pw_ping {
	uint32_t service;
	uint16_t source;         /* E-LAN: the remote endpoint to reach */
	uint8_t ttl;             /* 0 = the node's */
	uint32_t handle, seq;    /* the caller's: they come back in the log */
};
/* Send one MPLS echo request into the service's PW (reply asked for in
 * the PW's channel). */
int e3_node_pw_ping(const struct e3_pw_ping *p, char *err);
struct e3_pwoam_event;
typedef void (*e3_pwoam_walk_fn)(uint64_t index, const struct e3_pwoam_event *ev, void *arg);
/* The logged events of index > since, oldest first (the log keeps the
 * newest 1024); returns the last index. */
uint64_t e3_node_pwoam_walk(uint64_t since, e3_pwoam_walk_fn fn, void *arg);
/* Housekeeping: take the workers' events into the log. */
void e3_node_pwoam_drain(void);

/* ---- sFlow sampling (node/sflow.c, pipeline/sflow.h) -------------------------------- */
/* Sample 1 in rate (0: off) of what port receives; port NULL: the node's
 * rate, every port's (a port's own rate is forgotten). A port's own rate
 * is kept by name for a port added later. */
int e3_node_sflow_set(const char *port, uint32_t rate, char *err);
uint32_t e3_node_sflow_node_rate(void);
typedef void (*e3_sflow_port_fn)(const char *name, uint16_t port_id, uint32_t rate, uint64_t pool,
				 uint64_t drops, void *arg);
void e3_node_sflow_ports(e3_sflow_port_fn fn, void *arg);
struct e3_sflow_sample;
/* in and out: the ports' names (NULL: none, or gone). */
typedef void (*e3_sflow_sample_fn)(const struct e3_sflow_sample *s, const char *in, const char *out,
				   void *arg);
/* Take up to max queued samples, oldest first; returns how many. */
unsigned e3_node_sflow_read(unsigned max, e3_sflow_sample_fn fn, void *arg);

/* ---- packet trace ------------------------------------------------------------------ */
/* Trace the next n frames received that match the filter (replaces any
 * trace in progress and clears the buffer). n <= 1024. */
int e3_node_trace_start(const struct e3_trace_filter *f, uint32_t n, char *err);
/* Records captured so far (complete ones only). */
void e3_node_trace_walk(e3_trace_walk_fn fn, void *arg);

#endif
