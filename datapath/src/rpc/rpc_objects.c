/* SPDX-License-Identifier: Apache-2.0
 *
 * rpc_objects.c - the configurable objects as JSON: for each of settings,
 * port, nexthop, nhlfe, bfd session, service, circuit and label, its type
 * for the decoder (its params table is generated from datapath/api/
 * schema.yaml into objects_gen.h; used by <object>_add and config_load),
 * the defaults and checks across its params, and the JSON form config_dump
 * writes (which decodes back to the same object).
 */
#include <stdio.h>
#include <string.h>

#include "rpc/objects_gen.h"
#include "rpc/rpc_int.h"

/* ---- settings ------------------------------------------ */
const struct e3_obj_type e3_settings_type = {
	"settings", e3_settings_params, E3_NPARAMS(e3_settings_params),
	sizeof(struct e3_settings), NULL, NULL,
};

void e3_settings_merge(struct e3_settings *s, const struct e3_settings *in, uint64_t seen)
{
	if (seen & (1u << E3_SETTINGS_P_TTL))
		s->ttl = in->ttl;
	if (seen & (1u << E3_SETTINGS_P_CONTROL_WORD))
		s->control_word = in->control_word;
	if (seen & (1u << E3_SETTINGS_P_MAC_AGING_S))
		s->mac_aging_s = in->mac_aging_s;
	if (seen & (1u << E3_SETTINGS_P_MAC_LIMIT))
		s->mac_limit = in->mac_limit;
	if (seen & (1u << E3_SETTINGS_P_MAC_MOVE_LIMIT))
		s->mac_move_limit = in->mac_move_limit;
	if (seen & (1u << E3_SETTINGS_P_MAC_MOVE_WINDOW_S))
		s->mac_move_window_s = in->mac_move_window_s;
}

json_t *e3_settings_json(const struct e3_settings *s)
{
	return json_pack("{s:i, s:b, s:I, s:I, s:I, s:I}", "ttl", s->ttl, "control_word",
			 s->control_word, "mac_aging_s", (json_int_t)s->mac_aging_s,
			 "mac_limit", (json_int_t)s->mac_limit, "mac_move_limit",
			 (json_int_t)s->mac_move_limit, "mac_move_window_s",
			 (json_int_t)s->mac_move_window_s);
}

/* ---- ports ------------------------------------------ */
static void port_init(void *p)
{
	struct e3_port_req *r = p;
	for (int i = 0; i < E3_MAX_QUEUES; i++)
		r->conf.worker[i] = -1;
}

static int port_finish(void *p, uint64_t seen, char *msg, size_t len)
{
	struct e3_port_req *r = p;
	if (!(seen & (1u << E3_PORT_P_MTU)))
		r->conf.mtu = r->conf.kind == E3_PORT_FABRIC ? E3_DEFAULT_PORT_MTU_FABRIC : E3_DEFAULT_PORT_MTU_CUSTOMER;
	if (!(seen & (1u << E3_PORT_P_RX_QUEUES)))
		r->conf.rx_queues = r->n_workers ? r->n_workers : 1;
	if ((seen & (1u << E3_PORT_P_WORKERS)) && r->n_workers != r->conf.rx_queues) {
		snprintf(msg, len, "param 'workers': needs one entry per rx queue (%u), has %u",
			 r->conf.rx_queues, r->n_workers);
		return -1;
	}
	return 0;
}

const struct e3_obj_type e3_port_type = {
	"port", e3_port_params, E3_NPARAMS(e3_port_params), sizeof(struct e3_port_req),
	port_init, port_finish,
};

json_t *e3_port_conf_json(const struct e3_port_conf *p)
{
	json_t *o = json_pack("{s:s, s:s, s:s}", "name", p->name, "devargs", p->devargs,
			      "kind", p->kind == E3_PORT_FABRIC ? "fabric" : "customer");
	if (o == NULL)
		return NULL;
	if (p->mtu)
		json_object_set_new(o, "mtu", json_integer(p->mtu));
	if (!e3_mac_is_zero(p->mac))
		json_object_set_new(o, "mac", e3_mac_json(p->mac));
	if (p->rx_queues)
		json_object_set_new(o, "rx_queues", json_integer(p->rx_queues));
	/* No "workers": the conf holds the workers in effect, pinned or chosen
	 * automatically, and a dump must load on a node with other lcores. */
	return o;
}

/* ---- nexthops ------------------------------------------ */
const struct e3_obj_type e3_nexthop_type = {
	"nexthop", e3_nexthop_params, E3_NPARAMS(e3_nexthop_params),
	sizeof(struct e3_nexthop_conf), NULL, NULL,
};

json_t *e3_nexthop_conf_json(const struct e3_nexthop_conf *n)
{
	return json_pack("{s:I, s:s, s:o}", "id", (json_int_t)n->id, "port", n->port,
			 "mac", e3_mac_json(n->mac));
}

/* ---- nhlfes ------------------------------------------ */
/* Plain {id, nexthop, label}, or protected {id, primary, backup, watch}. */

static int nhlfe_finish(void *p, uint64_t seen, char *msg, size_t len)
{
	struct e3_nhlfe_conf *n = p;
	const uint64_t plain = 1u << E3_NHLFE_P_NEXTHOP | 1u << E3_NHLFE_P_LABEL;
	const uint64_t prot = 1u << E3_NHLFE_P_PRIMARY | 1u << E3_NHLFE_P_BACKUP | 1u << E3_NHLFE_P_WATCH;

	n->protect = (seen & prot) != 0;
	if ((seen & plain) == plain && !(seen & prot))
		return 0;
	if ((seen & prot) == prot && !(seen & plain))
		return 0;
	snprintf(msg, len, "params: an nhlfe has 'nexthop' and 'label', or (protected) "
		 "'primary', 'backup' and 'watch'");
	return -1;
}

const struct e3_obj_type e3_nhlfe_type = {
	"nhlfe", e3_nhlfe_params, E3_NPARAMS(e3_nhlfe_params), sizeof(struct e3_nhlfe_conf),
	NULL, nhlfe_finish,
};

json_t *e3_nhlfe_conf_json(const struct e3_nhlfe_conf *n)
{
	if (n->protect)
		return json_pack("{s:I, s:I, s:I, s:I}", "id", (json_int_t)n->id, "primary",
				 (json_int_t)n->primary, "backup", (json_int_t)n->backup, "watch",
				 (json_int_t)n->watch);
	return json_pack("{s:I, s:I, s:I}", "id", (json_int_t)n->id, "nexthop",
			 (json_int_t)n->nexthop, "label", (json_int_t)n->label);
}

/* ---- BFD sessions ------------------------------------------ */

static void bfd_init(void *p)
{
	struct e3_bfd_conf *b = p;

	b->tx_ms = E3_DEFAULT_BFD_TX_MS;
	b->rx_ms = E3_DEFAULT_BFD_RX_MS;
	b->multiplier = E3_DEFAULT_BFD_MULTIPLIER;
	b->wtr_s = E3_DEFAULT_BFD_WTR_S;
}

const struct e3_obj_type e3_bfd_type = {
	"bfd", e3_bfd_params, E3_NPARAMS(e3_bfd_params), sizeof(struct e3_bfd_conf), bfd_init, NULL,
};

json_t *e3_bfd_conf_json(const struct e3_bfd_conf *b)
{
	json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:i, s:I}", "id", (json_int_t)b->id, "nexthop",
			 (json_int_t)b->nexthop, "tx_ms", (json_int_t)b->tx_ms, "rx_ms",
			 (json_int_t)b->rx_ms, "multiplier", b->multiplier, "wtr_s",
			 (json_int_t)b->wtr_s);

	if (o != NULL && b->label != 0)
		json_object_set_new(o, "label", json_integer(b->label));
	return o;
}

/* ---- services ------------------------------------------ */

static void service_init(void *p)
{
	struct e3_service_conf *s = p;
	s->nhlfe = E3_NONE;
}

static int service_finish(void *p, uint64_t seen, char *msg, size_t len)
{
	struct e3_service_conf *s = p;
	if (s->type == E3_SVC_ELINE) {
		const char *bad = (seen & (1u << E3_SERVICE_P_MAC_LIMIT)) ? "mac_limit" :
				  (seen & (1u << E3_SERVICE_P_REMOTES))   ? "remotes" :
				  (seen & (1u << E3_SERVICE_P_BRANCHES))  ? "branches" : NULL;
		if (bad != NULL) {
			snprintf(msg, len, "param '%s': applies to type \"elan\" only", bad);
			return -1;
		}
		return 0;
	}
	if (seen & (1u << E3_SERVICE_P_NHLFE)) {
		snprintf(msg, len, "param 'nhlfe': applies to type \"eline\" only");
		return -1;
	}
	for (int i = 0; i < s->n_remotes; i++) {
		for (int j = 0; j < i; j++) {
			if (s->remotes[i].source == s->remotes[j].source) {
				snprintf(msg, len, "param 'remotes[%d].source': %u is used twice",
					 i, s->remotes[i].source);
				return -1;
			}
		}
	}
	return 0;
}

const struct e3_obj_type e3_service_type = {
	"service", e3_service_params, E3_NPARAMS(e3_service_params),
	sizeof(struct e3_service_conf), service_init, service_finish,
};

static json_t *u32_array(const uint32_t *v, unsigned n)
{
	json_t *a = json_array();
	for (unsigned i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

json_t *e3_service_conf_json(const struct e3_service_conf *s)
{
	json_t *o = json_pack("{s:I, s:s}", "id", (json_int_t)s->id, "type",
			      s->type == E3_SVC_ELAN ? "elan" : "eline");
	if (o == NULL)
		return NULL;
	if (s->name[0] != '\0')
		json_object_set_new(o, "name", json_string(s->name));
	if (s->type == E3_SVC_ELINE) {
		if (s->nhlfe != E3_NONE)
			json_object_set_new(o, "nhlfe", json_integer(s->nhlfe));
		return o;
	}
	if (s->mac_limit)
		json_object_set_new(o, "mac_limit", json_integer(s->mac_limit));
	if (s->n_remotes) {
		json_t *r = json_array();
		for (unsigned i = 0; i < s->n_remotes; i++)
			json_array_append_new(r, json_pack("{s:i, s:I}", "source",
							   s->remotes[i].source, "nhlfe",
							   (json_int_t)s->remotes[i].nhlfe));
		json_object_set_new(o, "remotes", r);
	}
	if (s->n_branches)
		json_object_set_new(o, "branches", u32_array(s->branches, s->n_branches));
	return o;
}

/* ---- circuits ------------------------------------------ */
const struct e3_obj_type e3_circuit_type = {
	"circuit", e3_circuit_params, E3_NPARAMS(e3_circuit_params),
	sizeof(struct e3_circuit_conf), NULL, NULL,
};

json_t *e3_circuit_conf_json(const struct e3_circuit_conf *c)
{
	json_t *o = json_pack("{s:I, s:s, s:o, s:I}", "id", (json_int_t)c->id, "port", c->port,
			      "vlan", e3_vlan_json(c->vlan), "service", (json_int_t)c->service);

	if (o != NULL && c->mac_limit)
		json_object_set_new(o, "mac_limit", json_integer(c->mac_limit));
	return o;
}

/* ---- labels ------------------------------------------ */

static void label_init(void *p)
{
	struct e3_label_conf *l = p;
	l->nhlfe = E3_NONE;
	l->service = E3_NONE;
}

static int label_finish(void *p, uint64_t seen, char *msg, size_t len)
{
	struct e3_label_conf *l = p;
	/* which params each type needs (required) and allows */
	static const struct {
		uint32_t need, allow;
	} rule[] = {
		[E3_LBL_SWAP] = { 1u << E3_LABEL_P_NHLFE, 1u << E3_LABEL_P_NHLFE },
		[E3_LBL_ELINE] = { 1u << E3_LABEL_P_SERVICE, 1u << E3_LABEL_P_SERVICE },
		[E3_LBL_ELAN] = { 1u << E3_LABEL_P_SERVICE | 1u << E3_LABEL_P_SOURCE,
				  1u << E3_LABEL_P_SERVICE | 1u << E3_LABEL_P_SOURCE },
		[E3_LBL_REPLICATE] = { 1u << E3_LABEL_P_RPF_PORT,
				       1u << E3_LABEL_P_RPF_PORT | 1u << E3_LABEL_P_BRANCHES |
					       1u << E3_LABEL_P_SERVICE | 1u << E3_LABEL_P_SOURCE },
		[E3_LBL_OAM] = { 1u << E3_LABEL_P_SESSION, 1u << E3_LABEL_P_SESSION },
	};
	for (int i = E3_LABEL_P_NHLFE; i <= E3_LABEL_P_SESSION; i++) {
		uint32_t bit = 1u << i;
		if ((rule[l->type].need & bit) && !(seen & bit)) {
			snprintf(msg, len, "missing param '%s' (needed by type \"%s\")",
				 e3_label_params[i].name, e3_label_type_names[l->type]);
			return -1;
		}
		if (!(rule[l->type].allow & bit) && (seen & bit)) {
			snprintf(msg, len, "param '%s': does not apply to type \"%s\"",
				 e3_label_params[i].name, e3_label_type_names[l->type]);
			return -1;
		}
	}
	if (l->type == E3_LBL_REPLICATE &&
	    !!(seen & (1u << E3_LABEL_P_SERVICE)) != !!(seen & (1u << E3_LABEL_P_SOURCE))) {
		snprintf(msg, len, "params 'service' and 'source': local delivery needs both");
		return -1;
	}
	return 0;
}

const struct e3_obj_type e3_label_type = {
	"label", e3_label_params, E3_NPARAMS(e3_label_params), sizeof(struct e3_label_conf),
	label_init, label_finish,
};

json_t *e3_label_conf_json(const struct e3_label_conf *l)
{
	unsigned t = l->type <= E3_LBL_OAM ? l->type : 0;
	json_t *o = json_pack("{s:I, s:s}", "label", (json_int_t)l->label, "type",
			      t ? e3_label_type_names[t] : "none");
	if (o == NULL)
		return NULL;
	switch (l->type) {
	case E3_LBL_SWAP:
		json_object_set_new(o, "nhlfe", json_integer(l->nhlfe));
		break;
	case E3_LBL_ELINE:
		json_object_set_new(o, "service", json_integer(l->service));
		break;
	case E3_LBL_ELAN:
		json_object_set_new(o, "service", json_integer(l->service));
		json_object_set_new(o, "source", json_integer(l->source));
		break;
	case E3_LBL_REPLICATE:
		json_object_set_new(o, "rpf_port", json_string(l->rpf_port));
		if (l->n_branches)
			json_object_set_new(o, "branches", u32_array(l->branches, l->n_branches));
		if (l->service != E3_NONE) {
			json_object_set_new(o, "service", json_integer(l->service));
			json_object_set_new(o, "source", json_integer(l->source));
		}
		break;
	case E3_LBL_OAM:
		json_object_set_new(o, "session", json_integer(l->session));
		break;
	default:
		break;
	}
	if (l->n_in_ports > 0) {
		json_t *a = json_array();

		for (unsigned i = 0; i < l->n_in_ports; i++)
			json_array_append_new(a, json_string(l->in_ports[i]));
		json_object_set_new(o, "in_ports", a);
	}
	return o;
}

/* ---- decoding ------------------------------------------ */
int e3_obj_decode(const struct e3_obj_type *t, const json_t *v, void *out,
		  uint64_t *seenp, const char *where, char *msg, size_t len)
{
	uint64_t seen = 0;
	memset(out, 0, t->size);
	if (t->init != NULL)
		t->init(out);
	if (e3_decode(v, t->params, t->n_params, out, &seen, where, msg, len) < 0)
		return -1;
	if (seenp != NULL)
		*seenp = seen;
	if (t->finish != NULL && t->finish(out, seen, msg, len) < 0)
		return -1;
	return 0;
}
