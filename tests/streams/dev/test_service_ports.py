"""Ports for services a test starts itself: free, and never handed out twice.

A replicated Redis picks its primary's and replicas' ports before any of them
binds; two equal picks left the primary without one of its replicas (the
second node could not bind), so a failover had no replica to acknowledge writes.
"""

from __future__ import annotations

import socket

from slotwise.streams.dev.testing import service_port


def test_ports_picked_before_anything_binds_are_all_different() -> None:
    # 600 picks of one port and 200 of three in 12,000: a repeat is all but certain
    # unless earlier picks are remembered.
    singles = [service_port() for _ in range(600)]
    spans = [service_port(span=3) for _ in range(200)]
    taken = singles + [p + offset for p in spans for offset in range(3)]
    assert len(taken) == len(set(taken))


def test_a_port_handed_out_is_free() -> None:
    port = service_port(span=2)
    for offset in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", port + offset))
