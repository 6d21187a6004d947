"""The store's queue: what waits for the next batch costs the engine nothing more than its bytes."""

from __future__ import annotations

import gc

from schedconsole.engine.store import _Record
from schedconsole.history.models import Attempt
from tests.console.conftest import SMALL_CLUSTER, TWO_PROFILES, pod, settle


def test_a_queued_attempt_holds_no_containers(start_engine) -> None:
    # A row's nested dicts and lists, kept until the store's next batch, were promoted by the cyclic
    # collector and made it run full collections over the whole heap while the engine scheduled.
    host = start_engine([*SMALL_CLUSTER, pod("q1")], TWO_PROFILES, run=False)
    assert host.engine.scheduler.schedule_one() is not None
    queued = [item for item in list(host.store._pending) if isinstance(item, _Record)]
    assert len(queued) == 1
    item = queued[0]
    assert all(isinstance(value, str | int | float) for value in item.columns), item.columns
    gc.collect()
    assert not gc.is_tracked(item.columns), "a tuple of scalars is untracked by the collector"
    assert isinstance(item.text, str) and '"scoreTable"' in item.text


def test_queued_columns_are_the_stored_attempt(start_engine) -> None:
    host = start_engine([*SMALL_CLUSTER, pod("q2", cpu="100")], TWO_PROFILES)
    settle(host)
    attempt = Attempt.objects.get(pod="default/q2")
    assert (attempt.outcome, attempt.node, attempt.nominated_node, attempt.feasible_nodes, attempt.attempt) == ("Unschedulable", "", "", 0, 1)
    assert "Insufficient cpu" in attempt.message
    assert attempt.detail["pod"] == "default/q2" and attempt.uid == attempt.detail["uid"]
