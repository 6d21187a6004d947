"""NodePorts: a pod's host ports must be free on the node.

Upstream: kubernetes/kubernetes `pkg/scheduler/framework/plugins/nodeports/node_ports.go`, with the
ports of `schedutil.GetHostPorts` (regular containers and restartable init containers) and the
conflict rule of `HostPortInfo.CheckConflict` (an empty host IP means 0.0.0.0, which clashes with
every IP for the same protocol and port).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Pod
from scheduler.framework import signers
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo, ProtocolPort
from scheduler.framework.types import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    Code,
    CycleState,
    PreFilterResult,
    QueueingHint,
    Status,
    error,
    skip,
    success,
    unschedulable,
)

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
REASON = "node(s) didn't have free ports for the requested pod ports"
DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"
DEFAULT_PROTOCOL = "TCP"


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The host ports the pod wants, sanitized (empty IP -> 0.0.0.0, empty protocol -> TCP)."""

    ports: tuple[ProtocolPort, ...]


def host_ports(pod: Pod) -> tuple[ProtocolPort, ...]:
    """`schedutil.GetHostPorts`: host ports of restartable init containers, then of containers."""
    containers = tuple(c for c in pod.init_containers if c.restartable) + pod.containers
    return tuple(
        ProtocolPort(p.host_ip or DEFAULT_BIND_ALL_HOST_IP, p.protocol or DEFAULT_PROTOCOL, p.host_port)
        for c in containers
        for p in c.ports
        if p.host_port > 0
    )


def fits_ports(wanted: tuple[ProtocolPort, ...], node_info: NodeInfo) -> bool:
    """No wanted port clashes with the ports used on the node."""
    return not node_info.used_ports or not node_info.ports_conflict(list(wanted))


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether the pod's host ports are all free on the node (`nodeports.Fits`)."""
    return fits_ports(host_ports(pod), node_info)


def ports_conflict(wanted: tuple[ProtocolPort, ...], used: tuple[ProtocolPort, ...]) -> bool:
    """`HostPortInfo.CheckConflict` between two port lists (0.0.0.0 clashes with every IP)."""
    for want in wanted:
        for have in used:
            if have.port == want.port and have.protocol == want.protocol:
                if (
                    want.host_ip == DEFAULT_BIND_ALL_HOST_IP
                    or have.host_ip == DEFAULT_BIND_ALL_HOST_IP
                    or have.host_ip == want.host_ip
                ):
                    return True
    return False


def is_schedulable_after_pod_deleted(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
    """`isSchedulableAfterPodDeleted`: Queue only when an assigned (or nominated) pod holding a
    host port the pod wants is gone."""
    assert old is not None
    if not old.node_name and not old.nominated_node_name:
        return QueueingHint.QUEUE_SKIP
    freed = host_ports(old)
    if not freed or not ports_conflict(host_ports(pod), freed):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def _read_state(state: CycleState) -> PreFilterState:
    value = state.get(PRE_FILTER_STATE_KEY)
    if not isinstance(value, PreFilterState):
        raise KeyError(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    return value


class NodePorts:
    """PreFilter collects the pod's host ports; Filter rejects nodes where one is taken."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """The host ports."""
        return signers.signed((signers.HOST_PORTS, signers.host_ports(pod)))

    def events_to_register(self) -> list[ClusterEvent]:
        """A pod deleted (its ports freed) or a node added (queueing hints on, as upstream's default)."""
        return [
            ClusterEvent("Pod", ActionType.DELETE, hint=is_schedulable_after_pod_deleted),
            ClusterEvent("Node", ActionType.ADD),
        ]

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Skip when the pod asks for no host port."""
        ports = host_ports(pod)
        if not ports:
            return None, skip()
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(ports))
        return None, success()

    def pre_filter_extensions(self) -> None:
        """None: the wanted ports do not depend on other pods."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Unschedulable (preemption may free the port) when a wanted port is in use; Error without PreFilter."""
        try:
            wanted = _read_state(state).ports
        except KeyError as exc:
            return error(exc.args[0])
        return success() if fits_ports(wanted, node_info) else unschedulable(REASON)

    def filter_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> BatchFilterResult:
        """The same verdicts, checking only nodes that have any used port; KeyError without PreFilter."""
        wanted = list(_read_state(state).ports)
        infos = snapshot.node_infos
        codes = np.zeros(len(positions), dtype=np.int8)
        for i, pos in enumerate(positions.tolist()):
            info = infos[pos]
            if info.used_ports and info.ports_conflict(wanted):
                codes[i] = Code.UNSCHEDULABLE
        return BatchFilterResult.uniform(codes, (REASON,))


def new(args: object | None, handle: Handle) -> NodePorts:
    """Build the plugin; it takes no args."""
    return NodePorts()
