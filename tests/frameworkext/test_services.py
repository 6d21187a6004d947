"""The route table: matching, params, 404/405/503, `__services__`, and the NodeInfo service.

Expected shapes follow koordinator-sh/koordinator pkg/scheduler/frameworkext/services
(services.go, types.go, services_test.go) and the Enhanced Scheduler Extension proposal.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from scheduler.frameworkext.extender import Extender
from scheduler.frameworkext.services import Request, RouteGroup, ServiceTable
from tests.support.builders import make_node, make_pod
from tests.support.engines import base_registry, config, engine, profile


def echo(tag: str) -> Any:
    def handler(request: Request) -> tuple[int, Any]:
        return 200, {"route": tag, "params": dict(request.params)}

    return handler


def table() -> ServiceTable:
    t = ServiceTable()
    t.add("GET", "/apis/v1/plugins/Coscheduling/gangs", echo("gangs"))
    t.add("GET", "/apis/v1/plugins/Coscheduling/gang/:namespace/:name", echo("gang"))
    t.add("GET", "/apis/v1/plugins/NodeNUMAResource/availableCPUs/:nodeName", echo("cpus"))
    t.add("PUT", "/apis/v1/plugins/X/items/:id", echo("put-item"))
    t.add("GET", "/apis/v1/plugins/X/items/:id", echo("get-item"))
    t.add("GET", "/apis/v1/plugins/X/items/special", echo("special"))
    t.add("GET", "/apis/v1/plugins/X/files/*path", echo("files"))
    return t


# (method, path) -> (status, route tag or None, params)
MATCH_CASES = [
    ("GET", "/apis/v1/plugins/Coscheduling/gangs", 200, "gangs", {}),
    ("GET", "/apis/v1/plugins/Coscheduling/gang/default/pg-1", 200, "gang", {"namespace": "default", "name": "pg-1"}),
    ("GET", "/apis/v1/plugins/NodeNUMAResource/availableCPUs/node-a", 200, "cpus", {"nodeName": "node-a"}),
    ("GET", "/apis/v1/plugins/NodeNUMAResource/availableCPUs/node-a/", 200, "cpus", {"nodeName": "node-a"}),
    ("GET", "/apis/v1/plugins/NodeNUMAResource/availableCPUs/a%2Eb", 200, "cpus", {"nodeName": "a.b"}),
    ("get", "/apis/v1/plugins/X/items/7", 200, "get-item", {"id": "7"}),
    ("PUT", "/apis/v1/plugins/X/items/7", 200, "put-item", {"id": "7"}),
    ("GET", "/apis/v1/plugins/X/items/special", 200, "special", {}),
    ("GET", "/apis/v1/plugins/X/files/a/b/c.txt", 200, "files", {"path": "/a/b/c.txt"}),
    ("GET", "/apis/v1/plugins/Coscheduling/gang/default", 404, None, {}),
    ("GET", "/apis/v1/plugins/Coscheduling/gang/default/pg-1/extra", 404, None, {}),
    ("GET", "/apis/v1/plugins/Unknown/x", 404, None, {}),
    ("GET", "/nowhere", 404, None, {}),
    ("POST", "/apis/v1/plugins/Coscheduling/gangs", 405, None, {}),
    ("DELETE", "/apis/v1/plugins/X/items/7", 405, None, {}),
]


@pytest.mark.parametrize(("method", "path", "status", "tag", "params"), MATCH_CASES, ids=[f"{c[0]} {c[1]}" for c in MATCH_CASES])
def test_dispatch_matches_routes_and_binds_params(
    method: str, path: str, status: int, tag: str | None, params: dict[str, str]
) -> None:
    response = table().dispatch(method, path)
    assert response.status == status
    if tag is not None:
        assert response.body == {"route": tag, "params": params}
    elif status == 404:
        assert response.body == {"message": "404 page not found"}
    else:
        assert response.body == {"message": "405 method not allowed"}


def test_405_names_the_allowed_methods() -> None:
    response = table().dispatch("DELETE", "/apis/v1/plugins/X/items/7")
    assert response.headers["Allow"] == "GET, PUT"


def test_a_non_leader_answers_503_under_apis_v1_only() -> None:
    leader = [False]
    t = ServiceTable(is_leader=lambda: leader[0])
    t.add("GET", "/apis/v1/nodes/:nodeName", echo("node"))
    t.add("PUT", "/debug/flags/s", echo("flag"))
    for path in ("/apis/v1/nodes/a", "/apis/v1/unknown", "/apis/v1"):
        response = t.dispatch("GET", path)
        assert (response.status, response.body) == (503, {"message": "the instance is not leader"})
        assert response.content() == b'{"message": "the instance is not leader"}'
    assert t.dispatch("PUT", "/debug/flags/s").status == 200
    leader[0] = True
    assert t.dispatch("GET", "/apis/v1/nodes/a").status == 200


def test_services_listing_is_methods_to_sorted_paths() -> None:
    # The proposal's example reply of GET /apis/v1/__services__.
    ext = Extender()
    group = ext.services.group("/apis/v1/plugins")
    group.group("NodeNUMAResource").get("/cpuTopologyOptions/:nodeName", echo("a"))
    group.group("Coscheduling").get("/gangs", echo("b"))
    group.group("NodeNUMAResource").get("/availableCPUs/:nodeName", echo("c"))
    group.group("Coscheduling").get("/gang/:namespace/:name", echo("d"))
    response = ext.dispatch("GET", "/apis/v1/__services__")
    assert response.status == 200
    assert response.body == {
        "GET": [
            "/apis/v1/__services__",
            "/apis/v1/nodes/:nodeName",
            "/apis/v1/plugins/Coscheduling/gang/:namespace/:name",
            "/apis/v1/plugins/Coscheduling/gangs",
            "/apis/v1/plugins/NodeNUMAResource/availableCPUs/:nodeName",
            "/apis/v1/plugins/NodeNUMAResource/cpuTopologyOptions/:nodeName",
        ]
    }


def test_listing_groups_by_method_and_skips_unlisted_routes() -> None:
    t = ServiceTable()
    t.add("PUT", "/apis/v1/plugins/X/b", echo("b"))
    t.add("GET", "/apis/v1/plugins/X/a", echo("a"))
    t.add("PUT", "/apis/v1/plugins/X/a", echo("a"))
    t.add("*", "/debug/flags/s", echo("s"), listed=False)
    assert t.listing() == {"GET": ["/apis/v1/plugins/X/a"], "PUT": ["/apis/v1/plugins/X/a", "/apis/v1/plugins/X/b"]}


@pytest.mark.parametrize(
    ("first", "second"),
    [("/a/:x", "/a/:y"), ("/a/b", "/a/b/"), ("/a/*rest", "/a/*other")],
    ids=["same-shape-params", "trailing-slash", "catch-all"],
)
def test_a_route_of_the_same_shape_twice_is_refused(first: str, second: str) -> None:
    t = ServiceTable()
    t.add("GET", first, echo("1"))
    with pytest.raises(ValueError, match="conflicts"):
        t.add("GET", second, echo("2"))


def test_a_catch_all_must_end_the_pattern() -> None:
    with pytest.raises(ValueError, match="must be the last"):
        ServiceTable().add("GET", "/a/*rest/b", echo("x"))


def test_a_failing_handler_is_a_500_for_that_request() -> None:
    t = ServiceTable()

    def boom(request: Request) -> tuple[int, Any]:
        raise KeyError("gone")

    t.add("GET", "/apis/v1/boom", boom)
    t.add("GET", "/apis/v1/bad", lambda r: "not a tuple")  # type: ignore[arg-type, return-value]
    assert t.dispatch("GET", "/apis/v1/boom").status == 500
    assert t.dispatch("GET", "/apis/v1/boom").body == {"message": "internal error: 'gone'"}
    assert t.dispatch("GET", "/apis/v1/bad").status == 500


def test_handlers_run_under_the_engine_lock() -> None:
    lock = threading.RLock()
    seen: list[bool] = []
    t = ServiceTable(lock=lock)

    def handler(request: Request) -> tuple[int, Any]:
        # RLock has no public "held" test; a second thread must fail to take it.
        got: list[bool] = []
        th = threading.Thread(target=lambda: got.append(lock.acquire(blocking=False)))
        th.start()
        th.join()
        seen.append(got == [False])
        return 200, {}

    t.add("GET", "/apis/v1/x", handler)
    assert t.dispatch("GET", "/apis/v1/x").status == 200
    assert seen == [True]


class Provider:
    """Registers two routes on its group."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    def register_endpoints(self, group: RouteGroup) -> None:
        self.calls += 1
        group.get("/test", lambda r: (200, {"test": "ok"}))
        group.group("/sub").get("/:id", lambda r: (200, {"id": r.params["id"]}))


REGISTRATION_CASES = [
    # (plugin names, profiles, mounted now?) as services_test.go TestEngine_RegisterPluginService
    (["test-plugin-1"], ["default-scheduler"], [True]),
    (["test-plugin-1", "test-plugin-1"], ["default-scheduler", "secondary-scheduler"], [True, False]),
    (["test-plugin-1", "test-plugin-2"], ["default-scheduler", "default-scheduler"], [True, True]),
]


@pytest.mark.parametrize(("names", "profiles", "mounted"), REGISTRATION_CASES, ids=["single", "duplicate-skipped", "two-plugins"])
def test_plugin_services_are_mounted_once_per_name(names: list[str], profiles: list[str], mounted: list[bool]) -> None:
    t = ServiceTable()
    plugins = [Provider(n) for n in names]
    got = [t.register_plugin_service(p, prof) for p, prof in zip(plugins, profiles, strict=True)]
    assert got == mounted
    assert [p.calls for p in plugins] == [1 if m else 0 for m in mounted]
    assert sorted(t.registered_providers) == sorted(set(names))
    assert t.dispatch("GET", f"/apis/v1/plugins/{names[0]}/test").body == {"test": "ok"}
    assert t.dispatch("GET", f"/apis/v1/plugins/{names[0]}/sub/42").body == {"id": "42"}


def test_a_plugin_that_is_not_a_provider_is_ignored() -> None:
    t = ServiceTable()

    class Plain:
        name = "non-service-plugin"

    assert t.register_plugin_service(Plain(), "default-scheduler") is False
    assert t.registered_providers == {}


def test_a_provider_failing_half_way_leaves_no_routes() -> None:
    t = ServiceTable()

    class Broken:
        name = "Broken"

        def register_endpoints(self, group: RouteGroup) -> None:
            group.get("/one", lambda r: (200, {}))
            raise RuntimeError("cannot")

    with pytest.raises(RuntimeError):
        t.register_plugin_service(Broken(), "p")
    assert t.routes() == []
    assert "Broken" not in t.registered_providers


# ----- GET /apis/v1/nodes/:nodeName ---------------------------------------------------------------
def node_engine() -> Any:
    nodes = [
        make_node("n0", cpu="4", memory="8Gi", pods=10, extra={"example.com/gpu": 2}, images=[(["img:1", "img@sha"], 1000)]),
        make_node("n1", images=[(["img:1"], 1000)]),
    ]
    ported = make_pod(
        "web",
        node_name="n0",
        containers=[
            {
                "name": "c",
                "image": "img:1",
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi", "example.com/gpu": "1"}},
                "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
            }
        ],
    )
    return engine(config(profile()), base_registry(), nodes=nodes, pods=[ported])


def test_node_info_service_returns_live_node_info() -> None:
    eng = node_engine()
    response = eng.extender.dispatch("GET", "/apis/v1/nodes/n0")
    assert response.status == 200
    body = response.body
    assert body["node"]["metadata"]["name"] == "n0"
    assert [p["Pod"]["metadata"]["name"] for p in body["pods"]] == ["web"]
    assert body["pods"][0]["Pod"]["spec"]["nodeName"] == "n0"
    assert body["requested"] == {
        "MilliCPU": 500,
        "Memory": 1 << 30,
        "EphemeralStorage": 0,
        "AllowedPodNumber": 0,
        "ScalarResources": {"example.com/gpu": 1},
    }
    assert body["allocatable"] == {
        "MilliCPU": 4000,
        "Memory": 8 << 30,
        "EphemeralStorage": 0,
        "AllowedPodNumber": 10,
        "ScalarResources": {"example.com/gpu": 2},
    }
    assert body["remaining"] == {
        "MilliCPU": 3500,
        "Memory": 7 << 30,
        "EphemeralStorage": 0,
        "AllowedPodNumber": 10,
        "ScalarResources": {"example.com/gpu": 1},
    }
    assert body["nonZeroRequested"]["MilliCPU"] == 500
    assert body["usedPorts"] == {"0.0.0.0": [{"Protocol": "TCP", "Port": 8080}]}
    assert body["imageStates"] == {"img:1": {"Size": 1000, "NumNodes": 2}, "img@sha": {"Size": 1000, "NumNodes": 1}}
    assert body["generation"] >= 1
    # It is JSON as served.
    assert response.content_type == "application/json"
    assert b'"MilliCPU": 500' in response.content()


def test_node_info_service_reads_live_state_not_a_copy() -> None:
    eng = node_engine()
    eng.cluster.add_pod(make_pod("late", cpu="1"))
    eng.scheduler.run()
    bodies = [eng.extender.dispatch("GET", f"/apis/v1/nodes/{n}").body for n in ("n0", "n1")]
    assert sum(len(b["pods"]) for b in bodies) == 2


def test_node_info_service_404_names_the_node() -> None:
    eng = node_engine()
    response = eng.extender.dispatch("GET", "/apis/v1/nodes/missing")
    assert (response.status, response.body) == (404, {"message": "cannot find node missing"})


def test_node_info_service_before_the_engine_is_bound_is_503() -> None:
    response = Extender().dispatch("GET", "/apis/v1/nodes/n0")
    assert response.status == 503
    assert response.body == {"message": "The component is initializing and temporarily unavailable"}


def test_non_leader_extender_refuses_the_node_service() -> None:
    eng = node_engine()
    eng.extender.leadership.release()
    assert eng.extender.dispatch("GET", "/apis/v1/nodes/n0").body == {"message": "the instance is not leader"}
