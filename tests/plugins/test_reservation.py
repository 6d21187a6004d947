"""Reservation: owner matching (koordinator-sh/koordinator `pkg/util/reservation/reservation_test.go`
TestMatchReservationOwners), allocation and lifecycle (`pkg/scheduler/plugins/reservation/plugin_test.go`
cases for owners, intruders, allocateOnce and Restricted), run through the engine."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from scheduler.api.loader import LoadError, load_cluster
from scheduler.api.objects import parse_pod
from scheduler.api.reservation import parse_reservation
from scheduler.config.args import ReservationArgs
from scheduler.plugins.reservation.plugin import ReservationInfo
from tests.plugins.koord import config, engine, node, node_of, pod, reservation

CFG = config("Reservation")

OWNERS = [
    ("label selector matches", [{"labelSelector": {"matchLabels": {"app": "web"}}}], pod("p", labels={"app": "web"}), True),
    ("label selector misses", [{"labelSelector": {"matchLabels": {"app": "web"}}}], pod("p", labels={"app": "db"}), False),
    ("object by name and namespace", [{"object": {"name": "p", "namespace": "default"}}], pod("p"), True),
    ("object in another namespace", [{"object": {"name": "p", "namespace": "other"}}], pod("p"), False),
    (
        "controller by kind and name",
        [{"controller": {"kind": "ReplicaSet", "name": "rs", "controller": True}}],
        pod(
            "p", owner_references=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}]
        ),
        True,
    ),
    (
        "controller flag must match",
        [{"controller": {"kind": "ReplicaSet", "name": "rs", "controller": True}}],
        pod("p", owner_references=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u"}]),
        False,
    ),
    (
        "fields inside one owner are AND-ed",
        [{"object": {"name": "p"}, "labelSelector": {"matchLabels": {"app": "web"}}}],
        pod("p", labels={"app": "db"}),
        False,
    ),
    (
        "owners are OR-ed",
        [{"object": {"name": "q"}}, {"labelSelector": {"matchLabels": {"app": "db"}}}],
        pod("p", labels={"app": "db"}),
        True,
    ),
]


@pytest.mark.parametrize(("owners", "candidate", "want"), [c[1:] for c in OWNERS], ids=[c[0] for c in OWNERS])
def test_owner_matching(owners: list[dict[str, Any]], candidate: dict[str, Any], want: bool) -> None:
    r = parse_reservation(reservation("r", owners=owners))
    assert r.matches_owner(parse_pod(candidate)) is want


INDEX_EXTRA = [
    (
        "expression In",
        [{"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "web"]}]}}],
        pod("p", labels={"app": "web"}),
        True,
    ),
    (
        "expression Exists",
        [{"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}],
        pod("p", labels={"app": "x"}),
        True,
    ),
    (
        "expression NotIn only (unkeyed)",
        [{"labelSelector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]}}],
        pod("p"),
        True,
    ),
    ("object by uid", [{"object": {"uid": "uid-default-p"}}], pod("p"), True),
    (
        "controller by uid",
        [{"controller": {"uid": "u"}}],
        pod("p", owner_references=[{"apiVersion": "v1", "kind": "Job", "name": "j", "uid": "u"}]),
        True,
    ),
]


@pytest.mark.parametrize(
    ("owners", "candidate", "want"), [c[1:] for c in OWNERS + INDEX_EXTRA], ids=[c[0] for c in OWNERS + INDEX_EXTRA]
)
def test_owner_index_never_misses_a_match(owners: list[dict[str, Any]], candidate: dict[str, Any], want: bool) -> None:
    from scheduler.plugins.reservation.plugin import OwnerIndex, ReservationInfo

    r = parse_reservation(reservation("r", owners=owners))
    other = parse_reservation(reservation("other", owners=[{"labelSelector": {"matchLabels": {"team": "x"}}}]))
    index = OwnerIndex()
    index.add(other)
    index.add(r)
    infos = {x.uid: ReservationInfo(x, x.phase, "", x.requests) for x in (other, r)}
    p = parse_pod(candidate)
    found = [i.reservation.name for i in index.candidates(p, infos)]
    assert r.matches_owner(p) is want
    if want:
        assert "r" in found
    assert "other" not in found


BAD = [
    ("no template", {"template": None}, "spec.template: the reservation misses the template spec"),
    ("no owners", {"owners": []}, "spec.owners: the reservation misses the owner spec"),
    ("bad ttl", {"ttl": "soon"}, "spec.ttl: invalid duration 'soon'"),
    ("ttl and expires", {"ttl": "1h", "expires": "2026-01-02T00:00:00Z"}, "spec.expires: expires and ttl are mutually exclusive"),
    ("bad policy", {"allocatePolicy": "Greedy"}, "spec.allocatePolicy: unsupported value 'Greedy'"),
]


@pytest.mark.parametrize(("spec", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_reservations_are_refused_at_load(tmp_path: pathlib.Path, spec: dict[str, Any], message: str) -> None:
    import yaml

    doc = reservation("r")
    doc["spec"].update(spec)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all([node("n1"), doc]))
    with pytest.raises(LoadError) as err:
        load_cluster([str(path)])
    assert "document 2 (Reservation r)" in str(err.value)
    assert message in str(err.value)


def test_defaults() -> None:
    r = parse_reservation(reservation("r"))
    assert (r.ttl_seconds, r.allocate_once, r.allocate_policy, r.reserve_pod.priority) == (86400.0, True, "", 2**31 - 1)
    assert r.reserve_pod.key == "default/r"


def status_of(sched: Any, name: str) -> dict[str, Any]:
    doc = next(d for d in sched.cluster.extensions["Reservation"] if d["metadata"]["name"] == name)
    return dict(doc.get("status") or {})


def test_owner_uses_reservation_and_intruder_does_not(tmp_path: pathlib.Path) -> None:
    docs = [
        node("n1", cpu="4"),
        reservation("web", cpu="4", allocateOnce=False, ttl="0s"),
        pod("intruder", cpu="2"),
        pod("w", cpu="2", labels={"app": "web"}),
    ]
    sched = engine(tmp_path, docs, CFG)
    sched.run()
    assert (node_of(sched, "w"), node_of(sched, "intruder")) == ("n1", None)
    status = status_of(sched, "web")
    assert (status["phase"], status["nodeName"], status["allocated"]["cpu"]) == ("Available", "n1", "2")
    assert status["currentOwners"] == [{"namespace": "default", "name": "w", "uid": "uid-default-w"}]
    owner = next(p for p in sched.cluster.list_pods() if p.name == "w")
    assert owner.annotations["scheduling.koordinator.sh/reservation-allocated"] == '{"name":"web","uid":"uid-web"}'
    # The node counts the owner once: reserve pod (2 left) + owner (2).
    assert int(sched.snapshot.requested[0, 0]) == 4000
    items = sched.extender.dispatch("GET", "/apis/v1/plugins/Reservation/nodeReservations/n1").body["items"]
    assert [(i["name"], i["allocated"], i["available"]) for i in items] == [("web", {"cpu": "2", "memory": "1Gi"}, True)]


def test_status_quantities_keep_their_suffix(tmp_path: pathlib.Path) -> None:
    """status.allocatable and status.allocated are ResourceLists of Quantities (Koordinator's
    `Reservation.Status`, marshalled by apimachinery): a 512Mi reservation reads `512Mi`, not
    its bytes; an owner's 100M reads `100M`; cpu stays a milli quantity."""
    res = reservation("web", cpu="1500m", allocateOnce=False, ttl="0s")
    res["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"] = "512Mi"
    owner = pod("w", cpu="500m", labels={"app": "web"})
    owner["spec"]["containers"][0]["resources"]["requests"]["memory"] = "100M"
    sched = engine(tmp_path, [node("n1", cpu="4"), res, owner], CFG)
    sched.run()
    assert node_of(sched, "w") == "n1"
    status = status_of(sched, "web")
    assert status["allocatable"] == {"cpu": "1500m", "memory": "512Mi"}
    assert status["allocated"] == {"cpu": "500m", "memory": "100M"}
    items = sched.extender.dispatch("GET", "/apis/v1/plugins/Reservation/nodeReservations/n1").body["items"]
    assert [(i["allocatable"], i["allocated"]) for i in items] == [
        ({"cpu": "1500m", "memory": "512Mi"}, {"cpu": "500m", "memory": "100M"})
    ]


def test_allocate_once_succeeds_and_frees_the_rest(tmp_path: pathlib.Path) -> None:
    docs = [
        node("n1", cpu="4"),
        reservation("web", cpu="4"),
        pod("w", cpu="1", labels={"app": "web"}),
        pod("later", cpu="3", priority=-1),
    ]
    sched = engine(tmp_path, docs, CFG)
    sched.run()
    assert status_of(sched, "web")["phase"] == "Succeeded"
    assert (node_of(sched, "w"), node_of(sched, "later")) == ("n1", "n1")


def test_expiry_frees_the_node_for_waiting_pods(tmp_path: pathlib.Path) -> None:
    docs = [node("n1", cpu="4"), reservation("web", cpu="4", ttl="10m"), pod("other", cpu="2")]
    sched = engine(tmp_path, docs, CFG)
    start = sched.clock.now()
    sched.run()
    status = status_of(sched, "web")
    assert status["phase"] == "Failed"
    assert {"type": "Ready", "status": "False", "reason": "Expired"}.items() <= status["conditions"][-1].items()
    assert node_of(sched, "other") == "n1"
    assert sched.clock.now() - start >= 600


def test_restricted_reservation_must_cover_the_request(tmp_path: pathlib.Path) -> None:
    affinity = '{"name": "web"}'
    owner = pod("w", cpu="3", labels={"app": "web"}, annotations={"scheduling.koordinator.sh/reservation-affinity": affinity})
    docs = [node("n1", cpu="8"), reservation("web", cpu="2", allocatePolicy="Restricted", ttl="0s"), owner]
    sched = engine(tmp_path, docs, CFG)
    sched.run()
    assert node_of(sched, "w") is None
    assert "Reservation(s) Insufficient cpu" in sched.records[-1].message


def test_reservation_affinity_without_a_match_is_unresolvable(tmp_path: pathlib.Path) -> None:
    owner = pod("w", labels={"app": "web"}, annotations={"scheduling.koordinator.sh/reservation-affinity": '{"name": "nope"}'})
    sched = engine(tmp_path, [node("n1"), reservation("web", ttl="0s"), owner], CFG)
    sched.run()
    assert node_of(sched, "w") is None
    assert "node(s) no reservations match reservation affinity" in sched.records[-1].message


ARGS = [
    ("defaults", {}, []),
    ("percentage out of range", {"minCandidateNodesPercentage": 101}, ["must be in the range [0, 100]"]),
    ("native resource ignored", {"ignoredResources": ["cpu"]}, ["must be an extended resource name"]),
]


@pytest.mark.parametrize(("data", "issues"), [c[1:] for c in ARGS], ids=[c[0] for c in ARGS])
def test_args(data: dict[str, Any], issues: list[str]) -> None:
    args = ReservationArgs.from_dict(data, "args")
    got = [str(i) for i in args.validate("args")]
    assert len(got) == len(issues) and all(f in t for t, f in zip(got, issues, strict=True))
    if not data:
        assert (args.min_candidate_nodes_percentage, args.gc_duration_seconds) == (10, 86400)


# scoring.go ScoreReservation: per reserved resource 100*requested/capacity, 0 for a resource the
# pod would overfill (not capped at 100), the mean truncated.
SCORE_RESERVATION = [
    ("half of cpu, an eighth of memory", {"cpu": 4000, "memory": 8 << 30}, {"cpu": 2000, "memory": 1 << 30}, 31),
    ("cpu overfilled adds 0", {"cpu": 2000, "memory": 8 << 30}, {"cpu": 3000, "memory": 4 << 30}, 25),
    ("exactly full", {"cpu": 2000}, {"cpu": 2000}, 100),
    ("resources the reservation lacks are ignored", {"cpu": 4000}, {"cpu": 1000, "memory": 1 << 30}, 25),
]


@pytest.mark.parametrize(
    ("allocatable", "requests", "want"), [c[1:] for c in SCORE_RESERVATION], ids=[c[0] for c in SCORE_RESERVATION]
)
def test_score_reservation(allocatable: dict[str, int], requests: dict[str, int], want: int) -> None:
    r = parse_reservation(reservation("r"))
    info = ReservationInfo(r, "Available", "n1", allocatable)
    assert info.score(requests) == want


def test_score_is_normalized_and_the_owner_sees_its_node_without_the_reservation(tmp_path: pathlib.Path) -> None:
    """scoring.go NormalizeScore (DefaultNormalizeScore, best node to 100) and transformer.go
    BeforePreFilter/restoreMatchedReservation: the Score plugins see n1 without r1's hold, so
    NodeResourcesFit scores n1 as it scores the empty n2."""
    r1 = reservation("web", cpu="4", allocateOnce=False, ttl="0s")
    r1["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "n1"}
    docs = [node("n1", cpu="8"), node("n2", cpu="8"), r1, pod("w", cpu="2", labels={"app": "web"})]
    sched = engine(tmp_path, docs, CFG)
    sched.run()
    attempt = next(r for r in sched.records if r.pod == "default/w")
    scores = attempt.scores()
    assert (scores["n1"]["Reservation"], scores["n2"]["Reservation"]) == (100, 0)
    assert scores["n1"]["NodeResourcesFit"] == scores["n2"]["NodeResourcesFit"]
    assert node_of(sched, "w") == "n1"
    # The restore lasts one cycle: the node again holds the reservation's remaining 2 cpu + the owner's 2.
    assert int(sched.snapshot.requested[sched.snapshot.position["n1"], 0]) == 4000


def test_reservation_order_label_wins_nomination_and_the_node(tmp_path: pathlib.Path) -> None:
    """scoring.go findMostPreferredReservationByOrder / nominator.go NominateReservation: the
    lowest non-zero `scheduling.koordinator.sh/reservation-order` is nominated and its node
    scores mostPreferredScore (1000, normalized to 100)."""
    owners = [{"labelSelector": {"matchLabels": {"app": "web"}}}]
    docs = [node("n1", cpu="8"), node("n2", cpu="8")]
    for name, host, order in (("a", "n1", None), ("b", "n2", "5"), ("c", "n2", "2")):
        r = reservation(name, cpu="2", owners=owners, allocateOnce=False, ttl="0s")
        r["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": host}
        if order:
            r["metadata"]["labels"] = {"scheduling.koordinator.sh/reservation-order": order}
        docs.append(r)
    docs.append(pod("w", cpu="1", labels={"app": "web"}))
    sched = engine(tmp_path, docs, CFG)
    sched.run()
    owner = next(p for p in sched.cluster.list_pods() if p.name == "w")
    assert owner.node_name == "n2"
    assert '"name":"c"' in owner.annotations["scheduling.koordinator.sh/reservation-allocated"]


def test_object_owner_compares_api_version() -> None:
    """pkg/util/reservation/reservation.go MatchObjectRef: apiVersion, when set, must match."""
    r = parse_reservation(reservation("r", owners=[{"object": {"name": "p", "apiVersion": "v2"}}]))
    assert not r.matches_owner(parse_pod(pod("p")))
    r = parse_reservation(reservation("r", owners=[{"object": {"name": "p", "apiVersion": "v1"}}]))
    assert r.matches_owner(parse_pod(pod("p")))


def test_reservation_selector_index_route(tmp_path: pathlib.Path) -> None:
    """service.go GET /reservationSelectorIndex: with no index configured the snapshot reports it
    disabled (DumpReservationSelectorIndex, ReservationSelectorIndexSnapshot's JSON)."""
    sched = engine(tmp_path, [node("n1")], CFG)
    reply = sched.extender.dispatch("GET", "/apis/v1/plugins/Reservation/reservationSelectorIndex")
    assert (reply.status, reply.body) == (200, {"enabled": False, "prefixes": None, "indexedReservations": 0})
    services = sched.extender.dispatch("GET", "/apis/v1/__services__").body["GET"]
    assert "/apis/v1/plugins/Reservation/reservationSelectorIndex" in services
