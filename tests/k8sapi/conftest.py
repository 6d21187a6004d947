"""A real console serving /k8s over TLS (kubectl sends `--token` only over TLS), and kubectl against it."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import shutil
import ssl
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import urllib3

from tests.support import servers

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)  # the test certificate is self-signed


@dataclass
class Console:
    """A running console: its https address, tokens and log."""

    url: str
    token: str
    viewer_token: str
    log: Path
    home: Path

    def kubectl(
        self, *args: str, token: str | None = None, check: bool = True, stdin: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run the real kubectl against /k8s."""
        cmd = [kubectl_path(), "--server", f"{self.url}/k8s", "--insecure-skip-tls-verify", "--token", token or self.token, *args]
        done = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            input=stdin,
            timeout=timeout,
            env={**os.environ, "HOME": str(self.home), "KUBECONFIG": str(self.home / "none")},
        )
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    def watch(self, *args: str) -> subprocess.Popen[str]:
        """Start a long-running kubectl (a watch); the caller stops it."""
        cmd = [kubectl_path(), "--server", f"{self.url}/k8s", "--insecure-skip-tls-verify", "--token", self.token, *args]
        return subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "HOME": str(self.home), "KUBECONFIG": str(self.home / "none")},
        )

    def lines(self, path: str) -> list[Any]:
        """A watch read to its end (`timeoutSeconds`), one JSON event a line."""
        req = urllib.request.Request(f"{self.url}{path}")
        req.add_header("Authorization", f"Bearer {self.token}")
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        with urllib.request.urlopen(req, context=context, timeout=60) as resp:
            return [json.loads(line) for line in resp.read().splitlines() if line.strip()]

    def request(
        self, method: str, path: str, body: Any = None, token: str | None = None, content_type: str = "application/json"
    ) -> tuple[int, Any]:
        """A raw HTTPS request (JSON in and out)."""
        code, answer, _ = self.exchange(method, path, body, token, content_type)
        return code, answer

    def exchange(
        self, method: str, path: str, body: Any = None, token: str | None = None, content_type: str = "application/json"
    ) -> tuple[int, Any, Any]:
        """A raw HTTPS request (JSON in and out), with the answer's headers."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"{self.url}{path}", data=data, method=method)
        req.add_header("Authorization", f"Token {token or self.token}")  # /k8s takes Bearer too
        if data is not None:
            req.add_header("Content-Type", content_type)
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        try:
            with urllib.request.urlopen(req, context=context, timeout=30) as resp:
                return resp.status, json.loads(resp.read() or b"null"), resp.headers
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"null"), err.headers


def kubectl_path() -> str:
    """Debian's kubectl (package kubernetes-client); in CI its absence fails instead of skipping."""
    path = shutil.which("kubectl")
    if path is None:
        if os.getenv("CI"):
            pytest.fail("kubectl is not installed (apt-get install kubernetes-client)")
        pytest.skip("kubectl is not installed")
    return path


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate and key for 127.0.0.1."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def start_console(var: Path, extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], Console]:
    """Start `manage.py runconsole` with TLS, an empty cluster and the default profile."""
    kubectl_path()
    cert, key = self_signed(var)
    env = {
        "SCHEDCONSOLE_ADMIN_PASSWORD": "k8s-password-123",
        "SCHEDCONSOLE_DEMO": "false",
        "SCHEDCONSOLE_TLS_CERT": str(cert),
        "SCHEDCONSOLE_TLS_KEY": str(key),
        "SCHEDCONSOLE_K8S_BOOKMARK_SECONDS": "1",
        **(extra_env or {}),
    }
    running = servers.start_console(var, env)
    script = (
        "from django.contrib.auth.models import Group, User; from rest_framework.authtoken.models import Token; "
        "u = User.objects.create_user('vera', password='pw-vera-123'); u.groups.add(Group.objects.get_or_create(name='viewer')[0]); "
        "print(Token.objects.create(user=u).key)"
    )
    viewer = running.manage("shell", "-c", script).strip().splitlines()[-1]
    home = var / "home"
    home.mkdir(exist_ok=True)
    return running.proc, Console(running.url, running.token, viewer, running.log, home)


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    """One console for the module's kubectl tests."""
    proc, running = start_console(tmp_path_factory.mktemp("k8svar"))
    try:
        yield running
    finally:
        proc.terminate()
        proc.wait(30)
