"""Prometheus metrics, scraped from the real processes and judged by the
Prometheus client library's text-format parser: each agent's /metrics holds
its datapath's counters (the values the datapath answers, read before and
after the scrape), and the controller's /metrics the fabric's state, its
costs and its events, behind the API's tokens."""
import urllib.error

import pytest

from cplib import REPO, RED_H2, scrape
from lab.traffic import ping


def test_agent_metrics_need_the_token_and_bound_connections(services):
    """An agent's /metrics reads every datapath counter through a root
    process: it asks for the read-only token, and a flood of idle
    connections neither holds descriptors without bound nor keeps a
    scraper out."""
    import os
    import socket
    cp = services
    url = cp.metrics_url("leaf1")
    for token in (None, "nope", cp.token + "x"):
        with pytest.raises(urllib.error.HTTPError) as e:
            scrape(url, token=token)
        assert e.value.code == 401
    host, port = cp.metrics["leaf1"].split(":")
    pid = cp.agents["leaf1"].pid()
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    idle = [socket.create_connection((host, int(port)), timeout=10) for _ in range(1000)]
    try:
        m = scrape(url, token=cp.read_token)
        assert series(m, "e3_port_rx_packets_total")
        # The guard's 16 connections, not a thousand (a few for the scrape's own).
        assert len(os.listdir(f"/proc/{pid}/fd")) < fds + 40
    finally:
        for s in idle:
            s.close()


def series(m, name, **labels):
    """The values of the series of `name` whose labels include `labels`."""
    want = set(labels.items())
    return {k[1]: v for k, v in m.items() if k[0] == name and want <= k[1]}


def one(m, name, **labels):
    got = series(m, name, **labels)
    assert len(got) == 1, f"{name}{labels}: {len(got)} series: {got}"
    return next(iter(got.values()))


def between(before, got, after, what):
    assert before <= got <= after, f"{what}: {got} not within the datapath's {before}..{after}"


def test_agent_metrics_are_the_datapath_counters(services, lab):
    cp = services
    r = ping(lab, "h1", RED_H2, count=5, interval=0.05)
    assert r.received == 5, r
    dp = lab.client("leaf1")
    before = {"ports": dp.call("port_list"), "services": dp.call("service_list"),
              "circuits": dp.call("circuit_list"), "runtime": dp.call("runtime_get")}
    m = scrape(cp.metrics_url("leaf1"), token=cp.read_token)
    after = {"ports": dp.call("port_list"), "services": dp.call("service_list"),
             "circuits": dp.call("circuit_list"), "runtime": dp.call("runtime_get")}

    assert one(m, "e3_datapath_up", node="leaf1") == 1
    for b, a in zip(before["ports"], after["ports"]):
        name = b["port"] if "port" in b else b["name"]
        for field, metric in (("rx_pkts", "e3_port_rx_packets_total"), ("tx_pkts", "e3_port_tx_packets_total"),
                              ("rx_bytes", "e3_port_rx_bytes_total"), ("tx_bytes", "e3_port_tx_bytes_total"),
                              ("tx_retries", "e3_port_tx_retries_total")):
            between(b["stats"][field], one(m, metric, node="leaf1", port=name), a["stats"][field],
                    f"{name} {field}")
        for reason, n in b["stats"]["drops"].items():
            between(n, one(m, "e3_port_drops_total", node="leaf1", port=name, reason=reason),
                    a["stats"]["drops"][reason], f"{name} drops {reason}")
        assert one(m, "e3_port_link_up", node="leaf1", port=name) == (1 if a["link"] in (True, "up") else 0)

    red = next(s for s in after["services"] if s["name"].startswith("red"))
    red_b = next(s for s in before["services"] if s["id"] == red["id"])
    assert red["stats"]["rx_pkts"] >= 5
    for field, metric in (("rx_pkts", "e3_service_rx_packets_total"), ("tx_pkts", "e3_service_tx_packets_total"),
                          ("flooded", "e3_service_flooded_packets_total")):
        between(red_b["stats"][field], one(m, metric, node="leaf1", service=red["name"]), red["stats"][field],
                f"service {red['name']} {field}")
    for b, a in zip(before["circuits"], after["circuits"]):
        between(b["stats"]["rx_pkts"], one(m, "e3_circuit_rx_packets_total", node="leaf1", circuit=str(a["id"])),
                a["stats"]["rx_pkts"], f"circuit {a['id']} rx")

    # Every BFD session of the datapath, in the state it has (where it did
    # not change around the scrape), with its packets.
    sessions = dp.call("bfd_list")
    assert any(s["state"] == "up" for s in sessions)
    m2 = scrape(cp.metrics_url("leaf1"), token=cp.read_token)
    for s, s2 in zip(sessions, dp.call("bfd_list")):
        sid = str(s["id"])
        if s["state"] == s2["state"]:
            assert one(m2, "e3_bfd_session_up", node="leaf1", session=sid) == (s["state"] == "up"), s
        between(s["tx_pkts"], one(m2, "e3_bfd_tx_packets_total", node="leaf1", session=sid), s2["tx_pkts"],
                f"bfd {sid} tx")

    # The runtime profile: the stages red's frames crossed counted them.
    for stage in ("customer_in", "eline_in", "fabric_in", "label_lookup"):
        b = sum(s["frames"] for w in before["runtime"]["workers"] for s in w["stages"] if s["stage"] == stage)
        a = sum(s["frames"] for w in after["runtime"]["workers"] for s in w["stages"] if s["stage"] == stage)
        got = sum(series(m, "e3_stage_frames_total", node="leaf1", stage=stage).values())
        assert got > 0, stage
        between(b, got, a, f"stage {stage} frames")
    # Its stalls, by length (in adaptive poll mode, a sleep's overrun counts).
    for over in ("100us", "1ms", "10ms"):
        b, a = (sum(w["stalls"][f"over_{over}"] for w in r["runtime"]["workers"]) for r in (before, after))
        between(b, sum(series(m, "e3_worker_stalls_total", node="leaf1", over=over).values()), a,
                f"stalls over {over}")
    assert one(m, "e3_datapath_tsc_hz", node="leaf1") > 0
    assert not series(m, "e3_label_packets_total"), "per-label series are off by default"


def test_controller_metrics(services, lab):
    """The fabric's gauges say what the API says (both read while nothing
    changes: the fabric converged)."""
    cp = services
    cp.wait_converged()
    nodes, links, svcs = cp.nodes(), cp.json("link", "list"), cp.services()
    m = scrape(cp.metrics_url(), token=cp.read_token, context=cp.ssl_context())
    assert one(m, "e3_controller_leader") == 1
    assert one(m, "e3_controller_nodes", state="forwarding") == sum(n["up"] for n in nodes)
    assert one(m, "e3_controller_nodes", state="down") == sum(not n["up"] for n in nodes)
    assert one(m, "e3_controller_agents", state="up") == sum(n["agent_up"] for n in nodes)
    assert one(m, "e3_controller_links", state="up") == sum(l["up"] for l in links)
    assert {dict(k)["link"]: v for k, v in series(m, "e3_controller_link_up").items()} == \
        {l["name"]: float(l["up"]) for l in links}
    for state in ("programmed", "pending", "degraded", "down"):
        assert one(m, "e3_controller_services", state=state) == \
            sum(s["status"]["state"] == state for s in svcs), state
    assert one(m, "e3_controller_events_total", kind="leader") >= 1
    assert one(m, "e3_controller_etcd_request_seconds_count", method="Range") > 0
    # etcd's database against its quota (the embedded etcd's, 8 GiB).
    assert one(m, "e3_controller_etcd_quota_bytes") == 8 << 30
    assert 0 < one(m, "e3_controller_etcd_db_bytes") < 8 << 30
    assert one(m, "e3_controller_etcd_full_total") == 0

    # A change (a service created and deleted: two commits) is timed.
    cp.create_service("mtest", "eline", ["leaf1:cust1:3201", "leaf3:cust1:3201"])
    cp.e3ctl("service", "delete", "mtest")
    # A refused change is counted by its error's code.
    bad = cp.e3ctl("service", "create", "eline", "mbad", "--circuit", "leaf1:cust1:3202",
                   "--circuit", "leaf9:cust1:3202", check=False)
    assert bad.returncode == 1 and "leaf9" in bad.stderr, bad.stderr
    after = scrape(cp.metrics_url(), token=cp.read_token, context=cp.ssl_context())
    assert one(after, "e3_controller_api_errors_total", code="not_found") == \
        one(m, "e3_controller_api_errors_total", code="not_found") + 1
    for name in ("e3_controller_commit_seconds_count", "e3_controller_compute_seconds_count"):
        assert one(after, name) >= one(m, name) + 2, name
    txns = lambda x: sum(series(x, "e3_controller_etcd_request_seconds_count", method="Txn").values())  # noqa: E731
    assert txns(after) > txns(m)


def test_controller_metrics_need_a_token(cp):
    before = scrape(cp.metrics_url(), token=cp.read_token, context=cp.ssl_context())
    with pytest.raises(urllib.error.HTTPError) as e:
        scrape(cp.metrics_url(), context=cp.ssl_context())
    assert e.value.code == 401
    after = scrape(cp.metrics_url(), token=cp.token, context=cp.ssl_context())
    assert (one(after, "e3_controller_api_refused_total", reason="unauthorized")
            == one(before, "e3_controller_api_refused_total", reason="unauthorized") + 1)


def test_examples_name_only_metrics_that_exist(services, lab):
    """examples/grafana-dashboard.json queries only metrics the processes
    export, and examples/prometheus.yml scrapes the demo's ports."""
    import json
    import re

    import yaml
    cp = services
    names = {k[0] for k in scrape(cp.metrics_url(), token=cp.read_token, context=cp.ssl_context())}
    names |= {k[0] for k in scrape(cp.metrics_url("leaf1"), token=cp.read_token)}
    names |= {n.removesuffix("_bucket") for n in names}
    dash = json.loads((REPO / "examples" / "grafana-dashboard.json").read_text())
    used = {m for p in dash["panels"] for t in p["targets"] for m in re.findall(r"\be3_[a-z0-9_]+", t["expr"])}
    assert used and used <= names, f"the dashboard queries metrics nobody exports: {sorted(used - names)}"

    from lab.demo_controller import API_PORT, METRICS_PORT
    scrape_cfg = yaml.safe_load((REPO / "examples" / "prometheus.yml").read_text())
    jobs = {j["job_name"]: j for j in scrape_cfg["scrape_configs"]}
    assert jobs["e3-controller"]["static_configs"][0]["targets"] == [f"127.0.0.1:{API_PORT}"]
    assert jobs["e3-agent"]["static_configs"][0]["targets"] == [
        f"127.0.0.1:{METRICS_PORT + i}" for i in range(len(lab.topo.nodes))]
    # Agents ask for the same read-only token as the controller.
    assert (jobs["e3-agent"]["authorization"]["credentials_file"]
            == jobs["e3-controller"]["authorization"]["credentials_file"])


def test_operations_doc_lists_every_metric(services):
    """docs/operations.md's metric tables name exactly what the controller
    and an agent export (per-label series are off by default; a drain's
    carrying count exists only for a drained node: test_cp_fabric's drain
    test reads it)."""
    import re
    cp = services
    exported = set()
    for m in (scrape(cp.metrics_url(), token=cp.read_token, context=cp.ssl_context()),
              scrape(cp.metrics_url("leaf1"), token=cp.read_token)):
        for name, _ in m:
            if name.startswith("e3_"):
                exported.add(re.sub(r"_(bucket|sum|count)$", "", name) if "_seconds" in name else name)
    doc = (REPO / "docs" / "operations.md").read_text()
    tables = "\n".join(l for l in doc.splitlines() if l.startswith("| `e3_"))
    documented = set(re.findall(r"`(e3_[a-z0-9_]+)`", tables))
    assert documented - {"e3_label_packets_total", "e3_controller_node_drain_carrying"} == exported, \
        f"undocumented: {sorted(exported - documented)}; documented, not exported: {sorted(documented - exported)}"
