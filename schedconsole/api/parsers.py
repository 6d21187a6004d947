"""YAML request bodies (`Content-Type: application/yaml`), parsed without aliases."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from schedconsole.engine.bridge import BadInput, parse_documents


class YAMLParser(BaseParser):
    """One YAML document, or several as a list."""

    media_type = "application/yaml"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict[str, Any] | None = None) -> Any:
        """Parse the body; a syntax error names the line."""
        text = stream.read().decode("utf-8", errors="replace")
        try:
            docs = parse_documents(text, "body")
        except BadInput as exc:
            raise ParseError(exc.message) from exc
        if not docs:
            raise ParseError("body: no YAML document")
        return docs[0] if len(docs) == 1 else docs


class TextYAMLParser(YAMLParser):
    """The same under the other media types clients send YAML with."""

    media_type = "text/yaml"


class XYAMLParser(YAMLParser):
    """The same for `application/x-yaml`."""

    media_type = "application/x-yaml"
