"""Builders for the PodTopologySpread tests (nodes with exact labels, pods with spread constraints)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from scheduler.api.affinity import parse_spread_constraints
from scheduler.api.meta import OwnerReference
from scheduler.api.objects import Node, Pod, parse_node
from scheduler.api.selectors import LabelSelector, selector_from_map
from scheduler.api.workloads import CONTROLLER_API_VERSIONS
from scheduler.config.args import PodTopologySpreadArgs
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import CycleState, Status
from scheduler.plugins.podtopologyspread import PodTopologySpread, new
from tests.support.builders import make_pod, make_snapshot, node_doc
from tests.support.fakes import FakeHandle

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}  # st.MakeLabelSelector().Exists("foo")
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
HOSTNAME = "kubernetes.io/hostname"
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
LIST_ARGS = PodTopologySpreadArgs(defaulting_type="List")
SYSTEM_ARGS = PodTopologySpreadArgs(defaulting_type="System")
_NIL = object()


def list_args(*constraints: dict[str, Any]) -> PodTopologySpreadArgs:
    """List defaulting with these default constraints (documents as in the config file)."""
    return PodTopologySpreadArgs(parse_spread_constraints(list(constraints), "defaultConstraints"), "List")


def node(name: str, labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None) -> Node:
    """A node carrying exactly these labels (no automatic hostname label)."""
    return parse_node(node_doc(name, memory="32Gi", labels=labels, spec={"taints": taints or []}, hostname=False))


def spread(
    max_skew: int,
    key: str,
    when: str,
    selector: Any = _NIL,
    min_domains: int | None = None,
    affinity_policy: str | None = None,
    taints_policy: str | None = None,
    match_label_keys: list[str] | None = None,
) -> dict[str, Any]:
    """A topologySpreadConstraint document (`st.SpreadConstraint`); selector None means nil."""
    doc: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not _NIL and selector is not None:
        doc["labelSelector"] = selector
    if min_domains is not None:
        doc["minDomains"] = min_domains
    if affinity_policy is not None:
        doc["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        doc["nodeTaintsPolicy"] = taints_policy
    if match_label_keys:
        doc["matchLabelKeys"] = match_label_keys
    return doc


def node_affinity(key: str, operator: str, values: list[str]) -> dict[str, Any]:
    """spec.affinity with one required node selector term."""
    term = {"matchExpressions": [{"key": key, "operator": operator, "values": values}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def pod(
    name: str,
    labels: dict[str, str] | None = None,
    on: str = "",
    namespace: str = "default",
    constraints: list[dict[str, Any]] | None = None,
    node_selector: dict[str, str] | None = None,
    affinity: dict[str, Any] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    terminating: bool = False,
    owners: list[tuple[Any, ...]] | None = None,
) -> Pod:
    """A pod (bound when `on` names a node) with optional spread constraints and node affinity."""
    spec: dict[str, Any] = {}
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = tolerations
    made = make_pod(name, namespace=namespace, node_name=on, labels=labels, spec=spec)
    if terminating:
        made = made.with_changes(meta=dataclasses.replace(made.meta, deletion_timestamp=1.0))
    if owners:
        refs = tuple(owner_reference(*owner) for owner in owners)
        kinds = tuple((ref.kind, ref.name) for ref in refs)
        made = made.with_changes(meta=dataclasses.replace(made.meta, owner_kinds=kinds, owner_references=refs))
    return made


def owner_reference(kind: str, name: str, api_version: str | None = None, controller: bool = True) -> OwnerReference:
    """An owner reference; by default the controlling one, in the group/version upstream expects."""
    version = CONTROLLER_API_VERSIONS.get(kind, "batch/v1") if api_version is None else api_version
    return OwnerReference(version, kind, name, controller)


@dataclasses.dataclass
class Selecting:
    """A Service / controller as the cluster backend lists it."""

    selector: LabelSelector | None
    name: str = ""


class FakeCluster:
    """Listers for default constraints' selector."""

    def __init__(
        self,
        services: list[Selecting] | None = None,
        replica_sets: list[Selecting] | None = None,
        replication_controllers: list[Selecting] | None = None,
        stateful_sets: list[Selecting] | None = None,
    ) -> None:
        self.objects = {
            "services": services or [],
            "replica_sets": replica_sets or [],
            "replication_controllers": replication_controllers or [],
            "stateful_sets": stateful_sets or [],
        }

    def list_services(self, namespace: str) -> list[Selecting]:
        return self.objects["services"]

    def list_replica_sets(self, namespace: str) -> list[Selecting]:
        return self.objects["replica_sets"]

    def list_replication_controllers(self, namespace: str) -> list[Selecting]:
        return self.objects["replication_controllers"]

    def list_stateful_sets(self, namespace: str) -> list[Selecting]:
        return self.objects["stateful_sets"]


class ClusterHandle(FakeHandle):
    """FakeHandle with a cluster backend."""

    def __init__(self, snapshot: Snapshot, cluster: Any) -> None:
        super().__init__(snapshot)
        self._cluster = cluster

    def cluster(self) -> Any:
        return self._cluster


def service(labels: dict[str, str]) -> Selecting:
    """A Service selecting these labels."""
    return Selecting(selector_from_map(labels))


def setup(
    nodes: list[Node], existing: list[Pod], args: Any = LIST_ARGS, cluster: Any = None
) -> tuple[PodTopologySpread, Snapshot]:
    """The plugin over a snapshot of these nodes and pods."""
    snap = make_snapshot(nodes, existing)
    handle = FakeHandle(snap) if cluster is None else ClusterHandle(snap, cluster)
    return new(args, handle), snap


def filter_all(pl: PodTopologySpread, snap: Snapshot, incoming: Pod, state: CycleState) -> dict[str, Status]:
    """Per-node Filter statuses, after checking the batch form agrees on every node."""
    statuses = {info.name: pl.filter(state, incoming, info) for info in snap.node_infos}
    positions = np.arange(snap.num_nodes, dtype=np.int64)
    batch = pl.filter_batch(state, incoming, snap, positions)
    for i, info in enumerate(snap.node_infos):
        assert int(batch.codes[i]) == int(statuses[info.name].code), info.name
        if not statuses[info.name].success:
            assert batch.reasons(i) == statuses[info.name].reasons, info.name
    return statuses
