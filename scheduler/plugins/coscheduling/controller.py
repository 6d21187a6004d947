"""The PodGroup status controller (Koordinator's `coscheduling/controller/podgroup.go`).

It runs only while this instance leads (a frameworkext controller). On start it syncs every
PodGroup; afterwards the plugin asks it to sync a gang whenever one of its pods or its PodGroup
changes. A sync computes `status.phase` (Pending, PreScheduling, Scheduling, Scheduled, Running,
Failed, Finished), `scheduled` (bound members), `running`, `succeeded`, `failed`,
`scheduleStartTime` and `occupiedBy` exactly as upstream's `syncHandler`, and writes the
PodGroup back only when its status changed. A rejected Strict gang gets a Warning
`Unschedulable` event on its PodGroup, as KEP-34 describes.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from scheduler.api.fields import format_time
from scheduler.cluster.errors import APIError

if TYPE_CHECKING:
    from scheduler.plugins.coscheduling.gang import Gang
    from scheduler.plugins.coscheduling.plugin import Coscheduling

CONTROLLER_NAME = "PodGroupController"


def next_status(status: dict[str, Any], min_member: int, pods: list[Any], bound: int, now: float) -> dict[str, Any]:
    """The PodGroup status after one sync (`syncHandler`), from the members' live objects."""
    out = copy.deepcopy(status)
    phase = out.get("phase", "")
    if phase == "":
        out["phase"] = "Pending"
        return out
    if phase == "Pending":
        if len(pods) >= min_member > 0:
            out["phase"] = "PreScheduling"
            refs = sorted(f"{p.namespace}/{name}" for p in pods[:1] for _, name in p.meta.owner_kinds)
            if refs:
                out["occupiedBy"] = ",".join(refs)
        return out
    if not pods:
        out["phase"] = "Pending"
        return out
    running = sum(1 for p in pods if p.node_name and p.phase == "Running")
    succeeded = sum(1 for p in pods if p.phase == "Succeeded")
    failed = sum(1 for p in pods if p.phase == "Failed")
    out.update(failed=failed, succeeded=succeeded, running=running, scheduled=bound)
    if bound < min_member:
        out["phase"] = "Scheduling"
        out.setdefault("scheduleStartTime", format_time(now))
    else:
        out["phase"] = "Scheduled"
    if succeeded + running >= min_member and out["phase"] == "Scheduled":
        out["phase"] = "Running"
    if failed and failed + running + succeeded >= min_member:
        out["phase"] = "Failed"
    if succeeded >= min_member:
        out["phase"] = "Finished"
    return out


class PodGroupController:
    """Keeps PodGroup status in step with its gang."""

    name = CONTROLLER_NAME

    def __init__(self, plugin: Coscheduling) -> None:
        self.plugin = plugin
        self.running = False
        self._failures: dict[str, int] = {}

    def start(self) -> None:
        """Sync every PodGroup now; later syncs follow cluster changes."""
        self.running = True
        for key in sorted(self.plugin.cache.pod_groups):
            self.sync(key)

    def stop(self) -> None:
        """Stop writing statuses."""
        self.running = False

    def sync(self, key: str) -> None:
        """Recompute one PodGroup's status (a no-op for annotation gangs, or when not running)."""
        if not self.running:
            return
        # A sync writes the PodGroup, whose event asks for another sync: at most two rounds
        # (Pending, then PreScheduling or later) settle a PodGroup.
        for _ in range(3):
            if not self._sync_once(key):
                return

    def _sync_once(self, key: str) -> bool:
        cache = self.plugin.cache
        pg = cache.pod_groups.get(key)
        gang = cache.get(key)
        if pg is None:
            return False
        cluster = self.plugin.handle.cluster()
        live = {p.key: p for p in cluster.list_pods()} if gang is not None else {}
        pods = [live[k] for k in sorted(gang.children) if k in live] if gang is not None else []
        bound = len(gang.bound) if gang is not None else 0
        doc = next((d for d in cluster.extensions.get("PodGroup", ()) if _key(d) == key), None)
        if doc is None:
            return False
        status = doc.get("status") or {}
        new_status = next_status(status, pg.min_member, pods, bound, self.plugin.handle.now())
        if new_status == status:
            return False
        updated = {**doc, "status": new_status}
        try:
            cluster.update_object("PodGroup", updated)
        except APIError as exc:
            self._retry_later(key, exc)
            return False
        self._failures.pop(key, None)
        return True

    def _retry_later(self, key: str, exc: APIError) -> None:
        """A refused write (a conflict with a newer version, an API server away): counted, and the
        sync tried again after a backoff of 1 s doubling to 60 s (a workqueue's rate limit); it
        never reaches the scheduling loop."""
        failures = self._failures.get(key, 0) + 1
        self._failures[key] = failures
        scheduler = self.plugin.handle.scheduler
        scheduler.metrics.background_error(f"controller/{CONTROLLER_NAME}", APIError(f"PodGroup {key}: {exc}"))
        scheduler.submit(lambda: self.sync(key), delay=min(60.0, 2.0 ** (failures - 1)))

    def unschedulable(self, gang: Gang, message: str) -> None:
        """Record the Warning event KEP-34 gives a PodGroup whose gang was rejected."""
        if gang.name not in self.plugin.cache.pod_groups:
            return
        self.plugin.handle.cluster().record("Warning", "Unschedulable", f"PodGroup {gang.name}", message)


def _key(doc: dict[str, Any]) -> str:
    meta = doc.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


__all__ = ["CONTROLLER_NAME", "PodGroupController", "next_status"]
