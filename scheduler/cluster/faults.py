"""Fault injection for the simulated cluster: fail or delay chosen API calls.

Rules match a call by verb (`create`, `bind`, `patch`, `delete` or `*`) and by a glob over
the pod's name or `namespace/name`; each rule fires for its first `count` matches (every
match when `count` is absent), optionally after skipping the first `after` matches. A rule
may delay the call (virtual seconds: a blocking caller's clock moves on, an asynchronous
caller resumes later) and/or fail it with an API error. Tests build a `FaultInjector` from
`FaultRule`s; `simulate --faults PATH` reads the same rules from YAML:

```yaml
faults:
- verb: delete
  pod: "default/low-*"
  count: 1
  error: "etcdserver: request timed out"
- verb: bind
  delay: 0.5
```
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler.api.fields import shown
from scheduler.io.documents import DocumentError, load_one

VERBS = ("create", "bind", "patch", "delete", "*")
REASONS = ("InternalError", "NotFound", "Conflict", "Timeout", "TooManyRequests")


class FaultConfigError(ValueError):
    """A faults file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class FaultDecision:
    """What happens to one call: wait `delay` virtual seconds, then fail with `error` if set."""

    delay: float = 0.0
    error: str | None = None
    reason: str = "InternalError"


@dataclass(slots=True)
class FaultRule:
    """Fail and/or delay matching calls."""

    verb: str = "*"
    pod: str = "*"
    count: int | None = None
    after: int = 0
    delay: float = 0.0
    error: str | None = None
    reason: str = "InternalError"
    seen: int = 0
    fired: int = 0

    def __post_init__(self) -> None:
        # Naming a reason other than the default is asking for a failure.
        if self.error is None and self.reason != "InternalError":
            self.error = f"injected {self.reason} error"

    def matches(self, verb: str, namespace: str, name: str) -> bool:
        """Whether the call is one this rule is about (before counting)."""
        if self.verb != "*" and self.verb != verb:
            return False
        return fnmatch.fnmatchcase(name, self.pod) or fnmatch.fnmatchcase(f"{namespace}/{name}", self.pod)

    @property
    def exhausted(self) -> bool:
        """Whether the rule has fired as often as it may."""
        return self.count is not None and self.fired >= self.count


@dataclass(slots=True)
class FaultInjector:
    """The rules in force for one cluster, and a log of the calls they touched."""

    rules: list[FaultRule] = field(default_factory=list)
    log: list[tuple[str, str, FaultDecision]] = field(default_factory=list)
    generation: int = 0
    """Moves when a rule's remaining behaviour changes (a counted firing, a skipped `after` call):
    a retry after that may go differently. A rule without count and after never moves it."""
    _bypass: int = 0

    def check(self, verb: str, namespace: str, name: str) -> FaultDecision | None:
        """The first live matching rule's decision for this call (consuming one of its firings)."""
        if self._bypass:
            return None
        for rule in self.rules:
            if rule.exhausted or not rule.matches(verb, namespace, name):
                continue
            rule.seen += 1
            if rule.seen <= rule.after:
                self.generation += 1
                continue
            rule.fired += 1
            if rule.count is not None:
                self.generation += 1
            decision = FaultDecision(rule.delay, rule.error, rule.reason)
            self.log.append((verb, f"{namespace}/{name}", decision))
            return decision
        return None

    @contextmanager
    def bypass(self) -> Iterator[None]:
        """Make calls without consulting the rules (the caller already did, asynchronously)."""
        self._bypass += 1
        try:
            yield
        finally:
            self._bypass -= 1


def _rule_from(raw: Any, where: str) -> FaultRule:
    if not isinstance(raw, dict):
        raise FaultConfigError(f"{where}: expected a mapping, got {type(raw).__name__}")
    known = {"verb", "pod", "count", "after", "delay", "error", "reason"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise FaultConfigError(f"{where}.{unknown[0]}: unknown field; valid: {', '.join(sorted(known))}")
    verb = raw.get("verb", "*")
    if verb not in VERBS:
        raise FaultConfigError(f"{where}.verb: unsupported value {shown(verb)}; valid: {', '.join(VERBS)}")
    pod = raw.get("pod", "*")
    if not isinstance(pod, str) or not pod:
        raise FaultConfigError(f"{where}.pod: must be a non-empty glob such as 'default/low-*'")
    count = raw.get("count")
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
        raise FaultConfigError(f"{where}.count: must be an integer >= 1, got {shown(count)}")
    after = raw.get("after", 0)
    if not isinstance(after, int) or isinstance(after, bool) or after < 0:
        raise FaultConfigError(f"{where}.after: must be an integer >= 0, got {shown(after)}")
    delay = raw.get("delay", 0)
    if not isinstance(delay, (int, float)) or isinstance(delay, bool) or delay < 0:
        raise FaultConfigError(f"{where}.delay: must be a number of seconds >= 0, got {shown(delay)}")
    error = raw.get("error")
    if error is not None and not isinstance(error, str):
        raise FaultConfigError(f"{where}.error: must be a string, got {shown(error)}")
    reason = raw.get("reason", "InternalError")
    if reason not in REASONS:
        raise FaultConfigError(f"{where}.reason: unsupported value {shown(reason)}; valid: {', '.join(REASONS)}")
    if error is None and "reason" in raw:
        error = f"injected {reason} error"
    if error is None and not delay:
        raise FaultConfigError(f"{where}: a rule needs `error` and/or `delay`")
    return FaultRule(verb=verb, pod=pod, count=count, after=after, delay=float(delay), error=error, reason=reason)


def parse_faults(document: Any, source: str = "<faults>") -> FaultInjector:
    """Build an injector from `{faults: [rule, ...]}` or a bare list of rules."""
    raw = document.get("faults") if isinstance(document, dict) else document
    if isinstance(document, dict):
        extra = sorted(set(document) - {"faults"})
        if extra:
            raise FaultConfigError(f"{source}: {extra[0]}: unknown field; valid: faults")
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise FaultConfigError(f"{source}: faults: expected a list of rules, got {type(raw).__name__}")
    return FaultInjector([_rule_from(item, f"{source}: faults[{i}]") for i, item in enumerate(raw)])


def load_faults(path: str) -> FaultInjector:
    """Read a faults YAML (or JSON) file."""
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise FaultConfigError(f"{path}: cannot read the faults file: {exc}") from exc
    return parse_faults_text(text, path)


def parse_faults_text(text: str | bytes, source: str = "<faults>") -> FaultInjector:
    """Build an injector from YAML or JSON text, with the loader's bounds on depth and aliases."""
    try:
        document = load_one(text)
    except DocumentError as exc:
        raise FaultConfigError(f"{source}: not valid YAML: {exc}") from None
    return parse_faults(document, source)


__all__ = ["FaultConfigError", "FaultDecision", "FaultInjector", "FaultRule", "load_faults", "parse_faults", "parse_faults_text"]
