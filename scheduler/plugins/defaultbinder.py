"""DefaultBinder: binds the pod through the cluster's binding API."""

from __future__ import annotations

from scheduler.api.objects import Pod
from scheduler.framework.interface import Handle
from scheduler.framework.types import CycleState, Status, error

NAME = "DefaultBinder"


class DefaultBinder:
    """Bind plugin that posts a pods/binding to the cluster."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Bind the pod; an API failure is an Error status (the pod is requeued)."""
        try:
            self._handle.cluster().bind(pod, node_name)
        except Exception as exc:
            return error(exc)
        return Status()


def new(args: object | None, handle: Handle) -> DefaultBinder:
    """Build the plugin."""
    return DefaultBinder(handle)
