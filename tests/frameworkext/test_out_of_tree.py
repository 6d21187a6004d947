"""A sample out-of-tree plugin brings a REST endpoint, a controller and a Filter hook via `with_plugin`."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.frameworkext.extender import Extender
from scheduler.frameworkext.proxy import with_plugin
from scheduler.plugins.noderesources import fit
from tests.frameworkext import sample_plugin
from tests.support.builders import make_node, make_pod
from tests.support.engines import base_registry, config, engine, profile


def reservation_engine(with_sample: bool, extender: Extender | None = None) -> object:
    registry = base_registry()
    registry[fit.NAME] = fit.new
    options = (with_plugin(sample_plugin.NAME, sample_plugin.new),) if with_sample else ()
    multi = (fit.NAME, sample_plugin.NAME) if with_sample else (fit.NAME,)
    nodes = [make_node("n0", cpu="1"), make_node("n1", cpu="1"), make_node("n2", cpu="1")]
    pods = [
        make_pod("holder", cpu="1", node_name="n1", labels={sample_plugin.RESERVATION_LABEL: "r1"}),
        make_pod("busy-0", cpu="1", node_name="n0"),
        make_pod("busy-2", cpu="1", node_name="n2"),
        make_pod("app", cpu="1", labels={sample_plugin.RESERVED_BY_LABEL: "r1"}),
    ]
    return engine(config(profile(multi=multi)), registry, extender, nodes=nodes, pods=pods, options=options)


def test_without_the_plugin_the_pod_does_not_fit() -> None:
    eng = reservation_engine(with_sample=False)
    eng.scheduler.run()  # type: ignore[attr-defined]
    record = eng.scheduler.records[0]  # type: ignore[attr-defined]
    assert record.outcome == "Unschedulable"
    assert record.message == "0/3 nodes are available: 3 Insufficient cpu."


def test_the_filter_hook_lets_the_pod_use_its_reservation() -> None:
    eng = reservation_engine(with_sample=True)
    eng.scheduler.run()  # type: ignore[attr-defined]
    record = eng.scheduler.records[0]  # type: ignore[attr-defined]
    assert (record.outcome, record.node) == ("Scheduled", "n1")
    # Only the node holding the reservation was hooked (filter_hook_nodes), and the others
    # kept the batch verdict of NodeResourcesFit.
    plugin = eng.scheduler.profiles["default-scheduler"].plugins[sample_plugin.NAME]  # type: ignore[attr-defined]
    assert plugin.hooked == ["n1"]
    assert record.filter_failures() == {
        "n0": {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]},
        "n2": {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]},
    }


def test_the_plugin_serves_its_endpoints_under_its_name() -> None:
    eng = reservation_engine(with_sample=True)
    ext = eng.extender  # type: ignore[attr-defined]
    eng.scheduler.run()  # type: ignore[attr-defined]
    assert ext.dispatch("GET", "/apis/v1/plugins/SampleReservation/reservations/n1").body == {"reservations": ["r1"]}
    assert ext.dispatch("GET", "/apis/v1/plugins/SampleReservation/hooked").body == {"nodes": ["n1"]}
    assert ext.dispatch("GET", "/apis/v1/plugins/SampleReservation/reservations/nope").body == {
        "message": "cannot find node nope"
    }
    assert ext.dispatch("GET", "/apis/v1/__services__").body["GET"] == [
        "/apis/v1/__services__",
        "/apis/v1/nodes/:nodeName",
        "/apis/v1/plugins/SampleReservation/hooked",
        "/apis/v1/plugins/SampleReservation/reservations/:nodeName",
    ]


def test_the_plugin_controller_follows_leadership() -> None:
    ext = Extender(leader=False)
    eng = reservation_engine(with_sample=True, extender=ext)
    plugin = eng.scheduler.profiles["default-scheduler"].plugins[sample_plugin.NAME]  # type: ignore[attr-defined]
    assert plugin.syncer.log == []
    ext.leadership.acquire()
    ext.leadership.release()
    ext.leadership.acquire()
    ext.stop()
    assert plugin.syncer.log == ["start", "stop", "start", "stop"]


@pytest.mark.parametrize("seed", range(6))
def test_hooked_per_node_path_agrees_with_the_batch_path(seed: int) -> None:
    # A hook that hands every node a fresh copy forces the per-node path everywhere; the
    # feasible set, failures and scores must equal those of the batch path.
    from scheduler.config.loader import default_config
    from scheduler.plugins.registry import new_registry

    rng = np.random.default_rng(seed)
    nodes = [
        make_node(
            f"n{i}",
            cpu=str(int(rng.integers(1, 4))),
            labels={"zone": f"z{int(rng.integers(0, 2))}"},
            taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}] if rng.random() < 0.2 else None,
        )
        for i in range(12)
    ]
    bound = [
        make_pod(f"b{i}", cpu=f"{int(rng.integers(1, 10)) * 100}m", node_name=f"n{int(rng.integers(0, 12))}") for i in range(10)
    ]
    pending = [
        make_pod(f"p{i}", cpu=f"{int(rng.integers(1, 20)) * 100}m", spec={"nodeSelector": {"zone": "z0"}} if i % 3 == 0 else None)
        for i in range(8)
    ]

    class CopyEverything:
        name = "CopyEverything"

        def filter_hook(self, handle: object, state: object, pod: object, node_info: object) -> tuple[object, object, bool]:
            return pod, node_info.clone(), True  # type: ignore[attr-defined]

    outcomes = []
    for hooks in ((), (CopyEverything(),)):
        eng = engine(default_config(), new_registry(), Extender(hooks=hooks), nodes=nodes, pods=[*bound, *pending])
        eng.scheduler.run()
        outcomes.append([(r.pod, r.outcome, r.node, r.filter_failures(), r.scores()) for r in eng.scheduler.records])
    assert outcomes[0] == outcomes[1]
