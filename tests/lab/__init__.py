"""The emulated-fabric lab: topology files, namespaces + veths + e3-vswitchd
processes, and a static programmer standing in for the controller.
See docs/lab.md."""

from .lab import Lab, LabError
from .static import StaticProgrammer
from .topology import Topology, TopologyError, load

__all__ = ["Lab", "LabError", "StaticProgrammer", "Topology", "TopologyError", "load"]
