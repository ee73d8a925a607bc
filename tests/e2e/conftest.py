"""Fixtures of the end-to-end tests: the lab of tests/lab on
examples/static-3node.yaml under the prefix e2, removed even on failure."""
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
for p in (REPO / "tests", REPO / "datapath" / "client"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from lab import Lab, StaticProgrammer  # noqa: E402
from lab.vswitchd import binary as vswitchd_binary  # noqa: E402

EXAMPLES = REPO / "examples"
PREFIX = "e2"


@pytest.fixture(scope="session")
def root():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")


@pytest.fixture(scope="module")
def fabric(root):
    """The static fabric, up and programmed: (lab, programmer)."""
    if not os.access(vswitchd_binary(), os.X_OK):
        pytest.fail(f"{vswitchd_binary()} is not built: run `make datapath`")
    lab = Lab(EXAMPLES / "static-3node.yaml", PREFIX)
    try:
        lab.up()
        prog = StaticProgrammer(lab.topo, lab.client)
        prog.program()
        yield lab, prog
    finally:
        lab.down()


@pytest.fixture
def lab(fabric):
    """The fabric's Lab; after the test, every datapath must still be running."""
    lab = fabric[0]
    yield lab
    dead = [n.name for n in lab.topo.nodes if not lab.running(n.name)]
    assert not dead, "datapath(s) died: " + "; ".join(f"{n}:\n{lab.log_tail(n)}" for n in dead)


@pytest.fixture
def prog(fabric):
    return fabric[1]
