"""Error handlers: a database that cannot be reached is a 503 that says so, not a server error
page; a route that does not exist under the APIs answers JSON as the API's other errors do."""

from __future__ import annotations

import json
import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.views.defaults import page_not_found as django_page_not_found
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


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """404: DRF's `{"detail"}` under /api/, Koordinator's `{"message"}` under /apis/ and /debug/;
    Django's page elsewhere."""
    if request.path.startswith("/api/"):
        body = {"detail": f"no route {request.path}; the routes are listed in /api/schema/ (browse them at /api/docs/)"}
    elif request.path.startswith(("/apis/", "/debug/")):
        body = {"message": f"no route {request.path}; GET /apis/v1/__services__ lists Koordinator's routes"}
    else:
        return django_page_not_found(request, exception or Exception())
    return HttpResponse(json.dumps(body), status=404, content_type="application/json")
