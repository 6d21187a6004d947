"""A sample out-of-tree plugin, registered with `with_plugin` and nothing else.

It plays a tiny Reservation: a placeholder pod (label `sample/reservation=<name>`) holds
resources on a node; a pod labelled `sample/reserved-by=<name>` may use them. Like the
proposal's Story 1, it does so with a FilterPhaseHook that hands the Filter plugins a copy of
the NodeInfo with the placeholder taken out. It also exposes REST routes and a controller,
and keeps every framework file untouched.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from scheduler.api.objects import Pod
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import CycleState
from scheduler.frameworkext.handle import ExtendedHandle
from scheduler.frameworkext.services import Request, RouteGroup, error_message

NAME = "SampleReservation"
RESERVATION_LABEL = "sample/reservation"
RESERVED_BY_LABEL = "sample/reserved-by"


@dataclass
class Syncer:
    """A controller that only records its life cycle."""

    name: str
    log: list[str] = field(default_factory=list)

    def start(self) -> None:
        self.log.append("start")

    def stop(self) -> None:
        self.log.append("stop")


class SampleReservation:
    """Lets a pod use the resources its reservation's placeholder holds."""

    name = NAME

    def __init__(self, handle: ExtendedHandle) -> None:
        self.handle = handle
        self.hooked: list[str] = []
        self.syncer = Syncer("sample-reservation-syncer")

    # ----- APIServiceProvider -------------------------------------------------------------------------
    def register_endpoints(self, group: RouteGroup) -> None:
        group.get("/reservations/:nodeName", self.reservations)
        group.get("/hooked", lambda request: (200, {"nodes": list(self.hooked)}))

    def reservations(self, request: Request) -> tuple[int, Any]:
        info = self.handle.snapshot_shared_lister().get(request.params["nodeName"])
        if info is None:
            return error_message(404, f"cannot find node {request.params['nodeName']}")
        return 200, {
            "reservations": sorted(p.pod.labels[RESERVATION_LABEL] for p in info.pods if RESERVATION_LABEL in p.pod.labels)
        }

    # ----- ControllerProvider -------------------------------------------------------------------------
    def new_controllers(self) -> list[Syncer]:
        return [self.syncer]

    # ----- FilterPhaseHook ----------------------------------------------------------------------------
    def filter_hook_nodes(self, handle: ExtendedHandle, state: CycleState, pod: Pod) -> Iterable[str]:
        wanted = pod.labels.get(RESERVED_BY_LABEL)
        if wanted is None:
            return ()
        return [
            p.node_name for p in handle.informer_factory().pods() if p.node_name and p.labels.get(RESERVATION_LABEL) == wanted
        ]

    def filter_hook(self, handle: ExtendedHandle, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[Pod, NodeInfo, bool]:
        wanted = pod.labels.get(RESERVED_BY_LABEL)
        holders = [p.pod for p in node_info.pods if wanted is not None and p.pod.labels.get(RESERVATION_LABEL) == wanted]
        if not holders:
            return pod, node_info, False
        twin = node_info.clone()
        for holder in holders:
            twin.remove_pod(holder)
        self.hooked.append(node_info.name)
        return pod, twin, True


def new(args: object | None, handle: ExtendedHandle) -> SampleReservation:
    """The factory, as any out-of-tree plugin writes it."""
    return SampleReservation(handle)
