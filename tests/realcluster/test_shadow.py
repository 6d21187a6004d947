"""Shadow mode beside the real kube-scheduler (the default profile scoring every node,
DynamicResources off): over a workload with nodes of four sizes, taints, node affinity, topology
spread and inter-pod affinity (tests/support/shadowrun.py), our default profile's choice made on
every node agrees with kube-scheduler's, exactly or as a tie (kube-scheduler breaks ties at
random); any other pod carries an explanation; nothing is written by the shadow.
`benchmarks/shadow_agreement.py` runs the same at 500 pods."""

from __future__ import annotations

import pytest

from tests.support.controlplane import Api, ControlPlane, Kubelet
from tests.support.shadowrun import run_shadow

pytestmark = pytest.mark.realcluster
PODS = 120


def test_shadow_agrees_with_kube_scheduler(control_plane: ControlPlane, api: Api, kubelet: Kubelet) -> None:
    report, events = run_shadow(control_plane, api, kubelet, nodes=16, pods=PODS)
    assert report["missed"] == 0 and report["compared"] == PODS, report
    outcomes = report["outcomes"]
    assert outcomes["disagreed"] == 0, report["disagreements"][:3]
    assert outcomes["exact"] > outcomes["tie"] > 0, outcomes  # ties happen, and are told apart
    # Pods whose bindings raced (changed) are the only others, each explained.
    assert report["agreementRate"] >= 0.95, outcomes
    assert all(entry["explanation"] for entry in report["changed"])
    # The shadow wrote nothing: every binding and Event is kube-scheduler's.
    assert {e["reportingController"] for e in events} == {"default-scheduler"}
    assert all(
        e["reportingInstance"].startswith("default-scheduler-") and "schedconsole" not in e["reportingInstance"] for e in events
    )
