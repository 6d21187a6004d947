"""The continuous sync's persisted intent: started from the page or `sync_cluster`, it survives
the engine, so a restarted engine (or a new leader) resumes it; stopped, it stays stopped."""

from __future__ import annotations

from django.utils import timezone

from schedconsole.cluster.models import ClusterSync
from schedconsole.engine.bridge.answers import SyncStatus
from schedconsole.engine.client import EngineCallError, call
from schedconsole.engine.operations import StartSync, StopSync

ROW = 1


def intent() -> ClusterSync | None:
    """The sync last asked for, if any."""
    return ClusterSync.objects.filter(pk=ROW).first()


def remember_started(op: StartSync, user: str) -> None:
    """A sync was started with `op`: resume it after a restart."""
    ClusterSync.objects.update_or_create(
        pk=ROW,
        defaults={
            "running": True,
            "kubeconfig": op.kubeconfig,
            "context": op.context,
            "in_cluster": op.in_cluster,
            "keep_bindings": op.keep_bindings,
            "started_by": user,
            "started_at": timezone.now(),
            "stopped_at": None,
            "mirrored": [],
            "saved_at": None,
            "resumed_at": None,
            "resume_error": "",
        },
    )


def remember_stopped() -> bool:
    """The sync was stopped: an engine starting later leaves it stopped. Whether one was running."""
    return bool(ClusterSync.objects.filter(pk=ROW, running=True).update(running=False, stopped_at=timezone.now(), mirrored=[]))


def save_mirrored(mirrored: list[list[str]]) -> None:
    """What the running sync has copied so far (written only while the sync is meant to run)."""
    ClusterSync.objects.filter(pk=ROW, running=True).update(mirrored=mirrored, saved_at=timezone.now())


def note_resumed(error: str = "") -> None:
    """An engine started and resumed the sync (or could not: `error`)."""
    ClusterSync.objects.filter(pk=ROW).update(resumed_at=timezone.now(), resume_error=error)


def start_operation(row: ClusterSync) -> StartSync:
    """The operation that starts the sync `row` remembers."""
    return StartSync(kubeconfig=row.kubeconfig, context=row.context, in_cluster=row.in_cluster, keep_bindings=row.keep_bindings)


def start(op: StartSync, user: str) -> SyncStatus:
    """Ask the engine to start the sync (EngineCallError if it refuses), then remember it."""
    result = call(op)
    remember_started(op, user)
    return result


def stop() -> tuple[SyncStatus | None, str]:
    """Forget the sync, then ask the engine to stop it: (its status, ""); or (None, why) when a sync
    was meant to run but no engine runs it (its resume failed, or no engine answers): nothing runs,
    and now none will resume it. Other refusals raise EngineCallError."""
    was_meant = remember_stopped()
    try:
        return call(StopSync()), ""
    except EngineCallError as exc:
        if not was_meant:
            raise
        return None, exc.message
