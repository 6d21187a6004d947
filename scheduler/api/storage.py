"""Storage objects the volume plugins read: PersistentVolume, PersistentVolumeClaim,
StorageClass, CSINode and CSIDriver, parsed from `kubectl get -o yaml` form.

Helpers follow component-helpers `storage/volume` (claim class, bind annotations, access modes,
node affinity) and `pkg/controller/volume/persistentvolume` (how a PV matches a claim).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from scheduler.api.fields import boolean, fail, integer, join, mapping, sequence, string
from scheduler.api.meta import ObjectMeta, parse_meta
from scheduler.api.quantity import QuantityError, ceil_fraction, parse_quantity
from scheduler.api.selectors import LabelSelector, NodeSelector, parse_label_selector, parse_node_selector

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")


def _storage(raw: Any, path: str) -> int:
    """A storage quantity in bytes (rounded up), 0 when absent."""
    if raw is None:
        return 0
    try:
        amount = parse_quantity(raw)
    except QuantityError as exc:
        fail(path, str(exc))
    if amount < 0:
        fail(path, f"must be greater than or equal to 0, got {raw!r}")
    return ceil_fraction(Fraction(amount))


def _access_modes(raw: Any, path: str) -> tuple[str, ...]:
    out = []
    for i, mode in enumerate(sequence(raw, path)):
        value = string(mode, join(path, i))
        if value not in ACCESS_MODES:
            fail(join(path, i), f"unsupported value {value!r}; valid: {', '.join(ACCESS_MODES)}")
        out.append(value)
    return tuple(out)


def _volume_mode(raw: Any, path: str) -> str:
    value = string(raw, path, "Filesystem") or "Filesystem"
    if value not in ("Filesystem", "Block"):
        fail(path, f"unsupported value {value!r}; valid: Block, Filesystem")
    return value


@dataclass(frozen=True, slots=True)
class ClaimRef:
    """A PersistentVolume's spec.claimRef."""

    namespace: str
    name: str
    uid: str


@dataclass(frozen=True, slots=True)
class CSISource:
    """A CSI volume source: driver and volume handle."""

    driver: str
    volume_handle: str


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    """A v1 PersistentVolume."""

    meta: ObjectMeta
    capacity: int
    access_modes: tuple[str, ...]
    volume_mode: str
    storage_class: str
    claim_ref: ClaimRef | None
    node_affinity: NodeSelector | None
    csi: CSISource | None
    volume_attributes_class: str
    phase: str
    raw: dict[str, Any]

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name

    @property
    def labels(self) -> dict[str, str]:
        """metadata.labels."""
        return self.meta.labels


def parse_persistent_volume(raw: Any, path: str = "") -> PersistentVolume:
    """Parse a v1 PersistentVolume document; a missing status.phase is Available (Bound with a claimRef)."""
    doc = mapping(raw, path)
    meta = parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=False)
    sp = join(path, "spec")
    spec = mapping(doc.get("spec"), sp)
    capacity = mapping(spec.get("capacity"), join(sp, "capacity"))
    ref = spec.get("claimRef")
    claim_ref = None
    if ref is not None:
        rp = join(sp, "claimRef")
        data = mapping(ref, rp)
        claim_ref = ClaimRef(
            string(data.get("namespace"), join(rp, "namespace")),
            string(data.get("name"), join(rp, "name")),
            string(data.get("uid"), join(rp, "uid")),
        )
    affinity = mapping(spec.get("nodeAffinity"), join(sp, "nodeAffinity"))
    required = affinity.get("required")
    csi_raw = spec.get("csi")
    csi = None
    if csi_raw is not None:
        cp = join(sp, "csi")
        data = mapping(csi_raw, cp)
        csi = CSISource(
            string(data.get("driver"), join(cp, "driver")), string(data.get("volumeHandle"), join(cp, "volumeHandle"))
        )
    status = mapping(doc.get("status"), join(path, "status"))
    phase = string(status.get("phase"), join(join(path, "status"), "phase")) or ("Bound" if claim_ref else "Available")
    storage_class = meta.annotations.get(
        BETA_STORAGE_CLASS_ANNOTATION, string(spec.get("storageClassName"), join(sp, "storageClassName"))
    )
    return PersistentVolume(
        meta=meta,
        capacity=_storage(capacity.get("storage"), join(join(sp, "capacity"), "storage")),
        access_modes=_access_modes(spec.get("accessModes"), join(sp, "accessModes")),
        volume_mode=_volume_mode(spec.get("volumeMode"), join(sp, "volumeMode")),
        storage_class=storage_class,
        claim_ref=claim_ref,
        node_affinity=parse_node_selector(required, join(join(sp, "nodeAffinity"), "required")) if required is not None else None,
        csi=csi,
        volume_attributes_class=string(spec.get("volumeAttributesClassName"), join(sp, "volumeAttributesClassName")),
        phase=phase,
        raw=doc,
    )


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    """A v1 PersistentVolumeClaim."""

    meta: ObjectMeta
    access_modes: tuple[str, ...]
    request: int
    storage_class_name: str | None
    volume_name: str
    volume_mode: str
    selector: LabelSelector | None
    volume_attributes_class: str
    phase: str
    owner_uids: tuple[str, ...]
    raw: dict[str, Any]

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name

    @property
    def namespace(self) -> str:
        """metadata.namespace."""
        return self.meta.namespace

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.meta.namespace}/{self.meta.name}"

    @property
    def storage_class(self) -> str:
        """The claim's class: the beta annotation, else spec.storageClassName (`GetPersistentVolumeClaimClass`)."""
        beta = self.meta.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
        if beta is not None:
            return beta
        return self.storage_class_name or ""

    @property
    def fully_bound(self) -> bool:
        """volumeName set and the bind-completed annotation present (`isPVCFullyBound`)."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.meta.annotations


def parse_persistent_volume_claim(raw: Any, path: str = "") -> PersistentVolumeClaim:
    """Parse a v1 PersistentVolumeClaim document."""
    doc = mapping(raw, path)
    mp = join(path, "metadata")
    meta = parse_meta(doc.get("metadata"), mp, namespaced=True)
    owner_uids = tuple(
        str(mapping(ref, join(join(mp, "ownerReferences"), i)).get("uid", ""))
        for i, ref in enumerate(sequence(mapping(doc.get("metadata"), mp).get("ownerReferences"), join(mp, "ownerReferences")))
        if mapping(ref, join(join(mp, "ownerReferences"), i)).get("controller") is True
    )
    sp = join(path, "spec")
    spec = mapping(doc.get("spec"), sp)
    resources = mapping(spec.get("resources"), join(sp, "resources"))
    requests = mapping(resources.get("requests"), join(join(sp, "resources"), "requests"))
    selector = spec.get("selector")
    status = mapping(doc.get("status"), join(path, "status"))
    class_raw = spec.get("storageClassName")
    return PersistentVolumeClaim(
        meta=meta,
        access_modes=_access_modes(spec.get("accessModes"), join(sp, "accessModes")),
        request=_storage(requests.get("storage"), join(join(join(sp, "resources"), "requests"), "storage")),
        storage_class_name=None if class_raw is None else string(class_raw, join(sp, "storageClassName")),
        volume_name=string(spec.get("volumeName"), join(sp, "volumeName")),
        volume_mode=_volume_mode(spec.get("volumeMode"), join(sp, "volumeMode")),
        selector=parse_label_selector(selector, join(sp, "selector")) if selector is not None else None,
        volume_attributes_class=string(spec.get("volumeAttributesClassName"), join(sp, "volumeAttributesClassName")),
        phase=string(status.get("phase"), join(join(path, "status"), "phase"), "Pending") or "Pending",
        owner_uids=owner_uids,
        raw=doc,
    )


@dataclass(frozen=True, slots=True)
class TopologySelectorTerm:
    """One allowedTopologies term: every (key, values) expression must hold."""

    expressions: tuple[tuple[str, frozenset[str]], ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether the labels satisfy every expression."""
        return all(key in labels and labels[key] in values for key, values in self.expressions)


def match_topology_selector_terms(terms: tuple[TopologySelectorTerm, ...], labels: Mapping[str, str]) -> bool:
    """No terms match everything; otherwise any term must match (`MatchTopologySelectorTerms`)."""
    return not terms or any(t.matches(labels) for t in terms)


@dataclass(frozen=True, slots=True)
class StorageClass:
    """A storage.k8s.io/v1 StorageClass."""

    meta: ObjectMeta
    provisioner: str
    volume_binding_mode: str
    allowed_topologies: tuple[TopologySelectorTerm, ...]

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name

    @property
    def is_default(self) -> bool:
        """Whether the class is annotated as the cluster's default."""
        return self.meta.annotations.get(DEFAULT_CLASS_ANNOTATION) == "true"


def parse_storage_class(raw: Any, path: str = "") -> StorageClass:
    """Parse a StorageClass; volumeBindingMode defaults to Immediate, as the API server sets it."""
    doc = mapping(raw, path)
    mode = string(doc.get("volumeBindingMode"), join(path, "volumeBindingMode"), "Immediate") or "Immediate"
    if mode not in BINDING_MODES:
        fail(join(path, "volumeBindingMode"), f"unsupported value {mode!r}; valid: {', '.join(BINDING_MODES)}")
    terms = []
    tp = join(path, "allowedTopologies")
    for i, term in enumerate(sequence(doc.get("allowedTopologies"), tp)):
        where = join(tp, i)
        exprs = []
        ep = join(where, "matchLabelExpressions")
        for j, expr in enumerate(sequence(mapping(term, where).get("matchLabelExpressions"), ep)):
            ew = join(ep, j)
            data = mapping(expr, ew)
            key = string(data.get("key"), join(ew, "key"))
            values = frozenset(
                string(v, join(join(ew, "values"), k)) for k, v in enumerate(sequence(data.get("values"), join(ew, "values")))
            )
            exprs.append((key, values))
        terms.append(TopologySelectorTerm(tuple(exprs)))
    return StorageClass(
        meta=parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=False),
        provisioner=string(doc.get("provisioner"), join(path, "provisioner")),
        volume_binding_mode=mode,
        allowed_topologies=tuple(terms),
    )


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    """One driver of a CSINode: its name, topology keys and attach limit (None: no limit)."""

    name: str
    node_id: str
    topology_keys: tuple[str, ...]
    allocatable_count: int | None


@dataclass(frozen=True, slots=True)
class CSINode:
    """A storage.k8s.io/v1 CSINode (named after its node)."""

    meta: ObjectMeta
    drivers: tuple[CSINodeDriver, ...]

    @property
    def name(self) -> str:
        """metadata.name (the node's name)."""
        return self.meta.name

    def limits(self) -> dict[str, int]:
        """Driver name to attach limit, for drivers that declare one (`getVolumeLimits`)."""
        return {d.name: d.allocatable_count for d in self.drivers if d.allocatable_count is not None}


def parse_csi_node(raw: Any, path: str = "") -> CSINode:
    """Parse a CSINode document."""
    doc = mapping(raw, path)
    dp = join(join(path, "spec"), "drivers")
    drivers = []
    for i, item in enumerate(sequence(mapping(doc.get("spec"), join(path, "spec")).get("drivers"), dp)):
        where = join(dp, i)
        data = mapping(item, where)
        alloc = mapping(data.get("allocatable"), join(where, "allocatable"))
        count = integer(alloc.get("count"), join(join(where, "allocatable"), "count"))
        if count is not None and count < 0:
            fail(join(join(where, "allocatable"), "count"), f"must be greater than or equal to 0, got {count}")
        drivers.append(
            CSINodeDriver(
                name=string(data.get("name"), join(where, "name")),
                node_id=string(data.get("nodeID"), join(where, "nodeID")),
                topology_keys=tuple(
                    string(k, join(join(where, "topologyKeys"), j))
                    for j, k in enumerate(sequence(data.get("topologyKeys"), join(where, "topologyKeys")))
                ),
                allocatable_count=count,
            )
        )
    return CSINode(parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=False), tuple(drivers))


@dataclass(frozen=True, slots=True)
class CSIDriver:
    """A storage.k8s.io/v1 CSIDriver: whether it publishes storage capacity."""

    meta: ObjectMeta
    storage_capacity: bool
    attach_required: bool

    @property
    def name(self) -> str:
        """metadata.name (the driver's name)."""
        return self.meta.name


def parse_csi_driver(raw: Any, path: str = "") -> CSIDriver:
    """Parse a CSIDriver document (attachRequired defaults to true, as the API server sets it)."""
    doc = mapping(raw, path)
    sp = join(path, "spec")
    spec = mapping(doc.get("spec"), sp)
    return CSIDriver(
        parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=False),
        boolean(spec.get("storageCapacity"), join(sp, "storageCapacity")),
        boolean(spec.get("attachRequired"), join(sp, "attachRequired"), True),
    )


# ----- binding helpers (component-helpers storage/volume) -------------------------------------


def is_volume_bound_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """The PV's claimRef names this claim (and its uid, when the ref carries one)."""
    ref = pv.claim_ref
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
        return False
    return not ref.uid or ref.uid == claim.meta.uid


def check_node_affinity(pv: PersistentVolume, node_labels: Mapping[str, str]) -> bool:
    """Whether a node with these labels satisfies the PV's required node affinity (`CheckNodeAffinity`)."""
    return pv.node_affinity is None or pv.node_affinity.matches(node_labels, "")


def check_access_modes(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """Every access mode the claim asks for is offered by the PV."""
    return all(mode in pv.access_modes for mode in claim.access_modes)


def with_meta(meta: ObjectMeta, **changes: Any) -> ObjectMeta:
    """A copy of ObjectMeta with some fields replaced."""
    return replace(meta, **changes)


def bind_volume_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> PersistentVolume:
    """The PV with claimRef set to the claim and, if it was not already bound to it, the
    bound-by-controller annotation (`GetBindVolumeToClaim`)."""
    annotations = dict(pv.meta.annotations)
    if not is_volume_bound_to_claim(pv, claim):
        annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
    ref = ClaimRef(claim.namespace, claim.name, claim.meta.uid)
    raw = copy.deepcopy(pv.raw)
    raw.setdefault("spec", {})["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": ref.namespace,
        "name": ref.name,
        "uid": ref.uid,
    }
    raw.setdefault("metadata", {})["annotations"] = annotations
    return replace(pv, meta=with_meta(pv.meta, annotations=annotations), claim_ref=ref, raw=raw)


__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "CSIDriver",
    "CSINode",
    "CSINodeDriver",
    "CSISource",
    "ClaimRef",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "TopologySelectorTerm",
    "bind_volume_to_claim",
    "check_access_modes",
    "check_node_affinity",
    "is_volume_bound_to_claim",
    "match_topology_selector_terms",
    "parse_csi_driver",
    "parse_csi_node",
    "parse_persistent_volume",
    "parse_persistent_volume_claim",
    "parse_storage_class",
]


@dataclass(frozen=True, slots=True)
class CSIStorageCapacity:
    """A storage.k8s.io/v1 CSIStorageCapacity: capacity of a class for the nodes its topology selects."""

    meta: ObjectMeta
    storage_class_name: str
    node_topology: LabelSelector | None
    capacity: int | None
    maximum_volume_size: int | None

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name

    @property
    def volume_limit(self) -> int | None:
        """maximumVolumeSize when set, else capacity (`volumeLimit`)."""
        return self.maximum_volume_size if self.maximum_volume_size is not None else self.capacity


def parse_csi_storage_capacity(raw: Any, path: str = "") -> CSIStorageCapacity:
    """Parse a CSIStorageCapacity document."""
    doc = mapping(raw, path)
    topology = doc.get("nodeTopology")
    return CSIStorageCapacity(
        meta=parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=True),
        storage_class_name=string(doc.get("storageClassName"), join(path, "storageClassName")),
        node_topology=parse_label_selector(topology, join(path, "nodeTopology")) if topology is not None else None,
        capacity=_storage(doc["capacity"], join(path, "capacity")) if doc.get("capacity") is not None else None,
        maximum_volume_size=(
            _storage(doc["maximumVolumeSize"], join(path, "maximumVolumeSize"))
            if doc.get("maximumVolumeSize") is not None
            else None
        ),
    )
