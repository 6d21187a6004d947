"""The block-style YAML reader decides nothing differently from libyaml's: for generated and
mutated YAML, `read_documents` (line reader with libyaml taking over where it must) yields
exactly what the libyaml reader alone yields, or fails with the same message."""

from __future__ import annotations

import io
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.io import documents
from scheduler.io.blockyaml import Unsupported, checked_lines, read_block_documents
from scheduler.io.documents import Document, DocumentError, Item, read_documents
from tests.support.examples import examples


def outcome(parts: Any) -> tuple[list[Any], str | None]:
    """Everything yielded, then the error message (None when the input was read to the end)."""
    got: list[Any] = []
    try:
        for part in parts:
            got.append(part)
    except DocumentError as exc:
        return got, str(exc)
    return got, None


def libyaml_only(text: str, stream_items: bool) -> tuple[list[Any], str | None]:
    return outcome(documents._YamlBuilder(text, stream_items, False).documents())


def both(text: str, stream_items: bool) -> None:
    """The same parts and the same end. One difference is allowed: libyaml reads a line ahead,
    so it may fail before yielding an item that the line reader had already yielded (a correct
    value of the input's start); the error is the same, and nothing is kept of a failed file."""
    want_parts, want_error = libyaml_only(text, stream_items)
    for source in (text, text.encode("utf-8"), io.BytesIO(text.encode("utf-8"))):
        parts, error = outcome(read_documents(source, stream_items=stream_items))
        assert error == want_error
        if error is None:
            assert parts == want_parts
        else:
            assert parts[: len(want_parts)] == want_parts
            assert all(isinstance(p, Item) for p in parts[len(want_parts) :])


def fast_only(text: str, stream_items: bool = True) -> list[Any]:
    return list(read_block_documents(checked_lines([text]), stream_items, documents._plain_for_block, Item, Document))


KEYS = [
    "apiVersion",
    "kind",
    "items",
    "metadata",
    "name",
    "labels",
    "a b",
    "yes",
    "1",
    "null",
    "<<",
    "x:y",
    "#c",
    "-k",
    "'q'",
    "k'",
]
TEXTS = [
    "",
    "v1",
    "100m",
    "yes",
    "no",
    "on",
    "~",
    "null",
    "1",
    "0x1F",
    "0o7",
    "1_000",
    "1e3",
    "-1",
    "-.5",
    ".inf",
    "2026-01-01",
    "a b",
    "a  b",
    "a: b",
    "a #b",
    "a#b",
    "a:b",
    "'",
    "''",
    '"',
    "\\",
    "x\ny",
    " lead",
    "trail ",
    "- x",
    "-x",
    "--x",
    "---",
    "...",
    "{}",
    "[]",
    "[a]",
    "{a: 1}",
    "&a",
    "*a",
    "!x",
    "|",
    ">",
    "%",
    "@",
    "`",
    "?",
    ",",
    "<none>",
    "é",
    "\u2028",
    "\t",
    "#",
    "k: v",
    "1" * 70,
    "a" * 1100,
]
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.sampled_from(TEXTS), st.text(max_size=12)
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.one_of(st.sampled_from(KEYS), scalars), children, max_size=5)
    ),
    max_leaves=25,
)
documents_st = st.lists(
    st.one_of(values, st.fixed_dictionaries({"kind": st.just("List"), "items": st.lists(values, max_size=4)})),
    min_size=1,
    max_size=3,
)


# Kubernetes-like values: mostly what the line reader takes itself, end to end.
tame_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.text(alphabet="abcxyz019./-_: '#", min_size=1, max_size=12),
    st.sampled_from(["100m", "1Gi", "v1", "Pod", "true", "0", ""]),
)
tame_values = st.recursive(
    tame_scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.sampled_from(KEYS[:9]), children, max_size=5)),
    max_leaves=25,
)
tame_documents = st.lists(
    st.one_of(tame_values, st.fixed_dictionaries({"kind": st.just("List"), "items": st.lists(tame_values, max_size=4)})),
    min_size=1,
    max_size=3,
)


def dump(docs: list[Any], indent: int, width: int, explicit_start: bool, flow: bool | None) -> str:
    return yaml.safe_dump_all(
        docs, indent=indent, width=width, explicit_start=explicit_start, default_flow_style=flow, allow_unicode=True
    )


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(documents_st, tame_documents),
    st.sampled_from([2, 4]),
    st.sampled_from([40, 80, 1000]),
    st.booleans(),
    st.sampled_from([False, None]),
    st.booleans(),
)
def test_dumped_yaml_reads_the_same(
    docs: list[Any], indent: int, width: int, explicit_start: bool, flow: bool | None, stream: bool
) -> None:
    both(dump(docs, indent, width, explicit_start, flow), stream)


MUTATIONS = [
    "",
    " ",
    "  ",
    "- ",
    ": ",
    "#",
    " # c",
    "'",
    '"',
    "\t",
    "\r",
    "---",
    "...",
    "&a ",
    "*a",
    "!!str ",
    "|",
    "{",
    "[",
    "<<: ",
    "\ufeff",
    "\x85",
    "?",
]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(documents_st, tame_documents),
    st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0), st.sampled_from(MUTATIONS)), min_size=1, max_size=4),
    st.booleans(),
)
def test_mutated_yaml_reads_the_same_or_fails_the_same(docs: list[Any], edits: list[tuple[int, int, str]], stream: bool) -> None:
    lines = dump(docs, 2, 80, False, False).split("\n")
    for row, col, text in edits:
        line = lines[row % len(lines)]
        at = col % (len(line) + 1)
        lines[row % len(lines)] = line[:at] + text + line[at:]
    both("\n".join(lines), stream)


CASES = [
    ("kubectl List", "apiVersion: v1\nitems:\n- kind: Pod\n  metadata:\n    name: a\n  spec: {}\nkind: List\n"),
    ("indented sequences", "a:\n  - 1\n  - b: 2\n    c: [] \n"),
    ("indentless sequence then key", "a:\n- x\n- y\nb: 1\n"),
    ("entry with a later value", "-\n  a: 1\n- \n- b\n"),
    ("comments and blank lines", "# top\na: 1\n\n  # inside\nb:\n  # before\n  c: 2\n"),
    ("several documents", "a: 1\n---\n---\nb: 2\n"),
    ("explicit empty document", "---\n"),
    ("only comments", "# nothing\n"),
    ("quoted keys and values", "'a''b': 'c''d'\n\"e\": \"f g\"\n"),
    ("continuation line", "a: b\n  c\n"),
    ("block scalar", "a: |\n  text\n"),
    ("alias", "a: &x 1\nb: *x\n"),
    ("bad indentation", "a:\n    b: 1\n  c: 2\n"),
    ("second items", "items:\n- 1\nitems:\n- 2\n"),
    ("null streamed item", "items:\n-\nkind: List\n"),
    ("bad integer", "a: 0b\n"),
    ("crlf", "a: 1\r\nb: 2\r\n"),
    ("error on the line after an item (found by hypothesis)", "items:\n- []\nkind:-  List\n"),
    ("streamed scalar going on on the next line", "items:\n- foo\n  bar\nkind: List\n"),
    (
        "streamed scalar going on, then an error (found by hypothesis)",
        "items:\n- a b:-  '0'\n  apiVersion: null\n  kind: null\nkind: List\n",
    ),
    ("streamed scalars at the end", "items:\n- a\n- b\n"),
    ("streamed scalar before a document", "items:\n- a\n---\nb: 1\n"),
]


@pytest.mark.parametrize("text", [c[1] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("stream", [True, False])
def test_cases_read_the_same(text: str, stream: bool) -> None:
    both(text, stream)


def test_the_line_reader_takes_kubectl_output_itself() -> None:
    text = "apiVersion: v1\nitems:\n- kind: Pod\n  metadata:\n    labels: {}\n    name: a\nkind: List\n"
    parts = fast_only(text)
    assert parts[0] == Item(1, 0, {"kind": "Pod", "metadata": {"labels": {}, "name": "a"}})
    assert parts[1] == Document(1, {"apiVersion": "v1", "items": [], "kind": "List"}, 1)


@pytest.mark.parametrize("text", ["a: &x 1\n", "a: |\n  t\n", "a: b\n  c\n", "a: [1]\n", "a:\tb\n", "<<: {}\n", "a: 'b\n"])
def test_the_line_reader_hands_over_what_it_does_not_handle(text: str) -> None:
    with pytest.raises(Unsupported):
        fast_only(text)


def test_the_callers_stream_stays_open_and_rewound_when_reading_stops_early() -> None:
    stream = io.BytesIO(b"items:\n- a: 1\n- a: 2\nkind: List\n")
    parts = read_documents(stream, stream_items=True)
    assert next(parts) == Item(1, 0, {"a": 1})
    parts.close()
    assert not stream.closed and stream.tell() == 0
