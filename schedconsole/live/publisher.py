"""The engine side of the live view: attempts go to the channel layer once each, in small batches.

The engine thread only appends records to a queue. This thread turns them into messages
(DESIGN section 6) and sends each batch once to the `live.attempts` group; each web process's hub
is the only member per process and fans out to its clients.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings

from schedconsole.engine import bridge

log = logging.getLogger(__name__)
GROUP = "live.attempts"
MAX_BATCH = 200
MAX_QUEUED = 10000


class LivePublisher:
    """Sends attempt messages to the channel layer off the engine thread."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[bridge.Record | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="schedconsole-live", daemon=True)
        self._queued = 0
        self.dropped = 0
        self.sent = 0

    def start(self) -> None:
        """Start the sender thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop after what is queued."""
        self._queue.put(None)
        self._thread.join(5)

    def put(self, record: bridge.Record) -> None:
        """Called on the engine thread: never waits; drops (and counts) when far behind."""
        if self._queued >= MAX_QUEUED:
            self.dropped += 1
            return
        self._queued += 1
        self._queue.put(record)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        layer = get_channel_layer()
        try:
            while True:
                first = self._queue.get()
                if first is None:
                    return
                batch = [first]
                while len(batch) < MAX_BATCH:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is None:
                        self._send(loop, layer, batch)
                        return
                    batch.append(item)
                self._send(loop, layer, batch)
        finally:
            loop.close()

    def _send(self, loop: asyncio.AbstractEventLoop, layer: Any, batch: list[bridge.Record]) -> None:
        self._queued -= len(batch)
        dropped, self.dropped = self.dropped, 0
        message = {"type": "attempts", "items": [bridge.live_message(r) for r in batch], "dropped": dropped}
        try:
            if settings.EMBEDDED:
                from schedconsole.live.hub import local_hub_loop

                hub_loop = local_hub_loop()
                if hub_loop is None:
                    return  # no websocket client in this process
                asyncio.run_coroutine_threadsafe(layer.group_send(GROUP, message), hub_loop).result(5)
            else:
                loop.run_until_complete(layer.group_send(GROUP, message))
            self.sent += len(batch)
        except Exception:
            log.warning("live publisher: could not send %d attempts", len(batch), exc_info=True)
