"""The web side of the live view: one hub per process reads the group and fans out to its clients.

Each client owns a bounded buffer. Offering never waits: when a client's buffer is full the oldest
message is dropped and counted, and the client is told `{"type": "missed", "count": N}` before
its next message. A slow client therefore never slows the engine or the other clients. Each
message is encoded once for all clients, and each client is sent at most `rate` messages a
second (the rest coalesce into the missed count): a person reads a few rows a second, and
sending every attempt to every one of hundreds of clients would take the CPU the engine needs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from channels.layers import get_channel_layer

from schedconsole.engine.bridge import LiveRecord, live_message

log = logging.getLogger(__name__)
# The channel-layer group the engine sends attempts to; each web process's hub is its member.
GROUP = "live.attempts"
# Rate-capped clients sleep until the next multiple of this after their second is over.
WAKE_GRID_SECONDS = 0.05


class LiveItem:
    """One attempt on its way to clients: what filters read, and its JSON text made on first use,
    once for every client."""

    __slots__ = ("_record", "_text", "pod", "profile")

    def __init__(self, pod: str, profile: str, text: str | None = None, record: LiveRecord | None = None) -> None:
        self.pod = pod
        self.profile = profile
        self._text = text
        self._record = record  # an engine record whose message is built only if it is sent

    @classmethod
    def of_message(cls, message: dict[str, Any]) -> LiveItem:
        """From a message that came through the channel layer."""
        return cls(message.get("pod", ""), message.get("profile", ""), json.dumps(message))

    @classmethod
    def of_record(cls, record: LiveRecord) -> LiveItem:
        """From an engine record in this process (the message is built only if it is sent)."""
        return cls(record.pod, record.profile, record=record)

    @classmethod
    def missed(cls, count: int) -> LiveItem:
        """The notice that `count` messages were dropped for a client."""
        return cls("", "", json.dumps({"type": "missed", "count": count}))

    @property
    def text(self) -> str:
        """The message's JSON, encoded once for every client."""
        if self._text is None:
            assert self._record is not None  # made from a record or with its text
            self._text = json.dumps(live_message(self._record))
            self._record = None
        return self._text


# A client folds the batches offered to it into its buffer once this many are waiting.
PENDING_BATCHES = 32


class ClientBuffer:
    """One client's bounded queue of messages, with its filter and missed count.

    Offering a batch only keeps a reference to it (the hub offers every batch to every client, 20
    times a second); the client folds the batches into its buffer when it next sends, or when 32
    are waiting, keeping the newest `maxsize` that pass its filters and counting the rest missed,
    as if each had been queued on arrival."""

    def __init__(self, maxsize: int, send: Callable[[str], Awaitable[None]], rate: float = 0.0) -> None:
        self.maxsize = maxsize
        self.rate = rate
        self._items: deque[LiveItem] = deque(maxlen=maxsize)
        self._missed = 0
        self._filters: dict[str, str] = {}
        self._pending: list[list[LiveItem]] = []
        self._send = send
        self._ready = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    @property
    def items(self) -> deque[LiveItem]:
        """The queued messages, oldest first."""
        if self._pending:
            self._fold()
        return self._items

    @property
    def missed(self) -> int:
        """How many messages were dropped since the last notice."""
        if self._pending:
            self._fold()
        return self._missed

    @missed.setter
    def missed(self, value: int) -> None:
        self._missed = value

    @property
    def filters(self) -> dict[str, str]:
        """Profile, namespace and pod the client asked for (empty: everything)."""
        return self._filters

    @filters.setter
    def filters(self, value: dict[str, str]) -> None:
        if self._pending:
            self._fold()  # what arrived before the change was filtered by the old filters
        self._filters = value

    def accepts(self, item: LiveItem) -> bool:
        """Whether the attempt passes the client's filters (profile, namespace, pod)."""
        f = self._filters
        if not f:
            return True
        pod = item.pod
        namespace, _, name = pod.partition("/")
        if f.get("profile") and item.profile != f["profile"]:
            return False
        if f.get("namespace") and namespace != f["namespace"]:
            return False
        return not f.get("pod") or f["pod"] in (pod, name) or f["pod"] in pod

    def offer(self, message: dict[str, Any]) -> None:
        """Queue one message without waiting; drop the oldest when full."""
        self.offer_batch([LiveItem.of_message(message)])

    def offer_batch(self, items: list[LiveItem]) -> None:
        """Queue a batch without waiting (the list is kept as it is: callers must not change it)."""
        if not items:
            return
        self._pending.append(items)
        if len(self._pending) >= PENDING_BATCHES:
            self._fold()
        self._ready.set()

    def _fold(self) -> None:
        """Move the waiting batches into the buffer: their newest `maxsize` accepted messages; the
        accepted ones before those, and the buffer's oldest pushed out by them, count as missed."""
        pending, self._pending = self._pending, []
        maxsize = self.maxsize
        if self._filters:
            kept = [item for batch in pending for item in batch if self.accepts(item)]
            accepted = len(kept)
            kept = kept[-maxsize:]
        else:
            accepted = sum(len(batch) for batch in pending)
            kept = []
            for batch in reversed(pending):  # only the newest `maxsize` are ever looked at
                room = maxsize - len(kept)
                kept[:0] = batch[-room:] if len(batch) > room else batch
                if len(kept) >= maxsize:
                    break
        if not accepted:
            return
        overflow = len(self._items) + accepted - maxsize
        if overflow > 0:
            self._missed += overflow  # the deque drops its oldest
        self._items.extend(kept)

    def note_missed(self, count: int) -> None:
        """Messages lost before they reached this process count as missed too."""
        if count:
            self._missed += count
            self._ready.set()

    async def run(self) -> None:
        """Send queued messages in order, a missed notice first when some were dropped.

        With a rate cap, at most `rate` messages go out per second, and the missed notices (at
        most one per second, counting everything dropped meanwhile) come on top of them. What is
        due at one wake-up goes out then, one websocket message per attempt (docs/architecture.md, "The live message"),
        each through the consumer's send."""
        loop = asyncio.get_running_loop()
        window, sent, noticed = loop.time(), 0, False
        while True:
            await self._ready.wait()
            self._ready.clear()
            while self.items or self._missed:
                if self.rate > 0:
                    now = loop.time()
                    if now - window >= 1.0:
                        window, sent, noticed = now, 0, False
                    elif sent >= self.rate or (noticed and not self.items):
                        # Meanwhile the buffer coalesces. Clients wake on a shared grid, so the
                        # web thread takes the interpreter lock from the engine a few times a
                        # second for all of them, not once per client.
                        wake = math.ceil((window + 1.0) / WAKE_GRID_SECONDS) * WAKE_GRID_SECONDS
                        await asyncio.sleep(wake - now)
                        continue
                burst: list[LiveItem] = []
                if self._missed and not (self.rate > 0 and noticed):
                    count, self._missed = self._missed, 0
                    noticed = True
                    burst.append(LiveItem.missed(count))
                items = self._items
                room = self.rate - sent if self.rate > 0 else len(items)
                while items and room > 0:
                    burst.append(items.popleft())
                    room -= 1
                    sent += 1
                for item in burst:
                    await self._send(item.text)


class Hub:
    """Members of this process's fan-out and the task that reads the group."""

    def __init__(self) -> None:
        self.clients: set[ClientBuffer] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None

    async def join(self, client: ClientBuffer) -> None:
        """Add a client; on first use in this loop, join the group before returning (so that the
        engine sees a listener from the moment the client is welcomed) and start reading it."""
        self.clients.add(client)
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self.loop is not loop:
            self.loop = loop
            layer = get_channel_layer()
            channel = await layer.new_channel("live-hub.")
            await layer.group_add(GROUP, channel)
            if self._task is None or self._task.done():
                self._task = loop.create_task(self._read(channel))
            else:
                await layer.group_discard(GROUP, channel)

    def leave(self, client: ClientBuffer) -> None:
        """Remove a client; the last one out takes the hub out of the group, so the engine knows
        that nobody in this process is watching (see `LivePublisher`)."""
        self.clients.discard(client)
        if not self.clients and self._task is not None:
            self._task.cancel()
            self._task = None

    def deliver(self, message: dict[str, Any]) -> None:
        """Fan one batch from the channel layer out to every client."""
        self.deliver_items([LiveItem.of_message(m) for m in message.get("items", ())], int(message.get("dropped", 0)))

    def deliver_items(self, items: list[LiveItem], dropped: int = 0) -> None:
        """Fan a batch out to every client (the embedded publisher calls this on the hub's loop)."""
        for client in list(self.clients):
            client.note_missed(dropped)
            client.offer_batch(items)

    async def _read(self, first: str) -> None:
        """Read the group while this process has clients. A channel-layer error (Redis slow or
        restarting) costs the messages of that moment, not the live view: the hub joins again."""
        layer = get_channel_layer()
        failures = 0
        channel: str | None = first
        while True:
            try:
                if channel is None:
                    channel = await layer.new_channel("live-hub.")
                    await layer.group_add(GROUP, channel)
                while True:
                    self.deliver(await layer.receive(channel))
                    failures = 0
            except asyncio.CancelledError:
                raise
            except Exception:
                failures += 1
                log.warning(
                    "live hub: reading the channel layer failed (%d in a row); joining again", failures, exc_info=failures == 1
                )
                await asyncio.sleep(min(5.0, 0.1 * 2**failures))
            finally:
                if channel is not None:
                    try:
                        await layer.group_discard(GROUP, channel)
                    except Exception:
                        pass
                    channel = None


hub = Hub()


def local_hub_loop() -> asyncio.AbstractEventLoop | None:
    """The loop this process's hub reads in, if any client has connected (embedded mode)."""
    loop = hub.loop
    return loop if loop is not None and hub.clients and not loop.is_closed() else None
