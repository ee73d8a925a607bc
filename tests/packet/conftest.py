"""Fixtures of the packet tests: one network namespace and one real
e3-vswitchd per test module (pkt_switch.Switch), raw sockets on the test side
of its ports (pkt_net.Wire), and a reset before every test so tests are
independent."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from pkt_net import Wire  # noqa: E402
from pkt_switch import PEERS, Switch  # noqa: E402


def _module_tag(request):
    name = request.module.__name__.rsplit(".", 1)[-1]
    return name.replace("test_pkt_", "").replace("_", "")[:8]


@pytest.fixture(scope="module")
def switch(request):
    sw = Switch(_module_tag(request))
    request.addfinalizer(sw.stop)
    sw.start()
    return sw


@pytest.fixture(scope="module")
def wire(switch):
    w = Wire(switch.ns, PEERS)
    yield w
    w.close()


@pytest.fixture
def sw(switch, wire):
    """The module's switch, reset to ports only; fails the test if the switch
    died during it."""
    switch.check_alive()
    switch.reset()
    yield switch
    switch.check_alive()
