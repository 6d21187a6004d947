"""schemathesis against the console's OpenAPI schema, on a real console, as an operator: no 5xx
and no response that violates the schema (a bounded run: a few examples per operation). The
console runs twice: on its default SQLite, and on the machine's PostgreSQL (127.0.0.1:5432, a
database of its own), which refuses what SQLite stores (NUL characters, integers beyond 64 bits)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from tests.e2e.conftest import PASSWORD
from tests.support.servers import ConsoleProcess, start_console
from tests.support.stack import postgres_database

pytestmark = pytest.mark.slow

# The committed schema (tests/console/api/test_schema.py fails when it differs from /api/schema/).
SCHEMA = schemathesis.openapi.from_path(Path(__file__).resolve().parents[2] / "schedconsole/api/schema.yaml")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleProcess]:
    """The embedded console on SQLite (the e2e tests' console) or on a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield request.getfixturevalue("console")
        return
    with postgres_database() as url:
        running = start_console(tmp_path_factory.mktemp("var"), {"SCHEDCONSOLE_ADMIN_PASSWORD": PASSWORD}, database_url=url)
        try:
            yield running
        finally:
            running.stop(20)


@SCHEMA.parametrize()
@settings(max_examples=12, deadline=None, phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case: schemathesis.Case, target: ConsoleProcess) -> None:
    case.call_and_validate(
        base_url=target.url,
        headers={"Authorization": f"Token {target.token}"},
        checks=[not_a_server_error, response_schema_conformance, content_type_conformance],
        timeout=30,
    )
