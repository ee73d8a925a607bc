"""The schema's own rules, which datapath/api/gen.py checks before it
generates anything: the objects' order is their dependency order."""
import copy
import sys
from pathlib import Path

import pytest
import yaml

API = Path(__file__).resolve().parents[2] / "api"
sys.path.insert(0, str(API))
import gen  # noqa: E402


def schema():
    return yaml.safe_load((API / "schema.yaml").read_text())


def moved(d, obj, before):
    """d with object obj moved to just before object before."""
    d = copy.deepcopy(d)
    items = [(k, v) for k, v in d["objects"].items() if k != obj]
    at = [k for k, _ in items].index(before)
    d["objects"] = dict(items[:at] + [(obj, d["objects"][obj])] + items[at:])
    return d


def test_the_schema_orders_every_reference():
    gen.check_refs(gen.Schema(schema()))


@pytest.mark.parametrize("obj, before, want", [
    ("label", "circuit", "label.circuit refers to circuit"),
    ("nhlfe", "nexthop", "nhlfe.nexthop refers to nexthop"),
    ("service", "ecmp", "service.nhlfe refers to ecmp"),
])
def test_a_reference_to_a_later_kind_is_refused(obj, before, want):
    with pytest.raises(SystemExit, match=want):
        gen.check_refs(gen.Schema(moved(schema(), obj, before)))


def test_only_a_variant_refers_to_its_own_kind():
    d = schema()
    nexthop = next(f for f in d["objects"]["nhlfe"]["fields"] if f["name"] == "nexthop")
    nexthop["ref"] = "nhlfe"    # a plain NHLFE naming an NHLFE: not a variant's param
    with pytest.raises(SystemExit, match="nhlfe.nexthop refers to nhlfe"):
        gen.check_refs(gen.Schema(d))
