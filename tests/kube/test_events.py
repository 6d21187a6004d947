"""Events as client-go's broadcaster sends them: per-profile reportingController, and repeats
folded into a series (count 2 patched at once, later counts every 30 minutes, a series ended after
six minutes without a repeat)."""

from __future__ import annotations

from typing import Any

from scheduler.kube.events import EventBroadcaster

POD = {"namespace": "ns", "name": "p", "uid": "uid-p"}


class Sink:
    """Records the requests; a clock the test moves."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        self.now = 1_800_000_000.0

    def __call__(self, verb: str, path: str, body: Any, content_type: str) -> None:
        self.requests.append((verb, path, body))


def broadcaster(sink: Sink) -> EventBroadcaster:
    return EventBroadcaster(sink, hostname="host-1", clock=lambda: sink.now)


def test_an_event_names_its_profile() -> None:
    sink = Sink()
    events = broadcaster(sink)
    events.record("Warning", "FailedScheduling", POD, "bin-packing", "0/3 nodes are available")
    events.flush()
    [(verb, path, event)] = sink.requests
    assert (verb, path) == ("POST", "/apis/events.k8s.io/v1/namespaces/ns/events")
    assert event["reportingController"] == "bin-packing" and event["reportingInstance"] == "bin-packing-host-1"
    assert event["action"] == "Scheduling" and event["note"] == "0/3 nodes are available"
    assert event["regarding"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "ns", "name": "p", "uid": "uid-p"}


def test_repeats_fold_into_a_series() -> None:
    sink = Sink()
    events = broadcaster(sink)
    events.record("Warning", "FailedScheduling", POD, "default-scheduler", "first note")
    events.flush()
    name = sink.requests[0][2]["metadata"]["name"]
    for seconds, note in ((10, "second"), (20, "third"), (30, "fourth")):
        sink.now += seconds
        events.record("Warning", "FailedScheduling", POD, "default-scheduler", note)  # the note does not count
    events.flush()
    assert [r[0] for r in sink.requests] == ["POST", "PATCH"]
    _, path, patch = sink.requests[1]
    assert path == f"/apis/events.k8s.io/v1/namespaces/ns/events/{name}"
    assert patch["series"]["count"] == 2
    # Another profile's, or another reason's, Event is its own.
    events.record("Warning", "FailedScheduling", POD, "bin-packing", "x")
    events.record("Normal", "Scheduled", POD, "default-scheduler", "x")
    events.flush()
    assert [r[0] for r in sink.requests] == ["POST", "PATCH", "POST", "POST"]
    # Thirty minutes on (repeats keep the series alive), the grown count is patched.
    for _ in range(6):
        sink.now += 300
        events.record("Warning", "FailedScheduling", POD, "default-scheduler", "again")
    events._maintain()
    events.flush()
    assert sink.requests[-1][0] == "PATCH" and sink.requests[-1][2]["series"]["count"] == 10
    # Six minutes without a repeat end the series: the next one is a new Event.
    sink.now += 361
    events._maintain()
    events.record("Warning", "FailedScheduling", POD, "default-scheduler", "later")
    events.flush()
    assert sink.requests[-1][0] == "POST" and sink.requests[-1][2]["note"] == "later"


def test_a_series_whose_event_is_gone_is_created_again() -> None:
    """client-go's recordEvent: a series patch answered 404 falls back to creating the Event,
    with its name and series; any other refusal of the patch is dropped, as before."""
    from scheduler.kube.client import RemoteError

    class Gone(Sink):
        refuse = 404

        def __call__(self, verb: str, path: str, body: Any, content_type: str) -> None:
            super().__call__(verb, path, body, content_type)
            if verb == "PATCH":
                raise RemoteError(self.refuse, "NotFound" if self.refuse == 404 else "Forbidden", "events not found")

    sink = Gone()
    events = broadcaster(sink)
    events.record("Warning", "FailedScheduling", POD, "default-scheduler", "first note")
    sink.now += 10
    events.record("Warning", "FailedScheduling", POD, "default-scheduler", "second note")
    events.flush()
    assert [r[0] for r in sink.requests] == ["POST", "PATCH", "POST"]
    first, again = sink.requests[0][2], sink.requests[2][2]
    assert sink.requests[2][1] == "/apis/events.k8s.io/v1/namespaces/ns/events"
    assert again == {**first, "series": {"count": 2, "lastObservedTime": sink.requests[1][2]["series"]["lastObservedTime"]}}
    assert (events.recreated, events.sent, events.patched) == (1, 2, 0)
    sink.refuse = 403
    other = {**POD, "name": "q"}
    events.record("Warning", "FailedScheduling", other, "default-scheduler", "x")
    events.record("Warning", "FailedScheduling", other, "default-scheduler", "x")
    events.flush()
    assert [r[0] for r in sink.requests[3:]] == ["POST", "PATCH"] and events.recreated == 1
