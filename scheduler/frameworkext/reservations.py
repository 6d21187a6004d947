"""The reservation extension points of Koordinator's framework extender.

Facts from koordinator-sh/koordinator `pkg/scheduler/frameworkext/framework_extender.go`
(`RunNominateReservationFilterPlugins`, `RunReservationScorePlugins`) and `interface.go`
(`ReservationFilterPlugin`, `ReservationScorePlugin`, `MaxReservationScore` 100,
`MinReservationScore` 0). Every plugin of the profile that has `filter_nominate_reservation`
(state, pod, reservation, node) -> Status takes part in the nomination filter, and every one with
`score_reservation` (state, pod, reservation, node) -> (score, Status) in the nomination score; a
plugin's `reservation_score_extensions()` may return an object whose
`normalize_reservation_score(state, pod, scores)` rescales its scores in place. Plugins are asked
in the order the profile built them; every weight is 1 (upstream's TODO), and the scores are
summed per reservation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler.api.objects import Pod
from scheduler.framework.types import Code, CycleState, Status

MAX_RESERVATION_SCORE = 100
MIN_RESERVATION_SCORE = 0


def reservation_plugins(handle: Any, fallback: Any) -> tuple[list[Any], list[Any]]:
    """The profile's reservation filter plugins and reservation score plugins, in build order
    (`fallback` alone for each when the handle has no framework yet, as in unit tests)."""
    framework = getattr(handle, "framework", None)
    plugins: dict[str, Any] = getattr(framework, "plugins", None) or {}
    if not plugins:
        return [fallback], [fallback]
    filters = [p for p in plugins.values() if callable(getattr(p, "filter_nominate_reservation", None))]
    scorers = [p for p in plugins.values() if callable(getattr(p, "score_reservation", None))]
    return filters, scorers


def run_nominate_reservation_filter(filters: Sequence[Any], state: CycleState, pod: Pod, info: Any, node: str) -> Status:
    """`RunNominateReservationFilterPlugins`: the first plugin refusing the reservation answers."""
    for plugin in filters:
        status: Status = plugin.filter_nominate_reservation(state, pod, info, node)
        if not status.success:
            return status
    return Status()


def run_reservation_score(
    scorers: Sequence[Any], state: CycleState, pod: Pod, infos: Sequence[Any], node: str
) -> tuple[list[int], Status]:
    """`RunReservationScorePlugins` summed as `prioritizeReservations` sums it: each reservation's
    total over the plugins (normalized by those that normalize, each in [0, 100])."""
    totals = [0] * len(infos)
    if not infos:
        return totals, Status()
    per_plugin: list[tuple[Any, list[int]]] = []
    for plugin in scorers:
        scores = []
        for info in infos:
            score, status = plugin.score_reservation(state, pod, info, node)
            if not status.success:
                return totals, Status(Code.ERROR, (f'plugin "{plugin.name}" failed with: {status.message}',))
            scores.append(int(score))
        per_plugin.append((plugin, scores))
    for plugin, scores in per_plugin:
        extensions = getattr(plugin, "reservation_score_extensions", lambda: None)()
        if extensions is not None:
            status = extensions.normalize_reservation_score(state, pod, scores)
            if not status.success:
                return totals, Status(Code.ERROR, (f"running Normalize on Score plugins: {status.message}",))
    for plugin, scores in per_plugin:
        for i, score in enumerate(scores):
            if not MIN_RESERVATION_SCORE <= score <= MAX_RESERVATION_SCORE:
                message = (
                    f'plugin "{plugin.name}" returns an invalid score {score}, it should in the range of '
                    f"[{MIN_RESERVATION_SCORE}, {MAX_RESERVATION_SCORE}]"
                )
                return totals, Status(Code.ERROR, (message,))
            totals[i] += score
    return totals, Status()


__all__ = [
    "MAX_RESERVATION_SCORE",
    "MIN_RESERVATION_SCORE",
    "reservation_plugins",
    "run_nominate_reservation_filter",
    "run_reservation_score",
]
