"""The fabric as a file (e3ctl get / diff / apply, docs/operations.md) on the
real controller: what `get -o yaml` writes, `diff` finds nothing to change
in; a service added to the file is created by `apply` in one generation
and carries traffic; a refused file names its line and field and changes
nothing; a service the file drops stays unless `--prune`."""
import re

import yaml

from cplib import BLUE, clean_ping, first_contact

H5 = "10.40.0.2"   # blue: h4 (leaf1:cust2, untagged) <-> h5 (leaf2:cust2, vlan 40)


def _blue() -> dict:
    name, type_, circuits = BLUE
    out = []
    for c in circuits:
        node, port, vlan = c.split(":")
        out.append({"node": node, "port": port, "vlan": vlan if vlan == "untagged" else int(vlan)})
    return {"name": name, "type": type_, "circuits": out}


def test_get_diff_apply_prune(services, lab, tmp_path):
    cp = services
    if BLUE[0] in {s["name"] for s in cp.services()}:
        cp.e3ctl("service", "delete", BLUE[0])
    f = tmp_path / "fabric.yaml"
    f.write_text(cp.e3ctl("get", "-o", "yaml").stdout)
    gen = cp.status()["generation"]
    for cmd in (["diff", "-f", f], ["apply", "-f", f]):
        out = cp.e3ctl(*cmd).stdout
        assert out.startswith("no changes"), out
    assert cp.status()["generation"] == gen

    # A service added to the file: the plan shows it, a dry run makes nothing.
    doc = yaml.safe_load(f.read_text())
    doc["services"].append(_blue())
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = cp.e3ctl("apply", "-f", f, "--dry-run").stdout
    assert "+ service blue (create)" in out and "not applied" in out, out
    assert cp.status()["generation"] == gen
    out = cp.e3ctl("apply", "-f", f).stdout
    assert re.search(rf"applied at generation {gen + 1}\b", out), out
    cp.wait_service(BLUE[0])
    cp.wait_converged()
    first_contact(lab, "h4", H5)
    clean_ping(lab, "h4", H5, count=5)
    # What apply made, get writes back: nothing to change.
    again = tmp_path / "again.yaml"
    again.write_text(cp.e3ctl("get").stdout)
    assert cp.e3ctl("diff", "-f", again).stdout.startswith("no changes")

    # An update shows the fields it changes.
    doc["services"][-1]["bandwidth_mbps"] = 500
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = cp.e3ctl("diff", "-f", f).stdout
    assert "~ service blue (update)" in out and "bandwidth_mbps: (unset) -> 500" in out, out

    # Without --prune a service the file drops stays; with it, it goes.
    doc["services"].pop()
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert cp.e3ctl("apply", "-f", f).stdout.startswith("no changes")
    out = cp.e3ctl("diff", "-f", f, "--prune").stdout
    assert "- service blue (delete)" in out and "0 to create, 0 to update, 1 to delete" in out, out
    gen = cp.status()["generation"]
    cp.e3ctl("apply", "-f", f, "--prune")
    assert BLUE[0] not in {s["name"] for s in cp.services()}
    assert cp.status()["generation"] == gen + 1


def test_refused_file_changes_nothing(services, tmp_path):
    cp = services
    good = cp.e3ctl("get").stdout
    gen, before = cp.status()["generation"], cp.json("get")
    doc = yaml.safe_load(good)
    bad_svc = _blue()
    bad_svc["circuits"][0]["node"] = "leaf9"
    doc["services"].append(bad_svc)
    n = len(doc["services"]) - 1
    # (file, the text of the line at fault, what the error says)
    cases = {
        # The controller refuses it (leaf9 is no node): at the service.
        "unknown node": (yaml.safe_dump(doc, sort_keys=False), "- name: blue", rf"services\[{n}\]: .*leaf9"),
        # e3ctl refuses these before sending: at the key or the value.
        "unknown key": (good.replace("role: leaf", "rol: leaf", 1), "rol: leaf", r"field rol not found"),
        "bad vlan": (good.replace("vlan: 1000", "vlan: 5000", 1), "vlan: 5000",
                     r"services\[\d+\]\.circuits\[\d+\]\.vlan: .*5000"),
    }
    f = tmp_path / "bad.yaml"
    for name, (text, at, want) in cases.items():
        f.write_text(text)
        line = next(i for i, l in enumerate(text.splitlines(), 1) if at in l)
        p = cp.e3ctl("apply", "-f", f, check=False)
        assert p.returncode == 1 and re.search(rf"bad\.yaml:{line}: {want}", p.stderr), f"{name}: line {line}: {p.stderr}"
    assert cp.status()["generation"] == gen and cp.json("get") == before
    # The read-only token reads the intent but cannot apply it.
    f.write_text(good)
    p = cp.e3ctl("apply", "-f", f, check=False, token=cp.read_token)
    assert p.returncode == 1 and "admin token" in p.stderr, p.stderr
