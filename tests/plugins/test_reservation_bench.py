"""The Reservation bench workload: its shape and its own assertions (a small run)."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from scheduler.bench.koord import RESERVATION_LABEL, reservation, reservations_respected
from scheduler.bench.run import WORKLOADS, add_arguments, run_bench
from scheduler.clock import VirtualClock


def bench(*argv: str) -> dict[str, object]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = io.StringIO()
    assert run_bench(parser.parse_args(list(argv)), out, io.StringIO()) == 0
    return json.loads(out.getvalue().strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_registered_with_5000_nodes_and_10000_measured_pods() -> None:
    assert WORKLOADS["Reservation"][1] == (5000, 0, 10000)


def test_half_the_pods_own_a_reservation() -> None:
    work = reservation(10, 0, 40)
    assert len(work.extensions["Reservation"]) == 10
    owners = [p for p in work.measured if RESERVATION_LABEL in p.labels]
    assert len(owners) == 20 and owners[0].labels[RESERVATION_LABEL] == "r-00000"


def test_small_run_keeps_every_reservation_for_its_owners() -> None:
    result = bench("--workload", "Reservation", "--nodes", "40", "--pods", "120")
    # 40 reservations, 60 owners: the first 20 reservations get two owners, and half of those
    # (room for two) take both; nobody is turned away at this size.
    assert result["scheduled"] == 120 and result["stop"] == "finished"
    assert result["reservations"] == 40 and result["owners_on_reservation"] == 60 and result["owners_turned_away"] == 0


def test_the_assertion_catches_a_non_owner_taking_a_reservation() -> None:
    from scheduler.api.loader import ClusterObjects
    from scheduler.cluster.simulated import SimulatedCluster

    work = reservation(2, 0, 2)
    docs = work.extensions["Reservation"]
    for doc in docs:
        doc["status"] = {"phase": "Available", "nodeName": "node-00000"}
    intruder = work.measured[1].with_changes(node_name="node-00001")
    intruder.meta = type(intruder.meta)(
        **{
            **{f: getattr(intruder.meta, f) for f in intruder.meta.__slots__},
            "annotations": {"scheduling.koordinator.sh/reservation-allocated": '{"name":"r-00000","uid":"uid-r-00000"}'},
        }
    )
    cluster = SimulatedCluster.from_objects(
        ClusterObjects(nodes=work.nodes, pods=[intruder], extensions={"Reservation": docs}), VirtualClock(0.0)
    )
    with pytest.raises(AssertionError, match="own no reservation allocated one"):
        reservations_respected(cluster)
