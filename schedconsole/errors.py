"""The 500 handler: a database that cannot be reached is a 503 that says so, not a server error page."""

from __future__ import annotations

import json
import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.views.defaults import server_error as django_server_error


def server_error(request: HttpRequest) -> HttpResponse:
    """503 with `Retry-After` while the database is away (JSON for API clients); else Django's 500."""
    exc = sys.exc_info()[1]
    if isinstance(exc, OperationalError | InterfaceError):
        message = "the database is unavailable; try again shortly"
        if request.path.startswith(("/api/", "/apis/", "/k8s/")) or "json" in request.headers.get("Accept", ""):
            response = HttpResponse(json.dumps({"message": message}), status=503, content_type="application/json")
        else:
            response = HttpResponse(f"<!doctype html><title>503</title><h1>Service unavailable</h1><p>{message}.</p>", status=503)
        response["Retry-After"] = "5"
        return response
    return django_server_error(request)
