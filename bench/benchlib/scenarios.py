"""The benchmark scenarios: what the generator sends, how each switch under
test is programmed, and how many frames should come back per frame sent.

Generator port i is switch port "p<i>" (memif). MAC plan:
  HOST        the customer host behind generator port 0
  MAC_BASE+i  the N addresses the table holds (E-LAN), learned first
  SW_FAB[i]   the switch's own MAC on fabric port p<i>
  NBR[i]      the neighbour's (generator's) MAC on that link
"""
from dataclasses import dataclass, field
from typing import Callable, Optional

HOST = "02:e3:50:00:00:01"
REMOTE_HOST = "02:e3:60:00:00:01"
MAC_BASE = "02:e3:d0:00:00:00"
BROADCAST = "ff:ff:ff:ff:ff:ff"
SW_FAB = ["02:e3:fa:00:00:00", "02:e3:fa:00:00:01"]
NBR = ["02:e3:ab:00:00:00", "02:e3:ab:00:00:01"]

LABEL_REMOTE = 1000     # what the neighbour leaf allocated for our E-LAN traffic
LABEL_ELAN_IN = 2000    # ours: E-LAN service 1, source = remote leaf 1
LABEL_ELINE_OUT = 3000
LABEL_ELINE_IN = 3001
LABEL_FLOOD_BASE = 4000
LABEL_SWAP_BASE = 16    # label swap uses 16 .. 16+N-1, the whole space at 1M


@dataclass
class OvsPlan:
    normal: bool = False            # bridge with the NORMAL action (MAC learning)
    flows: Optional[Callable[[int], list]] = None   # n -> OpenFlow flows
    na: str = ""                    # why OVS does not run this scenario


@dataclass
class Plan:
    streams: list                   # e3-pktgen --stream specs
    learn: list = field(default_factory=list)   # --learn specs (once, after programming)
    copies: int = 1                 # frames expected back per frame sent


@dataclass
class Scenario:
    name: str
    title: str
    ports: list                     # kind of p0, p1: "customer" | "fabric"
    sizes: list                     # table sizes it is run with (full mode)
    table: str                      # what "size" counts
    e3_config: Callable[[int], dict]
    plan: Callable[[str, int], Plan]  # (switch, n) -> Plan
    ovs: OvsPlan
    note: str = ""
    vm: bool = False                # the switch also has vm0, a vhost-user port to a VM
    gen_is_vm: bool = False         # ... and the generator is that VM (else testpmd macswap: PVP)
    # PVP: the search starts from this rate, not from a flat-out trial (flat
    # out, the generator would never sleep and the VM would never run).
    bound_pps: float = 0.0

    @property
    def pvp(self):
        """A VM process of its own behind vm0, sharing a CPU where it has none."""
        return self.vm and not self.gen_is_vm


def _stream(**kw):
    return ",".join(f"{k}={v}" for k, v in kw.items())


def _settings(mac_limit=65536):
    # Aging off: a switch paused while the others are measured must not
    # forget what it learned.
    return {"ttl": 64, "control_word": True, "mac_aging_s": 0, "mac_limit": mac_limit}


# ---- E-LAN known unicast, customer -> fabric --------------------------------

def _elan_config(n, branches=()):
    cfg = {
        "settings": _settings(max(65536, n + 1024)),
        "nexthops": [{"id": 1, "port": "p1", "mac": NBR[1]}],
        "nhlfes": [{"id": 1, "nexthop": 1, "label": LABEL_REMOTE}],
        "services": [{"id": 1, "type": "elan", "name": "bench", "mac_limit": n + 1024,
                      "remotes": [{"source": 1, "nhlfe": 1}]}],
        "circuits": [{"id": 1, "port": "p0", "vlan": "untagged", "service": 1}],
        "labels": [{"label": LABEL_ELAN_IN, "type": "elan", "service": 1, "source": 1}],
    }
    return cfg


def _elan_unicast_plan(sw, n):
    stream = _stream(port=0, frame="eth", src=HOST, dst=MAC_BASE, vary="dst", n=n)
    if sw == "e3":
        # The N addresses live behind the remote leaf: teach them with fabric
        # frames on the E-LAN label, one per address.
        learn = [_stream(port=1, frame="mpls", odst=SW_FAB[1], osrc=NBR[1], label=LABEL_ELAN_IN,
                         dst=HOST, src=MAC_BASE, vary="src", n=n)]
    elif sw == "ovs":
        learn = [_stream(port=1, frame="eth", dst=HOST, src=MAC_BASE, vary="src", n=n)]
    else:
        learn = []
    return Plan(streams=[stream], learn=learn)


# ---- E-LAN known unicast, both directions ------------------------------------
#
# The customer's host talks with the N hosts behind the remote leaf: as
# many bytes leave as arrive, for e3 (22 bytes pushed one way, popped the
# other) as for the link limit, which forwards the frames as they are.

def _elan_bidir_plan(sw, n):
    out = _elan_unicast_plan(sw, n)
    vary = dict(vary="src", n=n) if n > 1 else {}
    if sw == "ovs":
        back = _stream(port=1, frame="eth", src=MAC_BASE, dst=HOST, **vary)
    else:
        back = _stream(port=1, frame="mpls", odst=SW_FAB[1], osrc=NBR[1], label=LABEL_ELAN_IN,
                       src=MAC_BASE, dst=HOST, **vary)
    return Plan(streams=out.streams + [back], learn=out.learn)


# ---- E-LAN termination, fabric -> customer ----------------------------------

def _pw_stream(sw, port, label=LABEL_ELINE_IN, **kw):
    """The far end's pseudowire frames into fabric port `port`: with the
    control word, but OVS's without (its encap(mpls) has none)."""
    cw = {"cw": 0} if sw == "ovs" else {}
    return _stream(port=port, frame="mpls", odst=SW_FAB[port], osrc=NBR[port], label=label,
                   **cw, **kw)


def _elan_term_plan(sw, n):
    stream = _pw_stream(sw, 1, label=LABEL_ELAN_IN, src=REMOTE_HOST, dst=MAC_BASE, vary="dst", n=n)
    learn = []
    if sw != "limit":
        learn = [_stream(port=0, frame="eth", dst=REMOTE_HOST, src=MAC_BASE, vary="src", n=n)]
    return Plan(streams=[stream], learn=learn)


def _elan_term_flows(n):
    """OVS pops the pseudowire (decap twice) into its learning bridge."""
    return [f"priority=10,in_port=2,dl_type=0x8847,mpls_label={LABEL_ELAN_IN},"
            "actions=decap(),decap(packet_type(ns=0,type=0)),NORMAL",
            "priority=0,actions=NORMAL"]


# ---- spine label swap ----------------------------------------------------------

def _swap_config(n):
    return {
        "settings": _settings(),
        "nexthops": [{"id": 1, "port": "p1", "mac": NBR[1]}],
        "nhlfes": [{"id": i + 1, "nexthop": 1, "label": LABEL_SWAP_BASE + i} for i in range(n)],
        "services": [], "circuits": [],
        "labels": [{"label": LABEL_SWAP_BASE + i, "type": "swap", "nhlfe": i + 1} for i in range(n)],
    }


def _swap_plan(sw, n):
    return Plan(streams=[_stream(port=0, frame="mpls", odst=SW_FAB[0], osrc=NBR[0],
                                 label=LABEL_SWAP_BASE, vary="label", n=n,
                                 src=REMOTE_HOST, dst=HOST)])


def _swap_flows(n):
    # The same job as e3's SWAP entry: new label, TTL-1, next hop's MACs.
    return [f"in_port=1,mpls,mpls_label={LABEL_SWAP_BASE + i},"
            f"actions=set_field:{LABEL_SWAP_BASE + i}->mpls_label,dec_mpls_ttl,"
            f"mod_dl_src:{SW_FAB[1]},mod_dl_dst:{NBR[1]},output:2" for i in range(n)]


# ---- E-Line, both directions ------------------------------------------------------

def _eline_config(n):
    return {
        "settings": _settings(),
        "nexthops": [{"id": 1, "port": "p1", "mac": NBR[1]}],
        "nhlfes": [{"id": 1, "nexthop": 1, "label": LABEL_ELINE_OUT}],
        "services": [{"id": 2, "type": "eline", "name": "bench", "nhlfe": 1}],
        "circuits": [{"id": 1, "port": "p0", "vlan": "untagged", "service": 2}],
        "labels": [{"label": LABEL_ELINE_IN, "type": "eline", "service": 2}],
    }


def _eline_plan(sw, n):
    return Plan(streams=[
        _stream(port=0, frame="eth", src=HOST, dst=REMOTE_HOST),
        _pw_stream(sw, 1, src=REMOTE_HOST, dst=HOST),
    ])


def _pw_flows(cust, fab):
    """OVS as an E-Line's PE (OpenFlow ports cust and fab = p<fab-1>): the
    customer's frames whole into Ethernet + label (encap, OVS >= 2.17), the
    far end's label popped back to the Ethernet frame (decap twice)."""
    return lambda n: [
        f"in_port={cust},actions=encap(mpls),set_field:{LABEL_ELINE_OUT}->mpls_label,"
        f"set_mpls_ttl(64),encap(ethernet),set_field:{NBR[fab - 1]}->eth_dst,"
        f"set_field:{SW_FAB[fab - 1]}->eth_src,output:{fab}",
        f"in_port={fab},dl_type=0x8847,mpls_label={LABEL_ELINE_IN},"
        f"actions=decap(),decap(packet_type(ns=0,type=0)),output:{cust}",
    ]


# ---- PVP: generator -> switch -> VM -> switch -> generator -----------------------
#
# The generator's port 0 is the switch's p0; the VM (testpmd macswap) sits
# behind the switch's vm0 and sends every frame back with its MACs swapped,
# so it returns on p0. For e3 p0 is a fabric port: frames arrive on the
# service's label and leave on the remote's, vm0 is the service's circuit.

def _pvp(config):
    """A point-to-point config turned PVP: the next hop on p0, the circuit on vm0."""
    def pvp(n):
        cfg = config(n)
        cfg["nexthops"] = [dict(nh, port="p0", mac=NBR[0]) for nh in cfg["nexthops"]]
        cfg["circuits"] = [dict(c, port="vm0") for c in cfg["circuits"]]
        return cfg
    return pvp


def _pvp_eline_plan(sw, n):
    """The far end's pseudowire frames for the VM: OVS, a provider edge too
    (_pw_flows), gets them without the control word; the limit forwards
    plain Ethernet."""
    if sw == "limit":
        return Plan(streams=[_stream(port=0, frame="eth", src=REMOTE_HOST, dst=MAC_BASE)])
    return Plan(streams=[_pw_stream(sw, 0, src=REMOTE_HOST, dst=MAC_BASE)])


def _pvp_elan_plan(sw, n):
    """The far end's frames to the VM's N addresses: e3's in the E-LAN's
    pseudowire, OVS's (a bridge here) and the limit's plain."""
    vary = dict(vary="dst", n=n) if n > 1 else {}
    if sw == "e3":
        s = _pw_stream(sw, 0, label=LABEL_ELAN_IN, src=REMOTE_HOST, dst=MAC_BASE, **vary)
    else:
        s = _stream(port=0, frame="eth", src=REMOTE_HOST, dst=MAC_BASE, **vary)
    # The VM's answers teach a learning switch its N addresses.
    return Plan(streams=[s], learn=[s] if n > 1 else [])


# ---- E-Line from and to a VM: the generator is the VM -------------------------
#
# PVP without the VM's CPU: the generator's port 1 is a virtio_user port on
# the switch's vm0 (the VM's side of a vhost-user link), its port 0 the
# fabric. Each switch receives and sends on its vhost-user port as in PVP,
# with the generator and the switch each on a CPU of its own.

def _vm_eline_plan(sw, n):
    if sw == "limit":
        back = _stream(port=0, frame="eth", src=REMOTE_HOST, dst=HOST)
    else:
        back = _pw_stream(sw, 0, src=REMOTE_HOST, dst=HOST)
    return Plan(streams=[_stream(port=1, frame="eth", src=HOST, dst=REMOTE_HOST), back])


# ---- flooding to K branches ---------------------------------------------------------

def _flood_config(k):
    cfg = _elan_config(1)
    cfg["nhlfes"] += [{"id": 10 + b, "nexthop": 1, "label": LABEL_FLOOD_BASE + b} for b in range(k)]
    cfg["services"][0]["branches"] = [10 + b for b in range(k)]
    return cfg


def _flood_plan(k):
    def plan(sw, n):
        # The link limit (testpmd) forwards each frame once.
        return Plan(streams=[_stream(port=0, frame="eth", src=HOST, dst=BROADCAST)],
                    copies=1 if sw == "limit" else k)
    return plan


def _flood_flows(k):
    return lambda n: ["in_port=1,actions=" + ",".join(["output:2"] * k)]


SIZES = [1, 2000, 20000, 200000, 1000000]

SCENARIOS = [
    Scenario("elan-unicast", "E-LAN known unicast, customer -> fabric", ["customer", "fabric"],
             SIZES, "MACs", _elan_config, _elan_unicast_plan, OvsPlan(normal=True),
             note="OVS: NORMAL bridge learning the same MACs; it switches the frame "
                  "without adding the 22-byte pseudowire header (less work than e3)."),
    Scenario("elan-bidir", "E-LAN known unicast, both directions", ["customer", "fabric"],
             [1, 1000000], "MACs", _elan_config, _elan_bidir_plan, OvsPlan(normal=True),
             note="The customer's host and the N hosts behind the remote leaf send to each "
                  "other: e3 pushes 22 bytes on one way and pops them on the other, so as "
                  "many bytes leave it as arrive, as for the link limit. OVS switches both "
                  "ways without the pseudowire header."),
    Scenario("label-swap", "Spine label swap", ["fabric", "fabric"],
             SIZES, "labels", _swap_config, _swap_plan, OvsPlan(flows=_swap_flows),
             note="OVS: one OpenFlow flow per label (set_field mpls_label, dec_mpls_ttl, MACs)."),
    Scenario("elan-termination", "E-LAN termination, fabric -> customer", ["customer", "fabric"],
             [1, 1000000], "MACs", _elan_config, _elan_term_plan,
             OvsPlan(flows=_elan_term_flows),
             note="OVS pops the pseudowire (decap(), decap(), without the control word: OVS has "
                  "none) and its NORMAL bridge, which learned the N addresses on p0, switches "
                  "the frame."),
    Scenario("eline", "E-Line, both directions", ["customer", "fabric"], [1], "services",
             _eline_config, _eline_plan, OvsPlan(flows=_pw_flows(1, 2)),
             note="OVS: the same Ethernet-over-MPLS pseudowire with OpenFlow's encap(mpls), "
                  "encap(ethernet) and decap(), without the control word (OVS has none): "
                  "18 bytes pushed and popped to e3's 22."),
    Scenario("pvp-eline", "PVP, E-Line: fabric -> VM -> fabric", ["fabric"], [1], "services",
             _pvp(_eline_config), _pvp_eline_plan, OvsPlan(flows=_pw_flows(2, 1)), vm=True,
             bound_pps=4e6,
             note="PVP: every frame crosses the switch twice (p0 -> vm0, vm0 -> p0); rates are "
                  "frames the generator sends and gets back. OVS: the same pseudowire as e3's "
                  "without the control word (encap/decap, as at eline) between the memif port "
                  "and a dpdkvhostuser port; the limit: testpmd io between the memif and the "
                  "vhost port, plain Ethernet."),
    Scenario("pvp-elan", "PVP, E-LAN known unicast: fabric -> VM -> fabric", ["fabric"],
             [1, 20000], "MACs", _pvp(_elan_config), _pvp_elan_plan,
             OvsPlan(normal=True), vm=True, bound_pps=4e6,
             note="PVP as above; e3 learns the VM's N addresses on vm0 and the far host behind "
                  "the remote leaf. OVS: a NORMAL bridge learning both on its ports, plain "
                  "Ethernet, 22 bytes a frame less than e3 carries (to send what its bridge "
                  "switches into a pseudowire OVS would need more than one bridge, not set up "
                  "here)."),
    Scenario("vm-eline", "E-Line, a VM's port both ways: VM <-> switch <-> fabric", ["fabric"],
             [1], "services", _pvp(_eline_config), _vm_eline_plan, OvsPlan(flows=_pw_flows(2, 1)),
             vm=True, gen_is_vm=True,
             note="The generator is the VM (a virtio_user port on the switch's vhost-user "
                  "port vm0) and the fabric (memif p0): each frame crosses the switch once, "
                  "between its vhost-user and memif ports, as each crossing of PVP does, but "
                  "with no third process on the generator's CPU. OVS: the same pseudowire as "
                  "e3's without the control word (encap/decap, as at eline); the limit: testpmd "
                  "io between the memif and the vhost port, plain Ethernet."),
] + [
    Scenario(f"flood-{k}", f"Flooding to {k} branch{'es' if k > 1 else ''}",
             ["customer", "fabric"], [1], "branches", (lambda k: lambda n: _flood_config(k))(k),
             _flood_plan(k), OvsPlan(flows=_flood_flows(k)),
             note=f"Rates are frames in; {k} copies leave per frame. OVS: {k} x output.")
    for k in (1, 8, 32)
]

BY_NAME = {s.name: s for s in SCENARIOS}
