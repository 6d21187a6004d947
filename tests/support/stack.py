"""The production wiring as separate processes against real services, for the integration tests.

Each `Stack` gets its own PostgreSQL database (on the machine's server, reached through a TCP proxy
the test can cut) and its own Redis server on a free port (so a test may restart it), then starts
real web (the Dockerfile's uvicorn command) and `celery worker` processes with the environment
docs/production.md documents.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import free_port
from tests.support.waits import wait_for

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PG_HOST, PG_PORT = "127.0.0.1", 5432
PASSWORD = "production-test-password"


def web_command(host: str, port: int) -> list[str]:
    """The image's web command (the Dockerfile's CMD), listening on `host:port` instead."""
    found = re.search(r"^CMD (\[.*\])$", (ROOT / "Dockerfile").read_text(), re.M)
    assert found is not None, "the Dockerfile has no CMD in exec form"
    cmd = json.loads(found.group(1))
    cmd[cmd.index("--host") + 1], cmd[cmd.index("--port") + 1] = host, str(port)
    return [str(BIN / cmd[0]), *cmd[1:]]


def require_services() -> None:
    """PostgreSQL and a redis-server binary; in CI their absence fails instead of skipping."""
    problems = []
    try:
        socket.create_connection((PG_HOST, PG_PORT), timeout=2).close()
    except OSError as exc:
        problems.append(f"PostgreSQL at {PG_HOST}:{PG_PORT}: {exc}")
    if shutil.which("redis-server") is None:
        problems.append("redis-server is not installed")
    if problems:
        if os.getenv("CI"):
            pytest.fail("; ".join(problems))
        pytest.skip("; ".join(problems))


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A new database on the machine's PostgreSQL (127.0.0.1:5432, trust), its URL; dropped after."""
    require_services()
    import psycopg

    name = f"schedconsole_it_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgres://postgres@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class TcpProxy:
    """Forwards a local port to PostgreSQL; `cut()` drops every connection and refuses new ones."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._server: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self.open()

    def open(self) -> None:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen(64)
        self._server = server
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()

    def cut(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            try:
                server.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
            except OSError:
                pass
            server.close()
        with self._lock:
            for conn in self._conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                conn.close()
            self._conns.clear()

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._conns += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class Proc:
    """One process of the stack, with its log."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log: Path) -> None:
        self.name, self.args, self.env, self.log = name, args, env, log
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self) -> Proc:
        out = self.log.open("ab")
        self.popen = subprocess.Popen(
            self.args, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        out.close()
        return self

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def kill9(self) -> None:
        """SIGKILL the whole process group (a worker's pool threads die with it)."""
        if self.alive():
            os.killpg(self.pid, signal.SIGKILL)
            assert self.popen is not None
            self.popen.wait(10)

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM (Celery's warm shutdown), then SIGKILL."""
        if not self.alive():
            return
        assert self.popen is not None
        os.killpg(self.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill9()

    def pause(self) -> None:
        os.killpg(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.killpg(self.pid, signal.SIGCONT)

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


class Stack:
    """A database, a Redis, and the processes of the production wiring."""

    def __init__(self, tmp: Path, leader_ttl: int = 3) -> None:
        require_services()
        self.tmp = tmp
        self.db = f"schedconsole_it_{uuid.uuid4().hex[:10]}"
        self._psql(f'CREATE DATABASE "{self.db}"')
        self.proxy = TcpProxy((PG_HOST, PG_PORT))
        self.redis_port = free_port()
        self.redis: Proc | None = None
        self.start_redis()
        self.web_port = free_port()
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("SCHEDCONSOLE_", "SECURE_"))},
            "DJANGO_SETTINGS_MODULE": "schedconsole.settings",
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{self.proxy.port}/{self.db}",
            "SECRET_KEY": "integration-" + uuid.uuid4().hex + uuid.uuid4().hex,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "false",
            "SECURE_COOKIES": "false",
            "SCHEDCONSOLE_DEMO": "false",
            "SCHEDCONSOLE_LEADER_TTL": str(leader_ttl),
            "SCHEDCONSOLE_IMPORT_TIMEOUT": "8",
            "SCHEDCONSOLE_CONTROL_TIMEOUT": "5",
            "SCHEDCONSOLE_VAR_DIR": str(tmp / "var"),
            "SCHEDCONSOLE_OPERATOR_USERNAME": "operator1",
            "SCHEDCONSOLE_OPERATOR_PASSWORD": PASSWORD,
            "STATIC_ROOT": str(tmp / "static"),
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
        # One process for the setup steps (each `manage.py` start costs seconds on a busy machine):
        # `prepare` as docs/production.md has it (migrate, collectstatic, the first operator), a token.
        self.token = (
            self.manage(
                "shell",
                "-c",
                "from django.core.management import call_command; call_command('prepare');"
                "from django.contrib.auth import get_user_model; from rest_framework.authtoken.models import Token;"
                "u = get_user_model().objects.get(username='operator1');"
                "print('TOKEN', Token.objects.create(user=u).key)",
            )
            .split("TOKEN ", 1)[1]
            .split()[0]
        )
        self.procs: dict[str, Proc] = {}
        self._celery: Any = None
        self._answers = threading.local()

    # ----- services ----------------------------------------------------------------------------
    def _psql(self, sql: str, db: str = "postgres") -> str:
        import psycopg

        with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname=db, autocommit=True) as conn:
            cur = conn.execute(sql)
            return json.dumps(cur.fetchall(), default=str) if cur.description else ""

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        """Read the stack's database directly (not through the proxy)."""
        import psycopg

        with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname=self.db, autocommit=True) as conn:
            return list(conn.execute(sql).fetchall())

    def start_redis(self) -> None:
        args = [
            "redis-server",
            "--port",
            str(self.redis_port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.tmp),
        ]
        self.redis = Proc("redis", args, dict(os.environ), self.tmp / "redis.log").start()
        wait_for(
            lambda: socket.create_connection(("127.0.0.1", self.redis_port), timeout=1).close() or True,
            10,
            0.1,
            what="redis",
            ignoring=(Exception,),
        )

    def restart_redis(self, down: float = 1.0) -> None:
        assert self.redis is not None
        self.redis.kill9()
        time.sleep(down)
        self.start_redis()

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            raise AssertionError(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    # ----- processes -----------------------------------------------------------------------------
    def start(self, name: str) -> Proc:
        """`web`, `tasks`, a replay worker named `replay-*` (queue replay, one task at a time), or an
        engine worker named `engine-*`."""
        if name == "web":
            args = web_command("127.0.0.1", self.web_port)
        elif name == "tasks":
            args = [str(BIN / "celery"), "-A", "schedconsole", "worker", "-n", "tasks@localhost", "-l", "WARNING"]
        elif name.startswith("replay-"):
            args = [
                str(BIN / "celery"),
                "-A",
                "schedconsole",
                "worker",
                "-Q",
                "replay",
                "-P",
                "solo",
                "-n",
                f"{name}@localhost",
                "-l",
                "WARNING",
            ]
        else:
            args = [
                str(BIN / "celery"),
                "-A",
                "schedconsole",
                "worker",
                "-Q",
                "engine",
                "-n",
                f"{name}@localhost",
                "-l",
                "WARNING",
            ]
        proc = Proc(name, args, self.env, self.tmp / f"{name}.log").start()
        self.procs[name] = proc
        if name == "web":
            wait_for(
                lambda: self.http("GET", "/healthz", auth=False)[0] == 200, 60, 0.1, what="the web server", ignoring=(Exception,)
            )
        else:
            node = args[args.index("-n") + 1]
            wait_for(
                lambda: not proc.alive() or self.celery().control.ping(destination=[node], timeout=0.5),
                60,
                0.1,
                what=name,
                ignoring=(Exception,),
            )
            assert proc.alive(), proc.text()
        return proc

    def celery(self) -> Any:
        """A Celery client of the stack's broker (for pings and direct tasks)."""
        from celery import Celery

        if self._celery is None:
            self._celery = Celery(broker=self.env["REDIS_URL"], backend=self.env["REDIS_URL"])
        return self._celery

    def leader(self) -> str | None:
        import redis

        value = redis.Redis(port=self.redis_port, socket_timeout=2).get("schedconsole:engine:leader")
        return value.decode().split("@", 1)[0] if value else None

    def live_listeners(self) -> int:
        """How many web processes' live hubs are in the channel layer's attempts group (a hub
        joins while it has websocket clients; the engine sends attempts only while one has)."""
        import redis

        from schedconsole.live.hub import GROUP
        from schedconsole.live.publisher import LAYER_PREFIX

        return int(redis.Redis(port=self.redis_port, socket_timeout=2).zcard(f"{LAYER_PREFIX}:group:{GROUP}"))

    def close(self) -> None:
        for proc in self.procs.values():
            proc.kill9()
        if self.redis is not None:
            self.redis.kill9()
        self.proxy.cut()
        try:
            self._psql(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')
        except Exception:
            pass

    def logs(self) -> str:
        return "\n".join(f"===== {p.name}\n{p.text()[-4000:]}" for p in self.procs.values())

    # ----- clients ---------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def http(
        self,
        method: str,
        path: str,
        body: Any = None,
        auth: bool = True,
        content_type: str = "application/json",
        timeout: float = 30,
    ) -> tuple[int, Any]:
        data = None
        headers = {"Accept": "application/json"}
        if auth:
            headers["Authorization"] = f"Token {self.token}"
        if body is not None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read()
                status = response.status
                self._answers.headers = response.headers
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            status = exc.code
            self._answers.headers = exc.headers
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    @property
    def last_headers(self) -> Any:
        """The headers of this thread's last `http` answer (names in any case: uvicorn lowercases them)."""
        return getattr(self._answers, "headers", {})

    def session_cookie(self) -> str:
        """Log in through the login form; the `sessionid` cookie for websockets."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        page = opener.open(self.url + "/accounts/login/", timeout=10).read().decode()
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert csrf, page[:500]
        form = urllib.parse.urlencode(
            {"username": "operator1", "password": PASSWORD, "csrfmiddlewaretoken": csrf.group(1)}
        ).encode()
        opener.open(
            urllib.request.Request(self.url + "/accounts/login/", data=form, headers={"Referer": self.url + "/accounts/login/"}),
            timeout=10,
        )
        cookies = {c.name: c.value for c in jar}
        assert "sessionid" in cookies, cookies
        return f"sessionid={cookies['sessionid']}"


def nodes_yaml(count: int, cpu: str = "32", pods: int = 110) -> str:
    return "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-{i}, labels: {{kubernetes.io/hostname: node-{i}}}}}\n"
        f"status: {{allocatable: {{cpu: '{cpu}', memory: 256Gi, pods: '{pods}'}}, capacity: {{cpu: '{cpu}', memory: 256Gi, pods: '{pods}'}}}}\n"
        for i in range(count)
    )


def pods_yaml(count: int, prefix: str = "p", cpu: str = "100m") -> str:
    return "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {prefix}-{i}, namespace: default}}\n"
        f"spec: {{containers: [{{name: c, image: app, resources: {{requests: {{cpu: {cpu}, memory: 100Mi}}}}}}]}}\n"
        for i in range(count)
    )
