"""Top-level sections this engine accepts and checks but does not act on.

leaderElection and clientConnection (component-base v1alpha1) and extenders are decoded
strictly, defaulted and validated as kube-scheduler does, so a file that works here works
there; the simulator runs one in-process scheduler and calls no extenders.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.api.duration import format_duration
from scheduler.api.fielderrors import FieldIssue, Stringer, invalid, required
from scheduler.api.fields import join
from scheduler.api.names import is_extended_resource_name, is_qualified_name
from scheduler.config.decode import ObjectReader

SECOND = 1_000_000_000


@dataclass(frozen=True, slots=True)
class GoDuration(Stringer):
    """A duration in nanoseconds that prints as Go prints a metav1.Duration in errors."""

    nanoseconds: int

    def __str__(self) -> str:
        return format_duration(self.nanoseconds)


@dataclass(frozen=True, slots=True)
class LeaderElection:
    """component-base LeaderElectionConfiguration with kube-scheduler's defaults."""

    leader_elect: bool = True
    lease_duration: int = 15 * SECOND
    renew_deadline: int = 10 * SECOND
    retry_period: int = 2 * SECOND
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


def read_leader_election(r: ObjectReader) -> LeaderElection:
    """Decode leaderElection; empty or missing values take the defaults."""
    d = LeaderElection()
    elect = r.boolean("leaderElect")
    lease, renew, retry = r.duration("leaseDuration"), r.duration("renewDeadline"), r.duration("retryPeriod")
    result = LeaderElection(
        leader_elect=d.leader_elect if elect is None else elect,
        # A zero duration is Go's "unset" and is defaulted.
        lease_duration=lease or d.lease_duration,
        renew_deadline=renew or d.renew_deadline,
        retry_period=retry or d.retry_period,
        resource_lock=r.string("resourceLock") or d.resource_lock,
        resource_name=r.string("resourceName") or d.resource_name,
        resource_namespace=r.string("resourceNamespace") or d.resource_namespace,
    )
    r.finish()
    return result


def validate_leader_election(le: LeaderElection, path: str) -> list[FieldIssue]:
    """component-base ValidateLeaderElectionConfiguration plus kube-scheduler's lease-only lock."""
    if not le.leader_elect:
        return []
    issues = []
    for key, value in (
        ("leaseDuration", le.lease_duration),
        ("renewDeadline", le.renew_deadline),
        ("retryPeriod", le.retry_period),
    ):
        if value <= 0:
            issues.append(invalid(join(path, key), GoDuration(value), "must be greater than zero"))
    if le.lease_duration <= le.renew_deadline:
        issues.append(invalid(join(path, "leaseDuration"), GoDuration(le.renew_deadline), "must be greater than `RenewDeadline`"))
    for key, text in (
        ("resourceLock", le.resource_lock),
        ("resourceNamespace", le.resource_namespace),
        ("resourceName", le.resource_name),
    ):
        if not text:
            issues.append(required(join(path, key)))
    if le.resource_lock != "leases":
        issues.append(invalid(join(path, "resourceLock"), le.resource_lock, 'resourceLock value must be "leases"'))
    return issues


@dataclass(frozen=True, slots=True)
class ClientConnection:
    """component-base ClientConnectionConfiguration with kube-scheduler's defaults."""

    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"
    qps: float = 50.0
    burst: int = 100


def read_client_connection(r: ObjectReader) -> ClientConnection:
    """Decode clientConnection; zero qps and burst take kube-scheduler's 50 and 100."""
    d = ClientConnection()
    result = ClientConnection(
        kubeconfig=r.string("kubeconfig") or "",
        accept_content_types=r.string("acceptContentTypes") or "",
        content_type=r.string("contentType") or d.content_type,
        qps=r.number("qps") or d.qps,
        burst=r.integer("burst") or d.burst,
    )
    r.finish()
    return result


def validate_client_connection(cc: ClientConnection, path: str) -> list[FieldIssue]:
    """burst must not be negative."""
    if cc.burst < 0:
        return [invalid(join(path, "burst"), cc.burst, "must be non-negative")]
    return []


@dataclass(frozen=True, slots=True)
class Extender:
    """The parts of a scheduler extender that validation looks at."""

    url_prefix: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    managed_resources: tuple[str, ...] = ()


_EXTENDER_STRINGS = ("urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb")
_TLS_STRINGS = ("serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")


def read_extender(r: ObjectReader) -> Extender:
    """Decode one extender strictly."""
    strings = {key: r.string(key) or "" for key in _EXTENDER_STRINGS}
    weight = r.integer("weight", 64) or 0
    for key in ("enableHTTPS", "nodeCacheCapable", "ignorable"):
        r.boolean(key)
    r.duration("httpTimeout")
    tls = r.child("tlsConfig")
    tls.boolean("insecure")
    for key in _TLS_STRINGS:
        tls.string(key)
    tls.finish()
    names = []
    for item in r.children("managedResources"):
        names.append(item.string("name") or "")
        item.boolean("ignoredByScheduler")
        item.finish()
    r.finish()
    return Extender(strings["urlPrefix"], strings["prioritizeVerb"], strings["bindVerb"], weight, tuple(names))


def validate_extenders(extenders: tuple[Extender, ...], path: str) -> list[FieldIssue]:
    """Upstream validateExtenders: positive prioritize weight, valid unique resources, one binder."""
    issues = []
    seen: set[str] = set()
    for i, ext in enumerate(extenders):
        where = join(path, i)
        if ext.prioritize_verb and ext.weight <= 0:
            issues.append(invalid(join(where, "weight"), ext.weight, "must have a positive weight applied to it"))
        for j, name in enumerate(ext.managed_resources):
            name_path = join(join(join(where, "managedResources"), j), "name")
            issues += _extended_resource_issues(name, name_path)
            if name in seen:
                issues.append(invalid(name_path, name, "duplicate extender managed resource name"))
            seen.add(name)
    binders = sum(1 for ext in extenders if ext.bind_verb)
    if binders > 1:
        issues.append(invalid(path, f"found {binders} extenders implementing bind", "only one extender can implement bind"))
    return issues


def _extended_resource_issues(name: str, path: str) -> list[FieldIssue]:
    errors = is_qualified_name(name)
    if errors:
        return [invalid(path, name, msg) for msg in errors]
    if not is_extended_resource_name(name):
        return [invalid(path, name, "is an invalid extended resource name")]
    return []
