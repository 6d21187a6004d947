"""`/ws/scores/`: one JSON message per scheduling attempt, filtered per client (docs/architecture.md, "The live message")."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from schedconsole.accounts.permissions import VIEWER, roles
from schedconsole.live.hub import ClientBuffer, hub

FILTER_KEYS = ("profile", "namespace", "pod")


class ScoresConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]  # channels ships no type hints
    """Streams attempts to a logged-in client; the client may send `{"type": "filter", ...}`."""

    client: ClientBuffer | None = None
    # No channel of its own: attempts reach a client through the process's hub, which reads the
    # channel layer once for every client (hub.py). The default alias would give each connection
    # a channel nobody sends to, and a channel-layer error while reading it (Redis slow or
    # restarting) would end the connection with 1011 instead of costing the hub a retry. An
    # alias with no configuration means no channel layer (`get_channel_layer`).
    channel_layer_alias = "live-clients-read-the-hub"

    async def connect(self) -> None:
        """Refuse anonymous users (4401) and users without a role (4403); join the hub."""
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        if VIEWER not in await database_sync_to_async(roles)(user):
            await self.close(code=4403)  # logged in, but in neither group: the pages answer 403 too
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
        """One message to the client, through Channels' own send (and so the server's)."""
        await self.send(text_data=text)
