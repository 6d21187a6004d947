"""The node snapshot every profile shares: per-node state as NumPy arrays plus NodeInfo views.

Rows are in insertion order and never move except on node removal; `order` gives the
node-tree order kube-scheduler lists nodes in (zones round-robin, nodes of a zone in the order
they were added), which is the order Filter walks and `numFeasibleNodesToFind` samples.
Indexes derived from node labels, taints and images are cached per `node_generation`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import overload

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Node, Pod
from scheduler.api.selectors import LabelSelector, Taint
from scheduler.framework.nodeinfo import NodeInfo, PodInfo, Resource, is_scalar_resource

FIXED_COLUMNS = (CPU, MEMORY, EPHEMERAL_STORAGE)
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
NO_POD_PRIORITY = 2**63 - 1
"""`lowest_priority` of a node without pods: no preemptor's priority is above it."""
MAX_SELECTOR_COUNTERS = 64
"""Live selector counters kept at most; each one costs a selector match in every add_pod/remove_pod."""


AffinityKey = tuple[object, ...]
"""A pod's four pod (anti-)affinity term tuples: pods with equal keys affect others alike."""


def affinity_key(info: PodInfo) -> AffinityKey:
    """The grouping key of a pod with pod (anti-)affinity."""
    return (
        info.required_affinity_terms,
        info.required_anti_affinity_terms,
        info.preferred_affinity_terms,
        info.preferred_anti_affinity_terms,
    )


def zone_key(node: Node) -> str:
    """`utilnode.GetZoneKey`: region and zone, empty when the node has neither."""
    labels = node.labels
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


class Snapshot:
    """Nodes, their pods and resource arrays; the cache mutates it, plugins read it."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.position: dict[str, int] = {}
        self.node_infos: list[NodeInfo] = []
        self.resource_names: list[str] = list(FIXED_COLUMNS)
        self._column: dict[str, int] = {n: i for i, n in enumerate(FIXED_COLUMNS)}
        self._capacity = 0
        self._alloc = np.zeros((0, len(FIXED_COLUMNS)), dtype=np.int64)
        self._req = np.zeros((0, len(FIXED_COLUMNS)), dtype=np.int64)
        self._nonzero = np.zeros((0, 2), dtype=np.int64)
        self._pod_count = np.zeros(0, dtype=np.int64)
        self._allowed_pods = np.zeros(0, dtype=np.int64)
        self._unschedulable = np.zeros(0, dtype=np.bool_)
        # Pods with (anti-)affinity per node: upstream's HavePodsWith*AffinityList, as counts.
        self._affinity_pods = np.zeros(0, dtype=np.int64)
        self._anti_affinity_pods = np.zeros(0, dtype=np.int64)
        # The lowest priority among each node's pods (NO_POD_PRIORITY when it has none): a node
        # whose lowest priority is not below a preemptor's holds no victim for it.
        self._lowest_priority = np.zeros(0, dtype=np.int64)
        # Pods with pod (anti-)affinity grouped by their terms: per group, pods per node. An
        # existing pod's effect on another pod's affinity depends only on its terms and node.
        self._affinity_groups: dict[AffinityKey, npt.NDArray[np.int64]] = {}
        self._affinity_group_info: dict[AffinityKey, PodInfo] = {}
        self._affinity_group_size: dict[AffinityKey, int] = {}
        self.terminating_pods = 0
        """Pods with a deletion timestamp on some node (selector counters leave them out)."""
        self.generation = 0
        self.node_generation = 0
        self.namespaces: dict[str, dict[str, str]] = {}
        self._order: npt.NDArray[np.int64] | None = None
        self._zone_of: list[str] = []
        self._derived: dict[object, object] = {}
        self._derived_generation = -1
        self._pod_rows: dict[str, int] = {}
        # PersistentVolumeClaims (`namespace/name`) used by pods on nodes, with how many pods use
        # each: upstream's usedPVCSet, read by VolumeRestrictions for ReadWriteOncePod claims.
        self.pvc_ref_counts: dict[str, int] = {}
        # Selector counters: namespace -> selector -> matching pods per row (capacity-sized), and
        # the (namespace, selector) pairs from least to most recently requested.
        self._counters: dict[str, dict[LabelSelector, npt.NDArray[np.int64]]] = {}
        self._counter_lru: OrderedDict[tuple[str, LabelSelector], None] = OrderedDict()

    # ----- sizes and array views ---------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        """How many nodes the snapshot holds."""
        return len(self.names)

    @property
    def allocatable(self) -> npt.NDArray[np.int64]:
        """Allocatable per node and resource column (cpu in millicores)."""
        return self._alloc[: self.num_nodes]

    @property
    def requested(self) -> npt.NDArray[np.int64]:
        """Requested per node and resource column."""
        return self._req[: self.num_nodes]

    @property
    def nonzero_requested(self) -> npt.NDArray[np.int64]:
        """Non-zero requested (cpu millicores, memory bytes) per node."""
        return self._nonzero[: self.num_nodes]

    @property
    def pod_count(self) -> npt.NDArray[np.int64]:
        """Pods on each node (assumed ones included)."""
        return self._pod_count[: self.num_nodes]

    @property
    def allowed_pods(self) -> npt.NDArray[np.int64]:
        """Allocatable pod number of each node."""
        return self._allowed_pods[: self.num_nodes]

    @property
    def unschedulable(self) -> npt.NDArray[np.bool_]:
        """spec.unschedulable of each node."""
        return self._unschedulable[: self.num_nodes]

    def column(self, resource: str) -> int | None:
        """The array column of a resource name, or None when no node or pod has used it."""
        return self._column.get(resource)

    def ensure_column(self, resource: str) -> int:
        """The column for a resource, adding a zero column when it is new."""
        col = self._column.get(resource)
        if col is not None:
            return col
        col = len(self.resource_names)
        self.resource_names.append(resource)
        self._column[resource] = col
        pad = np.zeros((self._alloc.shape[0], 1), dtype=np.int64)
        self._alloc = np.hstack([self._alloc, pad])
        self._req = np.hstack([self._req, pad.copy()])
        return col

    def request_vector(self, amounts: Mapping[str, int]) -> npt.NDArray[np.int64]:
        """A resource list as a row aligned with the columns (tracked resources only)."""
        for name in amounts:
            if name not in self._column and is_scalar_resource(name):
                self.ensure_column(name)
        vec = np.zeros(len(self.resource_names), dtype=np.int64)
        for name, amount in amounts.items():
            col = self._column.get(name)
            if col is not None:
                vec[col] = amount
        return vec

    def pod_vector(self, pod: Pod) -> npt.NDArray[np.int64]:
        """The pod's requests as a row aligned with the columns."""
        return self.request_vector(pod.requests)

    # ----- nodes ------------------------------------------------------------------------
    def _grow(self, rows: int) -> None:
        if rows <= self._capacity:
            return
        cap = max(rows, self._capacity * 2, 64)
        cols = len(self.resource_names)

        def grown(arr: npt.NDArray[np.generic], shape: tuple[int, ...]) -> npt.NDArray[np.generic]:
            out = np.zeros(shape, dtype=arr.dtype)
            out[: arr.shape[0]] = arr
            return out

        self._alloc = grown(self._alloc, (cap, cols))  # type: ignore[assignment]
        self._req = grown(self._req, (cap, cols))  # type: ignore[assignment]
        self._nonzero = grown(self._nonzero, (cap, 2))  # type: ignore[assignment]
        self._pod_count = grown(self._pod_count, (cap,))  # type: ignore[assignment]
        self._allowed_pods = grown(self._allowed_pods, (cap,))  # type: ignore[assignment]
        self._unschedulable = grown(self._unschedulable, (cap,))  # type: ignore[assignment]
        self._affinity_pods = grown(self._affinity_pods, (cap,))  # type: ignore[assignment]
        self._anti_affinity_pods = grown(self._anti_affinity_pods, (cap,))  # type: ignore[assignment]
        self._lowest_priority = grown(self._lowest_priority, (cap,))  # type: ignore[assignment]
        for key, arr in self._affinity_groups.items():
            self._affinity_groups[key] = grown(arr, (cap,))  # type: ignore[assignment]
        for by_selector in self._counters.values():
            for selector, arr in by_selector.items():
                by_selector[selector] = grown(arr, (cap,))  # type: ignore[assignment]
        self._capacity = cap

    def _write_node_row(self, pos: int, node: Node) -> None:
        for name in node.allocatable:
            if is_scalar_resource(name):
                self.ensure_column(name)
        self._alloc[pos] = 0
        for name, amount in node.allocatable.items():
            col = self._column.get(name)
            if col is not None:
                self._alloc[pos, col] = amount
        self._allowed_pods[pos] = node.allocatable.get(PODS, 0)
        self._unschedulable[pos] = node.unschedulable

    def add_node(self, node: Node) -> NodeInfo:
        """Add a node (or update it if the name is known)."""
        if node.name in self.position:
            return self.update_node(node)
        pos = len(self.names)
        self._grow(pos + 1)
        self.names.append(node.name)
        self.position[node.name] = pos
        info = NodeInfo(node, self, pos)
        self.node_infos.append(info)
        self._zone_of.append(zone_key(node))
        self._write_node_row(pos, node)
        self._req[pos] = 0
        self._nonzero[pos] = 0
        self._pod_count[pos] = 0
        self._affinity_pods[pos] = 0
        self._anti_affinity_pods[pos] = 0
        self._lowest_priority[pos] = NO_POD_PRIORITY
        for arr in self._affinity_groups.values():
            arr[pos] = 0
        for by_selector in self._counters.values():
            for arr in by_selector.values():
                arr[pos] = 0
        self._node_changed()
        return info

    def update_node(self, node: Node) -> NodeInfo:
        """Replace a node's object, keeping its pods."""
        pos = self.position[node.name]
        info = self.node_infos[pos]
        info.node = node
        info.generation += 1
        self._zone_of[pos] = zone_key(node)
        self._write_node_row(pos, node)
        self._node_changed()
        return info

    def remove_node(self, name: str) -> NodeInfo | None:
        """Remove a node and its row; later rows move up one."""
        pos = self.position.pop(name, None)
        if pos is None:
            return None
        n = self.num_nodes
        # The node's pods leave with it: take them out of the totals kept across rows.
        self.terminating_pods -= sum(1 for p in self.node_infos[pos].pods if p.pod.meta.deletion_timestamp is not None)
        for key, group in list(self._affinity_groups.items()):
            left = self._affinity_group_size[key] - int(group[pos])
            group[pos] = 0
            if left == 0:
                del self._affinity_groups[key], self._affinity_group_info[key], self._affinity_group_size[key]
            else:
                self._affinity_group_size[key] = left
        info = self.node_infos.pop(pos)
        # A new list: attempt records keep the old one to name the rows they saw.
        self.names = self.names[:pos] + self.names[pos + 1 :]
        del self._zone_of[pos]
        for arr in (
            self._alloc,
            self._req,
            self._nonzero,
            self._pod_count,
            self._allowed_pods,
            self._unschedulable,
            self._affinity_pods,
            self._anti_affinity_pods,
            self._lowest_priority,
            *self._affinity_groups.values(),
            *(arr for by_selector in self._counters.values() for arr in by_selector.values()),
        ):
            arr[pos : n - 1] = arr[pos + 1 : n]
        for i in range(pos, n - 1):
            self.position[self.names[i]] = i
            self.node_infos[i].attach(self, i)
        for pod_uid, row in list(self._pod_rows.items()):
            if row == pos:
                del self._pod_rows[pod_uid]
            elif row > pos:
                self._pod_rows[pod_uid] = row - 1
        self._node_changed()
        return info

    def _node_changed(self) -> None:
        self.generation += 1
        self.node_generation += 1
        self._order = None

    def get(self, name: str) -> NodeInfo | None:
        """The NodeInfo of a node by name."""
        pos = self.position.get(name)
        return None if pos is None else self.node_infos[pos]

    @property
    def order(self) -> npt.NDArray[np.int64]:
        """Row positions in node-tree order (zones round-robin)."""
        if self._order is None:
            zones: dict[str, list[int]] = {}
            for pos, zone in enumerate(self._zone_of):
                zones.setdefault(zone, []).append(pos)
            lists = list(zones.values())
            out: list[int] = []
            depth = 0
            while len(out) < len(self._zone_of):
                for members in lists:
                    if depth < len(members):
                        out.append(members[depth])
                depth += 1
            self._order = np.asarray(out, dtype=np.int64)
        return self._order

    # ----- pods -------------------------------------------------------------------------
    def add_pod(self, pod: Pod, node_name: str) -> PodInfo | None:
        """Account a pod (bound or assumed) on a node; returns None when the node is unknown."""
        pos = self.position.get(node_name)
        if pos is None:
            return None
        info = PodInfo.of(pod)
        self.node_infos[pos].add_pod(info)
        vec = self.request_vector(pod.requests)
        self._req[pos, : len(vec)] += vec
        self._nonzero[pos, 0] += pod.nonzero_cpu
        self._nonzero[pos, 1] += pod.nonzero_memory
        self._pod_count[pos] += 1
        if info.has_affinity:
            self._affinity_pods[pos] += 1
        if info.required_anti_affinity_terms:
            self._anti_affinity_pods[pos] += 1
        if info.has_affinity:
            self._group_affinity(info, pos, 1)
        if pod.meta.deletion_timestamp is not None:
            self.terminating_pods += 1
        prio = pod.effective_priority
        if prio < self._lowest_priority[pos]:
            self._lowest_priority[pos] = prio
        self._count_selected(pod, pos, 1)
        if pod.volumes:
            self._count_claims(pod, 1)
        self._pod_rows[pod.uid] = pos
        self.generation += 1
        return info

    def replace_pod(self, pod: Pod) -> bool:
        """Put a newer object of a pod accounted on the same node in place of the one accounted,
        when nothing the totals count differs (a binding's own update changes the node name,
        phase and conditions): no totals move and no generation changes, as upstream's cache only
        swaps the object when the informer confirms an assumed pod. False when the pod is not
        there or differs in what is counted (then remove and add)."""
        pos = self._pod_rows.get(pod.uid)
        if pos is None:
            return False
        uid = pod.uid
        for info in self.node_infos[pos].pods:
            if info.pod.meta.uid == uid:
                break
        else:
            return False
        old = info.pod
        if not counted_alike(old, pod):
            return False
        info.pod = pod
        return True

    def remove_pod(self, pod: Pod) -> bool:
        """Undo add_pod for this pod (found by uid)."""
        pos = self._pod_rows.pop(pod.uid, None)
        if pos is None:
            return False
        info = self.node_infos[pos].remove_pod(pod)
        if info is None:
            return False
        old = info.pod
        vec = self.request_vector(old.requests)
        self._req[pos, : len(vec)] -= vec
        self._nonzero[pos, 0] -= old.nonzero_cpu
        self._nonzero[pos, 1] -= old.nonzero_memory
        self._pod_count[pos] -= 1
        if info.has_affinity:
            self._affinity_pods[pos] -= 1
        if info.required_anti_affinity_terms:
            self._anti_affinity_pods[pos] -= 1
        if info.has_affinity:
            self._group_affinity(info, pos, -1)
        if old.meta.deletion_timestamp is not None:
            self.terminating_pods -= 1
        if old.effective_priority <= self._lowest_priority[pos]:
            rest = self.node_infos[pos].pods
            self._lowest_priority[pos] = min((p.pod.effective_priority for p in rest), default=NO_POD_PRIORITY)
        self._count_selected(old, pos, -1)
        if old.volumes:
            self._count_claims(old, -1)
        self.generation += 1
        return True

    def _count_claims(self, pod: Pod, delta: int) -> None:
        refs = self.pvc_ref_counts
        for claim in pod.claim_names:
            key = f"{pod.namespace}/{claim}"
            count = refs.get(key, 0) + delta
            if count > 0:
                refs[key] = count
            else:
                refs.pop(key, None)

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Whether a pod on some node uses the claim `namespace/name` (`IsPVCUsedByPods`)."""
        return key in self.pvc_ref_counts

    @property
    def lowest_priority(self) -> npt.NDArray[np.int64]:
        """The lowest priority among each node's pods; NO_POD_PRIORITY for a node without pods."""
        return self._lowest_priority[: self.num_nodes]

    def node_of_pod(self, uid: str) -> str | None:
        """The node a pod is accounted on, if any."""
        pos = self._pod_rows.get(uid)
        return None if pos is None else self.names[pos]

    def _group_affinity(self, info: PodInfo, pos: int, delta: int) -> None:
        key = affinity_key(info)
        arr = self._affinity_groups.get(key)
        if arr is None:
            arr = self._affinity_groups[key] = np.zeros(self._capacity, dtype=np.int64)
            self._affinity_group_info[key] = info
            self._affinity_group_size[key] = 0
        arr[pos] += delta
        left = self._affinity_group_size[key] + delta
        if left == 0:
            del self._affinity_groups[key], self._affinity_group_info[key], self._affinity_group_size[key]
        else:
            self._affinity_group_size[key] = left

    def affinity_groups(self) -> list[tuple[PodInfo, npt.NDArray[np.int64]]]:
        """Pods with pod (anti-)affinity grouped by their terms: one PodInfo of the group and
        the group's pods per node (a live view: read at once, do not keep or mutate)."""
        n = self.num_nodes
        return [(self._affinity_group_info[key], arr[:n]) for key, arr in self._affinity_groups.items()]

    def has_affinity_pods(self) -> bool:
        """Whether any node runs a pod with pod affinity or anti-affinity terms."""
        return bool(self._affinity_pods[: self.num_nodes].any())

    def has_required_anti_affinity_pods(self) -> bool:
        """Whether any node runs a pod with required anti-affinity terms."""
        return bool(self._anti_affinity_pods[: self.num_nodes].any())

    def nodes_with_affinity_pods(self) -> list[NodeInfo]:
        """Nodes running at least one pod with pod affinity or anti-affinity terms."""
        return [self.node_infos[int(p)] for p in np.flatnonzero(self._affinity_pods[: self.num_nodes])]

    def nodes_with_required_anti_affinity_pods(self) -> list[NodeInfo]:
        """Nodes running at least one pod with required anti-affinity terms."""
        return [self.node_infos[int(p)] for p in np.flatnonzero(self._anti_affinity_pods[: self.num_nodes])]

    # ----- selector counters ----------------------------------------------------------------
    def _count_selected(self, pod: Pod, pos: int, delta: int) -> None:
        """Add delta at row pos to every live counter of the pod's namespace that selects it."""
        by_selector = self._counters.get(pod.meta.namespace)
        if not by_selector or pod.meta.deletion_timestamp is not None:
            return
        labels = pod.meta.labels
        for selector, arr in by_selector.items():
            if selector.matches(labels):
                arr[pos] += delta

    def selector_counts(self, namespace: str, selector: LabelSelector) -> npt.NDArray[np.int64]:
        """Per node, its pods of `namespace`, not terminating, that `selector` selects.

        Built by one walk over the pods on first request, then kept up to date by add_pod and
        remove_pod; only the MAX_SELECTOR_COUNTERS most recently requested are kept. The result
        is a live view: read it at once, do not keep or mutate it.
        """
        key = (namespace, selector)
        by_selector = self._counters.setdefault(namespace, {})
        arr = by_selector.get(selector)
        if arr is not None:
            self._counter_lru.move_to_end(key)
            return arr[: self.num_nodes]
        arr = np.zeros(self._capacity, dtype=np.int64)
        for pos, info in enumerate(self.node_infos):
            found = 0
            for pod_info in info.pods:
                meta = pod_info.pod.meta
                if meta.deletion_timestamp is None and meta.namespace == namespace and selector.matches(meta.labels):
                    found += 1
            arr[pos] = found
        by_selector[selector] = arr
        self._counter_lru[key] = None
        while len(self._counter_lru) > MAX_SELECTOR_COUNTERS:
            old_namespace, old_selector = self._counter_lru.popitem(last=False)[0]
            old = self._counters[old_namespace]
            del old[old_selector]
            if not old:
                del self._counters[old_namespace]
        return arr[: self.num_nodes]

    # ----- per-node views -----------------------------------------------------------------
    def resource_of(self, pos: int, which: str) -> Resource:
        """A Resource view of one row of allocatable, requested or nonzero."""
        if which == "nonzero":
            return Resource(milli_cpu=int(self._nonzero[pos, 0]), memory=int(self._nonzero[pos, 1]))
        arr = self._alloc if which == "allocatable" else self._req
        row = arr[pos]
        scalars = {
            name: int(row[col])
            for name, col in self._column.items()
            if col >= len(FIXED_COLUMNS)
            and (row[col] or (which == "allocatable" and name in self.node_infos[pos].node.allocatable))
        }
        return Resource(
            milli_cpu=int(row[0]),
            memory=int(row[1]),
            ephemeral_storage=int(row[2]),
            allowed_pod_number=int(self._allowed_pods[pos]) if which == "allocatable" else 0,
            scalar_resources=scalars,
        )

    def detached_resources(self, pos: int) -> dict[str, Resource]:
        """Fresh allocatable, requested and non-zero Resources of one row (a NodeInfo clone's own)."""
        alloc = self._alloc[pos].tolist()
        req = self._req[pos].tolist()
        nonzero = self._nonzero[pos].tolist()
        alloc_scalars: dict[str, int] = {}
        req_scalars: dict[str, int] = {}
        if len(alloc) > len(FIXED_COLUMNS):
            node_alloc = self.node_infos[pos].node.allocatable
            for name, col in self._column.items():
                if col < len(FIXED_COLUMNS):
                    continue
                if alloc[col] or name in node_alloc:
                    alloc_scalars[name] = alloc[col]
                if req[col]:
                    req_scalars[name] = req[col]
        return {
            "allocatable": Resource(alloc[0], alloc[1], alloc[2], int(self._allowed_pods[pos]), alloc_scalars),
            "requested": Resource(req[0], req[1], req[2], 0, req_scalars),
            "nonzero": Resource(milli_cpu=nonzero[0], memory=nonzero[1]),
        }

    # ----- derived indexes, cached per node generation ---------------------------------------
    def _cache(self) -> dict[object, object]:
        if self._derived_generation != self.node_generation:
            self._derived = {}
            self._derived_generation = self.node_generation
        return self._derived

    def label_codes(self, key: str) -> tuple[npt.NDArray[np.int32], dict[str, int]]:
        """Per node, the code of its value for label `key` (-1 when absent), and value -> code."""
        cache = self._cache()
        hit = cache.get(("label", key))
        if hit is None:
            values: dict[str, int] = {}
            codes = np.full(self.num_nodes, -1, dtype=np.int32)
            for pos, info in enumerate(self.node_infos):
                value = info.node.labels.get(key)
                if value is not None:
                    codes[pos] = values.setdefault(value, len(values))
            hit = (codes, values)
            cache[("label", key)] = hit
        return hit  # type: ignore[return-value]

    def taint_groups(self) -> tuple[npt.NDArray[np.int32], list[tuple[Taint, ...]]]:
        """Nodes grouped by identical taint lists: group id per node and the groups' taints."""
        cache = self._cache()
        hit = cache.get("taints")
        if hit is None:
            groups: dict[tuple[Taint, ...], int] = {}
            ids = np.empty(self.num_nodes, dtype=np.int32)
            for pos, info in enumerate(self.node_infos):
                ids[pos] = groups.setdefault(info.node.taints, len(groups))
            hit = (ids, list(groups))
            cache["taints"] = hit
        return hit  # type: ignore[return-value]

    def name_array(self) -> npt.NDArray[np.object_]:
        """`names` as an object array, so that many rows' names are one fancy index away."""
        cache = self._cache()
        hit = cache.get("names")
        if hit is None:
            hit = cache["names"] = np.array(self.names, dtype=object)
        return hit  # type: ignore[return-value]

    def info_array(self) -> npt.NDArray[np.object_]:
        """`node_infos` as an object array (NodeInfos keep their identity until nodes change)."""
        cache = self._cache()
        hit = cache.get("infos")
        if hit is None:
            hit = np.empty(len(self.node_infos), dtype=object)
            hit[:] = self.node_infos
            cache["infos"] = hit
        return hit  # type: ignore[return-value]

    def cached(self, key: object, build: Callable[[], object]) -> object:
        """A value derived from nodes only, rebuilt when nodes change (for plugins' own indexes)."""
        cache = self._cache()
        if key not in cache:
            cache[key] = build()
        return cache[key]


class NodeList(Sequence[NodeInfo]):
    """A read-only list of NodeInfos for some rows, built lazily (PreScore's `nodes`).

    Batch-aware plugins read `positions` directly; others index or iterate as with a list.
    """

    __slots__ = ("_snapshot", "positions")

    def __init__(self, snapshot: Snapshot, positions: npt.NDArray[np.int64]) -> None:
        self._snapshot = snapshot
        self.positions = positions

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, index: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, index: slice) -> list[NodeInfo]: ...

    def __getitem__(self, index: int | slice) -> NodeInfo | list[NodeInfo]:
        infos = self._snapshot.node_infos
        if isinstance(index, slice):
            return [infos[int(p)] for p in self.positions[index]]
        return infos[int(self.positions[index])]

    def __iter__(self) -> Iterator[NodeInfo]:
        infos = self._snapshot.node_infos
        return (infos[int(p)] for p in self.positions)


def counted_alike(old: Pod, new: Pod) -> bool:
    """Whether two objects of one pod add the same to a node: requests, host ports, priority,
    labels and namespace (selector counts), affinity, volumes, deletion, node."""
    om, nm = old.meta, new.meta
    return (
        old.node_name == new.node_name
        and _alike(old.requests, new.requests)
        and _alike(om.labels, nm.labels)
        and om.namespace == nm.namespace
        and om.deletion_timestamp == nm.deletion_timestamp
        and old.effective_priority == new.effective_priority
        and _alike(old.affinity, new.affinity)
        and _alike(old.containers, new.containers)  # host ports
        and _alike(old.init_containers, new.init_containers)
        and _alike(old.volumes, new.volumes)
    )


def _alike(a: object, b: object) -> bool:
    return a is b or a == b
