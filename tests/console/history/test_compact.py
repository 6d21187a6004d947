"""Filter failures kept compact: name ranges round-trip, groups rebuild the attempt record's `filter`, pages read them."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from schedconsole.history.compact import decode_names, describe_names, encode_names, expand_groups, group_failures
from schedconsole.history.models import Attempt
from tests.console.conftest import node, pod, settle
from tests.support.waits import wait_for


@pytest.mark.parametrize(
    ("names", "encoded"),
    [
        ([f"node-{i:05d}" for i in range(5000)], [["node-", 5, "0-4999"]]),
        (["node-00001", "node-00002", "node-00007", "web"], [["node-", 5, "1-2,7"], "web"][::-1]),
        (["n7", "n8", "n10"], [["n", 1, "7-8"], "n10"]),
        (["a"], ["a"]),
        ([], []),
    ],
    ids=["one-series", "gap-and-literal", "widths-differ", "literal", "none"],
)
def test_encode_names(names, encoded) -> None:
    got = encode_names(names)
    assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, encoded))
    assert sorted(decode_names(got)) == sorted(names)


@given(st.sets(st.from_regex(r"[a-z.-]{0,4}[0-9]{0,4}", fullmatch=True), max_size=60))
def test_names_round_trip(names) -> None:
    assert sorted(decode_names(encode_names(names))) == sorted(names)


def test_groups_keep_the_first_nodes_and_say_how_many_were_dropped() -> None:
    rows = [(f"node-{i:03d}", "NodeResourcesFit", "Unschedulable", ("Insufficient cpu",)) for i in range(10)]
    rows += [("gpu-1", "NodeAffinity", "UnschedulableAndUnresolvable", ("node(s) didn't match Pod's node affinity/selector",))]
    groups, dropped = group_failures(rows, 100)
    assert dropped == 0 and [g["count"] for g in groups] == [10, 1]
    assert expand_groups(groups)["node-004"] == {
        "plugin": "NodeResourcesFit",
        "code": "Unschedulable",
        "reasons": ["Insufficient cpu"],
    }
    assert len(expand_groups(groups)) == 11
    assert describe_names(groups[0]["nodes"]) == "node-000 … node-009"
    groups, dropped = group_failures(rows, 4)
    assert dropped == 7 and sorted(expand_groups(groups)) == ["node-000", "node-001", "node-002", "node-003"]


def test_an_unschedulable_attempt_is_stored_compact_and_read_back(start_engine, api, operator) -> None:
    nodes = [node(f"node-{i:03d}", cpu="2") for i in range(40)]
    host = start_engine(nodes)
    api.post("/api/pods/", pod("huge", cpu="3"), format="json")
    attempt = wait_for(lambda: Attempt.objects.filter(pod="default/huge").first())
    settle(host)
    attempt.refresh_from_db()
    assert "filter" not in attempt.detail
    (group,) = attempt.detail["filterGroups"]
    assert group["count"] == 40 and group["nodes"] == [["node-", 3, "0-39"]] and group["reasons"] == ["Insufficient cpu"]
    body = api.get(f"/api/attempts/{attempt.id}/").json()
    assert len(body["filter"]) == 40 and body["filter"]["node-017"]["plugin"] == "NodeResourcesFit"
    client = Client()
    client.force_login(operator)
    page = client.get(f"/attempts/{attempt.id}/").content.decode()
    assert "Insufficient cpu" in page and "node-000 … node-039" in page and "<td>40</td>" in page
