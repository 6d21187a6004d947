"""A Django middleware base that runs in the server's own mode, sync or async, so that async
views (Koordinator's routes) are not funnelled through Django's one thread-sensitive executor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse


class DualMiddleware:
    """Subclasses give `_call` (sync) and `_acall` (async); the chain's mode picks one."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        return self._call(request)

    def _call(self, request: HttpRequest) -> HttpResponse:
        raise NotImplementedError

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        raise NotImplementedError
