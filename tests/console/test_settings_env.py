"""Settings helpers fail loudly on bad values; DATABASE_URL forms."""

from __future__ import annotations

import pathlib
import re

import pytest

from schedconsole.env import SettingError, database_from_url, env_bool, env_int, env_list


@pytest.mark.parametrize(
    ("raw", "want"), [("true", True), ("0", False), ("On", True), ("", False)], ids=["true", "zero", "on", "empty"]
)
def test_env_bool(monkeypatch, raw, want) -> None:
    monkeypatch.setenv("X_BOOL", raw)
    assert env_bool("X_BOOL", False) is want


@pytest.mark.parametrize(
    ("fn", "raw", "text"),
    [
        (lambda: env_bool("X", False), "maybe", "invalid boolean 'maybe'"),
        (lambda: env_int("X", 1), "ten", "invalid integer 'ten'"),
        (lambda: env_int("X", 1, minimum=0), "-3", "below the minimum 0"),
    ],
    ids=["bool", "int", "minimum"],
)
def test_bad_values_fail_loudly(monkeypatch, fn, raw, text) -> None:
    monkeypatch.setenv("X", raw)
    with pytest.raises(SettingError, match=text):
        fn()


def test_env_list(monkeypatch) -> None:
    monkeypatch.setenv("X_LIST", "a, b,,c")
    assert env_list("X_LIST", []) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("url", "engine", "name"),
    [
        ("sqlite:///var/db.sqlite3", "django.db.backends.sqlite3", "var/db.sqlite3"),
        ("sqlite:////tmp/x.sqlite3", "django.db.backends.sqlite3", "/tmp/x.sqlite3"),
        ("postgres://u:p%40ss@127.0.0.1:5432/sched", "schedconsole.db", "sched"),
    ],
    ids=["relative", "absolute", "postgres"],
)
def test_database_urls(url, engine, name) -> None:
    db = database_from_url(url)
    assert db["ENGINE"] == engine and db["NAME"] == name
    if "postgres" in url:
        assert db["PASSWORD"] == "p@ss" and db["PORT"] == "5432"


@pytest.mark.parametrize("url", ["mysql://x/y", "postgres://host", "sqlite://"], ids=["scheme", "no-db", "no-file"])
def test_bad_database_urls(url) -> None:
    with pytest.raises(SettingError, match="DATABASE_URL"):
        database_from_url(url)


def test_secret_key_required_in_production(tmp_path) -> None:
    import subprocess
    import sys

    env = {"REDIS_URL": "redis://127.0.0.1:6379/0", "SCHEDCONSOLE_VAR_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", "import schedconsole.settings"], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode != 0
    assert "SECRET_KEY: required when REDIS_URL is set" in result.stderr


def test_every_setting_is_listed_in_env_example() -> None:
    # STYLE 11: every variable settings.py reads is in .env.example with its default.
    root = pathlib.Path(__file__).resolve().parents[2]
    read = set(re.findall(r'env_[a-z]+\("([A-Z0-9_]+)"', (root / "schedconsole" / "settings.py").read_text()))
    listed = set(re.findall(r"^([A-Z0-9_]+)=", (root / ".env.example").read_text(), re.MULTILINE))
    assert len(read) > 30
    assert read - listed == set()


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({}, "True"),  # embedded: kube-scheduler-simulator's result annotations, as the simulator writes them
        ({"REDIS_URL": "redis://127.0.0.1:6379/0", "SECRET_KEY": "x" * 50}, "False"),  # production default
        ({"REDIS_URL": "redis://127.0.0.1:6379/0", "SECRET_KEY": "x" * 50, "SCHEDCONSOLE_RESULT_ANNOTATIONS": "on"}, "True"),
    ],
    ids=["embedded", "production", "production-on"],
)
def test_result_annotations_default_by_wiring(tmp_path, extra, expected) -> None:
    import subprocess
    import sys

    env = {"SCHEDCONSOLE_VAR_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", **extra}
    code = "import schedconsole.settings as s; print(s.RESULT_ANNOTATIONS)"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected
