/* SPDX-License-Identifier: Apache-2.0
 *
 * checkpoint.c - a warm restart's state (docs/ha.md): what one process
 * writes as it goes and the next loads before its first frame, so the node
 * resumes where it was and its agent finds nothing to change.
 *
 *   {"version": 1, "written_ms": <CLOCK_REALTIME>, "hold_ms": N,
 *    "config": <config_dump's document>,
 *    "bfd": [<each Up session's protocol state>],
 *    "macs": [{"service", "mac", "circuit" | "source"}]}
 *
 * A handover (handover.c) sends the same document in two parts, the
 * configuration first and the live part when the old process has stopped.
 * The configuration is loaded through config_load, so a checkpoint is
 * checked as any document is. The sessions and MACs are the live part: a
 * checkpoint older than its hold (the time the neighbours were asked to
 * wait) loads its configuration only, and sessions start over.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpc/rpc.h"
#include "rpc/rpc_int.h"

static uint64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- save ------------------------------------------------------------ */
static void save_bfd(const struct e3_bfd_saved *st, void *arg)
{
	e3_jw_json(arg, NULL,
		   json_pack("{s:I, s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b, s:b, s:I, s:I}",
			     "id", (json_int_t)st->id, "remote_state", st->remote_state, "diag", st->diag,
			     "remote_multiplier", st->remote_mult, "local_disc", (json_int_t)st->local_disc,
			     "remote_disc", (json_int_t)st->remote_disc,
			     "remote_min_rx_us", (json_int_t)st->remote_min_rx_us,
			     "remote_min_tx_us", (json_int_t)st->remote_min_tx_us,
			     "xmit_seq", (json_int_t)st->xmit_seq, "rcv_seq", (json_int_t)st->rcv_seq,
			     "seq_known", st->seq_known, "usable", st->usable, "failed", st->failed,
			     "ups", (json_int_t)st->ups, "downs", (json_int_t)st->downs));
}

static void save_mac(const struct e3_mac_info *m, void *arg)
{
	json_t *o = json_pack("{s:I, s:o}", "service", (json_int_t)m->service, "mac", e3_mac_json(m->mac));

	if (o != NULL)
		json_object_set_new(o, m->remote ? "source" : "circuit",
				    json_integer(m->remote ? m->source : m->circuit));
	e3_jw_json(arg, NULL, o);
}

int e3_checkpoint_build(struct e3_buf *b, uint32_t hold_ms, unsigned parts)
{
	struct e3_jw w = { .b = b };

	e3_node_lock();
	e3_jw_open(&w, NULL, '{');
	e3_jw_json(&w, "version", json_integer(1));
	e3_jw_json(&w, "written_ms", json_integer((json_int_t)realtime_ms()));
	e3_jw_json(&w, "hold_ms", json_integer(hold_ms));
	if (parts & E3_CHECKPOINT_CONFIG)
		e3_config_dump_write(&w, "config");
	if (parts & E3_CHECKPOINT_LIVE) {
		e3_jw_open(&w, "bfd", '[');
		e3_node_bfd_save_walk(save_bfd, &w);
		e3_jw_close(&w, ']');
		e3_jw_open(&w, "macs", '[');
		e3_node_mac_walk(E3_NONE, save_mac, &w);
		e3_jw_close(&w, ']');
	}
	e3_jw_close(&w, '}');
	e3_node_unlock();
	return b->oom ? -1 : 0;
}

int e3_checkpoint_save(const char *path, uint32_t hold_ms, char *err)
{
	struct e3_buf b = { 0 };
	char tmp[4096];
	int fd, rc = -1;

	if (e3_checkpoint_build(&b, hold_ms, E3_CHECKPOINT_CONFIG | E3_CHECKPOINT_LIVE) != 0) {
		snprintf(err, E3_ERRLEN, "out of memory");
		goto out;
	}
	/* Whole or not at all: a new file, synced, then renamed over. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, E3_ERRLEN, "%.200s: %s", tmp, strerror(errno));
		goto out;
	}
	for (size_t off = 0; off < b.len;) {
		ssize_t n = write(fd, b.p + off, b.len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, E3_ERRLEN, "%.200s: %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			goto out;
		}
		off += (size_t)n;
	}
	if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
		snprintf(err, E3_ERRLEN, "%.200s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	e3_buf_free(&b);
	return rc;
}

/* ---- load ------------------------------------------------------------ */
static int u32_of(const json_t *o, const char *key, uint32_t *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > UINT32_MAX)
		return -1;
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

static int load_bfd(const json_t *arr, char *err)
{
	size_t i;
	const json_t *o;

	json_array_foreach(arr, i, o) {
		struct e3_bfd_saved st = { 0 };
		uint32_t rs = 0, diag = 0, mult = 0, ups = 0, downs = 0;

		if (u32_of(o, "id", &st.id) || u32_of(o, "remote_state", &rs) || u32_of(o, "diag", &diag) ||
		    u32_of(o, "remote_multiplier", &mult) || u32_of(o, "local_disc", &st.local_disc) ||
		    u32_of(o, "remote_disc", &st.remote_disc) ||
		    u32_of(o, "remote_min_rx_us", &st.remote_min_rx_us) ||
		    u32_of(o, "remote_min_tx_us", &st.remote_min_tx_us) || u32_of(o, "xmit_seq", &st.xmit_seq) ||
		    u32_of(o, "rcv_seq", &st.rcv_seq) || u32_of(o, "ups", &ups) || u32_of(o, "downs", &downs) ||
		    rs > 3 || diag > 31 || mult > 255) {
			snprintf(err, E3_ERRLEN, "bfd[%zu]: not a saved session", i);
			return -1;
		}
		st.remote_state = (uint8_t)rs;
		st.diag = (uint8_t)diag;
		st.remote_mult = (uint8_t)mult;
		st.seq_known = json_is_true(json_object_get(o, "seq_known"));
		st.usable = json_is_true(json_object_get(o, "usable"));
		st.failed = json_is_true(json_object_get(o, "failed"));
		st.ups = ups;
		st.downs = downs;
		e3_node_lock();
		int rc = e3_node_bfd_restore(&st, err);
		e3_node_unlock();
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int load_macs(const json_t *arr, unsigned *n, char *err)
{
	size_t i;
	const json_t *o;

	json_array_foreach(arr, i, o) {
		struct e3_mac_info m = { 0 };
		uint32_t id;
		const json_t *mac = json_object_get(o, "mac");

		if (u32_of(o, "service", &m.service) || !json_is_string(mac) ||
		    !e3_mac_parse(json_string_value(mac), m.mac)) {
			snprintf(err, E3_ERRLEN, "macs[%zu]: not a saved MAC", i);
			return -1;
		}
		if (u32_of(o, "source", &id) == 0) {
			m.remote = true;
			m.source = (uint16_t)id;
		} else if (u32_of(o, "circuit", &m.circuit) != 0) {
			snprintf(err, E3_ERRLEN, "macs[%zu]: neither circuit nor source", i);
			return -1;
		}
		/* A MAC whose service went away is not an error: it is not learned. */
		e3_node_lock();
		if (e3_node_mac_restore(&m, err) == 0)
			(*n)++;
		e3_node_unlock();
	}
	return 0;
}

/* A document of either part or both; what names it in errors. */
static int load_doc(json_t *doc, const char *what, struct e3_checkpoint_stats *st, char *err)
{
	const json_t *config = json_object_get(doc, "config");
	const json_t *bfd = json_object_get(doc, "bfd"), *macs = json_object_get(doc, "macs");
	uint32_t version = 0, hold_ms = 0;
	const json_t *written = json_object_get(doc, "written_ms");

	if (u32_of(doc, "version", &version) || version != 1 || (config && !json_is_object(config)) ||
	    !json_is_integer(written) || u32_of(doc, "hold_ms", &hold_ms) ||
	    (bfd && !json_is_array(bfd)) || (macs && !json_is_array(macs))) {
		snprintf(err, E3_ERRLEN, "%s: not a version 1 checkpoint", what);
		return -1;
	}
	if (config != NULL) {
		struct e3_buf out = { 0 };
		struct e3_rpc_call call = { .w = { .b = &out } };

		e3_rpc_config_load_doc(config, &call);
		e3_buf_free(&out);
		if (call.code != 0) {
			snprintf(err, E3_ERRLEN, "%.80s: config: %.160s", what, call.msg);
			return -1;
		}
	}
	uint64_t now = realtime_ms(), at = (uint64_t)json_integer_value(written);

	st->age_ms = now > at ? now - at : 0;
	st->live = st->age_ms < hold_ms;
	if (!st->live)
		return 0;
	if (bfd != NULL && load_bfd(bfd, err) < 0)
		return -1;
	st->sessions = bfd ? (unsigned)json_array_size(bfd) : 0;
	if (macs != NULL && load_macs(macs, &st->macs, err) < 0)
		return -1;
	return 0;
}

int e3_checkpoint_load(const char *path, struct e3_checkpoint_stats *st, char *err)
{
	json_error_t jerr;
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	int rc;

	memset(st, 0, sizeof(*st));
	if (doc == NULL) {
		snprintf(err, E3_ERRLEN, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
		return -1;
	}
	if (!json_is_object(json_object_get(doc, "config"))) {
		snprintf(err, E3_ERRLEN, "%s: not a version 1 checkpoint", path);
		rc = -1;
	} else {
		rc = load_doc(doc, path, st, err);
	}
	json_decref(doc);
	return rc;
}

int e3_checkpoint_load_buf(const char *p, size_t n, const char *what, struct e3_checkpoint_stats *st,
			   char *err)
{
	json_error_t jerr;
	json_t *doc = json_loadb(p, n, JSON_REJECT_DUPLICATES, &jerr);
	int rc;

	memset(st, 0, sizeof(*st));
	if (doc == NULL) {
		snprintf(err, E3_ERRLEN, "%s:%d:%d: %s", what, jerr.line, jerr.column, jerr.text);
		return -1;
	}
	rc = load_doc(doc, what, st, err);
	json_decref(doc);
	return rc;
}
