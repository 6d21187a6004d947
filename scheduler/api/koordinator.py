"""Koordinator's objects and annotations: NodeMetric, NodeResourceTopology, priority and QoS classes.

Facts from koordinator-sh/koordinator `apis/slo/v1alpha1` (NodeMetric), `apis/extension`
(annotation and label names, priority classes, QoS classes, CPU topology JSON) and the
noderesourcetopology API (`topology.node.k8s.io/v1alpha1`). Parsing raises FieldError naming
the field, so the cluster loader reports a bad object as it does for Pods and Nodes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from scheduler.api.duration import parse_duration
from scheduler.api.fields import fail, integer, join, mapping, sequence, string, string_map, timestamp
from scheduler.api.objects import CPU, Container, Pod, resource_amounts, to_resource_list
from scheduler.api.quantity import QuantityError, parse_quantity

NODE_METRIC_API_VERSION = "slo.koordinator.sh/v1alpha1"
NRT_API_VERSION = "topology.node.k8s.io/v1alpha1"

# apis/extension label and annotation names.
LABEL_POD_QOS = "koordinator.sh/qosClass"
LABEL_POD_PRIORITY_CLASS = "koordinator.sh/priority-class"
ANNOTATION_CUSTOM_USAGE_THRESHOLDS = "scheduling.koordinator.sh/usage-thresholds"
ANNOTATION_CUSTOM_ESTIMATED_SCALING_FACTORS = "scheduling.koordinator.sh/load-estimated-scaling-factors"
ANNOTATION_CUSTOM_ESTIMATED_SECONDS_AFTER_POD_SCHEDULED = "scheduling.koordinator.sh/load-estimated-seconds-after-pod-scheduled"
ANNOTATION_CUSTOM_ESTIMATED_SECONDS_AFTER_INITIALIZED = "scheduling.koordinator.sh/load-estimated-seconds-after-initialized"
ANNOTATION_NODE_RAW_ALLOCATABLE = "node.koordinator.sh/raw-allocatable"
ANNOTATION_RESOURCE_SPEC = "scheduling.koordinator.sh/resource-spec"
ANNOTATION_RESOURCE_STATUS = "scheduling.koordinator.sh/resource-status"
ANNOTATION_NUMA_TOPOLOGY_SPEC = "scheduling.koordinator.sh/numa-topology-spec"
ANNOTATION_NODE_CPU_TOPOLOGY = "node.koordinator.sh/cpu-topology"
ANNOTATION_NODE_CPU_ALLOCS = "node.koordinator.sh/pod-cpu-allocs"
ANNOTATION_KUBELET_CPU_MANAGER_POLICY = "kubelet.koordinator.sh/cpu-manager-policy"
ANNOTATION_NODE_RESERVATION = "node.koordinator.sh/reservation"
LABEL_NODE_CPU_BIND_POLICY = "node.koordinator.sh/cpu-bind-policy"
LABEL_NODE_NUMA_ALLOCATE_STRATEGY = "node.koordinator.sh/numa-allocate-strategy"
LABEL_NUMA_TOPOLOGY_POLICY = "node.koordinator.sh/numa-topology-policy"

BATCH_CPU = "kubernetes.io/batch-cpu"
BATCH_MEMORY = "kubernetes.io/batch-memory"
MID_CPU = "kubernetes.io/mid-cpu"
MID_MEMORY = "kubernetes.io/mid-memory"

PRIORITY_PROD = "koord-prod"
PRIORITY_MID = "koord-mid"
PRIORITY_BATCH = "koord-batch"
PRIORITY_FREE = "koord-free"
PRIORITY_NONE = ""
_PRIORITY_RANGES = (
    (9000, 9999, PRIORITY_PROD),
    (7000, 7999, PRIORITY_MID),
    (5000, 5999, PRIORITY_BATCH),
    (3000, 3999, PRIORITY_FREE),
)
QOS_CLASSES = ("LSE", "LSR", "LS", "BE", "SYSTEM")
AGGREGATION_TYPES = ("avg", "p50", "p90", "p95", "p99")
DEFAULT_REPORT_INTERVAL_SECONDS = 60.0


# ----- priority and QoS classes -----------------------------------------------------------------
def qos_class(pod: Pod) -> str:
    """`GetPodQoSClassRaw`: the `koordinator.sh/qosClass` label when it names a known class, else ''."""
    value = pod.labels.get(LABEL_POD_QOS, "")
    return value if value in QOS_CLASSES else ""


def priority_class_by_value(priority: int | None) -> str:
    """The Koordinator priority class of a priority value (its numeric bands), '' outside them."""
    if priority is None:
        return PRIORITY_NONE
    for low, high, name in _PRIORITY_RANGES:
        if low <= priority <= high:
            return name
    return PRIORITY_NONE


_QOS_RESOURCES = ("cpu", "memory")  # isSupportedQoSComputeResource


def kube_qos_class(pod: Pod) -> str:
    """The pod's Kubernetes QoS class (`qos.GetPodQOS`, what kube-apiserver writes to
    status.qosClass): BestEffort without cpu/memory requests or limits, Guaranteed when every
    container (or the pod-level resources) limits cpu and memory at its requests, else Burstable.
    Computed once per pod object (LoadAware asks for every pod it places)."""
    if not pod.kube_qos:
        pod.kube_qos = _kube_qos_class(pod)
    return pod.kube_qos


def _kube_qos_class(pod: Pod) -> str:
    if pod.pod_requests:
        # Pod-level resources decide alone (PodLevelResources); their limits are in the document.
        level = ((pod.raw.get("spec") or {}).get("resources") or {}).get("limits") or {}
        sets: list[tuple[Mapping[str, Fraction], Mapping[str, Fraction]]] = [
            (pod.pod_requests, {k: parse_quantity(str(v)) for k, v in level.items()})
        ]
    else:
        sets = [(c.requests, c.limits) for c in (*pod.containers, *pod.init_containers)]
    # Amounts are Fractions with a positive denominator: the numerator's sign is the amount's, and
    # reading it is far cheaper than comparing Fractions (this runs for most pods LoadAware sees).
    guaranteed = True
    asked = False
    for reqs, lims in sets:
        for name in _QOS_RESOURCES:
            amount = reqs.get(name)
            if amount is not None and amount.numerator > 0:
                asked = True
            limit = lims.get(name)
            if limit is None or limit.numerator <= 0:
                guaranteed = False
            else:
                asked = True
    if not asked:
        return "BestEffort"
    if not guaranteed:
        return "Burstable"
    # Every container limits cpu and memory: Guaranteed when the summed requests equal the limits.
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    for reqs, lims in sets:
        for name in _QOS_RESOURCES:
            amount = reqs.get(name)
            if amount is not None and amount.numerator > 0:
                requests[name] = requests.get(name, Fraction(0)) + amount
            limits[name] = limits.get(name, Fraction(0)) + lims[name]
    same = all(limits.get(name) == amount for name, amount in requests.items()) and len(requests) == len(limits)
    return "Guaranteed" if same else "Burstable"


def qos_class_with_default(pod: Pod) -> str:
    """`GetPodQoSClassWithDefault`: the `koordinator.sh/qosClass` label, else from the Kubernetes
    QoS class (`GetPodQoSClassWithKubeQoS`: Guaranteed LSR, Burstable LS, BestEffort BE)."""
    return qos_class(pod) or {"Guaranteed": "LSR", "Burstable": "LS"}.get(kube_qos_class(pod), "BE")


def priority_class(pod: Pod) -> str:
    """`GetPodPriorityClassWithDefault` (apis/extension/priority_utils.go): the
    `koordinator.sh/priority-class` label, else the priority's band, else derived from the QoS
    class with its default (`GetPodPriorityClassWithQoS`): SYSTEM, LSE, LSR and LS are Prod, BE is
    Batch. A pod of no band and no Koordinator label is Prod when Guaranteed or Burstable."""
    if LABEL_POD_PRIORITY_CLASS in pod.labels:
        value = pod.labels[LABEL_POD_PRIORITY_CLASS]
        found = value if value in (PRIORITY_PROD, PRIORITY_MID, PRIORITY_BATCH, PRIORITY_FREE) else PRIORITY_NONE
    else:
        found = priority_class_by_value(pod.priority)
    if found:
        return found
    return PRIORITY_BATCH if qos_class_with_default(pod) == "BE" else PRIORITY_PROD


def translate_resource_name(priority: str, name: str) -> str:
    """`TranslateResourceNameByPriorityClass`: batch and mid pods use batch-*/mid-* resources."""
    if priority in (PRIORITY_PROD, PRIORITY_NONE):
        return name
    table = {PRIORITY_BATCH: {"cpu": BATCH_CPU, "memory": BATCH_MEMORY}, PRIORITY_MID: {"cpu": MID_CPU, "memory": MID_MEMORY}}
    return table.get(priority, {}).get(name, "")


def _add(total: dict[str, Fraction], other: dict[str, Fraction]) -> None:
    for name, amount in other.items():
        total[name] = total.get(name, Fraction(0)) + amount


def _max(total: dict[str, Fraction], other: dict[str, Fraction]) -> None:
    for name, amount in other.items():
        if amount > total.get(name, Fraction(0)):
            total[name] = amount


def pod_limits(pod: Pod) -> dict[str, Fraction]:
    """The pod's limits as component-helpers' `resource.PodLimits` computes them (overhead where limited)."""
    total: dict[str, Fraction] = {}
    for container in pod.containers:
        _add(total, container.limits)
    restartable: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for container in pod.init_containers:
        limits: dict[str, Fraction]
        if container.restartable:
            _add(restartable, container.limits)
            limits = dict(restartable)
        else:
            limits = dict(container.limits)
            _add(limits, restartable)
        _max(init_max, limits)
    _add(total, restartable)
    _max(total, init_max)
    for name, amount in pod.overhead.items():
        if name in total:
            total[name] += amount
    return total


def container_limits(container: Container) -> dict[str, Fraction]:
    """A container's limits (exact amounts)."""
    return dict(container.limits)


# ----- CPU sets -----------------------------------------------------------------------------------
def parse_cpuset(text: str) -> frozenset[int]:
    """Parse a Linux CPU list (`0-3,8,10-11`); ValueError on anything else."""
    cpus: set[int] = set()
    text = text.strip()
    if not text:
        return frozenset()
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            low_text, _, high_text = part.partition("-")
            if not low_text.isdigit() or not high_text.isdigit():
                raise ValueError(f"invalid CPU range {part!r}")
            low, high = int(low_text), int(high_text)
            if low > high:
                raise ValueError(f"invalid range {part!r} (start > end)")
            cpus.update(range(low, high + 1))
        elif part.isdigit():
            cpus.add(int(part))
        else:
            raise ValueError(f"invalid CPU {part!r}")
    return frozenset(cpus)


def format_cpuset(cpus: frozenset[int] | set[int] | list[int] | tuple[int, ...]) -> str:
    """A CPU set as a Linux list string with ranges (`3,5,7-15`), as `cpuset.CPUSet.String`."""
    ordered = sorted(set(cpus))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


@dataclass(frozen=True, slots=True)
class ClusterScopedMeta:
    """The name of a cluster-scoped object (what the loader needs to refuse duplicates)."""

    name: str
    namespace: str = ""


# ----- NodeMetric ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AggregatedUsage:
    """One entry of `aggregatedNodeUsages`: a duration (seconds) and usage per aggregation type."""

    duration: float
    usage: dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class PodMetric:
    """One entry of `status.podsMetric`."""

    namespace: str
    name: str
    usage: dict[str, int]
    priority: str


@dataclass(frozen=True, slots=True)
class NodeMetric:
    """A NodeMetric (`slo.koordinator.sh/v1alpha1`), named like its node."""

    name: str
    report_interval: float
    update_time: float | None
    has_node_metric: bool
    node_usage: dict[str, int]
    system_usage: dict[str, int]
    aggregated: tuple[AggregatedUsage, ...]
    pods: tuple[PodMetric, ...]
    raw: dict[str, Any]

    @property
    def meta(self) -> ClusterScopedMeta:
        """Its metadata name."""
        return ClusterScopedMeta(self.name)


def _resource_map(raw: Any, path: str) -> dict[str, int]:
    """A `ResourceMap` (`{resources: {cpu: ...}}`) as integers (cpu in millicores)."""
    data = mapping(raw, path)
    return to_resource_list(resource_amounts(data.get("resources"), join(path, "resources")))


def _duration_seconds(value: Any, path: str) -> float:
    text = string(value, path)
    if not text:
        return 0.0
    nanos = parse_duration(text)
    if nanos is None:
        fail(path, f'time: invalid duration "{text}"')
    return nanos / 1e9


def parse_node_metric(raw: Any, path: str = "") -> NodeMetric:
    """Parse a NodeMetric document."""
    doc = mapping(raw, path)
    meta = mapping(doc.get("metadata"), join(path, "metadata"))
    name = string(meta.get("name"), join(join(path, "metadata"), "name"))
    if not name:
        fail(join(join(path, "metadata"), "name"), "is required")
    spec_path = join(path, "spec")
    spec = mapping(doc.get("spec"), spec_path)
    policy_path = join(spec_path, "metricCollectPolicy")
    policy = mapping(spec.get("metricCollectPolicy"), policy_path)
    # Any integer is taken, 0 and negatives included: koord-scheduler uses it as given
    # (loadaware/helper.go getNodeMetricReportInterval) and the CRD sets no minimum.
    interval = integer(policy.get("reportIntervalSeconds"), join(policy_path, "reportIntervalSeconds"))
    status_path = join(path, "status")
    status = mapping(doc.get("status"), status_path)
    info_raw = status.get("nodeMetric")
    info_path = join(status_path, "nodeMetric")
    info = mapping(info_raw, info_path)
    aggregated = []
    agg_path = join(info_path, "aggregatedNodeUsages")
    for i, item in enumerate(sequence(info.get("aggregatedNodeUsages"), agg_path)):
        where = join(agg_path, i)
        entry = mapping(item, where)
        usage: dict[str, dict[str, int]] = {}
        usage_path = join(where, "usage")
        for kind, amounts in mapping(entry.get("usage"), usage_path).items():
            # An aggregation type Koordinator does not name is kept (the map's keys are free
            # strings); only the type the args ask for is ever read.
            usage[str(kind)] = _resource_map(amounts, join(usage_path, str(kind)))
        aggregated.append(AggregatedUsage(_duration_seconds(entry.get("duration"), join(where, "duration")), usage))
    pods = []
    pods_path = join(status_path, "podsMetric")
    for i, item in enumerate(sequence(status.get("podsMetric"), pods_path)):
        where = join(pods_path, i)
        entry = mapping(item, where)
        pods.append(
            PodMetric(
                namespace=string(entry.get("namespace"), join(where, "namespace")),
                name=string(entry.get("name"), join(where, "name")),
                usage=_resource_map(entry.get("podUsage"), join(where, "podUsage")),
                priority=string(entry.get("priority"), join(where, "priority")),
            )
        )
    return NodeMetric(
        name=name,
        report_interval=float(interval) if interval is not None else DEFAULT_REPORT_INTERVAL_SECONDS,
        update_time=timestamp(status.get("updateTime"), join(status_path, "updateTime")),
        has_node_metric=info_raw is not None,
        node_usage=_resource_map(info.get("nodeUsage"), join(info_path, "nodeUsage")),
        system_usage=_resource_map(info.get("systemUsage"), join(info_path, "systemUsage")),
        aggregated=tuple(aggregated),
        pods=tuple(pods),
        raw=doc,
    )


# ----- NodeResourceTopology -----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CPUInfo:
    """One logical CPU of the `node.koordinator.sh/cpu-topology` annotation."""

    id: int
    core: int
    socket: int
    node: int


@dataclass(frozen=True, slots=True)
class KubeletCPUManagerPolicy:
    """The `kubelet.koordinator.sh/cpu-manager-policy` annotation."""

    policy: str = ""
    options: tuple[tuple[str, str], ...] = ()
    reserved_cpus: str = ""

    def option(self, name: str) -> str:
        """An option's value, '' when absent."""
        return dict(self.options).get(name, "")

    def to_json(self) -> dict[str, Any]:
        """The annotation's JSON shape (omitempty fields left out)."""
        out: dict[str, Any] = {}
        if self.policy:
            out["policy"] = self.policy
        if self.options:
            out["options"] = dict(self.options)
        if self.reserved_cpus:
            out["reservedCPUs"] = self.reserved_cpus
        return out


@dataclass(frozen=True, slots=True)
class PodCPUAlloc:
    """One entry of `node.koordinator.sh/pod-cpu-allocs` (CPUs kubelet gave a Guaranteed pod)."""

    namespace: str
    name: str
    uid: str
    cpuset: frozenset[int]
    managed_by_kubelet: bool


@dataclass(frozen=True, slots=True)
class NodeResourceTopology:
    """A NodeResourceTopology named like its node, with Koordinator's CPU annotations decoded."""

    name: str
    cpus: tuple[CPUInfo, ...]
    pod_cpu_allocs: tuple[PodCPUAlloc, ...]
    kubelet_policy: KubeletCPUManagerPolicy | None
    node_reserved_cpus: frozenset[int]
    topology_policies: tuple[str, ...]
    raw: dict[str, Any]
    # (NUMA node id, resource -> allocatable quantity as written), from `zones` of type Node named
    # `node-<id>`, by id (`extractNUMANodeResources`); None when the object lists no zones.
    numa_node_resources: tuple[tuple[int, dict[str, str]], ...] | None = None

    @property
    def meta(self) -> ClusterScopedMeta:
        """Its metadata name."""
        return ClusterScopedMeta(self.name)


def _json_annotation(annotations: dict[str, str], key: str, path: str) -> Any:
    text = annotations.get(key)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        fail(join(path, key), f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")


def _cpuset_field(text: str, path: str) -> frozenset[int]:
    try:
        return parse_cpuset(text)
    except ValueError as exc:
        fail(path, f"invalid CPU set {text!r}: {exc}")


def parse_node_resource_topology(raw: Any, path: str = "") -> NodeResourceTopology:
    """Parse a NodeResourceTopology document and its Koordinator annotations."""
    doc = mapping(raw, path)
    meta_path = join(path, "metadata")
    meta = mapping(doc.get("metadata"), meta_path)
    name = string(meta.get("name"), join(meta_path, "name"))
    if not name:
        fail(join(meta_path, "name"), "is required")
    ann_path = join(meta_path, "annotations")
    annotations = string_map(meta.get("annotations"), ann_path)
    cpus: list[CPUInfo] = []
    topo = _json_annotation(annotations, ANNOTATION_NODE_CPU_TOPOLOGY, ann_path)
    if topo is not None:
        where = join(ann_path, ANNOTATION_NODE_CPU_TOPOLOGY)
        detail_path = join(where, "detail")
        seen: set[int] = set()
        for i, item in enumerate(sequence(mapping(topo, where).get("detail"), detail_path)):
            entry = mapping(item, join(detail_path, i))
            values = {}
            for key in ("id", "core", "socket", "node"):
                value = integer(entry.get(key), join(join(detail_path, i), key), 0)
                if value is None or value < 0:
                    fail(join(join(detail_path, i), key), f"must be a non-negative integer, got {entry.get(key)!r}")
                values[key] = value
            if values["id"] in seen:
                fail(join(join(detail_path, i), "id"), f"duplicate CPU id {values['id']}")
            seen.add(values["id"])
            cpus.append(CPUInfo(values["id"], values["core"], values["socket"], values["node"]))
    allocs: list[PodCPUAlloc] = []
    raw_allocs = _json_annotation(annotations, ANNOTATION_NODE_CPU_ALLOCS, ann_path)
    if raw_allocs is not None:
        where = join(ann_path, ANNOTATION_NODE_CPU_ALLOCS)
        for i, item in enumerate(sequence(raw_allocs, where)):
            entry = mapping(item, join(where, i))
            allocs.append(
                PodCPUAlloc(
                    namespace=string(entry.get("namespace"), join(join(where, i), "namespace")),
                    name=string(entry.get("name"), join(join(where, i), "name")),
                    uid=string(entry.get("uid"), join(join(where, i), "uid")),
                    cpuset=_cpuset_field(
                        string(entry.get("cpuset"), join(join(where, i), "cpuset")), join(join(where, i), "cpuset")
                    ),
                    managed_by_kubelet=bool(entry.get("managedByKubelet", False)),
                )
            )
    policy: KubeletCPUManagerPolicy | None = None
    raw_policy = _json_annotation(annotations, ANNOTATION_KUBELET_CPU_MANAGER_POLICY, ann_path)
    if raw_policy is not None:
        where = join(ann_path, ANNOTATION_KUBELET_CPU_MANAGER_POLICY)
        entry = mapping(raw_policy, where)
        reserved = string(entry.get("reservedCPUs"), join(where, "reservedCPUs"))
        _cpuset_field(reserved, join(where, "reservedCPUs"))
        policy = KubeletCPUManagerPolicy(
            policy=string(entry.get("policy"), join(where, "policy")),
            options=tuple(sorted(string_map(entry.get("options"), join(where, "options")).items())),
            reserved_cpus=reserved,
        )
    node_reserved: frozenset[int] = frozenset()
    raw_reservation = _json_annotation(annotations, ANNOTATION_NODE_RESERVATION, ann_path)
    if raw_reservation is not None:
        where = join(ann_path, ANNOTATION_NODE_RESERVATION)
        text = string(mapping(raw_reservation, where).get("reservedCPUs"), join(where, "reservedCPUs"))
        node_reserved = _cpuset_field(text, join(where, "reservedCPUs"))
    policies = tuple(
        string(p, join(join(path, "topologyPolicies"), i))
        for i, p in enumerate(sequence(doc.get("topologyPolicies"), join(path, "topologyPolicies")))
    )
    return NodeResourceTopology(
        name=name,
        cpus=tuple(cpus),
        pod_cpu_allocs=tuple(allocs),
        kubelet_policy=policy,
        node_reserved_cpus=node_reserved,
        topology_policies=policies,
        raw=doc,
        numa_node_resources=_numa_node_resources(doc, path),
    )


def _numa_node_resources(doc: dict[str, Any], path: str) -> tuple[tuple[int, dict[str, str]], ...] | None:
    """`extractNUMANodeResources`: the zones of type Node named `node-<id>` (others, and names whose
    id is not a number, are passed over), each resource's allocatable, sorted by id."""
    zones_path = join(path, "zones")
    zones = sequence(doc.get("zones"), zones_path)
    if doc.get("zones") is None:
        return None
    out: list[tuple[int, dict[str, str]]] = []
    for i, item in enumerate(zones):
        where = join(zones_path, i)
        zone = mapping(item, where)
        if string(zone.get("type"), join(where, "type")) != "Node":
            continue
        parts = string(zone.get("name"), join(where, "name")).split("node-")
        if len(parts) != 2 or not parts[1].isdigit():
            continue
        resources: dict[str, str] = {}
        for j, res in enumerate(sequence(zone.get("resources"), join(where, "resources"))):
            entry = mapping(res, join(join(where, "resources"), j))
            name = string(entry.get("name"), join(join(join(where, "resources"), j), "name"))
            amount = entry.get("allocatable")
            if name and amount is not None:
                text = str(amount)
                try:
                    parse_quantity(text)
                except QuantityError as exc:
                    fail(join(join(join(where, "resources"), j), "allocatable"), str(exc))
                resources[name] = text
        out.append((int(parts[1]), resources))
    return tuple(sorted(out, key=lambda item: item[0]))


def parse_resource_factors(text: str) -> dict[str, int]:
    """A JSON object of resource name to integer (custom scaling factors); ValueError otherwise."""
    data = json.loads(text)
    if not isinstance(data, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in data.values()):
        raise ValueError("expected an object of resource name to integer")
    return {str(k): int(v) for k, v in data.items()}


def quantity_value(name: str, text: object) -> int:
    """A quantity as Koordinator vectorizes it: millicores for cpu, `Value()` otherwise."""
    try:
        amount = parse_quantity(text)
    except QuantityError as exc:
        raise ValueError(str(exc)) from exc
    return to_resource_list({name: amount})[name]


__all__ = [
    "CPU",
    "AggregatedUsage",
    "CPUInfo",
    "KubeletCPUManagerPolicy",
    "NodeMetric",
    "NodeResourceTopology",
    "PodCPUAlloc",
    "PodMetric",
    "format_cpuset",
    "parse_cpuset",
    "parse_node_metric",
    "parse_node_resource_topology",
    "pod_limits",
    "priority_class",
    "qos_class",
]
