"""`manage.py prepare`: migrate, collectstatic and the first operator, so production starts by hand."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError


def _prepare() -> str:
    out = io.StringIO()
    call_command("prepare", stdout=out)
    return out.getvalue()


def test_it_creates_the_operator_once(transactional_db, settings, tmp_path) -> None:
    settings.STATIC_ROOT = tmp_path / "static"
    settings.OPERATOR_USERNAME, settings.OPERATOR_PASSWORD = "first-op", "a-long-password-1"
    text = _prepare()
    assert "operator: first-op created (group operator)" in text
    assert (tmp_path / "static" / "favicon.svg").exists() or any((tmp_path / "static").iterdir())
    user = User.objects.get(username="first-op")
    assert user.check_password("a-long-password-1") and list(user.groups.values_list("name", flat=True)) == ["operator"]
    settings.OPERATOR_PASSWORD = "another-password-2"
    assert "first-op exists already" in _prepare()
    user.refresh_from_db()
    assert user.check_password("a-long-password-1")


@pytest.mark.parametrize(
    ("name", "password", "text"),
    [("op", "", "set both"), ("op", "short", "SCHEDCONSOLE_OPERATOR_PASSWORD: This password is too short")],
    ids=["half-set", "weak-password"],
)
def test_it_refuses_what_cannot_make_an_operator(transactional_db, settings, tmp_path, name, password, text) -> None:
    settings.STATIC_ROOT = tmp_path / "static"
    settings.OPERATOR_USERNAME, settings.OPERATOR_PASSWORD = name, password
    with pytest.raises(CommandError, match=text):
        _prepare()


def test_the_image_skips_collectstatic(transactional_db, settings, tmp_path) -> None:
    settings.STATIC_ROOT = tmp_path / "static"
    settings.OPERATOR_USERNAME, settings.OPERATOR_PASSWORD = "", ""
    out = io.StringIO()
    call_command("prepare", "--no-collectstatic", stdout=out)
    assert "collectstatic: skipped" in out.getvalue() and not (tmp_path / "static").exists()
    assert "operator: none requested" in out.getvalue()
