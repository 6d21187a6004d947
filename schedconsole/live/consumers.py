"""`/ws/scores/`: one JSON message per scheduling attempt, filtered per client (DESIGN section 6)."""

from __future__ import annotations

import asyncio
import json
from functools import cached_property
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from channels.sessions import InstanceSessionWrapper
from django.conf import settings

from schedconsole.live.hub import ClientBuffer, hub

FILTER_KEYS = ("profile", "namespace", "pod")


class ScoresConsumer(AsyncWebsocketConsumer):
    """Streams attempts to a logged-in client; the client may send `{"type": "filter", ...}`."""

    client: ClientBuffer | None = None

    async def connect(self) -> None:
        """Refuse anonymous users; join the hub."""
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        await self.accept()
        self.client = ClientBuffer(settings.LIVE_CLIENT_BUFFER, self._send_text, settings.LIVE_CLIENT_RATE)
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

    @cached_property
    def _raw_send(self) -> Any:
        send = self.base_send
        wrapper = getattr(send, "__self__", None)
        while isinstance(wrapper, InstanceSessionWrapper):
            send = wrapper.real_send
            wrapper = getattr(send, "__self__", None)
        return send
