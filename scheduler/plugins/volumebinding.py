"""VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable on the node, and
PreBind binds them (kubernetes/kubernetes `pkg/scheduler/framework/plugins/volumebinding`,
matching rules from component-helpers `storage/volume/pv_helpers.go`).

PreFilter sorts the pod's claims into bound, unbound WaitForFirstConsumer and unbound
Immediate ones (the last make the pod unresolvable). Filter checks bound PVs' node affinity and,
for delayed claims, finds the smallest matching available PV on the node or a provisioner whose
allowedTopologies admit the node (and CSIStorageCapacity, when its CSIDriver publishes it).
Reserve assumes the chosen PVs and claims in the plugin's assume cache; PreBind writes them to
the cluster (the simulated one then plays the PV controller); Unreserve forgets them. Score, as
upstream, runs only with the StorageCapacityScoring gate on.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

from scheduler.api.objects import Node, Pod
from scheduler.api.selectors import NodeSelector
from scheduler.api.storage import (
    ANN_SELECTED_NODE,
    BETA_STORAGE_CLASS_ANNOTATION,
    NOT_SUPPORTED_PROVISIONER,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    bind_volume_to_claim,
    check_access_modes,
    check_node_affinity,
    is_volume_bound_to_claim,
    match_topology_selector_terms,
)
from scheduler.cluster.contract import StorageLister
from scheduler.config.args import MAX_CUSTOM_PRIORITY_SCORE, UtilizationShapePoint, VolumeBindingArgs
from scheduler.config.features import KNOWN_FEATURES
from scheduler.framework import signers
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    PreFilterResult,
    Status,
    error,
    skip,
    unresolvable,
)
from scheduler.plugins.noderesources.resource_allocation import ShapePoint, broken_linear
from scheduler.plugins.volumeutil import storage_lister

NAME = "VolumeBinding"
STATE_KEY = NAME
MAX_UTILIZATION = 100
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
DEFAULT_SHAPE = (UtilizationShapePoint(0, MAX_CUSTOM_PRIORITY_SCORE), UtilizationShapePoint(100, 0))
"""The shape StorageCapacityScoring defaults to: prefer the node with the most free capacity."""


class BindingError(RuntimeError):
    """An error (not a verdict) while finding or binding volumes: the cycle fails with Error."""


def pv_class(pv: PersistentVolume) -> str:
    """The PV's class: the beta annotation, else spec.storageClassName (`GetPersistentVolumeClass`)."""
    return pv.meta.annotations.get(BETA_STORAGE_CLASS_ANNOTATION, pv.storage_class)


@dataclass(slots=True)
class BindingInfo:
    """A claim and the PV chosen for it."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume


@dataclass(slots=True)
class DynamicProvision:
    """A claim to provision, with the CSIStorageCapacity that admitted it (if any)."""

    pvc: PersistentVolumeClaim
    node_capacity: CSIStorageCapacity | None = None


@dataclass(slots=True)
class PodVolumes:
    """What binding the pod's claims on one node takes."""

    static_bindings: list[BindingInfo] = field(default_factory=list)
    dynamic_provisions: list[DynamicProvision] = field(default_factory=list)


@dataclass(slots=True)
class PodVolumeClaims:
    """The pod's claims by kind, and the PVs per class its delayed claims may bind to."""

    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_delay: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_volumes_delay: dict[str, list[PersistentVolume]] = field(default_factory=dict)


@dataclass(slots=True)
class _Candidates:
    """One delayed claim's PVs that pass every node-independent check, for fast per-node picks.

    `prebound` is the first PV already bound to the claim (then the result is it or nothing);
    otherwise `available` holds the other PVs ordered by (capacity, list order), grouped by node
    affinity so each distinct affinity is evaluated once per node.
    """

    prebound: PersistentVolume | None
    available: list[PersistentVolume]
    groups: dict[NodeSelector | None, list[int]]


@dataclass(slots=True)
class StateData:
    """VolumeBinding's cycle state (shared by clones, as upstream's)."""

    claims: PodVolumeClaims | None = None
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False
    has_static_bindings: bool = False
    candidates: dict[str, _Candidates] = field(default_factory=dict)

    def clone(self) -> StateData:
        """The same object: Filter results are recorded across dry runs, as upstream."""
        return self


def volume_matches_claim_independent_of_node(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """FindMatchingVolume's early checks: claimRef, size, volume mode, attributes class, deletion."""
    if pv.claim_ref is not None and not is_volume_bound_to_claim(pv, claim):
        return False
    if pv.capacity < claim.request or pv.volume_mode != claim.volume_mode:
        return False
    if claim.volume_attributes_class != pv.volume_attributes_class:
        return False
    return pv.meta.deletion_timestamp is None


def build_candidates(claim: PersistentVolumeClaim, volumes: list[PersistentVolume]) -> _Candidates:
    """Pre-filter a claim's PVs as FindMatchingVolume would, leaving only node affinity."""
    prebound = None
    available: list[tuple[int, int, PersistentVolume]] = []
    for index, pv in enumerate(volumes):
        if not volume_matches_claim_independent_of_node(pv, claim):
            continue
        if is_volume_bound_to_claim(pv, claim):
            prebound = pv
            break
        if pv.phase != "Available":
            continue
        if claim.selector is not None and not claim.selector.matches(pv.labels):
            continue
        if pv_class(pv) != claim.storage_class or not check_access_modes(claim, pv):
            continue
        available.append((pv.capacity, index, pv))
    available.sort(key=lambda t: (t[0], t[1]))
    ordered = [pv for _, _, pv in available]
    groups: dict[NodeSelector | None, list[int]] = {}
    for i, pv in enumerate(ordered):
        groups.setdefault(pv.node_affinity, []).append(i)
    return _Candidates(prebound, ordered, groups)


def find_matching_volume(cands: _Candidates, node: Node, excluded: set[str]) -> PersistentVolume | None:
    """The PV bound to the claim if it fits the node, else the smallest available fitting PV."""
    if cands.prebound is not None:
        return cands.prebound if check_node_affinity(cands.prebound, node.labels) else None
    best: int | None = None
    for affinity, indexes in cands.groups.items():
        if affinity is not None and not affinity.matches(node.labels, ""):
            continue
        for i in indexes:
            if cands.available[i].name not in excluded:
                if best is None or i < best:
                    best = i
                break
    return cands.available[best] if best is not None else None


class VolumeBinder:
    """Finds, assumes and binds a pod's volumes over an assume cache of PVs and claims."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.assumed_pvs: dict[str, PersistentVolume] = {}
        self.assumed_pvcs: dict[str, PersistentVolumeClaim] = {}

    @property
    def lister(self) -> StorageLister:
        """The cluster's storage listers."""
        return storage_lister(self.handle)

    def get_pv(self, name: str) -> PersistentVolume | None:
        """A PV, its assumed version first."""
        return self.assumed_pvs.get(name) or self.lister.get_persistent_volume(name)

    def get_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """A claim, its assumed version first."""
        return self.assumed_pvcs.get(f"{namespace}/{name}") or self.lister.get_persistent_volume_claim(namespace, name)

    def list_pvs(self, class_name: str) -> list[PersistentVolume]:
        """PVs of a class, assumed versions replacing the cluster's."""
        assumed = self.assumed_pvs
        out = []
        for pv in self.lister.list_persistent_volumes():
            pv = assumed.get(pv.name, pv)
            if pv_class(pv) == class_name:
                out.append(pv)
        return out

    def is_delay_binding_mode(self, claim: PersistentVolumeClaim) -> bool:
        """The claim's class binds on first consumer (a missing class means Immediate)."""
        name = claim.storage_class
        if not name:
            return False
        sc = self.lister.get_storage_class(name)
        return sc is not None and sc.volume_binding_mode == "WaitForFirstConsumer"

    def pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """Sort the pod's claims (`GetPodVolumeClaims`)."""
        out = PodVolumeClaims()
        for name in pod.claim_names:
            pvc = self.get_pvc(pod.namespace, name)
            if pvc is None:
                raise BindingError(f'error getting PVC "{pod.namespace}/{name}": persistentvolumeclaim "{name}" not found')
            if pvc.fully_bound:
                out.bound.append(pvc)
            elif self.is_delay_binding_mode(pvc) and not pvc.volume_name:
                out.unbound_delay.append(pvc)
            else:
                out.unbound_immediate.append(pvc)
        for pvc in out.unbound_delay:
            out.unbound_volumes_delay[pvc.storage_class] = self.list_pvs(pvc.storage_class)
        return out

    def check_bound_claims(self, claims: list[PersistentVolumeClaim], node: Node) -> tuple[bool, bool]:
        """(node affinity satisfied, every bound PV exists)."""
        for pvc in claims:
            pv = self.get_pv(pvc.volume_name)
            if pv is None:
                return True, False
            if not check_node_affinity(pv, node.labels):
                return False, True
        return True, True

    def has_enough_capacity(
        self, provisioner: str, claim: PersistentVolumeClaim, class_name: str, node: Node
    ) -> tuple[bool, CSIStorageCapacity | None]:
        """CSIStorageCapacity check for drivers that publish capacity (`hasEnoughCapacity`)."""
        if claim.request == 0:
            return True, None
        driver = self.lister.get_csi_driver(provisioner)
        if driver is None or not driver.storage_capacity:
            return True, None
        for cap in getattr(self.lister, "csi_storage_capacities", []):
            limit = cap.volume_limit
            if (
                cap.storage_class_name == class_name
                and limit is not None
                and limit >= claim.request
                and cap.node_topology is not None
                and cap.node_topology.matches(node.labels)
            ):
                return True, cap
        return False, None

    def check_volume_provisions(
        self, claims: list[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool, list[DynamicProvision]]:
        """(provisioning possible, enough storage, provisions) for claims without a PV."""
        provisions = []
        for claim in claims:
            class_name = claim.storage_class
            if not class_name:
                raise BindingError(f'no class for claim "{claim.key}"')
            sc = self.lister.get_storage_class(class_name)
            if sc is None:
                raise BindingError(f'failed to find storage class "{class_name}"')
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(sc.allowed_topologies, node.labels):
                return False, True, []
            sufficient, capacity = self.has_enough_capacity(sc.provisioner, claim, class_name, node)
            if not sufficient:
                return True, False, []
            provisions.append(DynamicProvision(claim, capacity))
        return True, True, provisions

    def find_pod_volumes(self, state: StateData, node: Node) -> tuple[PodVolumes, list[str]]:
        """What binding the pod's claims on this node takes, or the reasons it cannot (`FindPodVolumes`)."""
        claims = state.claims
        assert claims is not None
        result = PodVolumes()
        bound_ok = unbound_ok = sufficient = pvs_found = True
        if claims.bound:
            bound_ok, pvs_found = self.check_bound_claims(claims.bound, node)
        if claims.unbound_delay:
            to_match: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            for claim in claims.unbound_delay:
                selected = claim.meta.annotations.get(ANN_SELECTED_NODE)
                if selected is None:
                    to_match.append(claim)
                elif selected != node.name:
                    unbound_ok = False
                    break
                else:
                    to_provision.append(claim)
            else:
                if to_match:
                    unbound_ok, result.static_bindings, unmatched = self._find_matching(state, to_match, node)
                    to_provision.extend(unmatched)
                if to_provision:
                    unbound_ok, sufficient, result.dynamic_provisions = self.check_volume_provisions(to_provision, node)
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return result, reasons

    def _find_matching(
        self, state: StateData, claims: list[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        """Smallest claims first, each takes the smallest fitting PV not chosen yet (`findMatchingVolumes`)."""
        assert state.claims is not None
        chosen: set[str] = set()
        bindings = []
        unmatched = []
        for claim in sorted(claims, key=lambda c: c.request):
            cands = state.candidates.get(claim.key)
            if cands is None:
                cands = build_candidates(claim, state.claims.unbound_volumes_delay.get(claim.storage_class, []))
                state.candidates[claim.key] = cands
            pv = find_matching_volume(cands, node, chosen)
            if pv is None:
                unmatched.append(claim)
                continue
            chosen.add(pv.name)
            bindings.append(BindingInfo(claim, pv))
        return not unmatched, bindings, unmatched

    def pod_volumes_bound(self, pod: Pod) -> bool:
        """Every claim of the pod is fully bound in the assume cache."""
        for name in pod.claim_names:
            pvc = self.get_pvc(pod.namespace, name)
            if pvc is None or not pvc.fully_bound:
                return False
        return True

    def assume(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """Assume the bindings and provisions; True when everything was bound already."""
        if self.pod_volumes_bound(pod):
            return True
        bindings = []
        for b in volumes.static_bindings:
            new_pv = bind_volume_to_claim(b.pv, b.pvc)
            self.assumed_pvs[new_pv.name] = new_pv
            bindings.append(BindingInfo(b.pvc, new_pv))
        provisions = []
        for d in volumes.dynamic_provisions:
            annotations = {**d.pvc.meta.annotations, ANN_SELECTED_NODE: node_name}
            raw = copy.deepcopy(d.pvc.raw)
            raw.setdefault("metadata", {})["annotations"] = annotations
            claim = replace(d.pvc, meta=replace(d.pvc.meta, annotations=annotations), raw=raw)
            self.assumed_pvcs[claim.key] = claim
            provisions.append(DynamicProvision(claim))
        volumes.static_bindings = bindings
        volumes.dynamic_provisions = provisions
        return False

    def revert(self, volumes: PodVolumes) -> None:
        """Forget what `assume` assumed."""
        for b in volumes.static_bindings:
            self.assumed_pvs.pop(b.pv.name, None)
        for d in volumes.dynamic_provisions:
            self.assumed_pvcs.pop(d.pvc.key, None)

    def bind(self, pod: Pod, volumes: PodVolumes) -> None:
        """Write the assumed PVs and claims to the cluster (`BindPodVolumes`)."""
        try:
            self.lister.bind_pod_volumes(
                pod, [b.pv for b in volumes.static_bindings], [d.pvc for d in volumes.dynamic_provisions]
            )
        finally:
            # The cluster's objects are now the truth; the assume cache steps aside.
            self.revert(volumes)
        for b in volumes.static_bindings:
            ref = b.pv.claim_ref
            current = self.lister.get_persistent_volume(b.pv.name)
            if current is None or current.claim_ref is None or ref is None or current.claim_ref.uid != ref.uid:
                raise BindingError(f'ClaimRef got reset for pv "{b.pv.name}"')


def build_scorer(shape: tuple[UtilizationShapePoint, ...]) -> Any:
    """The capacity scorer over per-class (requested, capacity) sums (`buildScorerFunction`)."""
    points = tuple(ShapePoint(p.utilization, p.score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for p in shape)

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return broken_linear(points, MAX_UTILIZATION)
        return broken_linear(points, requested * MAX_UTILIZATION // capacity)

    def score(classes: dict[str, list[int]]) -> int:
        if not classes:
            return 0
        total = sum(class_score(req, cap) for req, cap in classes.values())
        # math.Round of the mean: half away from zero (scores are never negative).
        return (2 * total + len(classes)) // (2 * len(classes))

    return score


def _gate_enabled(handle: Handle, gate: str) -> bool:
    sched = getattr(handle, "scheduler", None)
    gates = getattr(sched, "feature_gates", None)
    if gates is None:
        return KNOWN_FEATURES[gate].default
    return bool(gates.enabled(gate))


class VolumeBinding:
    """PreFilter, Filter, PreScore/Score, Reserve/Unreserve and PreBind for a pod's claims."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """The volumes but configMaps and secrets."""
        return signers.signed((signers.VOLUMES, signers.volumes(pod)))

    def __init__(self, args: VolumeBindingArgs, handle: Handle, capacity_scoring: bool) -> None:
        self.args = args
        self.handle = handle
        self.binder = VolumeBinder(handle)
        self.capacity_scoring = capacity_scoring
        self.scorer = build_scorer(args.shape or DEFAULT_SHAPE) if capacity_scoring else None

    # ----- PreFilter / Filter ---------------------------------------------------------------
    def _check_claims_exist(self, pod: Pod) -> str:
        """Why the pod's claims cannot be used at all (`podHasPVCs`), or ''."""
        lister = self.binder.lister
        for v in pod.volumes:
            if v.source == "persistentVolumeClaim":
                name, ephemeral = v.claim_name, False
            elif v.source == "ephemeral":
                name, ephemeral = f"{pod.name}-{v.name}", True
            else:
                continue
            pvc = lister.get_persistent_volume_claim(pod.namespace, name)
            if pvc is None:
                if ephemeral:
                    return f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                return f'persistentvolumeclaim "{name}" not found'
            if pvc.phase == "Lost":
                return f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume "{pvc.volume_name}"'
            if pvc.meta.deletion_timestamp is not None:
                return f'persistentvolumeclaim "{pvc.name}" is being deleted'
            if ephemeral and pod.uid not in pvc.owner_uids:
                return f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"
        return ""

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Skip without claims; unresolvable with missing claims or unbound Immediate ones."""
        if not pod.volumes or not any(v.source in ("persistentVolumeClaim", "ephemeral") for v in pod.volumes):
            state.write(STATE_KEY, StateData())
            return None, skip()
        problem = self._check_claims_exist(pod)
        if problem:
            return None, unresolvable(problem)
        try:
            claims = self.binder.pod_volume_claims(pod)
        except BindingError as exc:
            return None, error(str(exc))
        if claims.unbound_immediate:
            return None, unresolvable(UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, StateData(claims=claims))
        return None, Status()

    def pre_filter_extensions(self) -> None:
        """No AddPod/RemovePod."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """UnschedulableAndUnresolvable with every reason the node cannot hold the pod's volumes."""
        data = state.get(STATE_KEY)
        if not isinstance(data, StateData) or data.claims is None:
            return error(f'reading "{STATE_KEY}" from cycleState: not found')
        node = node_info.node
        try:
            volumes, reasons = self.binder.find_pod_volumes(data, node)
        except BindingError as exc:
            return error(str(exc))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons))
        data.by_node[node.name] = volumes
        data.has_static_bindings = data.has_static_bindings or bool(volumes.static_bindings)
        return Status()

    # ----- PreScore / Score -----------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        """Skip unless StorageCapacityScoring is on and the pod has volumes to place."""
        if self.scorer is None:
            return skip()
        data = state.get(STATE_KEY)
        if not isinstance(data, StateData):
            return error(f'reading "{STATE_KEY}" from cycleState: not found')
        if data.has_static_bindings or self.capacity_scoring:
            return Status()
        return skip()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """Utilization of the chosen PVs (or provisioned capacity) through the shape."""
        if self.scorer is None:
            return 0, Status()
        data = state.get(STATE_KEY)
        if not isinstance(data, StateData):
            return 0, error(f'reading "{STATE_KEY}" from cycleState: not found')
        volumes = data.by_node.get(node_info.name)
        if volumes is None:
            return 0, Status()
        classes: dict[str, list[int]] = {}
        if volumes.static_bindings or not self.capacity_scoring:
            for b in volumes.static_bindings:
                entry = classes.setdefault(pv_class(b.pv), [0, 0])
                entry[0] += b.pvc.request
                entry[1] += b.pv.capacity
        else:
            for d in volumes.dynamic_provisions:
                if d.node_capacity is None:
                    continue
                entry = classes.setdefault(d.pvc.storage_class, [0, 0])
                entry[1] = d.node_capacity.capacity or 0
                entry[0] += d.pvc.request
        return int(self.scorer(classes)), Status()

    def score_extensions(self) -> None:
        """No NormalizeScore."""
        return None

    # ----- Reserve / PreBind ----------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Assume the volumes chosen for this node."""
        data = state.get(STATE_KEY)
        if not isinstance(data, StateData):
            return error(f'reading "{STATE_KEY}" from cycleState: not found')
        volumes = data.by_node.get(node_name)
        data.all_bound = True if volumes is None else self.binder.assume(pod, node_name, volumes)
        return Status()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Forget the assumed volumes."""
        data = state.get(STATE_KEY)
        if isinstance(data, StateData) and node_name in data.by_node:
            self.binder.revert(data.by_node[node_name])

    def pre_bind_preflight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Skip when every claim of the pod was bound already (nothing for PreBind to do)."""
        data = state.get(STATE_KEY)
        if isinstance(data, StateData) and data.all_bound:
            return Status(Code.SKIP)
        return Status()

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Bind the claims and PVs in the cluster unless everything was bound already."""
        data = state.get(STATE_KEY)
        if not isinstance(data, StateData):
            return error(f'reading "{STATE_KEY}" from cycleState: not found')
        if data.all_bound:
            return Status()
        volumes = data.by_node.get(node_name)
        if volumes is None:
            return error(f'no pod volume found for node "{node_name}"')
        try:
            self.binder.bind(pod, volumes)
        except Exception as exc:  # an API failure fails the binding cycle, which unreserves
            return error(f"binding volumes: {exc}")
        return Status()

    def events_to_register(self) -> list[ClusterEvent]:
        """Classes, claims, PVs, node labels, CSINodes, CSIDrivers and capacities."""
        return [
            ClusterEvent("StorageClass", ActionType.ADD | ActionType.UPDATE),
            ClusterEvent("PersistentVolumeClaim", ActionType.ADD | ActionType.UPDATE),
            ClusterEvent("PersistentVolume", ActionType.ADD | ActionType.UPDATE),
            ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            ClusterEvent("CSINode", ActionType.ADD | ActionType.UPDATE),
            ClusterEvent("CSIDriver", ActionType.UPDATE),
            ClusterEvent("CSIStorageCapacity", ActionType.ADD | ActionType.UPDATE),
        ]


def new(args: Any, handle: Handle) -> VolumeBinding:
    """Build VolumeBinding; a shape needs the StorageCapacityScoring gate, as upstream validates."""
    if args is None:
        args = VolumeBindingArgs()
    if not isinstance(args, VolumeBindingArgs):
        raise TypeError(f"want args to be of type VolumeBindingArgs, got {type(args).__name__}")
    capacity_scoring = _gate_enabled(handle, "StorageCapacityScoring")
    if args.shape is not None and not capacity_scoring:
        raise ValueError(
            "shape: Invalid value: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"
        )
    return VolumeBinding(args, handle, capacity_scoring)
