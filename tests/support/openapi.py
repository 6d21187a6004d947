"""A client generated from an OpenAPI 3.0 schema: one method per operation (by operationId), each
call checked against the schema's response for its status, so a response that drifts from the
schema fails the test that made it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonschema
import yaml

Transport = Callable[[str, str, dict[str, Any], Any], tuple[int, str, Any]]
"""(method, path, query, json body) -> (status, content type, decoded body)."""


def to_json_schema(schema: Any, components: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema: `$ref`s inlined, `nullable` as a null alternative."""
    if isinstance(schema, list):
        return [to_json_schema(s, components, seen) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return {}
        return to_json_schema(components[name], components, (*seen, name))
    out = {k: to_json_schema(v, components, seen) for k, v in schema.items() if k not in ("nullable", "readOnly", "writeOnly")}
    if schema.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


@dataclass
class Operation:
    """One operation of the schema."""

    method: str
    path: str
    parameters: list[dict[str, Any]]
    responses: dict[str, Any]


class GeneratedClient:
    """`client.<operationId>(**path_params, query=..., body=...)` -> (status, body), validated."""

    def __init__(self, schema: dict[str, Any], transport: Transport) -> None:
        self.components = schema.get("components", {}).get("schemas", {})
        self.transport = transport
        self.operations: dict[str, Operation] = {}
        self.checked: list[str] = []
        for path, item in schema["paths"].items():
            for method, op in item.items():
                if method in ("get", "post", "put", "patch", "delete"):
                    self.operations[op["operationId"]] = Operation(
                        method.upper(), path, op.get("parameters", []), op["responses"]
                    )

    def __getattr__(self, name: str) -> Callable[..., tuple[int, Any]]:
        if name not in self.operations:
            raise AttributeError(f"the schema has no operation {name!r}")
        op = self.operations[name]

        def call(query: dict[str, Any] | None = None, body: Any = None, **path_params: str) -> tuple[int, Any]:
            path = re.sub(r"\{(\w+)\}", lambda m: str(path_params.pop(m.group(1))), op.path)
            assert not path_params, f"{name}: unknown path parameters {sorted(path_params)}"
            declared = {p["name"] for p in op.parameters if p["in"] == "query"}
            assert set(query or {}) <= declared, f"{name}: query {sorted(set(query or {}) - declared)} not in the schema"
            status, content_type, data = self.transport(op.method, path, query or {}, body)
            self._check(name, op, status, content_type, data)
            return status, data

        return call

    def _check(self, name: str, op: Operation, status: int, content_type: str, data: Any) -> None:
        response = op.responses.get(str(status))
        assert response is not None, f"{name}: status {status} is not in the schema ({sorted(op.responses)}): {data!r}"[:600]
        content = response.get("content", {})
        media = content.get(content_type.split(";")[0].strip())
        assert media is not None or not content, f"{name}: {content_type} is not among {sorted(content)}"
        if media is not None and ("json" in content_type or "yaml" in content_type):
            value = yaml.safe_load(data) if "yaml" in content_type and isinstance(data, str) else data
            jsonschema.validate(value, to_json_schema(media["schema"], self.components))
        self.checked.append(f"{name} {status}")
