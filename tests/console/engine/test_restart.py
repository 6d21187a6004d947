"""Nothing is lost across a restart: bindings are acknowledged only once stored, pods assumed but
not bound are scheduled again and bound once, and the attempt history survives."""

from __future__ import annotations

import sqlite3

import pytest
from django.conf import settings as django_settings
from django.db import connection

from schedconsole.cluster.models import Binding, ClusterObject
from schedconsole.engine import operations as ops
from schedconsole.history.models import Attempt
from tests.console.conftest import SMALL_CLUSTER, TWO_PROFILES, pod, settle, wait_idle
from tests.support.waits import wait_for


def test_restart_reschedules_assumed_pods_and_keeps_history(start_engine) -> None:
    pods = [pod(f"r{i}", cpu="200m") for i in range(6)]
    host = start_engine(SMALL_CLUSTER + pods, TWO_PROFILES, run=False)
    scheduler = host.engine.scheduler
    # Six scheduling cycles and no binding cycle: every pod is assumed, none is bound.
    for _ in range(6):
        assert scheduler.schedule_one() is not None
    assert len(scheduler.tasks) == 6
    host.stop()  # the process dies: binding cycles that had not begun are lost
    assert Binding.objects.count() == 0
    assert Attempt.objects.count() == 6
    assert len(Attempt.objects.get(pod="default/r0").detail["scoreTable"]["rows"]) == 3

    host = start_engine()
    wait_for(lambda: Binding.objects.count() == 6)
    settle(host)
    assert sorted(Binding.objects.values_list("pod", flat=True)) == sorted(f"default/r{i}" for i in range(6))
    stored = {o.name: o.node_name for o in ClusterObject.objects.filter(kind="Pod")}
    assert all(stored.values()), stored
    attempts = list(Attempt.objects.order_by("id").values_list("pod", "attempt", "outcome"))
    assert len(attempts) == 12
    assert attempts[:6] == [(f"default/r{i}", 1, "Scheduled") for i in range(6)]

    # A third start finds every pod bound and schedules nothing again.
    host.stop(run_pending=True)
    host = start_engine()
    settle(host)
    assert Binding.objects.count() == 6
    assert Attempt.objects.count() == 12
    assert host.call(ops.GetQueue())["counts"] == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}


@pytest.mark.skipif(not django_settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"), reason="holds an SQLite write lock")
def test_binding_is_acknowledged_only_once_stored(start_engine, api) -> None:
    host = start_engine(SMALL_CLUSTER, TWO_PROFILES)
    db = connection.settings_dict["NAME"]
    blocker = sqlite3.connect(db, timeout=5)
    blocker.execute("BEGIN IMMEDIATE")  # the store cannot commit until this ends
    try:
        created = host.submit(ops.Create(documents=[pod("held")], source="test"))
        wait_for(lambda: host.engine.scheduler.attempt_count >= 1)
        wait_idle(host)  # its binding cycle has run; the store stays blocked
        detail = host.call(ops.GetPod(namespace="default", name="held"))
        assert detail["node"] is None and detail["phase"] == "Pending"
        # The creation itself is answered only once the pod is stored.
        assert not created.done()
    finally:
        blocker.rollback()
        blocker.close()
    assert created.result(10)["created"] == {"Pod": 1}
    wait_for(lambda: host.call(ops.GetPod(namespace="default", name="held"))["node"])
    settle(host)
    assert Binding.objects.filter(pod="default/held").count() == 1
