"""Leader election with a `coordination.k8s.io/v1` Lease, as client-go's `tools/leaderelection` does it.

A candidate tries every `retry_period` to get or renew the Lease: it takes a Lease nobody holds, or
one whose holder has not renewed within `lease_duration` as this candidate observed it (its own
clock, from when it last saw the record change, so clocks of different machines need not agree);
updates carry the resourceVersion read, so of two candidates racing only one wins (the other gets
409). A leader that cannot renew within `renew_deadline` stops leading. Each change of holder
increments `leaseTransitions`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scheduler.kube.client import Connection, RemoteError

log = logging.getLogger(__name__)


def _micro_time(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(slots=True)
class LeaderElector:
    """One candidate for a Lease (kube-scheduler's defaults: 15 s lease, 10 s renew deadline, 2 s retry)."""

    connection: Connection
    namespace: str
    name: str
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    on_started: Callable[[], None] = lambda: None
    on_stopped: Callable[[], None] = lambda: None
    leading: bool = False
    _observed: tuple[str, str] = ("", "")  # (holder, renewTime) last seen
    _observed_at: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def path(self) -> str:
        """The Lease's URL path."""
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"

    def start(self) -> None:
        """Campaign on a thread until stopped."""
        self._thread = threading.Thread(target=self._run, name=f"leader-{self.identity}", daemon=True)
        self._thread.start()

    def stop(self, release: bool = True) -> None:
        """Stop campaigning; a leader releases the Lease (`ReleaseOnCancel`) unless `release` is False,
        which leaves it to expire as when a process dies."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.retry_period + 5)
        if self.leading and release:
            try:
                self._write(self._get(), holder="", duration=1)
            except RemoteError as exc:
                log.warning("lease %s: release failed: %s", self.name, exc)
            self.connection.close_kept()
        if self.leading:
            self.leading = False
            self.on_stopped()

    def status(self) -> dict[str, Any]:
        """The Lease as this candidate last saw it: its path, holder, renewal, whether we lead."""
        holder, renewed = self._observed
        return {
            "lease": f"{self.namespace}/{self.name}",
            "identity": self.identity,
            "leading": self.leading,
            "holder": holder or None,
            "renewTime": renewed or None,
            "leaseDurationSeconds": self.lease_duration,
        }

    def _run(self) -> None:
        last_renew = time.monotonic()
        while not self._stop.is_set():
            ok = False
            try:
                ok = self.try_acquire_or_renew()
            except RemoteError as exc:
                log.info("lease %s: %s", self.name, exc)
            now = time.monotonic()
            if ok:
                last_renew = now
                if not self.leading:
                    self.leading = True
                    self.on_started()
            elif self.leading and now - last_renew > self.renew_deadline:
                self.leading = False
                self.on_stopped()
            self._stop.wait(self.retry_period)

    def _get(self) -> dict[str, Any] | None:
        try:
            lease = self.connection.request("GET", self.path)
        except RemoteError as exc:
            if exc.code == 404:
                return None
            raise
        return lease if isinstance(lease, dict) else None

    def try_acquire_or_renew(self) -> bool:
        """One round: whether this candidate holds the Lease afterwards."""
        lease = self._get()
        if lease is None:
            now = time.time()
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._spec(now, now, 0),
            }
            try:
                self.connection.request("POST", f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases", body=body)
            except RemoteError as exc:
                if exc.code == 409:
                    return False  # another candidate created it first
                raise
            return True
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        record = (holder, str(spec.get("renewTime") or ""))
        if record != self._observed:
            self._observed, self._observed_at = record, time.monotonic()
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        if holder and holder != self.identity and time.monotonic() - self._observed_at < duration:
            return False  # held, and renewed recently as we observed it
        self._write(lease, holder=self.identity)
        return True

    def _spec(
        self, acquired: float, renewed: float, transitions: int, holder: str | None = None, duration: float | None = None
    ) -> dict[str, Any]:
        return {
            "holderIdentity": self.identity if holder is None else holder,
            "leaseDurationSeconds": int(duration if duration is not None else self.lease_duration),
            "acquireTime": _micro_time(acquired),
            "renewTime": _micro_time(renewed),
            "leaseTransitions": transitions,
        }

    def _write(self, lease: dict[str, Any] | None, holder: str, duration: float | None = None) -> None:
        if lease is None:
            return
        spec = dict(lease.get("spec") or {})
        now = time.time()
        previous = str(spec.get("holderIdentity") or "")
        transitions = int(spec.get("leaseTransitions") or 0)
        acquired = spec.get("acquireTime")
        if previous != holder and holder:
            transitions += 1
            acquired = None
        new_spec = self._spec(now, now, transitions, holder=holder, duration=duration)
        if acquired:
            new_spec["acquireTime"] = acquired
        body = {**lease, "spec": new_spec}
        # The resourceVersion read goes back: of two racing writers, one gets 409.
        updated = self.connection.request("PUT", self.path, body=body)
        if isinstance(updated, dict):
            spec = updated.get("spec") or {}
            self._observed = (str(spec.get("holderIdentity") or ""), str(spec.get("renewTime") or ""))
            self._observed_at = time.monotonic()
