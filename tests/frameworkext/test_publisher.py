"""Attempt-record subscribers: bounded buffers, drops counted and told, never blocking the publisher."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from scheduler.frameworkext.extender import Extender
from scheduler.frameworkext.publisher import Missed, Publisher, attempt_message, record_filter
from tests.support.builders import make_pod
from tests.support.engines import base_registry, config, engine, profile


def test_a_slow_subscriber_loses_the_oldest_and_is_told_how_many() -> None:
    pub: Publisher[int] = Publisher()
    slow = pub.subscribe(maxsize=3)
    fast = pub.subscribe(maxsize=100)
    for i in range(10):
        pub.publish(i)
    assert slow.drain() == [Missed(7), 7, 8, 9]
    assert fast.drain() == list(range(10))
    assert slow.missed_total == 7
    pub.publish(10)
    assert slow.get(timeout=0) == 10  # nothing missed since the last read


def test_get_reports_missed_first_then_items() -> None:
    pub: Publisher[str] = Publisher()
    sub = pub.subscribe(maxsize=1)
    pub.publish("a")
    pub.publish("b")
    assert [sub.get(timeout=0), sub.get(timeout=0), sub.get(timeout=0)] == [Missed(1), "b", None]


def test_publishing_never_waits_for_a_reader() -> None:
    pub: Publisher[int] = Publisher()
    subs = [pub.subscribe(maxsize=8) for _ in range(5)]  # nobody ever reads
    started = time.perf_counter()
    for i in range(20000):
        pub.publish(i)
    assert time.perf_counter() - started < 2.0
    assert all(len(s) == 8 for s in subs)


def test_a_reader_thread_gets_everything_when_it_keeps_up() -> None:
    pub: Publisher[int] = Publisher()
    sub = pub.subscribe(maxsize=100000)
    got: list[object] = []
    reader = threading.Thread(target=lambda: got.extend(sub))
    reader.start()
    for i in range(1000):
        pub.publish(i)
    sub.close()
    reader.join(timeout=5)
    assert got[:1000] == list(range(1000))
    assert pub.subscribers == 0


def test_close_wakes_a_blocked_reader() -> None:
    pub: Publisher[int] = Publisher()
    sub = pub.subscribe()
    out: list[object] = []
    reader = threading.Thread(target=lambda: out.append(sub.get()))
    reader.start()
    time.sleep(0.05)
    sub.close()
    reader.join(timeout=5)
    assert out == [None]


def test_a_buffer_needs_room_for_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Publisher[int]().subscribe(maxsize=0)


@dataclass
class Rec:
    profile: str
    pod: str


FILTER_CASES = [
    ({}, ["a/x@p1", "b/y@p1", "a/z@p2"]),
    ({"profile": "p1"}, ["a/x@p1", "b/y@p1"]),
    ({"namespace": "a"}, ["a/x@p1", "a/z@p2"]),
    ({"pod": "b/y"}, ["b/y@p1"]),
    ({"profile": "p2", "namespace": "b"}, []),
]


@pytest.mark.parametrize(("kwargs", "want"), FILTER_CASES, ids=["all", "profile", "namespace", "pod", "none"])
def test_record_filter(kwargs: dict[str, str], want: list[str]) -> None:
    pub: Publisher[Rec] = Publisher()
    sub = pub.subscribe(accept=record_filter(**kwargs))  # type: ignore[arg-type]
    for r in (Rec("p1", "a/x"), Rec("p1", "b/y"), Rec("p2", "a/z")):
        pub.publish(r)
    assert [f"{r.pod}@{r.profile}" for r in sub.drain()] == want  # type: ignore[union-attr]


def test_a_failing_filter_does_not_break_publishing() -> None:
    pub: Publisher[int] = Publisher()
    bad = pub.subscribe(accept=lambda i: 1 // 0 == 0)
    good = pub.subscribe()
    pub.publish(1)
    assert (bad.drain(), good.drain()) == ([], [1])


def test_the_engine_publishes_one_record_per_attempt() -> None:
    ext = Extender()
    sub = ext.records.subscribe()
    eng = engine(config(profile()), base_registry(), ext, pods=[make_pod("a"), make_pod("b")])
    eng.scheduler.run()
    records = sub.drain()
    assert [r.pod for r in records] == ["default/a", "default/b"]  # type: ignore[union-attr]
    message = attempt_message(records[0])  # type: ignore[arg-type]
    assert message == {
        "type": "attempt",
        "at": "2026-01-01T00:00:00Z",
        "profile": "default-scheduler",
        "pod": "default/a",
        "outcome": "Scheduled",
        "node": message["node"],
        "feasibleNodes": 3,
        "scores": [],
    }
    assert message["node"] in {"n0", "n1", "n2"}


def test_get_batch_lingers_to_take_many_at_once() -> None:
    pub: Publisher[int] = Publisher()
    sub = pub.subscribe(maxsize=1000)
    batches: list[list[object]] = []
    reader = threading.Thread(target=lambda: batches.append(sub.get_batch(timeout=5, linger=0.2)))
    reader.start()
    time.sleep(0.05)
    for i in range(100):
        pub.publish(i)
    reader.join(timeout=5)
    assert batches == [list(range(100))]
    assert sub.get_batch(timeout=0.01) == []


def test_get_batch_reports_missed_first() -> None:
    pub: Publisher[int] = Publisher()
    sub = pub.subscribe(maxsize=2)
    for i in range(5):
        pub.publish(i)
    assert sub.get_batch(timeout=0, linger=0) == [Missed(3), 3, 4]
