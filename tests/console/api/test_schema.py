"""The committed OpenAPI schema is what drf-spectacular generates from the code now."""

from __future__ import annotations

import pathlib

from django.core.management import call_command

SCHEMA = pathlib.Path(__file__).resolve().parents[3] / "schedconsole" / "api" / "schema.yaml"


def test_committed_schema_is_current(tmp_path, db) -> None:
    fresh = tmp_path / "schema.yaml"
    call_command("spectacular", "--file", str(fresh), "--validate")
    assert fresh.read_text() == SCHEMA.read_text(), (
        "schedconsole/api/schema.yaml is stale: run `.venv/bin/python manage.py spectacular --file schedconsole/api/schema.yaml`"
    )


def test_schema_and_docs_are_served(api) -> None:
    schema = api.get("/api/schema/")
    assert schema.status_code == 200 and b"/api/whatif/" in schema.content
    docs = api.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger-ui" in docs.content and b"cdn" not in docs.content.lower()
