"""Storm control through the control plane: an E-LAN's limits given to
e3ctl (for every circuit) and a circuit's own given to the API reach each
datapath's circuit; limits an E-Line or a range refuses change nothing."""
import json

from test_cp_api_input import post


def circuit(lab, node, vlan):
    return next(c for c in lab.client(node).call("circuit_list") if c.get("vlan") == vlan)


def test_limits_reach_the_datapaths(cp, lab):
    try:
        cp.create_service("stormy", "elan", ["leaf1:cust1:3101", "leaf2:cust1:3101"],
                          "--storm", "broadcast=200,unknown=50")
        cp.wait_service("stormy")
        for node in ("leaf1", "leaf2"):
            c = circuit(lab, node, 3101)
            assert (c.get("storm_broadcast_pps"), c.get("storm_multicast_pps"), c.get("storm_unknown_pps")) == \
                (200, None, 50), c
        show = cp.e3ctl("service", "show", "stormy").stdout
        assert "storm control" in show and "broadcast=200,unknown=50" in show, show

        # A circuit's own limits, through the API, replace the service's there.
        spec = {"name": "stormy2", "type": "elan", "storm": {"broadcast_pps": 300},
                "circuits": [{"node": "leaf1", "port": "cust1", "vlan": 3102, "storm": {"multicast_pps": 7}},
                             {"node": "leaf3", "port": "cust1", "vlan": 3102}]}
        code, res = post(cp, "/v1/services", json.dumps(spec).encode(), token=cp.token)
        assert code in (200, 201), res
        cp.wait_service("stormy2")
        c1, c3 = circuit(lab, "leaf1", 3102), circuit(lab, "leaf3", 3102)
        assert (c1.get("storm_broadcast_pps"), c1.get("storm_multicast_pps")) == (None, 7), c1
        assert c3.get("storm_broadcast_pps") == 300, c3
    finally:
        for name in ("stormy", "stormy2"):
            cp.e3ctl("service", "delete", name, check=False)
    cp.wait_converged()


def test_refused_limits_change_nothing(cp):
    before = {s["name"] for s in cp.services()}
    for args in (["service", "create", "eline", "x1", "--circuit", "leaf1:cust1:3103", "--circuit",
                  "leaf2:cust1:3103", "--storm", "broadcast=10"],
                 ["service", "create", "elan", "x2", "--circuit", "leaf1:cust1:3103", "--circuit",
                  "leaf2:cust1:3103", "--storm", "broadcast=100000001"],
                 ["service", "create", "elan", "x3", "--circuit", "leaf1:cust1:3103", "--circuit",
                  "leaf2:cust1:3103", "--storm", "bum=10"]):
        p = cp.e3ctl(*args, check=False)
        assert p.returncode != 0 and "storm" in p.stderr, p.stderr
    assert {s["name"] for s in cp.services()} == before
