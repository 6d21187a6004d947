"""`/ws/scores/`: one JSON message per scheduling attempt, filtered per client (DESIGN section 6)."""

from __future__ import annotations

import asyncio
import json
from functools import cached_property
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from channels.sessions import InstanceSessionWrapper
from django.conf import settings
from websockets.protocol import State

from schedconsole.live.hub import ClientBuffer, LiveItem, hub

FILTER_KEYS = ("profile", "namespace", "pod")


class ScoresConsumer(AsyncWebsocketConsumer):
    """Streams attempts to a logged-in client; the client may send `{"type": "filter", ...}`."""

    client: ClientBuffer | None = None
    # No channel of its own: attempts reach a client through the process's hub, which reads the
    # channel layer once for every client (hub.py). The default alias would give each connection
    # a channel nobody sends to, and a channel-layer error while reading it (Redis slow or
    # restarting) would end the connection with 1011 instead of costing the hub a retry. An
    # alias with no configuration means no channel layer (`get_channel_layer`).
    channel_layer_alias = "live-clients-read-the-hub"

    async def connect(self) -> None:
        """Refuse anonymous users; join the hub."""
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        await self.accept()
        self.client = ClientBuffer(settings.LIVE_CLIENT_BUFFER, self._send_text, settings.LIVE_CLIENT_RATE, self._send_items)
        self.client.task = asyncio.get_running_loop().create_task(self.client.run())
        await hub.join(self.client)
        await self._send_json({"type": "hello", "filters": {}})

    async def disconnect(self, code: int) -> None:
        """Leave the hub."""
        if self.client is not None:
            hub.leave(self.client)
            if self.client.task is not None:
                self.client.task.cancel()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """A filter change: `{"type": "filter", "profile": ..., "namespace": ..., "pod": ...}`."""
        try:
            message = json.loads(text_data or "")
        except json.JSONDecodeError:
            await self._send_json({"type": "error", "message": "expected a JSON object"})
            return
        if not isinstance(message, dict) or message.get("type") != "filter":
            await self._send_json({"type": "error", "message": 'expected {"type": "filter", "profile"?, "namespace"?, "pod"?}'})
            return
        filters = {k: str(message[k]) for k in FILTER_KEYS if message.get(k)}
        if self.client is not None:
            self.client.filters = filters
        await self._send_json({"type": "filter", "filters": filters})

    async def _send_json(self, message: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(message))

    async def _send_text(self, text: str) -> None:
        # Live frames go straight to the server's ASGI send: Channels' session wrapper checks the
        # session for changes on every message (a lazy object's proxies, per frame, per client),
        # and these frames never carry a session change.
        await self._raw_send({"type": "websocket.send", "text": text})

    async def _send_items(self, items: list[LiveItem]) -> None:
        """Several messages in one write to the socket when the server is runconsole's (uvicorn's
        sans-I/O websocket protocol, whose send writes each frame on its own), as frames encoded
        once for every client (`LiveItem.frame`); else one by one through the server. The client
        gets the same bytes either way (a test compares them)."""
        protocol = self._sansio_protocol
        if protocol is not None and _open_for_frames(protocol):
            protocol.transport.write(b"".join([item.frame for item in items]))
            return
        for item in items:
            await self._send_text(item.text)

    @cached_property
    def _sansio_protocol(self) -> Any:
        """uvicorn's websockets-sansio protocol behind this consumer's send, if that is the server."""
        protocol = getattr(self._raw_send, "__self__", None)
        try:
            from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
        except ImportError:  # pragma: no cover - uvicorn is a dependency
            return None
        return protocol if isinstance(protocol, WebSocketsSansIOProtocol) else None

    @cached_property
    def _raw_send(self) -> Any:
        send = self.base_send
        wrapper = getattr(send, "__self__", None)
        while isinstance(wrapper, InstanceSessionWrapper):
            send = wrapper.real_send
            wrapper = getattr(send, "__self__", None)
        return send


def _open_for_frames(protocol: Any) -> bool:
    """Whether uvicorn's protocol would write a `websocket.send` now without waiting, as one plain
    frame (the checks its `send` and the websockets protocol's `send_text` make before writing a
    frame; no extension such as permessage-deflate negotiated). A uvicorn or websockets release
    without one of these attributes gets the server's own send (a test then fails)."""
    try:
        conn = protocol.conn
        return bool(
            conn.state is State.OPEN
            and not conn.extensions
            and not conn.expect_continuation_frame
            and protocol.writable.is_set()
            and not protocol.disconnected
            and protocol.handshake_complete
            and not protocol.close_sent
            and protocol.initial_response is None
            and not protocol.transport.is_closing()
        )
    except AttributeError:
        return False
