"""Errors of the cluster backend contract: what an API call that failed raises, whatever the backend.

The simulated cluster raises them for injected faults, the `kubernetes` backend for what the API
server answered; plugins, preemption and the scheduling loop handle them without knowing which.
"""

from __future__ import annotations


class APIError(RuntimeError):
    """An API call the cluster refused or failed (real or injected)."""

    reason = "InternalError"


class NotFoundError(APIError):
    """The object the call names does not exist (`apierrors.IsNotFound`)."""

    reason = "NotFound"


def api_error(message: str, reason: str = "InternalError") -> APIError:
    """The APIError subclass for a Kubernetes status reason."""
    err: APIError = NotFoundError(message) if reason == "NotFound" else APIError(message)
    err.reason = reason
    return err


class Retry(Exception):
    """A request refused for now (429, a 5xx with Retry-After, a kept-alive connection the server had
    closed): send it again through the ordinary path, after `wait` seconds."""

    def __init__(self, wait: float, reason: str) -> None:
        super().__init__(reason)
        self.wait = wait
