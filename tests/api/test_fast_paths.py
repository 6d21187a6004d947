"""The loader's fast paths give what the plain reads give: the same values, or the same error.

Large files are read through shortcuts (field reads that build a field's path only on an error,
tolerations parsed once per distinct list, documents packed with marshal, JSON depth checked by
counting brackets first); each is compared here with the plain code it stands for.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api import selectors
from scheduler.api.fields import (
    FieldError,
    boolean,
    field_bool,
    field_int,
    field_list,
    field_map,
    field_str,
    field_string_map,
    field_time,
    integer,
    join,
    mapping,
    sequence,
    string,
    string_map,
    timestamp,
)
from scheduler.api.objects import _field_amounts, pack, parse_pod, pod_requests, resource_amounts, to_resource_list, unpack
from scheduler.io.blockyaml import _ODD, Unsupported, checked_lines
from scheduler.io.documents import MAX_DEPTH, DocumentError, Item, read_documents
from tests.support.examples import examples

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.sampled_from(["100m", "1Gi", "2026-01-01T00:00:00Z", "2026-13-01", "Exists", "1e30", "-1", "x"]),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=4), st.integers(0, 3), st.booleans()), children, max_size=3),
    ),
    max_leaves=8,
)


def outcome(read: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    try:
        return ("value", read(*args))
    except FieldError as exc:
        return ("error", str(exc))


PLAIN: list[tuple[Callable[..., Any], Callable[..., Any], tuple[Any, ...]]] = [
    (field_map, mapping, ()),
    (field_list, sequence, ()),
    (field_str, string, ()),
    (field_str, string, ("dflt",)),
    (field_int, integer, ()),
    (field_int, integer, (7,)),
    (field_bool, boolean, ()),
    (field_bool, boolean, (True,)),
    (field_string_map, string_map, ()),
    (field_time, timestamp, ()),
]


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(
    st.one_of(st.just({}), st.dictionaries(st.sampled_from(["k", "other"]), values, max_size=2)),
    st.sampled_from(["", "spec", "a.b[0]"]),
)
def test_field_reads_equal_the_plain_reads(data: dict[str, Any], path: str) -> None:
    for fast, plain, extra in PLAIN:
        got = outcome(fast, data, "k", path, *extra)
        want = outcome(plain, data.get("k"), join(path, "k"), *extra)
        assert got == want, (fast.__name__, data)
        if got[0] == "value":
            assert type(got[1]) is type(want[1])


def test_field_time_accepts_a_datetime_as_timestamp_does() -> None:
    moment = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    assert field_time({"t": moment}, "t", "") == timestamp(moment, "t") == moment.timestamp()


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(
    st.dictionaries(
        st.sampled_from(["requests", "limits"]),
        st.one_of(
            values,
            st.dictionaries(
                st.one_of(st.sampled_from(["cpu", "memory", "example.com/gpu"]), st.integers(0, 2)),
                st.one_of(scalars, st.sampled_from(["100m", "1Gi", "-1", "1e30", "99999999999999999999Ei", "0.5", "abc"])),
                max_size=3,
            ),
        ),
        max_size=2,
    )
)
def test_resource_amounts_equal_the_plain_read(data: dict[str, Any]) -> None:
    for key in ("requests", "limits"):
        got = outcome(_field_amounts, data, key, "spec.resources")
        want = outcome(resource_amounts, data.get(key), join("spec.resources", key))
        assert got == want


TOLERATION = st.fixed_dictionaries(
    {},
    optional={
        "key": st.one_of(st.sampled_from(["", "a", "node.kubernetes.io/not-ready"]), scalars),
        "operator": st.one_of(st.sampled_from(["Exists", "Equal", "Like"]), scalars),
        "value": st.one_of(st.sampled_from(["", "v"]), scalars),
        "effect": st.one_of(st.sampled_from(["NoExecute", "NoSchedule", "Sometimes"]), scalars),
        "tolerationSeconds": st.one_of(st.sampled_from([300, 300.0, True, 1, -5, "300"]), st.lists(st.integers(), max_size=1)),
    },
)


@settings(max_examples=examples(400), deadline=None, derandomize=True)
@given(st.lists(st.lists(st.one_of(TOLERATION, scalars), min_size=1, max_size=3), min_size=1, max_size=6))
def test_tolerations_cache_answers_as_the_parser(lists: list[list[Any]]) -> None:
    # Lists that compare equal but differ in type (300 and 300.0, 1 and True) follow each other.
    selectors._TOLERATIONS.clear()
    for raw in lists + lists[::-1]:
        got = outcome(selectors.parse_tolerations, raw, "spec.tolerations")
        want = outcome(selectors._parse_tolerations, raw, "spec.tolerations")
        assert got == want, raw


@pytest.mark.parametrize(
    ("first", "second", "error"),
    [
        (
            [{"key": "a", "operator": "Exists", "tolerationSeconds": 300}],
            [{"key": "a", "operator": "Exists", "tolerationSeconds": 300.0}],
            "tolerationSeconds: expected an integer, got 300.0",
        ),
        (
            [{"key": "a", "operator": "Exists", "tolerationSeconds": 1}],
            [{"key": "a", "operator": "Exists", "tolerationSeconds": True}],
            "tolerationSeconds: expected an integer, got True",
        ),
        (
            [{"key": "a", "operator": "Exists"}],
            [{"key": "a", "operator": ["Exists"]}],
            "operator: expected a string, got list ['Exists']",
        ),
    ],
    ids=["float-after-int", "bool-after-int", "list-after-string"],
)
def test_a_cached_toleration_list_does_not_pass_a_bad_lookalike(first: list[Any], second: list[Any], error: str) -> None:
    selectors._TOLERATIONS.clear()
    selectors.parse_tolerations(first, "spec.tolerations")
    with pytest.raises(
        FieldError, match="^spec.tolerations\\[0\\]." + error.replace("[", "\\[").replace("]", "\\]").replace(".", "\\.") + "$"
    ):
        selectors.parse_tolerations(second, "spec.tolerations")


def test_pods_of_one_workload_share_their_tolerations() -> None:
    tolerations = [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300}]
    one, two = (parse_pod({"metadata": {"name": n}, "spec": {"tolerations": [dict(t) for t in tolerations]}}) for n in "ab")
    assert one.tolerations is two.tolerations
    assert one.tolerations[0].toleration_seconds == 300


@settings(max_examples=examples(200), deadline=None, derandomize=True)
@given(st.dictionaries(st.text(max_size=5), values, max_size=4))
def test_packed_documents_come_back_equal_and_fresh(doc: dict[str, Any]) -> None:
    packed = pack(doc)
    back = unpack(packed)
    assert back == doc
    assert back is not doc and unpack(packed) is not back


def test_a_document_marshal_cannot_write_is_pickled() -> None:
    doc = {"metadata": {"name": "p", "creationTimestamp": datetime.datetime(2026, 1, 1)}}
    packed = pack(doc)
    assert packed[:1] == b"\x80"
    assert unpack(packed) == doc


def _nested(depth: int, shape: str) -> Any:
    """An item nesting `depth` levels: a pod whose spec holds nested lists (with many brackets
    inside a string), or bare lists (as many brackets as levels)."""
    if shape == "lists":
        value: Any = []
        for _ in range(depth - 1):
            value = [value]
        return value
    value = "x"
    for _ in range(depth - 2):
        value = [value]
    return {"kind": "Pod", "metadata": {"name": "p", "annotations": {"a": "{[" * MAX_DEPTH}}, "spec": {"x": value}}


@pytest.mark.parametrize("shape", ["lists", "pod"])
def test_streamed_json_items_nest_up_to_the_limit(shape: str) -> None:
    # A List's item sits 2 levels down (the List and its items), so it may nest MAX_DEPTH - 2 deep.
    def read(depth: int) -> list[Any]:
        text = json.dumps({"kind": "List", "items": [_nested(depth, shape)]})
        return [p for p in read_documents(text, json_text=True, stream_items=True) if isinstance(p, Item)]

    assert len(read(MAX_DEPTH - 2)) == 1
    with pytest.raises(DocumentError, match=f"nesting deeper than {MAX_DEPTH} levels"):
        read(MAX_DEPTH - 1)


@pytest.mark.parametrize("code", range(128))
def test_ascii_check_of_the_line_reader_refuses_what_the_pattern_refuses(code: int) -> None:
    text = f"a: x{chr(code)}y\n" * 3
    try:
        list(checked_lines([text]))
        refused = False
    except Unsupported:
        refused = True
    assert refused == (_ODD.search(text) is not None)


@settings(max_examples=examples(200), deadline=None, derandomize=True)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"name": st.just("c")},
            optional={
                "resources": st.fixed_dictionaries(
                    {},
                    optional={
                        "requests": st.dictionaries(
                            st.sampled_from(["cpu", "memory", "example.com/gpu"]),
                            st.sampled_from(["0", "100m", "1.5", "1Gi", "3"]),
                            max_size=3,
                        ),
                        "limits": st.dictionaries(
                            st.sampled_from(["cpu", "memory"]), st.sampled_from(["200m", "2Gi", "4"]), max_size=2
                        ),
                    },
                )
            },
        ),
        min_size=1,
        max_size=2,
    ),
    st.booleans(),
)
def test_one_container_requests_equal_the_sum(containers: list[dict[str, Any]], overhead: bool) -> None:
    spec: dict[str, Any] = {"containers": containers}
    if overhead:
        spec["overhead"] = {"cpu": "10m"}
    pod = parse_pod({"metadata": {"name": "p"}, "spec": spec})
    assert pod.requests == to_resource_list(pod_requests(pod))
    assert list(pod.requests) == list(to_resource_list(pod_requests(pod)))
