"""Roles: `viewer` reads, `operator` also changes profiles, args, flags and the simulated cluster."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

VIEWER = "viewer"
OPERATOR = "operator"


def roles(user: Any) -> set[str]:
    """The console roles a user holds (superusers hold both)."""
    if not user or not user.is_authenticated:
        return set()
    if user.is_superuser:
        return {VIEWER, OPERATOR}
    names = set(user.groups.values_list("name", flat=True))
    if OPERATOR in names:
        names.add(VIEWER)
    return names & {VIEWER, OPERATOR}


def is_operator(user: Any) -> bool:
    """Whether the user may change things."""
    return OPERATOR in roles(user)


class ViewerReadOperatorWrite(BasePermission):
    """Reads need the viewer role; anything else needs operator."""

    message = "you need the operator role to change this"

    def has_permission(self, request: Request, view: Any) -> bool:
        """Check the request's method against the user's roles."""
        held = roles(request.user)
        if request.method in SAFE_METHODS:
            if VIEWER not in held:
                self.message = "you need the viewer role to read this"
                return False
            return True
        return OPERATOR in held


class ViewerMayPost(BasePermission):
    """For views whose POST changes nothing (what-if, validation): the viewer role suffices."""

    message = "you need the viewer role to read this"

    def has_permission(self, request: Request, view: Any) -> bool:
        """Viewer or operator."""
        return VIEWER in roles(request.user)
