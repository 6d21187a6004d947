"""`/ws/scores/`: session auth, origin check, filters, message shape, slow clients."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from schedconsole.asgi import application
from schedconsole.engine import operations as ops
from schedconsole.live.hub import ClientBuffer, Hub, LiveItem
from tests.console.conftest import SMALL_CLUSTER, TWO_PROFILES, make_user, pod
from tests.support.waits import until

ORIGIN = (b"origin", b"http://127.0.0.1")


def _session_cookie() -> bytes:
    user = make_user("wendy", "viewer")
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def _connect(headers: list[tuple[bytes, bytes]]) -> tuple[WebsocketCommunicator, bool]:
    communicator = WebsocketCommunicator(application, "/ws/scores/", headers=headers)
    connected, _ = await communicator.connect(timeout=5)
    return communicator, connected


@pytest.mark.django_db(transaction=True)
async def test_attempts_stream_with_filters(start_engine) -> None:
    host = await sync_to_async(start_engine)(SMALL_CLUSTER, TWO_PROFILES, live=True)
    cookie = await sync_to_async(_session_cookie)()
    ws, connected = await _connect([ORIGIN, (b"cookie", cookie)])
    assert connected
    assert (await ws.receive_json_from(timeout=5))["type"] == "hello"
    await ws.send_json_to({"type": "filter", "namespace": "team"})
    assert (await ws.receive_json_from(timeout=5)) == {"type": "filter", "filters": {"namespace": "team"}}
    create = sync_to_async(host.call, thread_sensitive=False)
    await create(ops.Create(documents=[pod("other", namespace="default")], source="t"))
    await create(ops.Create(documents=[pod("mine", namespace="team")], source="t"))
    message = await ws.receive_json_from(timeout=5)
    assert message["type"] == "attempt"
    assert message["pod"] == "team/mine"
    assert set(message) == {"type", "at", "profile", "pod", "outcome", "node", "feasibleNodes", "scores", "timings"}
    assert {"PreFilter", "Filter", "Score"} <= set(message["timings"]) and all(v >= 0 for v in message["timings"].values())
    assert message["outcome"] == "Scheduled" and message["feasibleNodes"] == 3
    assert len(message["scores"]) == 3  # debugTopNScores = 3
    top = message["scores"][0]
    assert top["node"] == message["node"] and set(top) == {"node", "total", "plugins"}
    assert "NodeResourcesFit" in top["plugins"]
    assert await ws.receive_nothing(timeout=0.3)
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_anonymous_is_refused(start_engine) -> None:
    await sync_to_async(start_engine)(SMALL_CLUSTER, TWO_PROFILES, live=True)
    _, connected = await _connect([ORIGIN])
    assert not connected


@pytest.mark.django_db(transaction=True)
async def test_a_user_without_a_role_is_closed_with_4403(start_engine) -> None:
    # Such a user read the live stream while the API refused them.
    await sync_to_async(start_engine)(SMALL_CLUSTER, TWO_PROFILES, live=True)

    def cookie() -> bytes:
        client = Client()
        client.force_login(make_user("norole"))
        return f"sessionid={client.cookies['sessionid'].value}".encode()

    communicator = WebsocketCommunicator(application, "/ws/scores/", headers=[ORIGIN, (b"cookie", await sync_to_async(cookie)())])
    connected, code = await communicator.connect(timeout=5)
    assert not connected and code == 4403


@pytest.mark.django_db(transaction=True)
async def test_foreign_origin_is_refused(start_engine) -> None:
    await sync_to_async(start_engine)(SMALL_CLUSTER, TWO_PROFILES, live=True)
    cookie = await sync_to_async(_session_cookie)()
    _, connected = await _connect([(b"origin", b"http://evil.example"), (b"cookie", cookie)])
    assert not connected


def _attempt(i: int, pod_name: str = "default/p", profile: str = "default-scheduler") -> dict[str, Any]:
    return {
        "type": "attempt",
        "at": "2026-01-01T00:00:00Z",
        "profile": profile,
        "pod": f"{pod_name}{i}",
        "outcome": "Scheduled",
        "node": "n",
        "feasibleNodes": 1,
        "scores": [],
    }


async def test_slow_client_is_coalesced_with_a_missed_notice() -> None:
    sent: list[dict[str, Any]] = []

    async def send(text: str) -> None:
        sent.append(json.loads(text))

    client = ClientBuffer(4, send)
    for i in range(10):
        client.offer(_attempt(i))
    task = asyncio.get_running_loop().create_task(client.run())
    await until(lambda: len(sent) >= 5, what="the notice and the four newest sent")
    task.cancel()
    assert sent[0] == {"type": "missed", "count": 6}
    assert [m["pod"] for m in sent[1:]] == [f"default/p{i}" for i in range(6, 10)]


async def test_a_stuck_client_slows_no_one_else() -> None:
    hub = Hub()
    stuck_forever = asyncio.Event()
    fast: list[dict[str, Any]] = []

    async def stuck_send(text: str) -> None:
        await stuck_forever.wait()

    async def fast_send(text: str) -> None:
        fast.append(json.loads(text))

    stuck, quick = ClientBuffer(8, stuck_send), ClientBuffer(1000, fast_send)
    hub.clients = {stuck, quick}
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(stuck.run()), loop.create_task(quick.run())]
    for batch in range(10):
        hub.deliver({"items": [_attempt(batch * 50 + i) for i in range(50)], "dropped": 0})
        await asyncio.sleep(0)
    await until(lambda: len([m for m in fast if m["type"] == "attempt"]) >= 500, what="every attempt sent to the quick client")
    assert len([m for m in fast if m["type"] == "attempt"]) == 500
    assert len(stuck.items) <= 8 and stuck.missed >= 400  # the rest went into the notice it is stuck sending
    hub.deliver({"items": [], "dropped": 3})
    await until(lambda: fast[-1]["type"] == "missed", what="the dropped notice sent")
    assert fast[-1] == {"type": "missed", "count": 3}
    for task in tasks:
        task.cancel()


async def test_a_batch_larger_than_the_buffer_keeps_its_newest() -> None:
    sent: list[dict[str, Any]] = []

    async def send(text: str) -> None:
        sent.append(json.loads(text))

    client = ClientBuffer(4, send)
    client.offer(_attempt(0))
    client.offer_batch([LiveItem.of_message(_attempt(i)) for i in range(1, 11)])
    assert [item.pod for item in client.items] == [f"default/p{i}" for i in range(7, 11)]
    assert client.missed == 7  # p0 and p1..p6
    task = asyncio.get_running_loop().create_task(client.run())
    await until(lambda: len(sent) >= 5, what="the notice and the four newest sent")
    task.cancel()
    assert sent[0] == {"type": "missed", "count": 7}


@pytest.mark.parametrize(
    ("filters", "pods"),
    [({}, ["a/x", "b/y"]), ({"namespace": "a"}, ["a/x"]), ({"pod": "y"}, ["b/y"]), ({"profile": "other"}, [])],
    ids=["none", "namespace", "pod", "profile"],
)
def test_filters(filters: dict[str, str], pods: list[str]) -> None:
    client = ClientBuffer(1, None)  # type: ignore[arg-type]
    client.filters = filters
    assert [p for p in ("a/x", "b/y") if client.accepts(LiveItem(p, "default-scheduler", "{}"))] == pods


async def test_rate_cap_coalesces_into_missed() -> None:
    sent: list[dict[str, Any]] = []

    async def send(text: str) -> None:
        sent.append(json.loads(text))

    client = ClientBuffer(1000, send, rate=5)
    task = asyncio.get_running_loop().create_task(client.run())
    for i in range(50):
        client.offer(_attempt(i))
    await until(lambda: len(sent) >= 5, what="the first second's messages")
    assert len(sent) == 5  # the cap for this second
    for i in range(50, 60):
        client.offer(_attempt(i))
    # The next second (the cap counts seconds of the event loop's clock, so this takes one).
    await until(lambda: len(sent) >= 10, 3, what="the next second's messages")
    task.cancel()
    assert [m["pod"] for m in sent[:5]] == [f"default/p{i}" for i in range(5)]
    assert len(sent) == 10


@pytest.mark.parametrize("score_nodes", [0, 2, 10], ids=["no-history-table", "history-table-shorter-than-top-n", "history-table"])
def test_a_live_record_sends_what_the_full_record_would(start_engine, score_nodes: int) -> None:
    # The live view keeps a slim copy of each attempt (its top-N rows taken from the history row when
    # that holds enough of them); the message must not change.
    from schedconsole.engine import bridge

    nodes = [*SMALL_CLUSTER, *({**n, "metadata": {**n["metadata"], "name": f"{n['metadata']['name']}-2"}} for n in SMALL_CLUSTER)]
    pods = [pod(f"l{i}", cpu=f"{100 + 150 * i}m") for i in range(6)] + [pod("too-big", cpu="64")]
    host = start_engine(nodes + pods, TWO_PROFILES, run=False)
    engine, records = host.engine, []
    engine.scheduler.listeners.append(records.append)
    flags = [(0, False), (3, False), (5, True), (20, False)]
    for i in range(len(pods)):  # one pod under each setting in turn
        engine.set_debug_flags(*flags[i % len(flags)])
        assert engine.scheduler.schedule_one() is not None
    assert len(records) == len(pods)
    assert any(r.debug_top_n >= 3 for r in records) and any(r.debug_filter_failure for r in records)
    for record in records:
        row = bridge.record_row(record, score_nodes, 100)
        assert bridge.live_message(bridge.live_record(record, row)) == bridge.live_message(record)
        assert bridge.live_message(bridge.live_record(record)) == bridge.live_message(record)


async def test_the_consumer_sends_through_channels() -> None:
    # Frames go out through Channels' own send (and so through whichever server runs the app),
    # one websocket message per attempt: never into a server's private objects.
    from schedconsole.live.consumers import ScoresConsumer

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    consumer = ScoresConsumer()
    consumer.base_send = send
    for text in ("a", "b"):
        await consumer._send_text(text)
    assert sent == [{"type": "websocket.send", "text": "a"}, {"type": "websocket.send", "text": "b"}]


async def test_a_rate_capped_client_sends_its_second_at_one_wake_up() -> None:
    sent: list[str] = []

    async def send(text: str) -> None:
        sent.append(text)

    client = ClientBuffer(4, send, rate=5)
    for i in range(10):
        client.offer(_attempt(i))
    task = asyncio.get_running_loop().create_task(client.run())
    await until(lambda: len(sent) >= 5, what="the second's messages sent")
    task.cancel()
    assert [json.loads(t).get("pod", t) for t in sent] == [
        '{"type": "missed", "count": 6}',
        "default/p6",
        "default/p7",
        "default/p8",
        "default/p9",
    ]


@pytest.mark.parametrize("filters", [{}, {"namespace": "a"}], ids=["unfiltered", "filtered"])
@pytest.mark.parametrize("sizes", [[3], [1, 1, 1, 1, 1], [7, 0, 2], [40] * 3, [1] * 40, [2, 9, 1, 5]])
def test_batches_fold_as_if_each_message_was_queued_on_arrival(filters: dict[str, str], sizes: list[int]) -> None:
    # The client keeps offered batches by reference and folds them later; the buffer and the missed
    # count must be those of queueing every message one by one as it came.
    lazy, eager = ClientBuffer(4, None), ClientBuffer(4, None)  # type: ignore[arg-type]
    lazy.filters = eager.filters = filters
    n = 0
    for size in sizes:
        batch = [LiveItem(f"{'ab'[(n + i) % 2]}/p{n + i}", "default-scheduler", "{}") for i in range(size)]
        n += size
        lazy.offer_batch(batch)
        for item in batch:
            if eager.accepts(item):
                if len(eager._items) == eager.maxsize:
                    eager._missed += 1
                eager._items.append(item)
    assert [item.pod for item in lazy.items] == [item.pod for item in eager._items]
    assert lazy.missed == eager._missed


def test_a_filter_change_applies_to_what_arrives_after_it() -> None:
    client = ClientBuffer(10, None)  # type: ignore[arg-type]
    client.offer_batch([LiveItem("a/x", "default-scheduler", "{}"), LiveItem("b/y", "default-scheduler", "{}")])
    client.filters = {"namespace": "b"}
    client.offer_batch([LiveItem("a/z", "default-scheduler", "{}"), LiveItem("b/w", "default-scheduler", "{}")])
    assert [item.pod for item in client.items] == ["a/x", "b/y", "b/w"]


def test_a_client_connection_holds_no_channel_of_its_own() -> None:
    from channels.layers import get_channel_layer

    from schedconsole.live.consumers import ScoresConsumer

    # Attempts come through the hub; a per-connection channel would only be another way to fail.
    assert get_channel_layer() is not None
    assert get_channel_layer(ScoresConsumer.channel_layer_alias) is None
