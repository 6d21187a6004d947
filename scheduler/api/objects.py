"""The Kubernetes objects a scheduler reads, parsed from `kubectl get -o yaml` form.

Only the fields scheduling uses are modelled; the decoded document is kept (packed: marshalled
bytes take a fifth of the memory of the dicts) and `raw` gives it back, so nothing the user
wrote is lost when an object is written back out.
"""

from __future__ import annotations

import copy
import marshal
import pickle
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from scheduler.api.affinity import (
    Affinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
    parse_affinity,
    parse_spread_constraints,
)
from scheduler.api.fields import (
    boolean,
    fail,
    field_int,
    field_list,
    field_map,
    field_str,
    field_string_map,
    field_time,
    integer,
    join,
    mapping,
    sequence,
    shown,
    string,
)
from scheduler.api.meta import ObjectMeta, parse_meta
from scheduler.api.quantity import MAX_INT64, QuantityError, parse_quantity
from scheduler.api.selectors import (
    EVERYTHING,
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    Requirement,
    Taint,
    Toleration,
    parse_label_selector,
    parse_taints,
    parse_tolerations,
)
from scheduler.api.volumes import Volume, parse_volumes

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
DEFAULT_MILLI_CPU_REQUEST = 100  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest
DEFAULT_SCHEDULER_NAME = "default-scheduler"
TERMINAL_PHASES = ("Succeeded", "Failed")

ResourceList = dict[str, int]
"""Resource name to amount: millicores for cpu, integer units (bytes, counts) otherwise."""


def pack(doc: dict[str, Any]) -> bytes:
    """A decoded document in compact form (large clusters keep 100000 of them)."""
    # marshal writes JSON's types (all a decoded document holds) in about half the time pickle
    # takes; the bytes never leave this process (marshal's format may change between versions).
    try:
        return marshal.dumps(doc)
    except ValueError:  # a type outside JSON's, from a caller's own decoding (a datetime)
        return pickle.dumps(doc, pickle.HIGHEST_PROTOCOL)


def unpack(packed: bytes) -> dict[str, Any]:
    """A fresh copy of a packed document."""
    # Safe: only bytes this process packed itself are ever unpacked.
    # Pickles start with PROTO (0x80); marshal's first byte is a type code, never 0x80 alone.
    doc: dict[str, Any] = pickle.loads(packed) if packed[:1] == b"\x80" else marshal.loads(packed)
    return doc


def resource_amounts(raw: Any, path: str) -> dict[str, Fraction]:
    """A resource list (`requests`, `limits`, `allocatable`) as exact amounts by resource name."""
    out: dict[str, Fraction] = {}
    for name, qty in mapping(raw, path).items():
        try:
            amount = _amount(qty) if type(qty) is str else _check_amount(qty)
        except QuantityError as exc:
            fail(join(path, str(name)), str(exc))
        out[str(name)] = amount
    return out


def _field_amounts(data: dict[str, Any], key: str, path: str) -> dict[str, Fraction]:
    """`resource_amounts(data.get(key), join(path, key))`, joining the path only on an error."""
    raw = data.get(key)
    if raw is None:
        return {}
    if type(raw) is not dict:
        return resource_amounts(raw, join(path, key))
    out: dict[str, Fraction] = {}
    for name, qty in raw.items():
        if type(qty) is str and type(name) is str:
            try:
                out[name] = _amount(qty)
                continue
            except QuantityError:
                pass
        return resource_amounts(raw, join(path, key))
    return out


@lru_cache(maxsize=4096)
def _amount(text: str) -> Fraction:
    # Files repeat a handful of quantities; parse and range-check each once.
    return _check_amount(text)


def _check_amount(qty: object) -> Fraction:
    amount = parse_quantity(qty)
    if amount < 0:
        raise QuantityError(f"must be greater than or equal to 0, got {shown(qty)}")
    if amount > MAX_INT64:
        # Only the exponent form (1e30) escapes ParseQuantity's cap; Go cannot hold it.
        raise QuantityError(f"{shown(qty)} is out of range: quantities hold at most {MAX_INT64} (int64)")
    return amount


def to_resource_list(amounts: dict[str, Fraction]) -> ResourceList:
    """Convert exact amounts to integers: millicores for cpu, rounded-up units otherwise."""
    out: ResourceList = {}
    for name, amount in amounts.items():
        # ceil(amount * 1000) for cpu, ceil(amount) otherwise, on the integers (Fraction
        # arithmetic costs microseconds, and large files hold 100000 pods).
        numerator = amount.numerator * 1000 if name == CPU else amount.numerator
        out[name] = -(-numerator // amount.denominator)
    return out


@dataclass(frozen=True, slots=True)
class ContainerPort:
    """A container port; only those with a hostPort matter to NodePorts."""

    host_ip: str
    protocol: str
    host_port: int


@dataclass(frozen=True, slots=True)
class Container:
    """A container's requests, limits, image and ports."""

    name: str
    image: str
    requests: dict[str, Fraction]
    ports: tuple[ContainerPort, ...]
    restartable: bool = False
    limits: dict[str, Fraction] = field(default_factory=dict)


def parse_container(raw: Any, path: str, init: bool) -> Container:
    """Parse a container; requests default to limits as the API server defaults them."""
    data = mapping(raw, path)
    resources = field_map(data, "resources", path)
    if resources:
        resources_path = join(path, "resources")
        requests = _field_amounts(resources, "requests", resources_path)
        limits = _field_amounts(resources, "limits", resources_path)
        for name, amount in limits.items():
            requests.setdefault(name, amount)
    else:
        requests, limits = {}, {}
    ports = []
    for i, port in enumerate(field_list(data, "ports", path)):
        if type(port) is dict and port.get("hostPort") is None:
            continue  # no host port: nothing else of it is read
        where = join(join(path, "ports"), i)
        pmap = mapping(port, where)
        host_port = field_int(pmap, "hostPort", where, 0) or 0
        if not 0 <= host_port <= 65535:
            fail(join(where, "hostPort"), f"must be between 0 and 65535, got {host_port}")
        if host_port > 0:
            ports.append(
                ContainerPort(
                    field_str(pmap, "hostIP", where),
                    field_str(pmap, "protocol", where, "TCP") or "TCP",
                    host_port,
                )
            )
    restart = field_str(data, "restartPolicy", path)
    return Container(
        name=field_str(data, "name", path),
        image=field_str(data, "image", path),
        requests=requests,
        ports=tuple(ports),
        restartable=init and restart == "Always",
        limits=limits,
    )


@dataclass(frozen=True, slots=True)
class WorkloadRef:
    """A pod's `spec.workloadRef` (scheduling.k8s.io/v1alpha1 Workload, gate GenericWorkload): its
    Workload, pod group and replica key; immutable on the pod."""

    name: str
    pod_group: str
    replica_key: str = ""


def parse_workload_ref(raw: Any, path: str) -> WorkloadRef | None:
    """spec.workloadRef, None when absent."""
    if raw is None:
        return None
    data = mapping(raw, path)
    name = string(data.get("name"), join(path, "name"))
    pod_group = string(data.get("podGroup"), join(path, "podGroup"))
    if not name:
        fail(join(path, "name"), "Required value")
    if not pod_group:
        fail(join(path, "podGroup"), "Required value")
    return WorkloadRef(name, pod_group, string(data.get("podGroupReplicaKey"), join(path, "podGroupReplicaKey")))


@dataclass(slots=True, eq=False)
class Pod:
    """A pod: its scheduling-relevant spec and status, plus the document it came from."""

    meta: ObjectMeta
    node_name: str
    scheduler_name: str
    priority: int | None
    priority_class_name: str
    preemption_policy: str
    node_selector: dict[str, str]
    affinity: Affinity | None
    tolerations: tuple[Toleration, ...]
    spread_constraints: tuple[TopologySpreadConstraint, ...]
    scheduling_gates: tuple[str, ...]
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    overhead: dict[str, Fraction]
    pod_requests: dict[str, Fraction]
    phase: str
    nominated_node_name: str
    start_time: float | None
    conditions: list[dict[str, Any]]
    packed: bytes
    """The document the pod was read from, packed; read it through `raw`."""
    requests: ResourceList = field(default_factory=dict)
    nonzero_cpu: int = 0
    nonzero_memory: int = 0
    volumes: tuple[Volume, ...] = ()
    workload_ref: WorkloadRef | None = None
    kube_qos: str = ""
    """The Kubernetes QoS class once computed (`api.koordinator.kube_qos_class`); "" until then.
    Kept across `with_changes`, which never changes resources (a pod's QoS class is immutable)."""

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name

    @property
    def namespace(self) -> str:
        """metadata.namespace."""
        return self.meta.namespace

    @property
    def claim_names(self) -> list[str]:
        """The PersistentVolumeClaims the pod uses: named claims and generic ephemeral ones
        (`<pod>-<volume>`, as component-helpers' `ephemeral.VolumeClaimName`)."""
        out = []
        for v in self.volumes:
            if v.source == "persistentVolumeClaim":
                out.append(v.claim_name)
            elif v.source == "ephemeral":
                out.append(f"{self.meta.name}-{v.name}")
        return out

    @property
    def uid(self) -> str:
        """metadata.uid."""
        return self.meta.uid

    @property
    def key(self) -> str:
        """`namespace/name`, as kube-scheduler names pods in messages."""
        return f"{self.meta.namespace}/{self.meta.name}"

    @property
    def labels(self) -> dict[str, str]:
        """metadata.labels."""
        return self.meta.labels

    @property
    def annotations(self) -> dict[str, str]:
        """metadata.annotations."""
        return self.meta.annotations

    @property
    def raw(self) -> dict[str, Any]:
        """The document the pod was read from (a fresh copy on every read)."""
        return unpack(self.packed)

    @property
    def effective_priority(self) -> int:
        """The pod's priority, 0 when unresolved (`corev1helpers.PodPriority`)."""
        return self.priority if self.priority is not None else 0

    @property
    def terminating(self) -> bool:
        """Whether the pod has a deletion timestamp."""
        return self.meta.deletion_timestamp is not None

    @property
    def terminal(self) -> bool:
        """Whether the pod has finished (phase Succeeded or Failed).

        kube-scheduler's pod informer lists only non-terminal pods (field selector
        `status.phase!=Succeeded,status.phase!=Failed`), so such pods hold nothing.
        """
        return self.phase in TERMINAL_PHASES

    @property
    def host_ports(self) -> list[ContainerPort]:
        """Host ports the pod holds while running: containers and sidecar init containers."""
        return [p for c in self.init_containers if c.restartable for p in c.ports] + [p for c in self.containers for p in c.ports]

    @property
    def images(self) -> list[str]:
        """The images of the pod's regular containers."""
        return [c.image for c in self.containers]

    def with_changes(self, **changes: Any) -> Pod:
        """A copy with some fields replaced (objects given to plugins are never mutated)."""
        twin = copy.copy(self)
        for name, value in changes.items():
            setattr(twin, name, value)
        return twin


def _max_into(total: dict[str, Fraction], other: dict[str, Fraction]) -> None:
    for name, amount in other.items():
        if amount > total.get(name, Fraction(0)):
            total[name] = amount


def _add_into(total: dict[str, Fraction], other: dict[str, Fraction]) -> None:
    for name, amount in other.items():
        current = total.get(name)
        total[name] = amount if current is None else current + amount


def pod_requests(pod: Pod, non_missing: bool = False, pod_level: bool = True) -> dict[str, Fraction]:
    """The pod's effective requests as component-helpers' `resource.PodRequests` computes them.

    Regular containers add up; restartable (sidecar) init containers add to both the running
    total and every later init container; each ordinary init container counts on its own; the
    result is the larger of the two per resource, plus the pod overhead. With `non_missing`,
    containers without a cpu or memory request count 100m / 200Mi (scoring's non-zero rule).
    With `pod_level` false, `spec.resources` is left out (`SkipPodLevelResources`).
    """

    def of(container: Container) -> dict[str, Fraction]:
        reqs = dict(container.requests)
        if non_missing:
            reqs.setdefault(CPU, Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000))
            reqs.setdefault(MEMORY, Fraction(DEFAULT_MEMORY_REQUEST))
        return reqs

    total: dict[str, Fraction] = {}
    for container in pod.containers:
        _add_into(total, of(container))
    restartable: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for container in pod.init_containers:
        reqs = of(container)
        if container.restartable:
            _add_into(restartable, reqs)
            reqs = dict(restartable)
        else:
            reqs = dict(reqs)
            _add_into(reqs, restartable)
        _max_into(init_max, reqs)
    _add_into(total, restartable)
    _max_into(total, init_max)
    if pod_level and pod.pod_requests:
        for name in (CPU, MEMORY):
            if name in pod.pod_requests:
                total[name] = pod.pod_requests[name]
    _add_into(total, pod.overhead)
    return total


def parse_pod(raw: Any, path: str = "") -> Pod:
    """Parse a v1 Pod document."""
    doc = mapping(raw, path)
    meta = parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=True)
    spec = field_map(doc, "spec", path)
    status = field_map(doc, "status", path)
    sp = join(path, "spec")
    st = join(path, "status")
    containers = tuple(
        parse_container(c, join(join(sp, "containers"), i), init=False) for i, c in enumerate(field_list(spec, "containers", sp))
    )
    init_containers = tuple(
        parse_container(c, join(join(sp, "initContainers"), i), init=True)
        for i, c in enumerate(field_list(spec, "initContainers", sp))
    )
    gates = []
    for i, gate in enumerate(field_list(spec, "schedulingGates", sp)):
        gates.append(
            string(
                mapping(gate, join(join(sp, "schedulingGates"), i)).get("name"),
                join(join(join(sp, "schedulingGates"), i), "name"),
            )
        )
    policy = field_str(spec, "preemptionPolicy", sp)
    if policy and policy not in ("PreemptLowerPriority", "Never"):
        fail(join(sp, "preemptionPolicy"), f"unsupported value {shown(policy)}; valid: PreemptLowerPriority, Never")
    pod_level = field_map(spec, "resources", sp)
    if pod_level:
        pod_reqs = _field_amounts(pod_level, "requests", join(sp, "resources"))
        for name, amount in _field_amounts(pod_level, "limits", join(sp, "resources")).items():
            pod_reqs.setdefault(name, amount)
    else:
        pod_reqs = {}
    conditions = [dict(mapping(c, join(join(st, "conditions"), i))) for i, c in enumerate(field_list(status, "conditions", st))]
    affinity = spec.get("affinity")
    spread = spec.get("topologySpreadConstraints")
    pod = Pod(
        meta=meta,
        node_name=field_str(spec, "nodeName", sp),
        scheduler_name=field_str(spec, "schedulerName", sp) or DEFAULT_SCHEDULER_NAME,
        priority=field_int(spec, "priority", sp),
        priority_class_name=field_str(spec, "priorityClassName", sp),
        preemption_policy=policy,
        node_selector=field_string_map(spec, "nodeSelector", sp),
        affinity=None if affinity is None else parse_affinity(affinity, join(sp, "affinity"), meta),
        tolerations=parse_tolerations(spec.get("tolerations"), join(sp, "tolerations")),
        spread_constraints=() if spread is None else parse_spread_constraints(spread, join(sp, "topologySpreadConstraints")),
        scheduling_gates=tuple(gates),
        containers=containers,
        init_containers=init_containers,
        overhead=_field_amounts(spec, "overhead", sp),
        pod_requests={k: v for k, v in pod_reqs.items() if k in (CPU, MEMORY)},
        phase=field_str(status, "phase", st, "Pending") or "Pending",
        nominated_node_name=field_str(status, "nominatedNodeName", st),
        start_time=field_time(status, "startTime", st),
        conditions=conditions,
        packed=pack(doc),
        volumes=parse_volumes(spec.get("volumes"), join(sp, "volumes")),
        workload_ref=parse_workload_ref(spec.get("workloadRef"), join(sp, "workloadRef")),
    )
    refresh_requests(pod)
    return pod


def refresh_requests(pod: Pod) -> None:
    """Compute the pod's integer requests and non-zero cpu/memory once, as the queue needs them."""
    if len(pod.containers) == 1 and not pod.init_containers and not pod.overhead and not pod.pod_requests:
        # The usual pod: its one container's requests are what pod_requests adds up.
        pod.requests = to_resource_list(pod.containers[0].requests)
    else:
        pod.requests = to_resource_list(pod_requests(pod))
    every = pod.containers + pod.init_containers
    # The usual pod requests cpu and memory in every container: non-zero requests are its requests.
    if all(CPU in c.requests and MEMORY in c.requests for c in every):
        pod.nonzero_cpu = pod.requests.get(CPU, 0)
        pod.nonzero_memory = pod.requests.get(MEMORY, 0)
        return
    nonzero = to_resource_list(pod_requests(pod, non_missing=True))
    pod.nonzero_cpu = nonzero.get(CPU, 0)
    pod.nonzero_memory = nonzero.get(MEMORY, 0)


@dataclass(frozen=True, slots=True)
class ContainerImage:
    """An image present on a node: its names and size in bytes."""

    names: tuple[str, ...]
    size_bytes: int


@dataclass(slots=True, eq=False)
class Node:
    """A node: labels, taints, allocatable resources and images."""

    meta: ObjectMeta
    unschedulable: bool
    taints: tuple[Taint, ...]
    allocatable: ResourceList
    capacity: ResourceList
    images: tuple[ContainerImage, ...]
    packed: bytes
    """The document the node was read from, packed; read it through `raw`."""

    @property
    def raw(self) -> dict[str, Any]:
        """The document the node was read from (a fresh copy on every read)."""
        return unpack(self.packed)

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name

    @property
    def labels(self) -> dict[str, str]:
        """metadata.labels."""
        return self.meta.labels

    @property
    def annotations(self) -> dict[str, str]:
        """metadata.annotations."""
        return self.meta.annotations


def parse_node(raw: Any, path: str = "") -> Node:
    """Parse a v1 Node document."""
    doc = mapping(raw, path)
    meta = parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=False)
    spec = field_map(doc, "spec", path)
    status = field_map(doc, "status", path)
    st = join(path, "status")
    capacity = _field_amounts(status, "capacity", st)
    allocatable = _field_amounts(status, "allocatable", st)
    for where, amounts in (("allocatable", allocatable), ("capacity", capacity)):
        cpu = amounts.get(CPU)
        if cpu is not None and cpu * 1000 > MAX_INT64:
            # kube-scheduler's MilliValue() overflows int64 here (it wraps to a negative
            # number): no defined behaviour to reproduce, so refuse the node.
            fail(
                join(join(st, where), CPU),
                f"{shown(mapping(status.get(where), join(st, where)).get(CPU))} is too large: in millicores it exceeds "
                f"int64 ({MAX_INT64}m), which kube-scheduler cannot represent either; the largest usable value is {MAX_INT64 // 1000}",
            )
    if not allocatable:
        allocatable = dict(capacity)
    images = []
    for i, item in enumerate(sequence(status.get("images"), join(st, "images"))):
        where = join(join(st, "images"), i)
        entry = mapping(item, where)
        names = tuple(
            string(n, join(join(where, "names"), j)) for j, n in enumerate(sequence(entry.get("names"), join(where, "names")))
        )
        images.append(ContainerImage(names, integer(entry.get("sizeBytes"), join(where, "sizeBytes"), 0) or 0))
    return Node(
        meta=meta,
        unschedulable=boolean(spec.get("unschedulable"), join(join(path, "spec"), "unschedulable")),
        taints=parse_taints(spec.get("taints"), join(join(path, "spec"), "taints")),
        allocatable=to_resource_list(allocatable),
        capacity=to_resource_list(capacity),
        images=tuple(images),
        packed=pack(doc),
    )


@dataclass(frozen=True, slots=True)
class Namespace:
    """A namespace; its labels feed pod affinity's namespaceSelector."""

    meta: ObjectMeta

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name


def parse_namespace(raw: Any, path: str = "") -> Namespace:
    """Parse a v1 Namespace document."""
    doc = mapping(raw, path)
    return Namespace(parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=False))


@dataclass(frozen=True, slots=True)
class PriorityClass:
    """A scheduling.k8s.io/v1 PriorityClass."""

    meta: ObjectMeta
    value: int
    global_default: bool
    preemption_policy: str

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name


def parse_priority_class(raw: Any, path: str = "") -> PriorityClass:
    """Parse a PriorityClass document."""
    doc = mapping(raw, path)
    value = integer(doc.get("value"), join(path, "value"))
    if value is None:
        fail(join(path, "value"), "is required")
    policy = string(doc.get("preemptionPolicy"), join(path, "preemptionPolicy"), "PreemptLowerPriority")
    if policy not in ("PreemptLowerPriority", "Never"):
        fail(join(path, "preemptionPolicy"), f"unsupported value {shown(policy)}; valid: PreemptLowerPriority, Never")
    return PriorityClass(
        parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=False),
        value,
        boolean(doc.get("globalDefault"), join(path, "globalDefault")),
        policy,
    )


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget: its selector and the status fields preemption reads."""

    meta: ObjectMeta
    selector: LabelSelector
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name


def parse_pdb(raw: Any, path: str = "") -> PodDisruptionBudget:
    """Parse a PodDisruptionBudget document."""
    doc = mapping(raw, path)
    spec = mapping(doc.get("spec"), join(path, "spec"))
    status = mapping(doc.get("status"), join(path, "status"))
    raw_selector = spec.get("selector")
    # A nil selector selects nothing; an empty one selects every pod of the namespace.
    selector = (
        parse_label_selector(raw_selector, join(join(path, "spec"), "selector"))
        if raw_selector is not None
        else LabelSelector((Requirement("", "In", ()),))
    )
    disrupted = mapping(status.get("disruptedPods"), join(join(path, "status"), "disruptedPods"))
    return PodDisruptionBudget(
        parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=True),
        selector,
        integer(status.get("disruptionsAllowed"), join(join(path, "status"), "disruptionsAllowed"), 0) or 0,
        frozenset(str(k) for k in disrupted),
    )


__all__ = [
    "EVERYTHING",
    "Affinity",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "LabelSelector",
    "Namespace",
    "Node",
    "NodeSelector",
    "NodeSelectorTerm",
    "ObjectMeta",
    "Pod",
    "PodAffinityTerm",
    "PodDisruptionBudget",
    "PreferredSchedulingTerm",
    "PriorityClass",
    "ResourceList",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "Volume",
    "WeightedPodAffinityTerm",
    "parse_namespace",
    "parse_node",
    "parse_pdb",
    "parse_pod",
    "parse_priority_class",
    "parse_volumes",
]
