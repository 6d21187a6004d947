"""Pod builders and random clusters shared by the resource plugin tests."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import strategies as st

from scheduler.api.objects import Node, Pod
from scheduler.framework.snapshot import Snapshot
from tests.support.builders import make_node, make_pod, make_snapshot

_names = itertools.count()

EXTENDED_A = "example.com/aaa"
EXTENDED_B = "example.com/bbb"
KUBERNETES_IO_A = "kubernetes.io/something"
KUBERNETES_IO_B = "subdomain.kubernetes.io/something"
HUGEPAGES_A = "hugepages-2Mi"


def container(requests: dict[str, str] | None = None, image: str = "registry.k8s.io/pause:3.10") -> dict[str, Any]:
    """A container dict with the given requests (None: no resources stanza at all)."""
    body: dict[str, Any] = {"name": f"c{next(_names)}", "image": image}
    if requests is not None:
        body["resources"] = {"requests": dict(requests)}
    return body


def pod(
    *containers: dict[str, str],
    init: tuple[dict[str, str], ...] = (),
    overhead: dict[str, str] | None = None,
    pod_level: dict[str, str] | None = None,
    node: str = "",
) -> Pod:
    """A pod whose containers request the given amounts (as st.MakePod().Req(...) builds them)."""
    spec: dict[str, Any] = {}
    if init:
        spec["initContainers"] = [container(r) for r in init]
    if overhead:
        spec["overhead"] = dict(overhead)
    if pod_level:
        spec["resources"] = {"requests": dict(pod_level)}
    return make_pod(f"p{next(_names)}", containers=[container(r) for r in containers], spec=spec, node_name=node)


def bare_container_pod(node: str = "") -> Pod:
    """A pod with one container and no requests (st.MakePod().Container("c"))."""
    return make_pod(f"p{next(_names)}", containers=[container(None)], node_name=node)


def node(name: str, cpu: str, memory: str, pods: int = 32, extra: dict[str, str | int] | None = None) -> Node:
    """A node whose allocatable is exactly these amounts."""
    return make_node(name, cpu=cpu, memory=memory, pods=pods, extra=extra)


# ----- random clusters for the batch-vs-per-node property tests ---------------------------------
SCALARS = (EXTENDED_A, EXTENDED_B, KUBERNETES_IO_A, HUGEPAGES_A)
PLAIN = ("cpu", "memory", "ephemeral-storage")


@st.composite
def requests(draw: st.DrawFn, allow_scalars: bool = True) -> dict[str, str]:
    """A container's requests: any subset of cpu/memory/ephemeral-storage/scalars, zeros allowed."""
    out: dict[str, str] = {}
    if draw(st.booleans()):
        out["cpu"] = f"{draw(st.integers(0, 4000))}m"
    if draw(st.booleans()):
        out["memory"] = str(draw(st.integers(0, 8000)))
    if draw(st.integers(0, 3)) == 0:
        out["ephemeral-storage"] = str(draw(st.integers(0, 100)))
    if allow_scalars:
        for name in SCALARS:
            if draw(st.integers(0, 3)) == 0:
                out[name] = str(draw(st.integers(0, 6)))
    return out


@st.composite
def random_pod(draw: st.DrawFn, node_name: str = "") -> Pod:
    """A pod with 0-3 containers, sometimes init containers, overhead or pod-level requests."""
    containers = draw(st.lists(requests(), min_size=0, max_size=3))
    inits = tuple(draw(st.lists(requests(), max_size=2)))
    overhead = {"cpu": f"{draw(st.integers(0, 300))}m"} if draw(st.integers(0, 4)) == 0 else None
    pod_level = None
    if containers and draw(st.integers(0, 5)) == 0:
        pod_level = {"cpu": f"{draw(st.integers(1, 3000))}m", "memory": str(draw(st.integers(1, 6000)))}
    return pod(*containers, init=inits, overhead=overhead, pod_level=pod_level, node=node_name)


@st.composite
def random_node(draw: st.DrawFn, name: str) -> Node:
    """A node with random cpu/memory/ephemeral/pods allocatable and some scalar resources."""
    extra: dict[str, str | int] = {}
    if draw(st.booleans()):
        extra["ephemeral-storage"] = draw(st.integers(0, 200))
    for scalar in SCALARS:
        if draw(st.integers(0, 2)) == 0:
            extra[scalar] = draw(st.integers(0, 8))
    return make_node(
        name,
        cpu=f"{draw(st.integers(0, 8000))}m",
        memory=str(draw(st.integers(0, 20000))),
        pods=draw(st.integers(0, 6)),
        extra=extra,
    )


@st.composite
def random_cluster(draw: st.DrawFn) -> Snapshot:
    """1-6 nodes with 0-8 existing pods spread over them."""
    count = draw(st.integers(1, 6))
    nodes = [draw(random_node(f"n{i}")) for i in range(count)]
    existing = [draw(random_pod(node_name=f"n{draw(st.integers(0, count - 1))}")) for _ in range(draw(st.integers(0, 8)))]
    return make_snapshot(nodes, existing)


@st.composite
def resource_specs(draw: st.DrawFn) -> list[tuple[str, int]]:
    """A non-empty list of distinct scored resources with weights 1..100."""
    names = draw(st.lists(st.sampled_from(PLAIN + SCALARS + ("pods",)), min_size=1, max_size=5, unique=True))
    return [(name, draw(st.integers(1, 100))) for name in names]
