"""Bounded, fast reading of YAML and JSON documents for every file the engine reads.

YAML in the block style kubectl and PyYAML write is read a line at a time by
`scheduler.io.blockyaml`; at the first line outside that style, libyaml's C parser (PyYAML's
pure-Python parser when libyaml is missing) reads the input from its start, skipping what was
already yielded, and values are built from its event stream by one loop with an explicit stack,
so nothing recurses however deep the input nests. Both give the same values. Bounds, enforced
while reading, before anything is built or printed:

- nesting deeper than `MAX_DEPTH` levels is an error (Kubernetes objects nest about 12 deep);
- alias expansion is limited as go-yaml limits it (sigs.k8s.io/yaml, hence kubectl): nodes
  reached through aliases may be at most 99% of all nodes in small documents, falling to 10%
  in documents of four million nodes ("document contains excessive aliasing");
- an anchor used inside itself (a recursive alias) is refused.

Scalars resolve as PyYAML's SafeLoader resolves them (YAML 1.1: `yes`, `0x1F`, `~`), except
that timestamps stay strings, as Kubernetes reads them, and only JSON-compatible tags are
accepted (the API server takes JSON); every value read is JSON-compatible.

JSON is read with the standard library's C scanner. The `items` list of a top-level object
(a `kind: List`, as `kubectl get -o yaml|json` writes it) can be streamed item by item, so a
large file is never held as one tree of dicts.
"""

from __future__ import annotations

import functools
import io
import json
import json.decoder
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import IO, Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from scheduler.io.blockyaml import CHUNK, Unsupported, checked_lines, read_block_documents

try:
    from yaml._yaml import CParser as _Parser

    LIBYAML = True
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.loader import SafeLoader as _Parser  # type: ignore[assignment]

    LIBYAML = False

MAX_DEPTH = 100
"""Deepest nesting of lists and mappings accepted in any file."""

_ALIAS_RATIO_LOW = 400_000
_ALIAS_RATIO_HIGH = 4_000_000

_TAG = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT = _TAG + "str", _TAG + "null", _TAG + "bool", _TAG + "int", _TAG + "float"
_MERGE, _TIMESTAMP, _MAP, _SEQ = _TAG + "merge", _TAG + "timestamp", _TAG + "map", _TAG + "seq"
# First character of a plain scalar -> the implicit tags it may have, in PyYAML's order.
_RESOLVERS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    first: [(tag, rx) for tag, rx in rules if tag in (_NULL, _BOOL, _INT, _FLOAT, _MERGE)]
    for first, rules in Resolver.yaml_implicit_resolvers.items()
    if first is not None
}
_CONSTRUCTOR = SafeConstructor()
_INTERN_MAX = 64


class DocumentError(ValueError):
    """Text that cannot be read as YAML or JSON within the bounds; says where when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None, document: int | None = None) -> None:
        where = f"line {line} column {column}: " if line is not None else ""
        super().__init__(where + message)
        self.problem = message
        self.line = line
        self.column = column
        self.document = document


@dataclass(frozen=True, slots=True)
class Item:
    """One element of a top-level `items` list, read before its document is finished."""

    document: int
    index: int
    value: Any


@dataclass(frozen=True, slots=True)
class Document:
    """A finished document; `streamed` counts the `items` elements already given as Items."""

    number: int
    value: Any
    streamed: int = 0


def allowed_alias_ratio(decoded: int) -> float:
    """go-yaml's share of nodes that may come from alias expansion, by document size."""
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def looks_like_json(head: str | bytes) -> bool:
    """Whether text starts (after whitespace and a BOM) with `{` or `[`."""
    if isinstance(head, bytes):
        head = head[:64].decode("utf-8", "ignore")
    return head[:64].lstrip("\ufeff \t\r\n")[:1] in ("{", "[")


def read_documents(
    source: str | bytes | IO[bytes],
    *,
    json_text: bool = False,
    stream_items: bool = False,
    strict_keys: bool = False,
    aliases: bool = True,
) -> Iterator[Item | Document]:
    """Yield the documents of YAML (or, with `json_text`, JSON) input, with bounded depth and aliasing.

    With `stream_items`, the elements of a top-level mapping's `items` list are yielded as they
    are read and left out of the finished document. With `strict_keys`, a key repeated in one
    mapping is an error (as in sigs.k8s.io/yaml's strict mode). Without `aliases`, a YAML alias is
    an error (request bodies: JSON has none, and an alias hides how large a value really is).
    Raises DocumentError.
    """
    if json_text:
        text = source.read() if not isinstance(source, (str, bytes)) else source
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DocumentError(f"not UTF-8: {exc.reason} at byte {exc.start}") from None
        yield from _json_documents(text.lstrip("\ufeff"), stream_items, strict_keys)
    else:
        yield from _yaml_documents(source, stream_items, strict_keys, aliases)


def load_all(
    source: str | bytes | IO[bytes], *, json_text: bool = False, strict_keys: bool = False, aliases: bool = True
) -> list[Any]:
    """Every document of the input as a list of values (no streaming)."""
    docs = read_documents(source, json_text=json_text, strict_keys=strict_keys, aliases=aliases)
    return [d.value for d in docs if isinstance(d, Document)]


def load_one(source: str | bytes, *, strict_keys: bool = False) -> Any:
    """The single document of a YAML or JSON text (None when empty); more than one is an error."""
    docs = load_all(source, json_text=looks_like_json(source), strict_keys=strict_keys)
    if len(docs) > 1:
        raise DocumentError(f"expected one document, found {len(docs)}")
    return docs[0] if docs else None


# ----- YAML ---------------------------------------------------------------------------------
def _text_lines(source: str | bytes | IO[bytes]) -> tuple[Iterator[str], Callable[[], str | bytes | IO[bytes]]] | None:
    """The source's lines (split at \n only) and a way to get the source back from its start;
    None when it cannot be read twice (then libyaml alone reads it)."""
    if isinstance(source, str):
        text = source
        return checked_lines(text[i : i + CHUNK] for i in range(0, len(text), CHUNK)), lambda: source
    if isinstance(source, bytes):
        wrapped = io.TextIOWrapper(io.BytesIO(source), encoding="utf-8", newline="\n")
        return checked_lines(iter(functools.partial(wrapped.read, CHUNK), "")), lambda: source
    seekable = getattr(source, "seekable", None)
    if not callable(seekable) or not seekable():
        return None
    start = source.tell()
    wrapper = io.TextIOWrapper(source, encoding="utf-8", newline="\n")

    attached = [wrapper]

    def rewind() -> IO[bytes]:
        while attached:
            attached.pop().detach()  # else collecting the wrapper would close the caller's stream
        source.seek(start)
        return source

    return checked_lines(iter(functools.partial(wrapper.read, CHUNK), "")), rewind


def _plain_for_block(text: str) -> Any:
    """A plain scalar's value for the block reader, resolved exactly as `_YamlBuilder` does."""
    rules = _RESOLVERS.get(text[0])
    if rules is not None:
        for rule_tag, rx in rules:
            if rx.match(text):
                try:
                    return _BLOCK_BUILDER._construct(rule_tag, text, None)
                except DocumentError:
                    raise Unsupported from None
    return text


def _yaml_documents(
    source: str | bytes | IO[bytes], stream_items: bool, strict_keys: bool, aliases: bool = True
) -> Iterator[Item | Document]:
    """Block-style YAML (what kubectl and PyYAML write) through the line reader of `blockyaml`;
    anything outside its subset through libyaml, from the start, skipping what was yielded."""
    lines = None if strict_keys else _text_lines(source)
    if lines is None:
        yield from _YamlBuilder(source, stream_items, strict_keys, aliases).documents()
        return
    it, rewind = lines
    done_documents = 0
    done_items = 0  # Items yielded of the unfinished document
    try:
        for part in read_block_documents(it, stream_items, _plain_for_block, Item, Document):
            if isinstance(part, Document):
                done_documents = part.number
                done_items = 0
            else:
                done_items += 1
            yield part
    except (Unsupported, UnicodeDecodeError):
        pass
    except GeneratorExit:  # the reader stopped early: give the stream back all the same
        rewind()
        raise
    else:
        rewind()
        return
    for part in _YamlBuilder(rewind(), stream_items, strict_keys, aliases).documents():
        if isinstance(part, Document):
            if part.number <= done_documents:
                continue
        elif part.document <= done_documents:
            continue
        elif done_items:
            done_items -= 1
            continue
        yield part


_NO_KEY = object()
_MISSING = object()


class _Frame:
    """What an open list or mapping needs beyond its value: only made when it has any of it."""

    __slots__ = ("anchor", "merges", "seen", "start", "stream", "streamed")

    def __init__(self, start: int, anchor: str | None) -> None:
        self.start = start
        self.anchor = anchor
        self.merges: list[list[dict[Any, Any]]] | None = None
        self.seen: set[Any] | None = None
        self.stream = False
        self.streamed = 0


def _open_frame(decoded: int, anchor: str | None, streams: bool, strict_map: bool, open_anchors: set[str]) -> _Frame:
    """The frame of a container that has an anchor, streams its items or checks its keys."""
    frame = _Frame(decoded, anchor)
    frame.stream = streams
    if anchor is not None:
        open_anchors.add(anchor)
    if strict_map:
        frame.seen = set()
    return frame


_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"  # libyaml's own limit, 1000 levels


class _YamlBuilder:
    """Values from libyaml's events: one loop, an explicit stack, counted aliases."""

    def __init__(self, source: str | bytes | IO[bytes], stream_items: bool, strict_keys: bool, aliases: bool = True) -> None:
        self.parser = _Parser(source)
        self.source = source
        self.stream_items = stream_items
        self.strict_keys = strict_keys
        self.aliases = aliases
        self.memo: dict[str, str] = {}

    def documents(self) -> Iterator[Item | Document]:
        """Yield Items and Documents until the stream ends."""
        try:
            yield from self._run()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark
            problem = exc.problem or str(exc)
            if mark is not None:
                raise DocumentError(problem, mark.line + 1, mark.column + 1) from None
            raise DocumentError(problem) from None
        except yaml.YAMLError as exc:
            raise DocumentError(str(exc)) from None
        finally:
            dispose = getattr(self.parser, "dispose", None)
            if dispose is not None:
                dispose()

    def _fail(self, message: str, event: Any) -> DocumentError:
        mark = getattr(event, "start_mark", None)
        if mark is None:
            return DocumentError(message)
        return DocumentError(message, mark.line + 1, mark.column + 1)

    def _too_deep(self, last: Any, refused: Any, allowed: int) -> DocumentError:
        """libyaml (0.2.5+, under PyYAML 6.0.3+) refuses 1000 levels while it scans ahead, before
        the event that crosses our lower limit reaches the loop: the same fault, placed where the
        input opens its `allowed + 1`-th bracket after the last event (found before libyaml's own
        place `refused`, so a stream is read again only up to that line)."""
        message = f"nesting deeper than {MAX_DEPTH} levels"
        mark = getattr(last, "end_mark", None)
        text = self._text_until(refused.line if refused is not None else None)
        if mark is not None and text is not None:
            place = _opening_past(text, mark.line, mark.column, allowed)
            if place is not None:
                return DocumentError(message, *place)
        return DocumentError(message)

    def _text_until(self, line: int | None) -> str | None:
        """The source's text through 0-based `line` (a seekable stream is read again from its start)."""
        source = self.source
        if isinstance(source, str):
            return source
        if isinstance(source, bytes):
            return source.decode("utf-8", "replace")
        if line is None or not getattr(source, "seekable", lambda: False)():
            return None
        source.seek(0)
        lines = [source.readline() for _ in range(line + 1)]
        return b"".join(lines).decode("utf-8", "replace")

    def _run(self) -> Iterator[Item | Document]:
        """The stream: each document's Items, then the Document (`_document` builds one)."""
        plain: dict[str, Any] = {}  # plain scalars resolved, for the whole stream
        number = 0
        event: Any = None
        while True:
            try:
                event = self.parser.get_event()
            except yaml.MarkedYAMLError as exc:
                if exc.problem == _LIBYAML_TOO_DEEP:
                    raise self._too_deep(event, exc.problem_mark, MAX_DEPTH) from None
                raise
            kind = type(event)
            if kind is yaml.DocumentStartEvent:
                number += 1
                built = yield from self._document(number, plain, event)
                if built is None:
                    return
                root, streamed, event = built
                yield Document(number, root, streamed)
            elif kind is yaml.StreamEndEvent or event is None:
                return

    def _document(self, number: int, plain: dict[str, Any], event: Any) -> Generator[Item, None, tuple[Any, int, Any] | None]:
        """One document's streamed Items, from the event after its start; returns its root, the
        number of Items and its end event (None when the stream ends inside it)."""
        # One loop over libyaml's events; the open container's state lives in locals (the hot
        # path), enclosing ones on `stack`. `frame` holds rare state (anchors, merge keys,
        # strict keys, streamed items) and stays None for most containers.
        get = self.parser.get_event
        ScalarEvent, AliasEvent = yaml.ScalarEvent, yaml.AliasEvent
        MappingStart, SequenceStart = yaml.MappingStartEvent, yaml.SequenceStartEvent
        MappingEnd, SequenceEnd = yaml.MappingEndEvent, yaml.SequenceEndEvent
        memo = self.memo
        strict = self.strict_keys
        stream_items = self.stream_items
        stack: list[tuple[Any, bool, Any, Any, _Frame | None]] = []
        container: Any = None
        is_map = False
        key: Any = _NO_KEY
        key_event: Any = None
        frame: _Frame | None = None
        anchors: dict[str, tuple[Any, int]] = {}
        open_anchors: set[str] = set()
        root: Any = None
        doc_streamed = decoded = aliased = 0
        while True:
            try:
                event = get()
            except yaml.MarkedYAMLError as exc:
                if exc.problem == _LIBYAML_TOO_DEEP:
                    raise self._too_deep(event, exc.problem_mark, MAX_DEPTH - len(stack)) from None
                raise
            kind = type(event)
            if kind is ScalarEvent:
                decoded += 1
                text = event.value
                tag = event.tag
                if tag is None and event.implicit[0]:
                    value = plain.get(text, _MISSING)
                    if value is _MISSING:
                        value = self._resolve(text, event, plain)
                elif tag is None or tag == "!" or tag == _STR:
                    value = memo.setdefault(text, text) if len(text) <= _INTERN_MAX else text
                else:
                    value = self._construct(tag, text, event)
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1)
                if is_map and key is _NO_KEY:
                    key, key_event = value, event
                    continue
            elif kind is MappingStart or kind is SequenceStart:
                decoded += 1
                opening_map = kind is MappingStart
                if len(stack) >= MAX_DEPTH or event.tag is not None or (is_map and key is _NO_KEY):
                    self._check_opening(event, opening_map, len(stack), is_map and key is _NO_KEY)
                streams = stream_items and not opening_map and len(stack) == 1 and is_map and key == "items"
                stack.append((container, is_map, key, key_event, frame))
                frame = None
                if event.anchor is not None or streams or (strict and opening_map):
                    frame = _open_frame(decoded, event.anchor, streams, strict and opening_map, open_anchors)
                container = {} if opening_map else []
                is_map = opening_map
                key = _NO_KEY
                continue
            elif kind is MappingEnd or kind is SequenceEnd:
                value = container
                closed = frame
                container, is_map, key, key_event, frame = stack.pop()
                if closed is not None:
                    value, frame = self._close_frame(closed, value, frame, decoded, anchors, open_anchors)
                    if not stack:
                        doc_streamed = closed.streamed
            elif kind is AliasEvent:
                value, decoded, aliased = self._aliased(event, anchors, open_anchors, decoded, aliased, is_map and key is _NO_KEY)
                if is_map and key is _NO_KEY:
                    key, key_event = value, event
                    continue
            elif kind is yaml.DocumentEndEvent:
                return root, doc_streamed, event
            elif kind is yaml.StreamEndEvent or event is None:
                return None
            else:
                continue
            # Place the finished value in the open container.
            if container is None:
                root = value
            elif is_map:
                if key == "<<" and self._is_merge_key(key_event):
                    frame = self._add_merge(frame, value, key_event)
                else:
                    if frame is not None and frame.seen is not None:
                        self._note_key(frame.seen, key, key_event)
                    container[key] = value
                key = _NO_KEY
            elif frame is not None and frame.stream:
                yield Item(number, frame.streamed, value)
                frame.streamed += 1
            else:
                container.append(value)

    def _resolve(self, text: str, event: Any, plain: dict[str, Any]) -> Any:
        """A plain scalar's value by the first implicit resolver its text matches (else the text).
        It depends on the text alone: short ones (keys, enum values, quantities) are kept in
        `plain`, resolved once per stream and shared."""
        value: Any = text
        if not text:
            value = None
        else:
            rules = _RESOLVERS.get(text[0])
            if rules is not None:
                for rule_tag, rx in rules:
                    if rx.match(text):
                        value = self._construct(rule_tag, text, event)
                        break
        if len(text) <= _INTERN_MAX:
            plain[text] = value
        return value

    def _aliased(
        self,
        event: Any,
        anchors: dict[str, tuple[Any, int]],
        open_anchors: set[str],
        decoded: int,
        aliased: int,
        as_key: bool,
    ) -> tuple[Any, int, int]:
        """An alias's value, and the counts of values decoded and aliased with it: refused when
        aliases are not accepted, it names no finished anchor, the aliasing grows excessive, or a
        list or mapping would be a key."""
        name = event.anchor
        if not self.aliases:
            raise self._fail(f"alias {name!r}: YAML aliases are not accepted here; write the value out", event)
        if name in open_anchors:
            raise self._fail(f"recursive alias {name!r}: an anchor cannot be used inside itself", event)
        found = anchors.get(name)
        if found is None:
            raise self._fail(f"found undefined alias {name!r}", event)
        value, size = found
        decoded += size
        aliased += size
        if aliased > 100 and decoded > 1000 and aliased / decoded > allowed_alias_ratio(decoded):
            raise self._fail("document contains excessive aliasing", event)
        if as_key and isinstance(value, (dict, list)):
            raise self._fail("a mapping key must be a scalar, not a list or mapping", event)
        return value, decoded, aliased

    def _check_opening(self, event: Any, opening_map: bool, depth: int, as_key: bool) -> None:
        """Refuse a list or mapping that nests too deep, has a tag other than its own, or would be a key."""
        if depth >= MAX_DEPTH:
            raise self._fail(f"nesting deeper than {MAX_DEPTH} levels", event)
        tag = event.tag
        if tag is not None and tag != "!" and tag != (_MAP if opening_map else _SEQ):
            raise self._fail(f"unsupported tag {tag!r}: only JSON-compatible values are accepted", event)
        if as_key:
            raise self._fail("a mapping key must be a scalar, not a list or mapping", event)

    def _close_frame(
        self,
        closed: _Frame,
        value: Any,
        frame: _Frame | None,
        decoded: int,
        anchors: dict[str, tuple[Any, int]],
        open_anchors: set[str],
    ) -> tuple[Any, _Frame | None]:
        """A closed container's value (merged, anchored; a streamed list leaves an empty one and
        passes its count to the enclosing frame) and that enclosing frame."""
        if closed.merges is not None:
            value = self._merged(closed.merges, value)
        if closed.anchor is not None:
            open_anchors.discard(closed.anchor)
            anchors[closed.anchor] = (value, decoded - closed.start + 1)
        if closed.stream:
            value = []
            if frame is None:
                frame = _Frame(0, None)
            frame.streamed = closed.streamed
        return value, frame

    def _add_merge(self, frame: _Frame | None, value: Any, key_event: Any) -> _Frame:
        """Note a merge key's sources on the open mapping's frame (made if it has none)."""
        if frame is None:
            frame = _Frame(0, None)
        if frame.merges is None:
            frame.merges = []
        frame.merges.append(self._merge_sources(value, key_event))
        return frame

    def _note_key(self, seen: set[Any], key: Any, event: Any) -> None:
        """Strict keys: refuse a key the mapping has already."""
        if key in seen:
            raise self._fail(f'key "{key}" already set in map', event)
        seen.add(key)

    @staticmethod
    def _is_merge_key(event: Any) -> bool:
        if type(event) is not yaml.ScalarEvent:
            return False
        return bool(event.tag is None and event.implicit[0]) or event.tag == _MERGE

    def _merge_sources(self, value: Any, event: Any) -> list[dict[Any, Any]]:
        sources = value if isinstance(value, list) else [value]
        if not all(isinstance(s, dict) for s in sources):
            raise self._fail("a merge key (<<) needs a mapping or a list of mappings", event)
        return sources

    @staticmethod
    def _merged(merges: list[list[dict[Any, Any]]], explicit: dict[Any, Any]) -> dict[Any, Any]:
        # As PyYAML's flatten_mapping: explicit keys win, then earlier merge sources over later ones.
        out: dict[Any, Any] = {}
        for sources in reversed(merges):
            for source in reversed(sources):
                out.update(source)
        out.update(explicit)
        return out

    def _construct(self, tag: str, text: str, event: Any) -> Any:
        if tag == _NULL:
            return None
        if tag == _BOOL:
            return SafeConstructor.bool_values.get(text.lower(), text)
        if tag == _INT:
            if text.isdigit() and (text[0] != "0" or text == "0") and len(text) < 19:
                return int(text)
            try:
                return _CONSTRUCTOR.construct_yaml_int(ScalarNode(tag, text))
            except ValueError as exc:
                raise self._fail(f"invalid integer {shorten(text)}: {exc}", event) from None
        if tag == _FLOAT:
            try:
                return _CONSTRUCTOR.construct_yaml_float(ScalarNode(tag, text))
            except ValueError as exc:
                raise self._fail(f"invalid number {shorten(text)}: {exc}", event) from None
        if tag == _MERGE:
            return text
        if tag == _TIMESTAMP or tag == _STR or tag == "!":
            return text
        raise self._fail(f"unsupported tag {tag!r}: only JSON-compatible values are accepted", event)


_BLOCK_BUILDER = _YamlBuilder.__new__(_YamlBuilder)
"""A builder used only for `_construct` (which reads nothing from the instance but its `_fail`)."""


def shorten(text: str, limit: int = 40) -> str:
    """A quoted prefix of text for messages."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


# ----- JSON ---------------------------------------------------------------------------------
_WS = re.compile(r"[ \t\n\r]*")
# The C string scanner behind json.loads (not in typeshed's stubs).
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f'key "{key}" already set in map')
        out[key] = value
    return out


def _opening_past(text: str, line: int, column: int, allowed: int) -> tuple[int, int] | None:
    """(line, column), 1-based, of the first flow bracket after `line:column` (0-based) that opens
    more than `allowed` levels; quoted scalars are skipped. None if the text has none."""
    index = 0
    for _ in range(line):
        index = text.find("\n", index) + 1
        if index == 0:
            return None
    index += column
    depth = 0
    quote = ""
    while index < len(text):
        char = text[index]
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
            if depth > allowed:
                return _position(text, index)
        elif char in "]}":
            depth -= 1
        index += 1
    return None


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - text.rfind("\n", 0, index)


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise DocumentError when lists and mappings nest deeper than `limit` (no recursion)."""
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        current, depth = todo.pop()
        if depth > limit:
            raise DocumentError(f"nesting deeper than {limit} levels")
        children = current.values() if type(current) is dict else current
        for child in children:
            if type(child) is dict or type(child) is list:
                todo.append((child, depth + 1))


def _json_documents(text: str, stream_items: bool, strict_keys: bool) -> Iterator[Item | Document]:
    decoder = json.JSONDecoder(object_pairs_hook=_unique_pairs) if strict_keys else json.JSONDecoder()

    def value_at(index: int, nested: int) -> tuple[Any, int]:
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError as exc:
            raise DocumentError(f"{exc.msg}", exc.lineno, exc.colno) from None
        except RecursionError:
            raise DocumentError(f"nesting deeper than {MAX_DEPTH} levels", *_position(text, index)) from None
        except ValueError as exc:  # duplicate keys, integers too long to convert
            raise DocumentError(f"{exc}", *_position(text, index)) from None
        # A value nests at most as deep as it has opening brackets (those inside strings only
        # add to the count): the usual object has far fewer than the limit, and is not walked.
        if (type(value) is dict or type(value) is list) and text.count("{", index, end) + text.count(
            "[", index, end
        ) > MAX_DEPTH - nested:
            try:
                check_depth(value, MAX_DEPTH - nested)
            except DocumentError:
                raise DocumentError(f"nesting deeper than {MAX_DEPTH} levels", *_position(text, index)) from None
        return value, end

    def expect(index: int, chars: str) -> int:
        index = _WS.match(text, index).end()  # type: ignore[union-attr]
        if index >= len(text) or text[index] not in chars:
            found = repr(text[index]) if index < len(text) else "end of input"
            raise DocumentError(f"expected {' or '.join(repr(c) for c in chars)}, found {found}", *_position(text, index))
        return index

    index = _WS.match(text, 0).end()  # type: ignore[union-attr]
    number = 0
    while index < len(text):
        number += 1
        if not stream_items or text[index] != "{":
            value, index = value_at(index, 0)
            yield Document(number, value)
            index = _WS.match(text, index).end()  # type: ignore[union-attr]
            continue
        # A top-level object read key by key, so that `items` can be streamed.
        obj: dict[str, Any] = {}
        streamed = 0
        index = _WS.match(text, index + 1).end()  # type: ignore[union-attr]
        if index < len(text) and text[index] == "}":
            index += 1
        else:
            while True:
                index = expect(index, '"')
                try:
                    key, index = _scanstring(text, index + 1)
                except json.JSONDecodeError as exc:
                    raise DocumentError(f"{exc.msg}", exc.lineno, exc.colno) from None
                if strict_keys and key in obj:
                    raise DocumentError(f'key "{key}" already set in map', *_position(text, index))
                index = expect(index, ":") + 1
                index = _WS.match(text, index).end()  # type: ignore[union-attr]
                if key == "items" and text.startswith("[", index):
                    index = _WS.match(text, index + 1).end()  # type: ignore[union-attr]
                    if text.startswith("]", index):
                        index += 1
                    else:
                        while True:
                            item, index = value_at(index, 2)
                            yield Item(number, streamed, item)
                            streamed += 1
                            index = expect(index, ",]")
                            index += 1
                            if text[index - 1] == "]":
                                break
                            index = _WS.match(text, index).end()  # type: ignore[union-attr]
                    obj[key] = []
                else:
                    obj[key], index = value_at(index, 1)
                index = expect(index, ",}") + 1
                if text[index - 1] == "}":
                    break
        yield Document(number, obj, streamed)
        index = _WS.match(text, index).end()  # type: ignore[union-attr]


__all__ = [
    "LIBYAML",
    "MAX_DEPTH",
    "Document",
    "DocumentError",
    "Item",
    "check_depth",
    "load_all",
    "load_one",
    "looks_like_json",
    "read_documents",
]
