"""The engine side of the live view: attempts go to the channel layer once each, in small batches.

The engine thread only appends records to a queue. This thread turns them into messages
(docs/architecture.md, "The live message") and sends each batch once to the `live.attempts` group; each web process's hub
is the only member per process and fans out to its clients. Embedded (one process), the batch
goes straight to the hub, whose clients build each message only when they send it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings

from schedconsole.engine import bridge
from schedconsole.live.hub import GROUP, LiveItem, hub, local_hub_loop

log = logging.getLogger(__name__)
LAYER_PREFIX = "asgi"  # channels_redis's default key prefix (settings.CHANNEL_LAYERS sets no other)
MAX_BATCH = 200
MAX_QUEUED = 10000
POLL_SECONDS = 0.05


class LivePublisher:
    """Sends attempt messages to the channel layer off the engine thread."""

    def __init__(self) -> None:
        self._pending: deque[bridge.LiveRecord] = deque()
        self._stopping = False
        self._embedded = bool(settings.EMBEDDED)
        self._thread = threading.Thread(target=self._run, name="schedconsole-live", daemon=True)
        self.dropped = 0
        self.sent = 0
        self._redis: Any = None
        self._listened_at = -1.0
        self._listening = True

    def start(self) -> None:
        """Start the sender thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop after what is queued."""
        self._stopping = True
        self._thread.join(5)

    def put(self, record: bridge.Record, row: dict[str, Any] | None = None) -> None:
        """Called on the engine thread: never waits; drops (and counts) when far behind. Keeps only
        the live view's part of the record (`bridge.live_record`; `row`: its history row, if made)."""
        if self._embedded and local_hub_loop() is None:
            return  # embedded and no websocket client: nobody to tell
        if len(self._pending) >= MAX_QUEUED:
            self.dropped += 1
            return
        self._pending.append(bridge.live_record(record, row))

    def _listened(self) -> bool:
        """Production: whether any web process's hub is in the group (it is while it has clients);
        asked of Redis every second while someone listens, four times a second while nobody does.
        Nobody watching means no message is built at all."""
        now = time.monotonic()
        if now - self._listened_at >= (1.0 if self._listening else 0.25):
            self._listened_at = now
            try:
                if self._redis is None:
                    from schedconsole.engine.leader import redis_client

                    self._redis = redis_client()
                self._listening = bool(self._redis.zcard(f"{LAYER_PREFIX}:group:{GROUP}"))
            except Exception:
                self._listening = True  # when in doubt, send
        return self._listening

    def _run(self) -> None:
        # Polls rather than waking per record: a wake-up per attempt would bounce the GIL
        # between this thread and the engine on every scheduling cycle.
        loop = asyncio.new_event_loop()
        layer = get_channel_layer()
        try:
            while True:
                if not self._pending:
                    if self._stopping:
                        return
                    time.sleep(POLL_SECONDS)
                    continue
                if not self._embedded and not self._listened():
                    self._pending.clear()
                    time.sleep(POLL_SECONDS)
                    continue
                batch: list[bridge.LiveRecord] = []
                while self._pending and len(batch) < MAX_BATCH:
                    batch.append(self._pending.popleft())
                self._send(loop, layer, batch)
        finally:
            loop.close()

    def _send(self, loop: asyncio.AbstractEventLoop, layer: Any, batch: list[bridge.LiveRecord]) -> None:
        dropped, self.dropped = self.dropped, 0
        try:
            if self._embedded:
                # One process: hand the records to the hub on its loop. Each message is built and
                # encoded only if some client is actually sent it (most are coalesced away).
                hub_loop = local_hub_loop()
                if hub_loop is None:
                    return  # no websocket client in this process: build nothing
                items = [LiveItem.of_record(r) for r in batch]
                hub_loop.call_soon_threadsafe(hub.deliver_items, items, dropped)
            else:
                message = {"type": "attempts", "items": [bridge.live_message(r) for r in batch], "dropped": dropped}
                loop.run_until_complete(layer.group_send(GROUP, message))
            self.sent += len(batch)
        except Exception:
            log.warning("live publisher: could not send %d attempts", len(batch), exc_info=True)
