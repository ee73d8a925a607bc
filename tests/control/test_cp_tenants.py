"""Tenants (docs/tenants.md), end to end with e3ctl and the page: the fabric
admin makes tenant acme (two ports' VLANs 500-599, one service) and gives it
a token; with it, e3ctl creates acme's E-Line, which the real agents
program; acme's token lists only it, finds no other service, reaches no
fabric operation and cannot pass its quota; the page, opened with it, shows
its service and no fabric; a revoked token stops at once."""
import json

from lab.control import wait_for
from test_cp_page import browser, js  # noqa: F401  (the browser fixture)

SERVICE = ["eline", "t1", "--circuit", "leaf1:cust1:500", "--circuit", "leaf2:cust1:500"]


def test_tenant_end_to_end(services, lab, browser):  # noqa: F811
    cp = services
    cp.e3ctl("tenant", "set", "acme", "--port", "leaf1:cust1:500-599", "--port", "leaf2:cust1:500-599",
             "--max-services", "1")
    tok = cp.e3ctl("tenant", "token", "acme").stdout.strip()
    try:
        cp.e3ctl("service", "create", *SERVICE, token=tok)
        cp.wait_service("t1")
        mine = json.loads(cp.e3ctl("--json", "service", "list", token=tok).stdout)
        assert [s["name"] for s in mine] == ["t1"] and mine[0]["tenant"] == "acme", mine
        assert "acme" in cp.e3ctl("service", "show", "t1").stdout

        for args, want in ((["service", "show", "red"], "service red not found"),
                           (["service", "delete", "green"], "service green not found"),
                           (["link", "list"], "tenant's token reaches only its own services"),
                           (["node", "drain", "leaf1"], "tenant's token reaches only its own services"),
                           (["service", "create", "eline", "t2", "--circuit", "leaf1:cust1:501", "--circuit",
                             "leaf2:cust1:501"], "quota is 1 services"),
                           (["service", "create", "eline", "t2", "--circuit", "leaf1:cust1:600", "--circuit",
                             "leaf2:cust1:600"], "not on a port and VLAN of tenant acme")):
            p = cp.e3ctl(*args, token=tok, check=False)
            assert p.returncode != 0 and want in p.stderr + p.stdout, (args, p.stderr, p.stdout)
        assert {"red", "green"} <= {s["name"] for s in cp.services()}, "a refused tenant request changed services"

        # The page: its services, no fabric.
        drv = browser
        drv.get(f"{cp.server}/ui/#token={tok}")
        wait_for("the tenant's page", lambda: js(drv, "window.e3 && e3.tenant === 'acme' && e3.streaming"))
        assert js(drv, "e3.services.map(s => s.name)") == ["t1"]
        assert not drv.find_element("id", "graph").is_displayed()
        assert not drv.find_element("id", "links-section").is_displayed()
        assert "tenant acme" in drv.find_element("id", "summary").text

        (tid,) = [t["id"] for t in cp.json("tenant", "show", "acme")["tokens"]]
        cp.e3ctl("tenant", "revoke", "acme", tid)
        p = cp.e3ctl("service", "list", token=tok, check=False)
        assert p.returncode != 0 and "revoked" in p.stderr, p.stderr
    finally:
        cp.e3ctl("service", "delete", "t1", check=False)
        cp.e3ctl("tenant", "delete", "acme", check=False)
