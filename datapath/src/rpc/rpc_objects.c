/* SPDX-License-Identifier: Apache-2.0
 *
 * rpc_objects.c - the configurable objects as JSON: for each of settings,
 * port, nexthop, nhlfe, bfd session, service, circuit and label, its type
 * for the decoder (its params table is generated from datapath/api/
 * schema.yaml into objects_gen.h; used by <object>_add and config_load),
 * the defaults that depend on other params and the checks across them
 * (what a left-out param holds otherwise is the generated e3_<object>_init's).
 * Each form's params (a label's type, a service's) are the schema's `forms`
 * (objects_gen.h): decoding refuses what a form does not have (form_check),
 * and e3_obj_json writes what it has, as config_dump does.
 */
#include <stdio.h>
#include <string.h>

#include "rpc/objects_gen.h"
#include "rpc/rpc_int.h"

/* ---- settings ------------------------------------------ */
const struct e3_obj_type e3_settings_type = {
	.what = "settings", .params = e3_settings_params, .n_params = E3_NPARAMS(e3_settings_params),
	.size = sizeof(struct e3_settings), .dump = &e3_settings_dump,
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

/* ---- ports ------------------------------------------ */
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
	.what = "port", .params = e3_port_params, .n_params = E3_NPARAMS(e3_port_params),
	.size = sizeof(struct e3_port_req), .init = e3_port_init, .finish = port_finish,
	.dump = &e3_port_dump,
};
/* A dump writes the port's conf; it is the request's first member, so the
 * table's offsets hold for both. ("workers" is never dumped: the conf holds
 * the workers in effect, pinned or chosen automatically, and a dump must
 * load on a node with other lcores.) */
_Static_assert(offsetof(struct e3_port_req, conf) == 0, "conf first in e3_port_req");

/* ---- nexthops ------------------------------------------ */
const struct e3_obj_type e3_nexthop_type = {
	.what = "nexthop", .params = e3_nexthop_params, .n_params = E3_NPARAMS(e3_nexthop_params),
	.size = sizeof(struct e3_nexthop_conf), .dump = &e3_nexthop_dump,
};

/* ---- ECMP groups ------------------------------------------ */
const struct e3_obj_type e3_ecmp_type = {
	.what = "ecmp", .params = e3_ecmp_params, .n_params = E3_NPARAMS(e3_ecmp_params),
	.size = sizeof(struct e3_ecmp_conf), .dump = &e3_ecmp_dump,
};

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

static uint64_t nhlfe_applies(const void *p)
{
	const struct e3_nhlfe_conf *n = p;
	return 1u << E3_NHLFE_P_ID |
	       (n->protect ? 1u << E3_NHLFE_P_PRIMARY | 1u << E3_NHLFE_P_BACKUP | 1u << E3_NHLFE_P_WATCH :
			     1u << E3_NHLFE_P_NEXTHOP | 1u << E3_NHLFE_P_LABEL);
}

const struct e3_obj_type e3_nhlfe_type = {
	.what = "nhlfe", .params = e3_nhlfe_params, .n_params = E3_NPARAMS(e3_nhlfe_params),
	.size = sizeof(struct e3_nhlfe_conf), .finish = nhlfe_finish,
	.dump = &e3_nhlfe_dump, .applies = nhlfe_applies,
};

/* ---- BFD sessions ------------------------------------------ */

const struct e3_obj_type e3_bfd_type = {
	.what = "bfd", .params = e3_bfd_params, .n_params = E3_NPARAMS(e3_bfd_params),
	.size = sizeof(struct e3_bfd_conf), .init = e3_bfd_init, .dump = &e3_bfd_dump,
};

/* ---- services ------------------------------------------ */

static int service_finish(void *p, uint64_t seen, char *msg, size_t len)
{
	struct e3_service_conf *s = p;
	(void)seen;
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
	.what = "service", .params = e3_service_params, .n_params = E3_NPARAMS(e3_service_params),
	.size = sizeof(struct e3_service_conf), .init = e3_service_init, .finish = service_finish,
	.dump = &e3_service_dump, .forms = &e3_service_forms,
};

/* ---- circuits ------------------------------------------ */
const struct e3_obj_type e3_circuit_type = {
	.what = "circuit", .params = e3_circuit_params, .n_params = E3_NPARAMS(e3_circuit_params),
	.size = sizeof(struct e3_circuit_conf), .dump = &e3_circuit_dump,
};

/* ---- labels ------------------------------------------ */

static int label_finish(void *p, uint64_t seen, char *msg, size_t len)
{
	struct e3_label_conf *l = p;
	if (l->type == E3_LBL_REPLICATE &&
	    !!(seen & (1u << E3_LABEL_P_SERVICE)) != !!(seen & (1u << E3_LABEL_P_SOURCE))) {
		snprintf(msg, len, "params 'service' and 'source': local delivery needs both");
		return -1;
	}
	return 0;
}

static uint64_t label_applies(const void *p)
{
	const struct e3_label_conf *l = p;
	uint64_t params = e3_form_params(&e3_label_type, p);
	/* a replicate entry's source goes with its service: local delivery */
	if (l->type == E3_LBL_REPLICATE && l->service == E3_NONE)
		params &= ~(1ull << E3_LABEL_P_SOURCE);
	return params;
}

const struct e3_obj_type e3_label_type = {
	.what = "label", .params = e3_label_params, .n_params = E3_NPARAMS(e3_label_params),
	.size = sizeof(struct e3_label_conf), .init = e3_label_init, .finish = label_finish,
	.dump = &e3_label_dump, .forms = &e3_label_forms, .applies = label_applies,
};

/* ---- forms ------------------------------------------ */
/* Every param the object's form needs is there, and none it does not have. */
static int form_check(const struct e3_obj_type *t, const void *conf, uint64_t seen, char *msg,
		      size_t len)
{
	const struct e3_forms *f = t->forms;
	const struct e3_param *by = &t->params[f->by];
	int v = e3_form_of(t, conf);
	const struct e3_form none = { 0, 0 }, *form = v >= 0 && v < f->n ? &f->form[v] : &none;

	for (size_t i = 0; i < t->n_params; i++) {
		uint64_t bit = 1ull << i;
		if (!(f->formed & bit))
			continue;
		if ((form->need & bit) && !(seen & bit)) {
			snprintf(msg, len, "missing param '%s' (needed by %s \"%s\")", t->params[i].name,
				 by->name, by->names[v]);
			return -1;
		}
		if (!(form->allow & bit) && (seen & bit)) {
			/* and the forms it does apply to */
			char only[128] = "";
			size_t o = 0;
			for (int k = 0; k < f->n && o < sizeof(only); k++)
				if (f->form[k].allow & bit)
					o += (size_t)snprintf(only + o, sizeof(only) - o, "%s\"%s\"",
							      o ? ", " : "", by->names[k]);
			snprintf(msg, len, "param '%s': does not apply to %s \"%s\" (only to %s)",
				 t->params[i].name, by->name, by->names[v], only);
			return -1;
		}
	}
	return 0;
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
	if (t->forms != NULL && form_check(t, out, seen, msg, len) < 0)
		return -1;
	if (t->finish != NULL && t->finish(out, seen, msg, len) < 0)
		return -1;
	return 0;
}

void e3_rpc_invoke(e3_rpc_fn fn, const struct e3_obj_type *t, const json_t *params,
		   struct e3_rpc_call *c)
{
	void *p = calloc(1, t->size ? t->size : 1);

	if (p == NULL) {
		e3_rpc_err(c, E3_RPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	if (e3_obj_decode(t, params, p, &c->seen, "", c->msg, sizeof(c->msg)) < 0) {
		c->code = E3_RPC_INVALID_PARAMS;
	} else {
		e3_node_lock();
		fn(c, p);
		e3_node_unlock();
	}
	free(p);
}
