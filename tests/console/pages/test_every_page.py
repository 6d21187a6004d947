"""No page answers 500, and none shows a Python repr, for any pod or node of the demo cluster with
pods of other schedulers beside it; the API's unknown routes answer JSON."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from schedconsole.engine import demo
from schedconsole.engine import operations as ops
from schedconsole.engine.client import call
from schedconsole.history.models import Attempt
from tests.console.conftest import pod, settle

REPR = re.compile(r"[{\[]&#x27;|&#x27;: |>None<|=None\b|: None\b")
PAGES = [
    "/",
    "/overview/",
    "/pods/",
    "/nodes/",
    "/gangs/",
    "/preemption/",
    "/plugin-api/",
    "/profiles/",
    "/thresholds/",
    "/jobs/",
    "/cluster/",
    "/audit/",
]


@pytest.fixture
def demo_engine(start_engine):
    others = [
        pod("volcano-waits", schedulerName="volcano"),
        pod("yunikorn-bound", schedulerName="yunikorn", nodeName="node-00"),
    ]
    host = start_engine([*demo.cluster_documents(), *others], demo.config_document())
    settle(host)
    return host


def _get(client: Client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code)
    text = response.content.decode()
    body = text.split("<main", 1)[-1]
    found = REPR.search(re.sub(r"<(script|textarea)\b.*?</\1>", "", body, flags=re.S))
    assert found is None, (path, body[max(0, found.start() - 120) : found.end() + 60])
    return text


def test_every_page_pod_and_node_of_the_demo_answers(demo_engine, operator, api) -> None:
    change = {"args": {"usageThresholds": {"cpu": 70, "memory": 90}}, "profile": demo.KOORDINATOR}
    assert api.put("/api/plugin-args/LoadAwareScheduling/", change, format="json").status_code == 200
    client = Client()
    client.force_login(operator)
    assert "usageThresholds: cpu 70, memory 90" in _get(client, "/thresholds/")  # it was a dict's repr
    audit = _get(client, "/audit/?action=plugin-args.apply")  # there was no audit page, only the API
    assert "<td>plugin-args.apply</td>" in audit and "<td>LoadAwareScheduling</td>" in audit
    overview = _get(client, "/overview/")
    assert "Counters since the engine started" in overview and "% of allocatable requested" in overview
    for path in PAGES:
        _get(client, path)
    pods = call(ops.ListPods(limit=1000))["results"]
    assert len(pods) > 100
    for p in pods:
        _get(client, f"/pods/{p['namespace']}/{p['name']}/")
    for n in call(ops.ListNodes(limit=1000))["results"]:
        _get(client, f"/nodes/{n['name']}/")
    for pk in Attempt.objects.values_list("id", flat=True)[:50]:
        _get(client, f"/attempts/{pk}/")


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/api/no-such-route/",
            {"detail": "no route /api/no-such-route/; the routes are listed in /api/schema/ (browse them at /api/docs/)"},
        ),
        ("/apis/v2/nothing", {"message": "no route /apis/v2/nothing; GET /apis/v1/__services__ lists Koordinator's routes"}),
    ],
    ids=["api", "apis"],
)
def test_unknown_api_routes_answer_json(api, path, body) -> None:
    # They were Django's HTML 404 page.
    response = api.get(path)
    assert response.status_code == 404 and response["Content-Type"] == "application/json" and response.json() == body


def test_cpu_reads_the_same_in_the_api_and_on_pages(engine, api, operator) -> None:
    # /api/pods/ said "cpu": "500" (a string of millicores) beside nodes' numbers; pages said 0.5 beside 250m.
    api.post("/api/pods/", pod("half", cpu="500m", memory="1Gi"), format="json")
    settle(engine)
    requests = api.get("/api/pods/default/half/").json()["requests"]
    assert requests == {"cpu": 500, "memory": 1 << 30}
    assert isinstance(api.get("/api/nodes/node-a/").json()["allocatable"]["cpu"], int)
    client = Client()
    client.force_login(operator)
    page = client.get(f"/nodes/{api.get('/api/pods/default/half/').json()['node']}/").content.decode()
    assert "cpu=500m" in page and "cpu=0.5" not in page
