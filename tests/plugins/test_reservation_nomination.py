"""Reservation nomination uses every reservation score plugin of the profile, as koord-scheduler's.

koordinator-sh/koordinator `pkg/scheduler/plugins/reservation/nominator.go` (`NominateReservation`,
`prioritizeReservations`) and `pkg/scheduler/frameworkext/framework_extender.go`
(`RunReservationScorePlugins`, `RunNominateReservationFilterPlugins`): the reservations a pod may
take on a node are filtered by every `ReservationFilterPlugin` and ranked by the sum of every
`ReservationScorePlugin`'s score (Reservation's own `ScoreReservation` and, upstream, DeviceShare's),
each in [0, 100].
"""

from __future__ import annotations

import pathlib
from typing import Any

from scheduler.api.objects import Pod
from scheduler.framework.types import CycleState, Status
from tests.plugins.koord import config, engine, node, pod, reservation

OWNERS = [{"labelSelector": {"matchLabels": {"app": "web"}}}]


class PreferReservation:
    """An out-of-tree reservation score plugin: `score` for the reservation named `favourite`."""

    name = "PreferReservation"

    def __init__(self, favourite: str, score: int) -> None:
        self.favourite, self.points = favourite, score

    def filter(self, state: CycleState, pod: Pod, node_info: Any) -> Status:
        return Status()

    def score_reservation(self, state: CycleState, pod: Pod, info: Any, node: str) -> tuple[int, Status]:
        return (self.points if info.name == self.favourite else 0), Status()

    def reservation_score_extensions(self) -> None:
        return None


def run(tmp: pathlib.Path, plugin: PreferReservation | None) -> Any:
    docs = [node("n1", cpu="8")]
    # Reservation's own ScoreReservation for a 1-cpu, 1Gi pod: a (4 cpu) (25 + 100) / 2 = 62,
    # b (2 cpu) (50 + 100) / 2 = 75.
    for name, cpu in (("a", "4"), ("b", "2")):
        docs.append(reservation(name, cpu=cpu, owners=OWNERS, allocateOnce=False, ttl="0s"))
    docs.append(pod("w", cpu="1", labels={"app": "web"}))
    names = ("Reservation", "PreferReservation") if plugin else ("Reservation",)
    extra = (("PreferReservation", lambda args, handle: plugin),) if plugin else ()
    sched = engine(tmp, docs, config(*names), extra=extra)
    sched.run()
    return sched


def allocated(sched: Any) -> str:
    owner = next(p for p in sched.cluster.list_pods() if p.name == "w")
    return str(owner.annotations["scheduling.koordinator.sh/reservation-allocated"])


def test_reservation_alone_nominates_its_best_score(tmp_path: pathlib.Path) -> None:
    assert '"name":"b"' in allocated(run(tmp_path, None))


def test_every_reservation_score_plugin_counts(tmp_path: pathlib.Path) -> None:
    """a: 62 + 100 beats b: 75 + 0."""
    assert '"name":"a"' in allocated(run(tmp_path, PreferReservation("a", 100)))


def test_a_score_out_of_range_is_an_error(tmp_path: pathlib.Path) -> None:
    sched = run(tmp_path, PreferReservation("a", 101))
    attempt = next(r for r in sched.records if r.pod == "default/w")
    assert attempt.outcome != "Scheduled"
    assert 'plugin "PreferReservation" returns an invalid score 101, it should in the range of [0, 100]' in attempt.message
