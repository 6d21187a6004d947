"""The gangs page: Koordinator's Coscheduling gangs and kube-scheduler's Workload gangs (GangScheduling) side by side."""

from __future__ import annotations

from typing import Any

from django.test import Client

from schedconsole.engine import operations as ops
from schedconsole.engine.client import call
from tests.console.conftest import node, pod, settle

BOTH = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}, {"name": "GangScheduling"}]}},
        }
    ],
}


def workload(name: str, min_count: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": min_count}}}]},
    }


def member(name: str, workload_name: str) -> dict[str, Any]:
    return pod(name, workloadRef={"name": workload_name, "podGroup": "workers"})


def koord_member(name: str) -> dict[str, Any]:
    doc = pod(name)
    doc["metadata"]["annotations"] = {
        "gang.scheduling.koordinator.sh/name": "koord",
        "gang.scheduling.koordinator.sh/min-available": "2",
    }
    return doc


def test_the_gangs_page_shows_workload_gangs_beside_coscheduling_gangs(start_engine, operator) -> None:
    docs = [node("node-a"), workload("train", 2), workload("big", 3)]
    docs += [member("train-0", "train"), member("train-1", "train"), member("big-0", "big")]
    docs += [koord_member("k-0"), koord_member("k-1")]
    settle(start_engine(docs, BOTH))
    gangs = {g["name"]: g for g in call(ops.GetGangs())["gangs"]}
    assert gangs["default/train/workers"]["source"] == "GangScheduling"
    assert gangs["default/train/workers"]["states"] == {"bound": 2}
    # One pod of a gang of three: PreEnqueue holds it, it is never attempted.
    big = gangs["default/big/workers"]
    assert big["summary"]["minCount"] == 3 and big["states"] == {"pending": 1}
    assert gangs["default/koord"]["source"] == "Coscheduling"
    client = Client()
    client.force_login(operator)
    page = client.get("/gangs/").content.decode()
    assert "Workload gang (GangScheduling) · min 3 of 1" in page
    assert "Coscheduling " in page and "default/koord" in page
