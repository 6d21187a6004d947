"""The deployment files: production settings pass `check --deploy`, the image is built by the
script CI runs, and compose wires the processes docs/architecture.md, "Processes" names."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys

import yaml

from tests.support.stack import ROOT


def _production_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCHEDCONSOLE_", "SECURE_", "REDIS_URL", "DATABASE_URL"))}
    for line in (ROOT / "deploy/production.env").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key.strip()] = value.strip()
    env["SECRET_KEY"] = secrets.token_urlsafe(50)
    env["DJANGO_SETTINGS_MODULE"] = "schedconsole.settings"
    return env


def test_check_deploy_is_clean_with_the_documented_environment(tmp_path) -> None:
    env = {**_production_env(), "SCHEDCONSOLE_VAR_DIR": str(tmp_path), "STATIC_ROOT": str(tmp_path / "static")}
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_production_refuses_to_start_without_a_secret_key(tmp_path) -> None:
    env = {**_production_env(), "SCHEDCONSOLE_VAR_DIR": str(tmp_path)}
    env.pop("SECRET_KEY")
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode != 0 and "SECRET_KEY: required when REDIS_URL is set" in done.stderr


def test_the_image_is_built_by_the_script_ci_runs() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.\d+-slim$", dockerfile, re.M)
    runs = re.findall(r"^RUN (.+)$", dockerfile, re.M)
    assert any("deploy/build.sh" in r for r in runs), runs
    user = re.findall(r"^USER (\S+)$", dockerfile, re.M)
    assert user and user[-1] not in ("root", "0")
    assert re.search(r"^HEALTHCHECK .*\n?.*/healthz", dockerfile, re.M)
    cmd = json.loads(re.search(r"^CMD (\[.*\])$", dockerfile, re.M).group(1))
    assert cmd[:2] == ["uvicorn", "schedconsole.asgi:application"] and "--proxy-headers" in cmd
    assert "--timeout-graceful-shutdown" in cmd and "--ws-per-message-deflate" in cmd  # as runconsole serves
    assert "deploy/build.sh" in (ROOT / ".ci/run").read_text()
    build = (ROOT / "deploy/build.sh").read_text()
    assert "./setup.sh" in build and "collectstatic" in build
    # The runtime lock only: no test or check tool in the image (tests/test_requirements.py).
    assert "COPY requirements.lock " in dockerfile
    assert not any("--dev" in r for r in runs) and "setup.sh --dev" not in build


def test_compose_runs_the_three_process_kinds_on_redis_and_postgres() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert {"web", "engine", "worker", "redis", "postgres"} <= set(services)
    assert services["engine"]["command"][:6] == ["celery", "-A", "schedconsole", "worker", "-Q", "engine"]
    assert services["engine"]["deploy"]["replicas"] == 2
    assert (
        services["worker"]["command"][:4] == ["celery", "-A", "schedconsole", "worker"]
        and "-Q" not in services["worker"]["command"]
    )
    assert "env_file" in services["web"] or "env_file" in compose.get("x-app", {})
