"""Fault injection: rule matching, parsing, the simulated cluster's hooks and `simulate --faults`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.cli import main
from scheduler.clock import VirtualClock
from scheduler.cluster.errors import APIError, NotFoundError
from scheduler.cluster.faults import FaultConfigError, FaultInjector, FaultRule, load_faults, parse_faults
from scheduler.cluster.simulated import SimulatedCluster
from tests.support.builders import make_node, make_pod

START = 1767225600.0

MATCH_CASES = [
    ("any verb, any pod", FaultRule(error="x"), "delete", "default", "p1", True),
    ("verb must match", FaultRule(verb="bind", error="x"), "delete", "default", "p1", False),
    ("glob over the name", FaultRule(pod="low-*", error="x"), "patch", "default", "low-7", True),
    ("glob over namespace/name", FaultRule(pod="kube-system/*", error="x"), "patch", "kube-system", "dns", True),
    (
        "namespace glob does not match another namespace",
        FaultRule(pod="kube-system/*", error="x"),
        "patch",
        "default",
        "dns",
        False,
    ),
]


@pytest.mark.parametrize("name,rule,verb,namespace,pod,want", MATCH_CASES, ids=[c[0] for c in MATCH_CASES])
def test_rule_matches(name: str, rule: FaultRule, verb: str, namespace: str, pod: str, want: bool) -> None:
    assert rule.matches(verb, namespace, pod) is want


def test_count_after_and_first_matching_rule_wins() -> None:
    faults = FaultInjector([FaultRule(verb="delete", count=2, after=1, error="boom"), FaultRule(verb="delete", delay=3.0)])
    decisions = [faults.check("delete", "default", f"p{i}") for i in range(5)]
    # The first call is skipped by `after`, so it falls through to the delay rule.
    assert [(d.error, d.delay) if d else None for d in decisions] == [
        (None, 3.0),
        ("boom", 0.0),
        ("boom", 0.0),
        (None, 3.0),
        (None, 3.0),
    ]
    assert [entry[1] for entry in faults.log] == [f"default/p{i}" for i in range(5)]


def test_bypass_consults_no_rule() -> None:
    faults = FaultInjector([FaultRule(error="boom", count=1)])
    with faults.bypass():
        assert faults.check("delete", "default", "p") is None
    assert faults.check("delete", "default", "p") is not None
    assert faults.check("delete", "default", "p") is None


PARSE_ERRORS = [
    ("unknown field", {"faults": [{"verb": "delete", "error": "x", "oops": 1}]}, "faults[0].oops: unknown field"),
    ("bad verb", {"faults": [{"verb": "remove", "error": "x"}]}, "faults[0].verb: unsupported value 'remove'"),
    ("bad count", {"faults": [{"error": "x", "count": 0}]}, "faults[0].count: must be an integer >= 1"),
    ("negative delay", {"faults": [{"delay": -1}]}, "faults[0].delay: must be a number of seconds >= 0"),
    ("nothing to do", {"faults": [{"verb": "bind"}]}, "faults[0]: a rule needs `error` and/or `delay`"),
    ("bad reason", {"faults": [{"reason": "Nope"}]}, "faults[0].reason: unsupported value 'Nope'"),
    ("not a list", {"faults": {"verb": "bind"}}, "faults: expected a list of rules"),
    ("unknown top-level key", {"rules": []}, "rules: unknown field; valid: faults"),
    ("rule not a mapping", [["delete"]], "faults[0]: expected a mapping"),
]


@pytest.mark.parametrize("name,document,message", PARSE_ERRORS, ids=[c[0] for c in PARSE_ERRORS])
def test_parse_errors_name_the_field(name: str, document: Any, message: str) -> None:
    with pytest.raises(FaultConfigError, match=None) as info:
        parse_faults(document, "f.yaml")
    assert str(info.value).startswith("f.yaml: ")
    assert message in str(info.value)


def test_parse_accepts_a_bare_list_and_defaults() -> None:
    faults = parse_faults([{"verb": "delete", "reason": "NotFound"}, {"delay": 1}])
    first, second = faults.rules
    assert (first.verb, first.pod, first.error, first.reason, first.count) == (
        "delete",
        "*",
        "injected NotFound error",
        "NotFound",
        None,
    )
    assert (second.verb, second.delay, second.error) == ("*", 1.0, None)
    assert parse_faults(None).rules == []


def test_load_faults_reports_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(FaultConfigError, match="cannot read the faults file"):
        load_faults(str(tmp_path / "missing.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("faults: [\n")
    with pytest.raises(FaultConfigError, match="not valid YAML"):
        load_faults(str(bad))


def cluster_with(rules: list[FaultRule]) -> SimulatedCluster:
    cluster = SimulatedCluster(clock=VirtualClock(START))
    cluster.add_node(make_node("n1"))
    cluster.add_pod(make_pod("p1", cpu="100m", node_name="n1"))
    cluster.add_pod(make_pod("p2", cpu="100m"))
    cluster.faults = FaultInjector(rules)
    return cluster


def test_cluster_calls_fail_or_wait() -> None:
    cluster = cluster_with(
        [FaultRule(verb="delete", pod="p1", count=1, error="etcdserver: request timed out"), FaultRule(verb="bind", delay=2.5)]
    )
    p1 = cluster.pods["uid-default-p1"]
    with pytest.raises(APIError, match="etcdserver: request timed out"):
        cluster.delete_pod(p1)
    assert "uid-default-p1" in cluster.pods, "a failed call changes nothing"
    cluster.delete_pod(p1)
    assert "uid-default-p1" not in cluster.pods
    cluster.bind(cluster.pods["uid-default-p2"], "n1")
    assert cluster.clock.now() == START + 2.5, "a blocking call's delay moves the virtual clock"
    assert cluster.pods["uid-default-p2"].node_name == "n1"


def test_not_found_reason_and_real_not_found() -> None:
    cluster = cluster_with([FaultRule(verb="patch", reason="NotFound", count=1)])
    pod = cluster.pods["uid-default-p2"]
    with pytest.raises(NotFoundError):
        cluster.set_nominated_node(pod, "n1")
    cluster.faults = None
    cluster.delete_pod(pod)
    with pytest.raises(NotFoundError, match='pods "p2" not found'):
        cluster.delete_pod(pod)


def write_cluster(tmp_path: Path) -> Path:
    docs = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "node1"},
            "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "low", "namespace": "default"},
            "spec": {
                "nodeName": "node1",
                "priority": 0,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "800m"}}}],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "high", "namespace": "default"},
            "spec": {"priority": 1000, "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]},
        },
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def run_simulate(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["simulate", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_simulate_with_faults_rehearses_a_failed_deletion(tmp_path: Path) -> None:
    cluster = write_cluster(tmp_path)
    faults = tmp_path / "faults.yaml"
    faults.write_text(
        yaml.safe_dump(
            {"faults": [{"verb": "delete", "pod": "default/low", "count": 1, "error": "etcdserver: request timed out"}]}
        )
    )
    code, out, _ = run_simulate(
        "--cluster", str(cluster), "--faults", str(faults), "--now", "2026-01-01T00:00:00Z", "--scores", "none"
    )
    assert code == 0
    doc = json.loads(out)
    outcomes = [(r["pod"], r["outcome"], r["nominatedNode"], r["node"]) for r in doc["results"]]
    assert outcomes == [
        ("default/high", "Nominated", "node1", None),
        ("default/high", "Nominated", "node1", None),
        ("default/high", "Scheduled", None, "node1"),
    ]
    assert doc["pods"]["default/low"]["phase"] == "Deleted"
    executions = {s["labels"]["result"]: s["value"] for s in doc["metrics"]["scheduler_preemption_goroutines_execution_total"]}
    assert executions == {"error": 1.0, "success": 1.0}


def test_simulate_rejects_a_bad_faults_file(tmp_path: Path) -> None:
    cluster = write_cluster(tmp_path)
    faults = tmp_path / "faults.yaml"
    faults.write_text("faults:\n- verb: remove\n  error: x\n")
    code, out, err = run_simulate("--cluster", str(cluster), "--faults", str(faults))
    assert code == 2 and out == ""
    assert f"--faults: {faults}: faults[0].verb: unsupported value 'remove'" in err
