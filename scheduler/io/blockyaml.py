"""A fast reader for the block-style YAML that `kubectl get -o yaml` and PyYAML's dumper write.

Large cluster files are almost always in one narrow style: one node per line, block mappings
and sequences, plain or single-line quoted scalars, `{}` and `[]` for empty collections. Read a
line at a time (most lines of a large file repeat: `      cpu: 100m`, `  - name: pause`, so each
distinct line is taken apart once), that style costs a fraction of libyaml's event stream, whose
Python event objects and marks alone cost more than this whole reader.

The reader accepts only what it can read exactly as `documents._YamlBuilder` would, and raises
`Unsupported` at the first line outside that subset, after yielding only values that are
complete: the caller then reads the same input with libyaml and skips what was already
yielded. Outside the subset are, among others: anchors, aliases and tags, block scalars (`|`,
`>`), flow collections other than `{}` and `[]`, multi-line or escaped quoted scalars, plain
scalars with `: ` or ` #` or spanning lines, comments after a value, merge keys, tabs, carriage
returns and other control characters, directives and `...`, nesting near the depth limit, and
keys over 1000 characters. Nothing here can hit the alias bounds (aliases are refused) or
recurse (the open containers are an explicit stack).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

DEPTH_LIMIT = 90
"""Deeper than this, libyaml's reader (which enforces the real limit and its message) takes over."""
CHUNK = 1 << 20
"""Characters read at a time."""

# Characters that may not start a plain scalar here (YAML indicators, plus ones refused for safety).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`<")
# Control characters, line breaks other than \n (YAML 1.1 counts \x85, \u2028, \u2029), tabs,
# BOMs inside the text and what libyaml refuses as non-printable.
_ODD = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ufeff\u2028\u2029\ud800-\udfff\ufffe\uffff]")
# The ASCII characters `_ODD` lets through: deleting them from ASCII text leaves the odd ones
# (bytes.translate runs ten times as fast as the search on large files, which are ASCII).
_ASCII_FINE = bytes(range(0x20, 0x7F)) + b"\n"
_KEY = re.compile(
    r"""(?:([^\s\-?:,\[\]{}#&*!|>'"%@`<][^\s:#]*(?:\ +[^\s:#]+)*)"""
    r"""|'((?:[^']|'')*)'|"([^"\\]*)"):(?:\ +(.*))?$"""
)
_SQ = re.compile(r"'((?:[^']|'')*)'")
_DQ = re.compile(r'"([^"\\]*)"')
_INTERN_MAX = 64
_KEY_MAX = 1000
_CACHE_LINES = 30_000
_CACHE_LINE_MAX = 160

# What a line is (the first field of a parsed line).
_BLANK, _DOC, _KEYLINE, _DASH_SCALAR, _DASH_SLOT, _DASH_KEY = range(6)
# Stand-ins for values that must be new objects each time a cached line is used, for "on later
# lines", and for "no scalar item held back".
_NEW_MAP, _NEW_SEQ, _LATER, _NONE = object(), object(), object(), object()


class Unsupported(Exception):
    """The input leaves the subset this reader handles; libyaml must read it."""


def checked_lines(chunks: Iterable[str]) -> Iterator[str]:
    """Lines (without their \\n) of text given in chunks, after refusing odd characters per chunk."""
    tail = ""
    first = True
    for chunk in chunks:
        if first:
            first = False
            if chunk.startswith("\ufeff"):
                chunk = chunk[1:]
        if chunk.isascii():
            if chunk.encode("ascii").translate(None, _ASCII_FINE):
                raise Unsupported
        elif _ODD.search(chunk) is not None:
            raise Unsupported
        lines = (tail + chunk).split("\n")
        tail = lines.pop()
        yield from lines
    if tail:
        yield tail


class _Open:
    """An open mapping or sequence: its column and value; `stream` marks the streamed `items`."""

    __slots__ = ("col", "is_map", "stream", "value")

    def __init__(self, col: int, value: Any, stream: bool = False) -> None:
        self.col = col
        self.value = value
        self.is_map = type(value) is dict
        self.stream = stream


class _LineParser:
    """Takes one line apart: (what it is, indent, key column, key, value); cached per distinct line."""

    def __init__(self, resolve_plain: Callable[[str], Any]) -> None:
        self.resolve_plain = resolve_plain
        self.plain: dict[str, Any] = {}
        self.memo: dict[str, str] = {}
        self.cache: dict[str, tuple[int, int, int, Any, Any]] = {}

    def parse(self, line: str) -> tuple[int, int, int, Any, Any]:
        """The parsed line; raises Unsupported."""
        parsed = self.cache.get(line)
        if parsed is not None:
            return parsed
        parsed = self._parse(line)
        if len(line) <= _CACHE_LINE_MAX:
            if len(self.cache) >= _CACHE_LINES:
                self.cache.clear()
            self.cache[line] = parsed
        return parsed

    def _parse(self, line: str) -> tuple[int, int, int, Any, Any]:
        content = line.lstrip(" ")
        if not content or content[0] == "#":
            return (_BLANK, 0, 0, None, None)
        indent = len(line) - len(content)
        if indent == 0 and (content.startswith("---") or content.startswith("...")):
            if content != "---":
                raise Unsupported
            return (_DOC, 0, 0, None, None)
        if content == "-" or content.startswith("- "):
            rest = content[1:]
            entry = rest.lstrip(" ")
            if not entry:
                return (_DASH_SLOT, indent, 0, None, None)
            if entry[0] == "-" and (entry == "-" or entry[1] == " "):
                raise Unsupported
            m = _KEY.match(entry)
            if m is None:
                return (_DASH_SCALAR, indent, 0, None, self.scalar(entry))
            key, value = self.key_value(m)
            return (_DASH_KEY, indent, indent + 1 + len(rest) - len(entry), key, value)
        m = _KEY.match(content)
        if m is None:
            raise Unsupported
        key, value = self.key_value(m)
        return (_KEYLINE, indent, indent, key, value)

    def key_value(self, m: re.Match[str]) -> tuple[Any, Any]:
        plain, single, double, text = m.groups()
        if plain is not None:
            if plain == "<<" or len(plain) > _KEY_MAX:
                raise Unsupported
            key = self.scalar(plain)
        else:
            if single is not None:
                if len(single) > _KEY_MAX:
                    raise Unsupported
                key = single.replace("''", "'")
            else:
                key = double
            if len(key) <= _INTERN_MAX:
                key = self.memo.setdefault(key, key)
        return key, (self.scalar(text) if text else _LATER)

    def scalar(self, text: str) -> Any:
        first = text[0]
        if first == "'":
            m = _SQ.fullmatch(text)
            if m is None:
                raise Unsupported
            value = m.group(1)
            if "''" in value:
                value = value.replace("''", "'")
            return self.memo.setdefault(value, value) if len(value) <= _INTERN_MAX else value
        if first == '"':
            m = _DQ.fullmatch(text)
            if m is None:
                raise Unsupported
            value = m.group(1)
            return self.memo.setdefault(value, value) if len(value) <= _INTERN_MAX else value
        if text == "{}":
            return _NEW_MAP
        if text == "[]":
            return _NEW_SEQ
        if first in _INDICATORS and not (first == "-" and len(text) > 1 and text[1] != " " and text[1] != "-"):
            raise Unsupported
        if ": " in text or " #" in text or text[-1] == ":" or text[-1] == " ":
            raise Unsupported
        value = self.plain.get(text, self.plain)
        if value is self.plain:
            value = self.resolve_plain(text)
            if len(text) <= _INTERN_MAX:
                self.plain[text] = value
        return value


def read_block_documents(
    lines: Iterable[str],
    stream_items: bool,
    resolve_plain: Callable[[str], Any],
    make_item: Callable[[int, int, Any], Any],
    make_document: Callable[[int, Any, int], Any],
) -> Iterator[Any]:
    """Yield `make_item(...)` and `make_document(...)` values as `_YamlBuilder.documents` yields
    Items and Documents; raises Unsupported where the input leaves the subset.

    `lines` come without their line breaks (see `checked_lines`); `resolve_plain` turns a plain
    scalar's text into its value (raising Unsupported when it cannot); quoted scalars are strings.
    """
    parse = _LineParser(resolve_plain).parse
    number = 0
    in_doc = False
    root: Any = None
    streamed = 0
    stack: list[_Open] = []
    top: _Open | None = None
    # A key (or sequence entry) whose value starts on a later line: its parent and key.
    slot_parent: _Open | None = None
    slot_key: Any = None
    # A scalar entry of the streamed list, held back until the next line shows that it does not
    # go on there (`- foo` then `  bar` is the one scalar "foo bar", which libyaml reads).
    held: Any = _NONE
    held_col = 0
    for line in lines:
        what, indent, col, key, value = parse(line)
        if what == _BLANK:
            continue
        if held is not _NONE:
            if indent > held_col:
                raise Unsupported
            yield make_item(number, streamed, held)
            streamed += 1
            held = _NONE
        if value is _NEW_MAP:
            value = {}
        elif value is _NEW_SEQ:
            value = []
        is_dash = what >= _DASH_SCALAR
        if what == _DOC or not in_doc:
            if in_doc:  # the next document starts: finish this one
                yield from _finish_document(number, root, streamed, stack, slot_parent, slot_key, make_item, make_document)
            number += 1
            in_doc = True
            root = top = slot_parent = None
            streamed = 0
            if what == _DOC:
                continue
        # 1. A value announced on an earlier line: a container this line opens, or null.
        if slot_parent is not None:
            parent = slot_parent
            slot_parent = None
            if indent > parent.col or (is_dash and indent == parent.col and parent.is_map):
                top = _open_child(parent, slot_key, indent, is_dash, stack, stream_items)
            else:
                _put_null(parent, slot_key)
        # 2. Close what this line's indentation ends.
        while top is not None and (top.col > indent or (top.col == indent and not is_dash and not top.is_map)):
            closed = stack.pop()
            top = stack[-1] if stack else None
            if top is not None and top.stream:
                yield make_item(number, streamed, closed.value)
                streamed += 1
        # 3. The line continues the open container at its column (or starts the root).
        if top is None:
            if root is not None:
                raise Unsupported
            root = [] if is_dash else {}
            top = _Open(indent, root)
            stack.append(top)
        if top.col != indent or top.is_map is is_dash:
            raise Unsupported
        if what == _KEYLINE:
            if value is _LATER:
                slot_parent, slot_key = top, key
            else:
                top.value[key] = value
        elif what == _DASH_SCALAR:
            if top.stream:
                held, held_col = value, top.col
            else:
                top.value.append(value)
        elif what == _DASH_SLOT:
            slot_parent, slot_key = top, None
        else:
            # A mapping inside the entry (`- name: x`): its keys sit at the entry's column.
            top = _open_child(top, None, col, False, stack, stream_items)
            if value is _LATER:
                slot_parent, slot_key = top, key
            else:
                top.value[key] = value
    if held is not _NONE:
        yield make_item(number, streamed, held)
        streamed += 1
    if in_doc:
        yield from _finish_document(number, root, streamed, stack, slot_parent, slot_key, make_item, make_document)


def _open_child(parent: _Open, key: Any, indent: int, is_dash: bool, stack: list[_Open], stream_items: bool) -> _Open:
    """Open the mapping or sequence a line at `indent` starts as the value of `parent`'s `key`
    (or as its next entry); the top-level list of a List's `items` is streamed when asked."""
    if len(stack) >= DEPTH_LIMIT:
        raise Unsupported
    child: Any = [] if is_dash else {}
    streams = stream_items and is_dash and len(stack) == 1 and parent.is_map and key == "items"
    if parent.is_map:
        if streams and key in parent.value:
            raise Unsupported  # a second `items`: leave the bookkeeping to libyaml
        parent.value[key] = child
    elif not parent.stream:
        parent.value.append(child)
    top = _Open(indent, child, streams)
    stack.append(top)
    return top


def _put_null(parent: _Open, key: Any) -> None:
    """A value announced and never given: null."""
    if parent.stream:
        raise Unsupported  # a null item of a streamed list: rare, left to libyaml
    if parent.is_map:
        parent.value[key] = None
    else:
        parent.value.append(None)


def _finish_document(
    number: int,
    root: Any,
    streamed: int,
    stack: list[_Open],
    slot_parent: _Open | None,
    slot_key: Any,
    make_item: Callable[[int, int, Any], Any],
    make_document: Callable[[int, Any, int], Any],
) -> Iterator[Any]:
    """Close a document: a value still announced is null, the open containers close (streamed
    entries are yielded as items), then the document."""
    if slot_parent is not None:
        _put_null(slot_parent, slot_key)
    while stack:
        closed = stack.pop()
        if stack and stack[-1].stream:
            yield make_item(number, streamed, closed.value)
            streamed += 1
    yield make_document(number, root, streamed)


__all__ = ["CHUNK", "DEPTH_LIMIT", "Unsupported", "checked_lines", "read_block_documents"]
