"""The store's queue: what waits for the next batch costs the engine nothing more than its bytes."""

from __future__ import annotations

import gc

from schedconsole.engine import operations as ops
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
    assert (attempt.outcome, attempt.node, attempt.nominated_node, attempt.feasible_nodes, attempt.attempt) == (
        "Unschedulable",
        "",
        "",
        0,
        1,
    )
    assert "Insufficient cpu" in attempt.message
    assert attempt.detail["pod"] == "default/q2" and attempt.uid == attempt.detail["uid"]


def test_a_large_creation_is_kept_out_of_full_collections(start_engine, settings) -> None:
    # The cyclic collector's full scans walked every imported pod again and again while the
    # engine scheduled; an import of LONG_LIVED_BATCH objects or more is frozen once created.
    # (An attempt's result annotations give its pod new metadata, made after the freeze: this
    # checks the import itself, with them off.)
    from schedconsole.engine.operations import LONG_LIVED_BATCH

    settings.RESULT_ANNOTATIONS = False

    host = start_engine(SMALL_CLUSTER, TWO_PROFILES)
    was_frozen = gc.get_freeze_count()
    try:
        host.call(ops.Create(documents=[pod("small")], source="test"))
        # The meta object: a binding copies the pod but keeps it.
        small = next(p for p in host.engine.cluster.pods.values() if p.name == "small").meta
        assert any(o is small for o in gc.get_objects()), "one pod is not worth a full collection"
        documents = [pod(f"bulk-{i}", cpu="1m", memory="1Mi") for i in range(LONG_LIVED_BATCH)]
        assert host.call(ops.Create(documents=documents, source="test"))["created"] == {"Pod": LONG_LIVED_BATCH}
        bulk = next(p for p in host.engine.cluster.pods.values() if p.name == "bulk-7").meta
        assert not any(o is bulk for o in gc.get_objects()), "the imported pods are frozen"
    finally:
        if was_frozen == 0:
            gc.unfreeze()


def test_a_write_the_store_cannot_make_drops_that_write_alone(start_engine) -> None:
    # One bad row used to fail its batch five times and stop the store, and the leader with it.
    from schedconsole.cluster.models import ClusterObject
    from schedconsole.engine import bridge
    from tests.support.waits import wait_for

    host = start_engine(SMALL_CLUSTER, TWO_PROFILES)
    host.store.put_change(bridge.Change("ConfigMap", "default", "huge", "uid-huge", {"data": {"n": 2**70}}))
    host.call(ops.Create(documents=[pod("after-the-bad-row")], source="test"))
    wait_for(lambda: ClusterObject.objects.filter(name="after-the-bad-row").exists(), what="the good pod stored")
    assert host.store.failed is None
    assert not ClusterObject.objects.filter(uid="uid-huge").exists()


def test_a_binding_goes_into_the_write_of_its_pods_document(transactional_db) -> None:
    # A scheduled pod's result annotations and its binding reach the store in one batch: its row is
    # written once (document and node), not upserted and then updated again for the node.
    import time

    from schedconsole.cluster.models import Binding, ClusterObject
    from schedconsole.engine import bridge
    from schedconsole.engine.store import Store, _Bind, save_documents

    docs = [bridge.with_defaults(pod(name), "Pod") for name in ("noted", "plain")]
    save_documents(docs)
    (noted, plain) = (d["metadata"]["uid"] for d in docs)
    annotated = {**docs[0], "metadata": {**docs[0]["metadata"], "annotations": {"example.com/result": "x" * 70000}}}
    acknowledged: list[str] = []
    batch = [
        bridge.Change("Pod", "default", "noted", noted, annotated, ""),
        _Bind(noted, "default/noted", "node-b", time.time(), lambda: acknowledged.append("noted")),
        _Bind(plain, "default/plain", "node-c", time.time(), lambda: acknowledged.append("plain")),
    ]
    statements = Store(lambda fn: fn())._prepare(list(batch), [], [], [])
    node_updates = [params for _, sql, params in statements if "SET node_name = v.node" in sql]
    assert node_updates == [[plain, "node-c"]]
    Store(lambda fn: fn())._write(batch)
    rows = {o.name: o for o in ClusterObject.objects.filter(kind="Pod")}
    assert (rows["noted"].node_name, rows["plain"].node_name) == ("node-b", "node-c")
    assert rows["noted"].document["metadata"]["annotations"]["example.com/result"] == "x" * 70000
    assert sorted(Binding.objects.values_list("pod", flat=True)) == ["default/noted", "default/plain"]
    assert sorted(acknowledged) == ["noted", "plain"]
