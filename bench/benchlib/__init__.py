"""e3fabric benchmark harness: RFC 2544 zero-loss search with e3-pktgen over
memif against the link limit (dpdk-testpmd), e3-vswitchd and OVS-DPDK."""
