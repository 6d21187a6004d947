"""Scheduling phase hooks (Koordinator's PreFilterPhaseHook, FilterPhaseHook, ScorePhaseHook).

A hook runs just before its extension point and may hand the plugins of that point other
objects: PreFilter hooks another pod, Filter hooks another pod and NodeInfo for one node, Score
hooks another pod and node list. Hooks chain in registration order, each one seeing what the
previous one returned; `(…, False)` means "no change". A hook never mutates what it was given:
it returns copies (`Pod.with_changes`, `NodeInfo.clone`), and a hook that reports a change
while returning the very objects it received is refused as an Error, since that can only mean
it changed them in place.

What a hook returns is seen only by the plugins of its own point, as upstream: the pod a
PreFilter hook returns is not the pod Filter or Score see.

Filter hooks and the batch path: batch filters judge snapshot rows, which a replaced NodeInfo
is not. The runtime therefore asks the filter hooks first; every node for which a hook reported
a change is judged by the per-node forms of all filter plugins on the hooked pod and NodeInfo
(nominated pods included), the other nodes keep the batch path. A hook may implement
`filter_hook_nodes(handle, state, pod) -> Iterable[str] | None` to name the only nodes it can
change (a Reservation hook knows them); then it is called for those nodes only, which keeps the
cost proportional to them instead of to the cluster. Without it the hook is called for every
candidate node (a Python loop per pod: correct, but slow on large clusters).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Node, Pod
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import CycleState

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot
    from scheduler.frameworkext.handle import ExtendedHandle


@runtime_checkable
class SchedulingPhaseHook(Protocol):
    """Every hook has a name."""

    name: str


@runtime_checkable
class PreFilterPhaseHook(SchedulingPhaseHook, Protocol):
    """Runs before PreFilter; may give the PreFilter plugins another pod."""

    def pre_filter_hook(self, handle: ExtendedHandle, state: CycleState, pod: Pod) -> tuple[Pod, bool]:
        """The pod to use (a copy when changed) and whether it was changed."""
        ...


@runtime_checkable
class FilterPhaseHook(SchedulingPhaseHook, Protocol):
    """Runs before the Filter plugins of each node; may give them another pod and NodeInfo."""

    def filter_hook(self, handle: ExtendedHandle, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[Pod, NodeInfo, bool]:
        """The pod and NodeInfo to use (copies when changed) and whether either was changed."""
        ...


@runtime_checkable
class ScorePhaseHook(SchedulingPhaseHook, Protocol):
    """Runs before Score; may give the Score plugins another pod and node list."""

    def score_hook(self, handle: ExtendedHandle, state: CycleState, pod: Pod, nodes: list[Node]) -> tuple[Pod, list[Node], bool]:
        """The pod and nodes to score (copies when changed) and whether either was changed."""
        ...


class HookError(RuntimeError):
    """A hook failed or broke its contract; the scheduling attempt ends with an Error status."""


PHASES = (("pre_filter", "pre_filter_hook"), ("filter", "filter_hook"), ("score", "score_hook"))


def hook_phases(obj: object) -> list[str]:
    """The phases an object hooks, by the methods it has."""
    return [phase for phase, method in PHASES if callable(getattr(obj, method, None))]


def _name(hook: object) -> str:
    return str(getattr(hook, "name", type(hook).__name__))


class PhaseHooks:
    """The hooks of one profile, per phase, in registration order."""

    def __init__(self) -> None:
        self.pre_filter: list[PreFilterPhaseHook] = []
        self.filter: list[FilterPhaseHook] = []
        self.score: list[ScorePhaseHook] = []

    def __bool__(self) -> bool:
        return bool(self.pre_filter or self.filter or self.score)

    def register(self, hook: object) -> list[str]:
        """Add a hook to every phase it implements (once per object); returns those phases."""
        phases = hook_phases(hook)
        for phase in phases:
            chain: list[Any] = getattr(self, phase)
            if not any(h is hook for h in chain):
                chain.append(hook)
        return phases

    def names(self) -> dict[str, list[str]]:
        """Phase -> hook names, in chain order."""
        return {phase: [_name(h) for h in getattr(self, phase)] for phase, _ in PHASES}

    # ----- PreFilter ---------------------------------------------------------------------------
    def run_pre_filter(self, handle: ExtendedHandle, state: CycleState, pod: Pod) -> Pod:
        """The pod the PreFilter plugins see after every PreFilter hook."""
        for hook in self.pre_filter:
            try:
                new_pod, hooked = hook.pre_filter_hook(handle, state, pod)
            except Exception as exc:  # becomes the attempt's Error status
                raise HookError(f"running PreFilterPhaseHook {_name(hook)!r}: {exc}") from exc
            if hooked:
                _check_pod(hook, "PreFilterPhaseHook", pod, new_pod)
                if new_pod is pod:
                    raise _in_place(hook, "PreFilterPhaseHook")
                pod = new_pod
        return pod

    # ----- Filter ------------------------------------------------------------------------------
    def run_filter(self, handle: ExtendedHandle, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[Pod, NodeInfo, bool]:
        """One node through every Filter hook: the pod and NodeInfo to filter with, and whether any changed."""
        changed = False
        for hook in self.filter:
            pod, node_info, hooked = self._filter_one(hook, handle, state, pod, node_info)
            changed = changed or hooked
        return pod, node_info, changed

    def hook_filter_nodes(
        self,
        handle: ExtendedHandle,
        state: CycleState,
        pod: Pod,
        snapshot: Snapshot,
        candidates: npt.NDArray[np.int64],
    ) -> dict[int, tuple[Pod, NodeInfo]]:
        """Run the Filter hooks over the candidate rows; rows a hook changed -> (pod, NodeInfo)."""
        plans: list[tuple[FilterPhaseHook, set[int] | None]] = []
        union: set[int] | None = set()
        for hook in self.filter:
            narrow = getattr(hook, "filter_hook_nodes", None)
            names: Iterable[str] | None = None
            if callable(narrow):
                try:
                    names = narrow(handle, state, pod)
                except Exception as exc:
                    raise HookError(f"running FilterPhaseHook {_name(hook)!r}: {exc}") from exc
            if names is None:
                plans.append((hook, None))
                union = None
                continue
            rows = {snapshot.position[n] for n in names if n in snapshot.position}
            plans.append((hook, rows))
            if union is not None:
                union |= rows
        if union is None:
            visit = [int(p) for p in candidates]
        elif not union:
            return {}
        else:
            wanted = np.fromiter(union, dtype=np.int64, count=len(union))
            visit = [int(p) for p in candidates[np.isin(candidates, wanted)]]
        infos = snapshot.node_infos
        out: dict[int, tuple[Pod, NodeInfo]] = {}
        for pos in visit:
            current_pod, current_info, changed = pod, infos[pos], False
            for hook, only in plans:
                if only is not None and pos not in only:
                    continue
                current_pod, current_info, hooked = self._filter_one(hook, handle, state, current_pod, current_info)
                changed = changed or hooked
            if changed:
                out[pos] = (current_pod, current_info)
        return out

    @staticmethod
    def _filter_one(
        hook: FilterPhaseHook, handle: ExtendedHandle, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> tuple[Pod, NodeInfo, bool]:
        try:
            new_pod, new_info, hooked = hook.filter_hook(handle, state, pod, node_info)
        except Exception as exc:
            raise HookError(f"running FilterPhaseHook {_name(hook)!r}: {exc}") from exc
        if not hooked:
            return pod, node_info, False
        _check_pod(hook, "FilterPhaseHook", pod, new_pod)
        if not isinstance(new_info, NodeInfo):
            raise HookError(f"FilterPhaseHook {_name(hook)!r} returned {type(new_info).__name__} instead of a NodeInfo")
        if new_info.node.name != node_info.node.name:
            raise HookError(
                f"FilterPhaseHook {_name(hook)!r} returned NodeInfo of node {new_info.node.name!r} for node {node_info.node.name!r}"
            )
        if new_pod is pod and new_info is node_info:
            raise _in_place(hook, "FilterPhaseHook")
        return new_pod, new_info, True

    # ----- Score -------------------------------------------------------------------------------
    def run_score(self, handle: ExtendedHandle, state: CycleState, pod: Pod, nodes: list[Node]) -> tuple[Pod, list[Node], bool]:
        """The pod and nodes the Score plugins see after every Score hook, and whether any changed."""
        changed = False
        for hook in self.score:
            try:
                new_pod, new_nodes, hooked = hook.score_hook(handle, state, pod, nodes)
            except Exception as exc:
                raise HookError(f"running ScorePhaseHook {_name(hook)!r}: {exc}") from exc
            if not hooked:
                continue
            _check_pod(hook, "ScorePhaseHook", pod, new_pod)
            if new_pod is pod and new_nodes is nodes:
                raise _in_place(hook, "ScorePhaseHook")
            pod, nodes, changed = new_pod, list(new_nodes), True
        return pod, nodes, changed


def _check_pod(hook: object, kind: str, old: Pod, new: object) -> None:
    if not isinstance(new, Pod):
        raise HookError(f"{kind} {_name(hook)!r} returned {type(new).__name__} instead of a Pod")
    if new.uid != old.uid:
        raise HookError(f"{kind} {_name(hook)!r} returned pod {new.key} for pod {old.key}")


def _in_place(hook: object, kind: str) -> HookError:
    return HookError(
        f"{kind} {_name(hook)!r} reported a change but returned the objects it was given; "
        "hooks must return copies and never mutate their inputs"
    )


__all__ = [
    "FilterPhaseHook",
    "HookError",
    "PhaseHooks",
    "PreFilterPhaseHook",
    "SchedulingPhaseHook",
    "ScorePhaseHook",
    "hook_phases",
]
