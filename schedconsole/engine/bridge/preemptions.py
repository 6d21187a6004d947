"""Each preemption's timeline as it happens: the nomination, every API call's steps, the retries.

The engine tells `on_api_call` of each step of the calls a preemption makes (DisruptionTarget patch,
delete, nominatedNodeName patch or clear: started, finished, error) and `on_record` of every
attempt; nothing is rebuilt from the history. Kept in memory for the newest `keep` preemptors
(a restart starts an empty timeline; the history still has the attempts).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from schedconsole.engine.bridge.answers import PreemptionPage

KEEP_PREEMPTORS = 500
KEEP_EVENTS = 200


class PreemptionTimeline:
    """Stories per preemptor uid, newest first; safe to feed from the engine's API threads."""

    def __init__(self, keep: int = KEEP_PREEMPTORS, keep_events: int = KEEP_EVENTS) -> None:
        self.keep, self.keep_events = keep, keep_events
        self._stories: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def _story(self, uid: str, pod: str, create: bool) -> dict[str, Any] | None:
        story = self._stories.get(uid)
        if story is None and create:
            story = {"pod": pod, "uid": uid, "nominated": None, "victims": [], "events": [], "state": "preempting", "dropped": 0}
            self._stories[uid] = story
            while len(self._stories) > self.keep:
                self._stories.popitem(last=False)
        if story is not None:
            self._stories.move_to_end(uid)
        return story

    def _add(self, story: dict[str, Any], event: dict[str, Any]) -> None:
        events = story["events"]
        if len(events) >= self.keep_events:
            events.pop(1)  # keep the first (the nomination) and the newest
            story["dropped"] += 1
        events.append(event)

    def on_api_call(self, event: Any) -> None:
        """A step of an API call (`scheduler.ApiCallEvent`)."""
        with self._lock:
            story = self._story(event.preemptor_uid, event.preemptor, create=True)
            assert story is not None
            self._add(
                story, {"at": event.at, "call": event.call, "target": event.target, "phase": event.phase, "error": event.error}
            )
            if event.call == "preemption":
                story["state"] = "victims gone" if event.phase == "finished" else "API call failed"

    def on_record(self, record: Any, update: bool = False) -> None:
        """An attempt: a nomination starts (or restarts) a story; a later attempt of a known
        preemptor is its retry; an update (the binding's result) changes that retry's outcome."""
        nominated = record.outcome == "Nominated" and record.nominated_node
        with self._lock:
            story = self._story(record.uid, record.pod, create=bool(nominated) and not update)
            if story is None:
                return
            if update:
                for event in reversed(story["events"]):
                    if event["call"] == "retry" and event["at"] == record.at:
                        event.update(
                            target=record.node or "",
                            phase=record.outcome,
                            error="" if record.outcome == "Scheduled" else record.message,
                        )
                        break
                story["state"] = "bound" if record.outcome == "Scheduled" else f"retry: {record.outcome}"
                return
            if nominated:
                story["nominated"], story["victims"] = record.nominated_node, list(record.victims)
                self._add(
                    story,
                    {
                        "at": record.at,
                        "call": "nominated",
                        "target": record.nominated_node,
                        "phase": "finished",
                        "error": "",
                        "victims": list(record.victims),
                    },
                )
                return
            self._add(
                story,
                {
                    "at": record.at,
                    "call": "retry",
                    "target": record.node or "",
                    "phase": record.outcome,
                    "error": "" if record.outcome == "Scheduled" else record.message,
                },
            )
            story["state"] = "bound" if record.outcome == "Scheduled" else f"retry: {record.outcome}"

    def page(self, offset: int = 0, limit: int = 50) -> PreemptionPage:
        """Stories newest first, one page: `{"count", "results"}`."""
        limit = max(1, min(int(limit), 200))
        with self._lock:
            uids = list(reversed(self._stories))[offset : offset + limit]
            results = [_copy(self._stories[uid]) for uid in uids]
            count = len(self._stories)
        return PreemptionPage(count=count, results=results)


def _copy(story: dict[str, Any]) -> dict[str, Any]:
    return {**story, "victims": list(story["victims"]), "events": [dict(e) for e in story["events"]]}
