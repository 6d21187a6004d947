"""schemathesis against the console's OpenAPI schema, on a real console, as an operator: no 5xx
and no response that violates the schema (a bounded run: a few examples per operation)."""

from __future__ import annotations

from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from tests.e2e.conftest import Console

# The committed schema (tests/console/test_schema.py fails when it differs from /api/schema/).
SCHEMA = schemathesis.openapi.from_path(Path(__file__).resolve().parents[2] / "schedconsole/api/schema.yaml")


@SCHEMA.parametrize()
@settings(max_examples=12, deadline=None, phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case: schemathesis.Case, console: Console) -> None:
    case.call_and_validate(
        base_url=console.url,
        headers={"Authorization": f"Token {console.token}"},
        checks=[not_a_server_error, response_schema_conformance, content_type_conformance],
        timeout=30,
    )
