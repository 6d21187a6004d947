"""An out-of-tree plugin that raises where a plugin's fault must not end the engine loop: at
PostBind (every pod), in Unreserve (after its Permit rejected a pod labelled `faulty/permit:
reject`), and in its queueing hint (a pod labelled `faulty/wait` is refused until a node labelled
`faulty/ready` exists; the hint for node events raises), and its controller's start raises. Within
the scheduling cycle a pod labelled `faulty/raise: <Point>` makes it raise at that point (PreFilter,
Filter, Score, Reserve, Permit), and `faulty/raise: Result` makes its PreFilter answer a result the
engine cannot read (the cycle's own code raises). Enable it with `FAULTY_PROFILE`."""

from __future__ import annotations

from typing import Any

from scheduler.api.objects import Pod
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import ActionType, ClusterEvent, Code, CycleState, QueueingHint, Status

NAME = "Faulty"
WAIT = "faulty/wait"
READY = "faulty/ready"
PERMIT = "faulty/permit"
RAISE = "faulty/raise"
POINTS = ("PreFilter", "Filter", "Score", "Reserve", "Permit")


def profile(name: str = "default-scheduler") -> dict[str, Any]:
    """A default profile with Faulty enabled at every point it implements."""
    return {"schedulerName": name, "plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}}


def config(*profiles: dict[str, Any]) -> dict[str, Any]:
    """A configuration of these profiles (default: one, `default-scheduler`)."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": list(profiles) or [profile()],
    }


class Faulty:
    """The faults above; it counts how often each ran."""

    name = NAME

    def __init__(self) -> None:
        self.post_binds = 0
        self.unreserves = 0
        self.hints = 0

    def events_to_register(self) -> list[ClusterEvent]:
        return [ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE, hint=self._hint)]

    def _hint(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        self.hints += 1
        raise RuntimeError(f"queueing hint fault for {pod.key}")

    def _raise_at(self, point: str, pod: Pod) -> None:
        if pod.labels.get(RAISE) == point:
            raise RuntimeError(f"{point.lower()} fault for {pod.key}")

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Any) -> tuple[Any, Status]:
        self._raise_at("PreFilter", pod)
        if pod.labels.get(RAISE) == "Result":
            return "not a PreFilterResult", Status()
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        self._raise_at("Score", pod)
        return 0, Status()

    def score_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self._raise_at("Filter", pod)
        if WAIT in pod.labels and READY not in node_info.node.labels:
            return Status(Code.UNSCHEDULABLE, ("node is not faulty/ready",))
        return Status()

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self._raise_at("Reserve", pod)
        return Status()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.unreserves += 1
        raise RuntimeError(f"unreserve fault for {pod.key}")

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        self._raise_at("Permit", pod)
        if pod.labels.get(PERMIT) == "reject":
            return Status(Code.UNSCHEDULABLE, ("rejected by Faulty's Permit",)), 0.0
        return Status(), 0.0

    def new_controllers(self) -> list[FailingController]:
        return [FailingController()]

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.post_binds += 1
        raise RuntimeError(f"post-bind fault for {pod.key} on {node_name}")


class FailingController:
    """A controller whose start raises."""

    name = "FaultyController"

    def start(self) -> None:
        raise RuntimeError("controller fault at start")

    def stop(self) -> None:
        pass


def registry() -> tuple[dict[str, Any], Faulty]:
    """The in-tree plugins and Faulty (one instance, whatever the profiles), and that instance."""
    from scheduler.plugins.registry import new_registry

    plugin = Faulty()
    return new_registry((NAME, lambda args, handle: plugin)), plugin
