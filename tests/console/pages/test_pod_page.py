"""The pod page tells the truth: pods of other schedulers, pods that came bound, advice that was checked."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from schedconsole.engine import operations as ops
from schedconsole.engine.client import call
from tests.console.conftest import node, pod, settle
from tests.console.pages.test_dashboard import LOADAWARE, LOADED
from tests.support.waits import wait_for


def test_a_pod_of_another_scheduler_is_shown_with_its_owner(engine, api, operator) -> None:
    # It was a 500 (EngineCallError: unknown profile 'volcano'); such pods are normal in a real cluster.
    api.post("/api/pods/", pod("theirs", schedulerName="volcano"), format="json")
    api.post("/api/pods/", pod("theirs-bound", schedulerName="volcano", nodeName="node-b"), format="json")
    settle(engine)
    client = Client()
    client.force_login(operator)
    waiting = client.get("/pods/default/theirs/")
    assert waiting.status_code == 200
    text = waiting.content.decode()
    assert "Another scheduler's pod" in text and "<b>volcano</b>" in text and "It waits for that scheduler" in text
    assert "the pod's own" not in text  # the what-if offers our profiles only
    bound = client.get("/pods/default/theirs-bound/").content.decode()
    assert "That scheduler bound it to" in bound and 'href="/nodes/node-b/"' in bound
    assert "this scheduler never tried to place it" in bound
    for path in ("/nodes/node-b/", "/pods/", "/overview/", "/api/pods/default/theirs/attempts/"):
        assert client.get(path).status_code == 200, path


def test_a_pod_that_came_bound_does_not_point_at_attempts_it_has_not_got(engine, api, operator) -> None:
    api.post("/api/pods/", pod("seeded", nodeName="node-a"), format="json")
    api.post("/api/pods/", pod("placed"), format="json")
    wait_for(lambda: api.get("/api/pods/default/placed/").json()["node"])
    settle(engine)
    client = Client()
    client.force_login(operator)
    seeded = client.get("/pods/default/seeded/").content.decode()
    assert "it came bound" in seeded and "Its attempts below" not in seeded and "No attempt stored yet" not in seeded
    placed = client.get("/pods/default/placed/").content.decode()
    assert "Its attempts below" in placed and "attempt 1" in placed
    node = api.get("/api/pods/default/placed/").json()["node"]
    assert f"kube-scheduler-simulator.sigs.k8s.io/selected-node: {node}" in placed
    assert "kube-scheduler-simulator.sigs.k8s.io/finalscore-result: &#x27;{&quot;node-" in placed
    assert 'id="simulator"' not in seeded


def _simulator_yaml(html_text: str) -> dict:
    import html

    import yaml

    section = html_text.split('<details id="simulator">', 1)[1]
    block = section.split('<pre class="json">', 1)[1].split("</pre>", 1)[0]
    return yaml.safe_load(html.unescape(block))["metadata"]["annotations"]


def test_a_pod_without_written_results_shows_per_plugin_weighted_scores(engine, api, operator) -> None:
    # As on a live cluster (nothing written on the pod): finalscore-result held each node's total,
    # where kube-scheduler-simulator's resultstore keeps node -> plugin -> normalized score x weight.
    engine.engine.annotate_results = False
    api.post("/api/pods/", pod("unwritten", cpu="500m"), format="json")
    node = wait_for(lambda: api.get("/api/pods/default/unwritten/").json()["node"])
    settle(engine)
    client = Client()
    client.force_login(operator)
    text = client.get("/pods/default/unwritten/").content.decode()
    assert "As the attempt wrote them" not in text
    notes = _simulator_yaml(text)
    key = "kube-scheduler-simulator.sigs.k8s.io/"
    assert notes[key + "selected-node"] == node
    attempt_id = api.get("/api/pods/default/unwritten/attempts/").json()["results"][0]["id"]
    attempt = api.get(f"/api/attempts/{attempt_id}/").json()
    scores, final = json.loads(notes[key + "score-result"]), json.loads(notes[key + "finalscore-result"])
    assert set(final) == set(attempt["totals"]) == {"node-a", "node-b", "node-c"}
    for n, per in final.items():
        assert set(per) == set(scores[n]) and all(isinstance(v, str) for v in per.values())
        assert sum(int(v) for v in per.values()) == attempt["totals"][n]  # the parts of the total
        assert int(per["TaintToleration"]) == 3 * int(scores[n]["TaintToleration"])  # its weight is 3
        assert per["NodeResourcesFit"] == scores[n]["NodeResourcesFit"]  # weight 1
    assert any(int(per["TaintToleration"]) for per in final.values())
    filters = json.loads(notes[key + "filter-result"])
    assert set(filters[node].values()) == {"passed"} and {"NodeResourcesFit", "TaintToleration"} <= set(filters[node])
    # A node that failed a filter: the plugins before the failing one passed (it read only the
    # failing plugin, and a passing node "(every filter)": passed).
    api.post("/api/pods/", pod("unwritten-big", cpu="3"), format="json")
    wait_for(lambda: api.get("/api/pods/default/unwritten-big/").json()["node"])
    settle(engine)
    big = json.loads(_simulator_yaml(client.get("/pods/default/unwritten-big/").content.decode())[key + "filter-result"])
    assert big["node-c"]["NodeResourcesFit"].startswith("Insufficient cpu") and big["node-c"]["NodeUnschedulable"] == "passed"
    assert "(every filter)" not in json.dumps(big)
    # An attempt stored before the weights were kept: no finalscore-result rather than a wrong one.
    from schedconsole.history.models import Attempt

    row = Attempt.objects.get(pk=attempt_id)
    del row.detail["scoreTable"]["weights"]
    row.save(update_fields=["detail"])
    older = _simulator_yaml(client.get("/pods/default/unwritten/").content.decode())
    assert key + "finalscore-result" not in older and key + "score-result" in older


@pytest.fixture
def loaded(start_engine):
    """An engine over LOADED with LoadAwareScheduling in the default profile."""
    host = start_engine(LOADED, LOADAWARE)
    settle(host)
    return host


def _create(host, *docs) -> None:
    host.call(ops.Create(documents=list(docs), source="test"))
    settle(host)


def test_advice_its_check_refutes_says_so_and_advises_on_what_remains(loaded, operator) -> None:
    # 4100m fits no node; asking 4 CPU would give node-c room, but LoadAware (85% of 4 CPU estimated,
    # 65% allowed) still rejects it there. It read as a green fix; now it says it is not enough.
    _create(loaded, pod("over", cpu="4100m"))
    why = call(ops.Explain(namespace="default", name="over"))
    (fit,) = why["groups"][0]["advice"]
    assert why["groups"][0]["plugin"] == "NodeResourcesFit" and fit["enough"] is False
    assert fit["text"] == (
        "asks for 4100m CPU, 100m more than the most any node has free: if it asked for 4 CPU instead, 1 node would have "
        "room for it, but that alone would not be enough: checked, the cycle still rejects it (LoadAwareScheduling on 1 node)"
    )
    assert fit["then"] == [
        {
            "text": "1 node rejected by LoadAwareScheduling: 1 would pass if the profile's cpu usage threshold were 85% instead of 65% (checked: the cycle would place it on node-c)",
            "enough": True,
            "then": [],
        }
    ]
    client = Client()
    client.force_login(operator)
    page = client.get("/pods/default/over/").content.decode()
    assert '<div class="advice not-enough">' in page and '<li class="advice enough">' in page


@pytest.mark.parametrize(
    ("spec", "plugin", "words"),
    [
        ({"nodeSelector": {"disk": "ssd"}}, "NodeAffinity", "3 nodes do not match its nodeSelector disk=ssd"),
        ({}, "TaintToleration", "carry the taint dedicated=gpu:NoSchedule, which it does not tolerate"),
    ],
    ids=["affinity", "taint"],
)
def test_blockers_without_a_resource_fix_get_advice(start_engine, spec, plugin, words) -> None:
    tainted = [node(f"node-{i}", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]) for i in "ab"]
    cluster = [*tainted, node("node-c")] if plugin == "TaintToleration" else [node("node-a"), node("node-b"), node("node-c")]
    host = start_engine(cluster)
    blocked = pod("blocked", cpu="3", **spec)
    if plugin == "TaintToleration":
        _create(host, pod("filler", cpu="3", nodeName="node-c"))
    _create(host, blocked)
    why = call(ops.Explain(namespace="default", name="blocked"))
    group = next(g for g in why["groups"] if g["plugin"] == plugin)
    assert any(words in a["text"] for a in group["advice"]), group["advice"]


def test_attempt_numbers_go_on_across_profile_versions_and_attempts_link_their_pod(engine, api, operator) -> None:
    from schedconsole.history.models import Attempt
    from tests.console.conftest import TWO_PROFILES

    api.post("/api/pods/", pod("huge", cpu="64"), format="json")
    wait_for(lambda: Attempt.objects.filter(pod="default/huge").exists())
    settle(engine)
    before = max(Attempt.objects.filter(pod="default/huge").values_list("attempt", flat=True))
    assert api.post("/api/profiles/", {"document": TWO_PROFILES, "comment": "again"}, format="json").status_code == 201
    wait_for(lambda: Attempt.objects.filter(pod="default/huge").count() > before)
    settle(engine)
    numbers = list(Attempt.objects.filter(pod="default/huge").order_by("id").values_list("attempt", flat=True))
    assert numbers == list(range(1, len(numbers) + 1)), numbers  # they restarted at 1
    client = Client()
    client.force_login(operator)
    last = Attempt.objects.filter(pod="default/huge").order_by("-id").first()
    page = client.get(f"/attempts/{last.id}/").content.decode()
    assert 'href="/pods/default/huge/"' in page


@pytest.mark.slow
def test_no_page_of_any_pod_or_node_of_the_demo_answers_500_with_pods_of_other_schedulers(start_engine, operator) -> None:
    from schedconsole.engine import demo

    host = start_engine(demo.cluster_documents(), demo.config_document())
    others = [
        pod("volcano-waits", schedulerName="volcano"),
        pod("yunikorn-bound", schedulerName="yunikorn", nodeName="node-03"),
        pod("no-name-bound", schedulerName="", nodeName="node-04"),
    ]
    _create(host, *others)
    client = Client()
    client.force_login(operator)
    pods = call(ops.ListPods(limit=None))["results"]
    nodes = call(ops.ListNodes(limit=None))["results"]
    assert len(nodes) == 48 and {"volcano-waits", "yunikorn-bound"} <= {p["name"] for p in pods}
    paths = [f"/pods/{p['namespace']}/{p['name']}/" for p in pods] + [f"/nodes/{n['name']}/" for n in nodes]
    failed = {}
    for path in paths:
        status = client.get(path).status_code
        if status != 200:
            failed[path] = status
    assert failed == {}, failed
