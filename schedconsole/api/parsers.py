"""Request bodies in JSON or YAML, read with the engine's bounds: nesting depth (100 levels, as
for files), no repeated keys, no YAML aliases. A body that breaks one is a 400 naming the line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from schedconsole.engine.bridge import BadInput, parse_body


class JSONParser(BaseParser):
    """One JSON value (DRF's own parser recurses without bound: 1000 levels were a 500)."""

    media_type = "application/json"
    media: str = "json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        """Parse the body; a syntax error names the line."""
        raw = stream.read() if stream is not None else b""
        try:
            return parse_body(raw, self.media)
        except BadInput as exc:
            raise ParseError(exc.message) from exc


class YAMLParser(JSONParser):
    """One YAML document, or several as a list."""

    media_type = "application/yaml"
    media = "yaml"


class TextYAMLParser(YAMLParser):
    """The same under the other media types clients send YAML with."""

    media_type = "text/yaml"


class XYAMLParser(YAMLParser):
    """The same for `application/x-yaml`."""

    media_type = "application/x-yaml"


class RawTextParser(BaseParser):
    """Any other body as its text, for the import: a whole kubectl file (several documents, any
    kinds) that the engine's own reader parses. Without it, a session's CSRF check (which reads
    `request.POST`) answered a YAML import from a page with 415."""

    media_type = "*/*"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        """The body's text."""
        raw = stream.read() if stream is not None else b""
        return raw.decode("utf-8", errors="replace")
