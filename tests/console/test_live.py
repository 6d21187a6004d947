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
from schedconsole.live.hub import ClientBuffer, Hub, LiveItem
from tests.console.conftest import SMALL_CLUSTER, TWO_PROFILES, make_user, pod

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
    await create("create", {"documents": [pod("other", namespace="default")], "source": "t"})
    await create("create", {"documents": [pod("mine", namespace="team")], "source": "t"})
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
async def test_foreign_origin_is_refused(start_engine) -> None:
    await sync_to_async(start_engine)(SMALL_CLUSTER, TWO_PROFILES, live=True)
    cookie = await sync_to_async(_session_cookie)()
    _, connected = await _connect([(b"origin", b"http://evil.example"), (b"cookie", cookie)])
    assert not connected


def _attempt(i: int, pod_name: str = "default/p", profile: str = "default-scheduler") -> dict[str, Any]:
    return {"type": "attempt", "at": "2026-01-01T00:00:00Z", "profile": profile, "pod": f"{pod_name}{i}", "outcome": "Scheduled", "node": "n", "feasibleNodes": 1, "scores": []}


async def test_slow_client_is_coalesced_with_a_missed_notice() -> None:
    sent: list[dict[str, Any]] = []

    async def send(text: str) -> None:
        sent.append(json.loads(text))

    client = ClientBuffer(4, send)
    for i in range(10):
        client.offer(_attempt(i))
    task = asyncio.get_running_loop().create_task(client.run())
    await asyncio.sleep(0.05)
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
    await asyncio.sleep(0.05)
    assert len([m for m in fast if m["type"] == "attempt"]) == 500
    assert len(stuck.items) <= 8 and stuck.missed >= 400  # the rest went into the notice it is stuck sending
    hub.deliver({"items": [], "dropped": 3})
    await asyncio.sleep(0.01)
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
    await asyncio.sleep(0.05)
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
    await asyncio.sleep(0.2)
    assert len(sent) == 5  # the cap for this second
    for i in range(50, 60):
        client.offer(_attempt(i))
    await asyncio.sleep(1.0)
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
    flags = [(0, "false"), (3, "false"), (5, "true"), (20, "false")]
    for i in range(len(pods)):  # one pod under each setting in turn
        engine.set_debug_flags(*flags[i % len(flags)])
        assert engine.scheduler.schedule_one() is not None
    assert len(records) == len(pods)
    assert any(r.debug_top_n >= 3 for r in records) and any(r.debug_filter_failure for r in records)
    for record in records:
        row = bridge.record_row(record, score_nodes, 100)
        assert bridge.live_message(bridge.live_record(record, row)) == bridge.live_message(record)
        assert bridge.live_message(bridge.live_record(record)) == bridge.live_message(record)


class _Transport:
    """What uvicorn's protocol writes to, recorded write by write."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def close(self) -> None:
        pass


async def _uvicorn_websocket() -> tuple[Any, _Transport, Any]:
    """A real uvicorn websockets-sansio protocol (runconsole's server) over a recording transport,
    handshaken with an app that accepts; returns the protocol, the transport and the app's send."""
    import uvicorn
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    from uvicorn.server import ServerState

    sends: asyncio.Queue[Any] = asyncio.Queue()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        await sends.put(send)
        await asyncio.Event().wait()

    config = uvicorn.Config(app, ws="websockets-sansio", ws_per_message_deflate=False, lifespan="off", log_level="warning")
    config.load()
    protocol = WebSocketsSansIOProtocol(config, ServerState(), {})
    transport = _Transport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    protocol.data_received(
        b"GET /ws/scores/ HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    send = await asyncio.wait_for(sends.get(), 5)
    transport.writes.clear()  # the handshake's answer
    return protocol, transport, send


async def test_a_burst_of_frames_is_one_write_with_the_same_bytes() -> None:
    # A client's messages due at one wake-up go out in one write on runconsole's server, as frames
    # encoded once for every client; the client must get exactly the bytes uvicorn's own send
    # would have written one by one (payloads of each of the three length encodings).
    from schedconsole.live.consumers import ScoresConsumer

    texts = [json.dumps({"type": "missed", "count": 7})] + [json.dumps(_attempt(i)) for i in range(3)]
    texts += ["é ✓ non-ASCII", "x" * 125, "y" * 126, "z" * 65535, "w" * 65536, ""]
    protocol, transport, send = await _uvicorn_websocket()
    consumer = ScoresConsumer()
    consumer.base_send = send
    assert consumer._sansio_protocol is protocol
    await consumer._send_items([LiveItem("", "", text) for text in texts])
    assert len(transport.writes) == 1
    batched = transport.writes[0]
    transport.writes.clear()
    for text in texts:
        await send({"type": "websocket.send", "text": text})
    assert len(transport.writes) == len(texts)
    assert batched == b"".join(transport.writes)


async def test_a_burst_goes_through_the_server_when_the_connection_is_closing() -> None:
    from schedconsole.live.consumers import ScoresConsumer

    protocol, transport, send = await _uvicorn_websocket()
    consumer = ScoresConsumer()
    consumer.base_send = send
    protocol.close_sent = True  # uvicorn's send refuses frames now; the burst must not write them
    with pytest.raises(RuntimeError):
        await consumer._send_items([LiveItem("", "", "a"), LiveItem("", "", "b")])
    assert transport.writes == []


async def test_a_burst_without_the_sansio_server_sends_one_by_one() -> None:
    from schedconsole.live.consumers import ScoresConsumer

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    consumer = ScoresConsumer()
    consumer.base_send = send
    assert consumer._sansio_protocol is None
    await consumer._send_items([LiveItem("", "", t) for t in ("a", "b", "c")])
    assert [m["text"] for m in sent] == ["a", "b", "c"]


async def test_a_rate_capped_client_sends_its_second_as_one_burst() -> None:
    single: list[str] = []
    bursts: list[list[str]] = []

    async def send(text: str) -> None:
        single.append(text)

    async def send_many(items: list[LiveItem]) -> None:
        bursts.append([item.text for item in items])

    client = ClientBuffer(4, send, rate=5, send_many=send_many)
    for i in range(10):
        client.offer(_attempt(i))
    task = asyncio.get_running_loop().create_task(client.run())
    await asyncio.sleep(0.05)
    task.cancel()
    assert single == []
    assert [[json.loads(t).get("pod", t) for t in burst] for burst in bursts] == [
        ['{"type": "missed", "count": 6}', "default/p6", "default/p7", "default/p8", "default/p9"]
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


async def test_a_burst_goes_through_the_server_when_its_protocol_lacks_what_the_fast_path_reads() -> None:
    # Another uvicorn or websockets release may rename the attributes the one-write path checks:
    # the frames then go through the server's own send instead of failing.
    from schedconsole.live.consumers import ScoresConsumer

    protocol, transport, send = await _uvicorn_websocket()
    consumer = ScoresConsumer()
    consumer.base_send = send
    del protocol.writable
    sent: list[str] = []

    async def one(text: str) -> None:
        sent.append(text)

    consumer._send_text = one  # type: ignore[method-assign]
    await consumer._send_items([LiveItem("", "", "a"), LiveItem("", "", "b")])
    assert sent == ["a", "b"] and transport.writes == []


def test_a_client_connection_holds_no_channel_of_its_own() -> None:
    from channels.layers import get_channel_layer

    from schedconsole.live.consumers import ScoresConsumer

    # Attempts come through the hub; a per-connection channel would only be another way to fail.
    assert get_channel_layer() is not None
    assert get_channel_layer(ScoresConsumer.channel_layer_alias) is None
