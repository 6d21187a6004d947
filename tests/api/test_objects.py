"""Pod requests as component-helpers' `resource.PodRequests` computes them (resource/helpers_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.fields import FieldError
from scheduler.api.objects import parse_node, parse_pod
from tests.support.builders import make_pod


def container(cpu: str | None = None, memory: str | None = None, restart: str | None = None, **extra: Any) -> dict[str, Any]:
    req = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    out: dict[str, Any] = {"name": "c", "image": "i", "resources": {"requests": req}, **extra}
    if restart:
        out["restartPolicy"] = restart
    return out


@pytest.mark.parametrize(
    ("spec", "requests", "nonzero"),
    [
        ({"containers": [container("1", "2000"), container("2", "3000")]}, {"cpu": 3000, "memory": 5000}, (3000, 5000)),
        ({"containers": [container()]}, {}, (100, 200 * 1024 * 1024)),
        ({"containers": [container("0", "0")]}, {"cpu": 0, "memory": 0}, (0, 0)),
        (
            {"containers": [container("1", "1Gi")], "initContainers": [container("2", "512Mi")]},
            {"cpu": 2000, "memory": 2**30},
            (2000, 2**30),
        ),
        (
            # A sidecar (restartable init container) adds to the pod's total and to later init containers.
            {
                "containers": [container("1", "1Gi")],
                "initContainers": [container("500m", "100Mi", "Always"), container("2", "1Gi")],
            },
            {"cpu": 2500, "memory": 2**30 + 100 * 2**20},
            (2500, 2**30 + 100 * 2**20),
        ),
        (
            {"containers": [container("1", "1Gi")], "overhead": {"cpu": "250m", "memory": "120Mi"}},
            {"cpu": 1250, "memory": 2**30 + 120 * 2**20},
            (1250, 2**30 + 120 * 2**20),
        ),
        (
            {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]},
            {"cpu": 2000, "memory": 2**30},
            (2000, 2**30),
        ),
        (
            {"containers": [container("1", "1Gi")], "resources": {"requests": {"cpu": "3"}}},
            {"cpu": 3000, "memory": 2**30},
            (3000, 2**30),
        ),
        ({"containers": [container("100m", None), container("100m", None)]}, {"cpu": 200}, (200, 400 * 1024 * 1024)),
    ],
    ids=[
        "two-containers",
        "best-effort",
        "explicit-zero",
        "init-max",
        "sidecar",
        "overhead",
        "limits-default-requests",
        "pod-level",
        "missing-memory",
    ],
)
def test_pod_requests(spec: dict[str, Any], requests: dict[str, int], nonzero: tuple[int, int]) -> None:
    pod = parse_pod({"metadata": {"name": "p"}, "spec": spec})
    assert pod.requests == requests
    assert (pod.nonzero_cpu, pod.nonzero_memory) == nonzero


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"metadata": {"name": "p"}, "spec": {"containers": [container("abc")]}}, "spec.containers[0].resources.requests.cpu"),
        ({"metadata": {}, "spec": {}}, "metadata.name"),
        (
            {"metadata": {"name": "p"}, "spec": {"tolerations": [{"key": "a", "operator": "Like"}]}},
            "spec.tolerations[0].operator",
        ),
        ({"metadata": {"name": "p"}, "spec": {"priority": "high"}}, "spec.priority"),
        (
            {
                "metadata": {"name": "p"},
                "spec": {"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}]},
            },
            "spec.topologySpreadConstraints[0].maxSkew",
        ),
        (
            {
                "metadata": {"name": "p"},
                "spec": {
                    "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]}}
                },
            },
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
        ),
        ({"metadata": {"name": "p", "labels": {"a": 1}}, "spec": {}}, "metadata.labels.a"),
    ],
    ids=["bad-quantity", "no-name", "bad-operator", "bad-priority", "zero-skew", "no-topology-key", "label-not-string"],
)
def test_malformed_pods_name_the_field(doc: dict[str, Any], field: str) -> None:
    with pytest.raises(FieldError) as info:
        parse_pod(doc)
    assert info.value.path == field


def test_node_allocatable_defaults_to_capacity() -> None:
    node = parse_node({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "2", "memory": "1Gi", "pods": "10"}}})
    assert node.allocatable == {"cpu": 2000, "memory": 2**30, "pods": 10}


def test_pod_affinity_match_label_keys_merge_into_selector() -> None:
    pod = make_pod(
        "p",
        labels={"app": "web", "rev": "2"},
        spec={
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone", "matchLabelKeys": ["rev"]}
                    ]
                }
            }
        },
    )
    assert pod.affinity is not None
    term = pod.affinity.anti_required[0]
    assert term.selector.matches({"app": "web", "rev": "2"})
    assert not term.selector.matches({"app": "web", "rev": "1"})
    assert term.namespaces == frozenset({"default"})
