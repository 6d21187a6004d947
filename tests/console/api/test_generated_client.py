"""A client generated from the committed OpenAPI schema calls every operation of the console API
and Koordinator's routes on the demo cluster; each response is checked against the schema (a body
that drifts from it fails here, as schemathesis checks it under fuzzing in tests/e2e)."""

from __future__ import annotations

import json
import pathlib
import threading
from typing import Any
from urllib.parse import urlencode

import pytest
import yaml

from schedconsole.engine import demo
from tests.console.conftest import pod, settle
from tests.support.openapi import GeneratedClient
from tests.support.waits import wait_for

SCHEMA = pathlib.Path(__file__).resolve().parents[3] / "schedconsole" / "api" / "schema.yaml"


@pytest.fixture
def client(start_engine, api) -> GeneratedClient:
    host = start_engine(demo.cluster_documents(), demo.config_document())
    settle(host)

    def transport(method: str, path: str, query: dict[str, Any], body: Any) -> tuple[int, str, Any]:
        url = f"{path}?{urlencode(query)}" if query else path
        if isinstance(body, str):
            response = api.generic(method, url, body, content_type="text/plain")
        else:
            response = getattr(api, method.lower())(url, body, format="json")
        content_type = response.get("Content-Type", "")
        data = json.loads(response.content) if "json" in content_type else response.content.decode()
        return response.status_code, content_type, data

    return GeneratedClient(yaml.safe_load(SCHEMA.read_text()), transport)


def test_every_operation_answers_as_the_schema_says(client) -> None:
    c = client
    assert c.nodes_list(query={"limit": 2})[1]["count"] == 48
    assert c.api_nodes_retrieve(name="node-00")[0] == 200
    assert c.pods_list(query={"namespace": "ml"})[0] == 200
    status, created = c.api_pods_create(body=pod("via-client", cpu="250m"))
    assert status == 201 and created["requests"]["cpu"] == 250
    wait_for(lambda: c.api_pods_retrieve(namespace="default", name="via-client")[1]["node"])
    _, attempts = c.api_pods_attempts_retrieve(namespace="default", name="via-client")
    assert c.api_attempts_retrieve(id=str(attempts["results"][0]["id"]))[1]["outcome"] == "Scheduled"
    assert c.api_queue_retrieve()[0] == 200
    assert c.api_import_create(body=[pod("imported")])[1] == {"created": {"Pod": 1}, "warnings": []}
    config = demo.config_document()
    assert c.api_profiles_validate_create(body={"document": config})[1]["valid"] is True
    assert c.api_profiles_create(body={"document": config, "comment": "same", "activate": False})[0] == 201
    assert c.profiles_list()[1]["count"] == 2
    assert c.api_profiles_retrieve(version="2")[1]["active"] is False
    assert c.api_profiles_activate_create(version="2")[1]["active"] is True
    assert c.api_plugin_args_retrieve()[0] == 200
    change = {"args": {"usageThresholds": {"cpu": 70}}, "profile": demo.KOORDINATOR}
    assert c.api_plugin_args_update(plugin="LoadAwareScheduling", query={"dry_run": "true"}, body=change)[1]["dryRun"] is True
    spec = pod("what", cpu="1")
    assert c.api_whatif_create(body={"pod": spec})[1]["outcome"] == "Scheduled"
    assert c.api_whatif_diff_create(body={"pod": spec, "original": pod("what", cpu="2")})[0] == 200
    two = {"pod": spec, "profiles": ["default-scheduler", demo.BIN_PACKING]}
    assert c.api_compare_create(body=two)[0] == 200 and c.api_compare_summary_create(body=two)[0] == 200
    assert c.api_debug_flags_update(body={"debugTopNScores": 4})[1]["debugTopNScores"] == 4
    assert c.api_debug_flags_retrieve()[0] == 200
    assert c.api_plugin_timing_update(body={"every": 10})[1] == {"every": 10}
    assert c.api_plugin_timing_retrieve()[0] == 200
    assert c.api_cluster_retrieve()[1]["mode"] == "simulated"
    assert "kind: List" in c.api_export_retrieve()[1]
    assert c.api_audit_retrieve()[1]["count"] > 0
    status, job = c.api_bench_create(body={"workload": "SchedulingBasic", "nodes": 2, "initPods": 0, "pods": 3})
    assert status == 202
    assert c.jobs_list()[1]["count"] == 1 and c.api_jobs_retrieve(id=str(job["id"]))[0] == 200
    assert c.api_pods_destroy(namespace="default", name="imported")[0] == 200
    status, replay = c.api_replays_create(body={"candidates": [{"document": "default"}], "samples": 2})
    assert status == 202 and c.api_replays_retrieve(id=str(replay["id"]))[0] == 200
    assert c.replays_list()[1]["count"] == 1
    assert c.api_jobs_cancel_create(id=str(replay["job"]))[0] in (200, 409)  # 409 once it has ended
    # The embedded replay runs on its own thread: let it end before the test's database is flushed
    # (it went on, found its rows gone, and logged to pytest's closed capture stream).
    for thread in [t for t in threading.enumerate() if t.name == f"replay-{replay['id']}"]:
        thread.join(60)
        assert not thread.is_alive()
    # Koordinator's routes.
    assert "GET" in c.apis_v1___services___retrieve()[1]
    assert c.apis_v1_nodes_retrieve(nodeName="node-00")[1]["allocatable"]["MilliCPU"] > 0
    gangs = c.apis_v1_plugins_Coscheduling_gangs_retrieve()[1]
    namespace, name = next(iter(gangs)).split("/")
    assert c.apis_v1_plugins_Coscheduling_gang_retrieve(namespace=namespace, name=name)[0] == 200
    assert c.apis_v1_plugins_LoadAwareScheduling_args_retrieve()[0] == 200
    assert c.apis_v1_plugins_LoadAwareScheduling_node_retrieve(nodeName="node-00")[0] == 200
    assert c.apis_v1_plugins_NodeNUMAResource_nodes_retrieve(nodeName="node-00")[0] == 404  # not in the demo's profiles
    assert c.apis_v1_plugins_Reservation_nodeReservations_retrieve(nodeName="node-00")[0] == 404
    assert c.apis_v1_plugins_Reservation_reservationSelectorIndex_retrieve()[0] == 404
    assert c.debug_flags_update(flag="s", body="5") == (200, "successfully set debugTopNScores to 5\n")
    assert c.debug_flags_retrieve(flag="s")[0] == 406
    assert c.debug_flags_create(flag="s", body="6") == (200, "successfully set debugTopNScores to 6\n")  # PUT (or POST)
    # Edits of the simulated cluster, the reset last (it empties it: the console tests run no demo).
    manifest = c.api_pods_retrieve(namespace="default", name="via-client")[1]["manifest"]
    manifest["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "300m"
    assert c.api_pods_update(namespace="default", name="via-client", body=manifest)[1]["requests"]["cpu"] == 300
    node = c.api_nodes_retrieve(name="node-47")[1]["nodeInfo"]["node"]
    node["metadata"]["labels"]["edited"] = "yes"
    assert c.api_nodes_update(name="node-47", body=node)[1]["labels"]["edited"] == "yes"
    assert c.api_nodes_destroy(name="node-47")[1]["node"]["metadata"]["name"] == "node-47"
    assert c.api_cluster_reset_create(body={"confirm": True})[1]["deleted"]["Node"] == 47
    missed = set(c.operations) - {name.split()[0] for name in c.checked}
    assert missed == set(), missed
