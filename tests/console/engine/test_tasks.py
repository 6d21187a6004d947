"""The Celery tasks: control requests answered by the engine, errors as data; history pruning."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from schedconsole.engine.tasks import control, prune_history
from schedconsole.history.models import Attempt
from tests.console.conftest import pod, settle
from tests.support.waits import wait_for


def test_control_answers_and_refuses_as_data(engine) -> None:
    assert control.apply(args=("ping",)).get()["ok"]["pong"] is True
    answer = control.apply(args=("node", {"name": "nope"})).get()
    assert answer == {"error": {"status": 404, "message": "cannot find node nope"}}
    answer = control.apply(args=("whatif", {"pod": {"kind": "Node"}})).get()
    assert answer["error"]["status"] == 400 and answer["error"]["field"] == "pod.kind"


def test_control_without_engine_is_503(transactional_db) -> None:
    from schedconsole.engine import host

    host._host = None
    assert control.apply(args=("ping",)).get()["error"]["status"] == 503


def test_prune_keeps_the_newest(engine, api, settings) -> None:
    for i in range(4):
        api.post("/api/pods/", pod(f"p{i}"), format="json")
    wait_for(lambda: all(api.get(f"/api/pods/default/p{i}/").json()["node"] for i in range(4)))
    settle(engine)
    assert Attempt.objects.count() == 4
    Attempt.objects.filter(pod="default/p0").update(at=timezone.now() - timedelta(days=30))
    settings.HISTORY_RETENTION_DAYS = 7
    settings.HISTORY_MAX_ATTEMPTS = 2
    assert prune_history.apply().get() == 2
    assert sorted(Attempt.objects.values_list("pod", flat=True)) == ["default/p2", "default/p3"]
