"""Dashboard benchmark: every page's server time and size at 5000 nodes and 10000 pending pods.

Seeds a fresh console (SQLite, embedded engine) with N nodes in three zones (with NodeMetrics for
LoadAwareScheduling), bound pods filling them to 40-100% CPU, M pending pods that cannot fit (5 CPU
on 4-CPU nodes; all of them are tried by the engine unless `--unschedulable` is smaller, then the
rest wait in the gated queue behind a scheduling gate), a few more pods and two gangs; waits until
the engine has tried every ungated pending pod once (their attempts are the history the overview
charts; each keeps its filter failures compact, `history.compact`, and the bytes it takes are
printed), then requests each page `--repeat` times in turn, logged in as a browser would be, and
prints one JSON line per page (median and max milliseconds, bytes) and a summary line. Pods
unschedulable for 5 minutes are retried (the queue's leftover flush), so at full scale the engine
is still retrying while pages are measured, as in a real cluster with that many pending pods.
Times are measured by the client on 127.0.0.1, so they include the local HTTP round trip (well
under a millisecond). A benchmark, not a test.

    .venv/bin/python benchmarks/pages_bench.py [--nodes 5000 --pending 10000 --repeat 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "bench-password-123"
ZONES = ("zone-a", "zone-b", "zone-c")
CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "default-scheduler"},
        {
            "schedulerName": "koordinator",
            "plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}, {"name": "Coscheduling"}]}},
        },
    ],
}


def seed(nodes: int, pending: int, unschedulable: int) -> list[dict[str, Any]]:
    """The cluster's documents."""
    docs: list[dict[str, Any]] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"}, "value": 1000},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}},
    ]

    def pod(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
        body = {
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
            ],
            **spec,
        }
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"},
            "spec": body,
        }

    for i in range(nodes):
        name = f"node-{i:05d}"
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "uid": f"uid-{name}",
                    "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % 3]},
                },
                "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
            }
        )
        docs.append(
            {
                "apiVersion": "slo.koordinator.sh/v1alpha1",
                "kind": "NodeMetric",
                "metadata": {
                    "name": name,
                    "annotations": {"simulation.schedconsole.io/usage-ratio": ("0.9", "0.5", "0.2")[i % 3]},
                },
                "spec": {"metricCollectPolicy": {"reportIntervalSeconds": 60}},
            }
        )
        for j in range(2 + i % 4):
            docs.append(pod(f"bound-{i:05d}-{j}", "800m", nodeName=name))
    for i in range(pending):
        doc = pod(f"pending-{i:05d}", "5", schedulerName="koordinator" if i % 2 else "default-scheduler")
        if i >= unschedulable:
            doc["spec"]["schedulingGates"] = [{"name": "bench.schedconsole.io/hold"}]
        docs.append(doc)
    for i in range(20):
        docs.append(pod(f"urgent-{i:02d}", "1500m", priorityClassName="urgent"))
    for gang, size, cpu in (("train-a", 4, "100m"), ("train-huge", 3, "20")):
        for i in range(size):
            doc = pod(f"{gang}-{i}", cpu, schedulerName="koordinator")
            doc["metadata"]["annotations"] = {
                "gang.scheduling.koordinator.sh/name": gang,
                "gang.scheduling.koordinator.sh/min-available": str(size),
            }
            docs.append(doc)
    return docs


class Console:
    """A console subprocess over a fresh var dir holding the seeded cluster."""

    def __init__(self, nodes: int, pending: int, unschedulable: int) -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.var = Path(tempfile.mkdtemp(prefix="pages-bench-"))
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "SCHEDCONSOLE_VAR_DIR": str(self.var),
            "SCHEDCONSOLE_DEMO": "false",
            "SCHEDCONSOLE_ADMIN_PASSWORD": PASSWORD,
            "SCHEDCONSOLE_CONTROL_TIMEOUT": "300",
            "PORT": str(self.port),
            "DJANGO_SETTINGS_MODULE": "schedconsole.settings",
        }
        for key in ("REDIS_URL", "DATABASE_URL"):
            self.env.pop(key, None)
        (self.var / "seed.json").write_text(json.dumps(seed(nodes, pending, unschedulable)))
        (self.var / "config.json").write_text(json.dumps(CONFIG))
        code = (
            "import django, json; django.setup(); from django.core.management import call_command; call_command('migrate', verbosity=0); "
            "from schedconsole.engine import bridge; from schedconsole.engine.store import save_documents; "
            "from schedconsole.profiles.models import ProfileVersion; "
            f"ProfileVersion.objects.create(version=1, document=json.load(open({str(self.var / 'config.json')!r})), active=True, comment='bench'); "
            f"save_documents([bridge.with_defaults(d, d['kind']) for d in json.load(open({str(self.var / 'seed.json')!r}))])"
        )
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=self.env, check=True)
        self.log = (self.var / "console.log").open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "runconsole"], cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 900  # a loaded 2-core machine takes minutes to load 32500 objects
        while f"Console: {self.url}/" not in (self.var / "console.log").read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError((self.var / "console.log").read_text()[-3000:])
            time.sleep(0.5)
        self.pending = min(pending, unschedulable)

    def _db(self, query: str) -> Any:
        import sqlite3

        with sqlite3.connect(f"file:{self.var / 'schedconsole.sqlite3'}?mode=ro", uri=True, timeout=30) as db:
            return db.execute(query).fetchone()

    def settle(self) -> float:
        """Wait until the history holds an attempt for every ungated pending pod (read from the
        database file: logging in while the store writes 10000 attempts meets SQLite's lock)."""
        started = time.monotonic()
        while self._db("select count(distinct uid) from history_attempt where pod like 'bench/pending-%'")[0] < self.pending:
            if self.proc.poll() is not None:
                raise RuntimeError((self.var / "console.log").read_text()[-3000:])
            time.sleep(5)
        return time.monotonic() - started

    def history_bytes(self) -> dict[str, Any]:
        """Attempts kept and the bytes of an unschedulable one's stored row (mean and largest)."""
        count, mean, largest = self._db(
            "select count(*), avg(length(detail)), max(length(detail)) from history_attempt where outcome = 'Unschedulable'"
        )
        return {"unschedulable_attempts": count, "detail_bytes_mean": round(mean or 0), "detail_bytes_max": largest or 0}

    def login(self) -> None:
        """A browser's session login."""
        jar = CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        self.opener.open(self.url + "/accounts/login/").read()
        csrf = next(c.value for c in jar if c.name == "csrftoken")
        self.csrf = csrf
        data = urllib.parse.urlencode({"username": "admin", "password": PASSWORD, "csrfmiddlewaretoken": csrf}).encode()
        self.opener.open(urllib.request.Request(self.url + "/accounts/login/", data=data, headers={"Referer": self.url})).read()
        self.csrf = next(c.value for c in jar if c.name == "csrftoken")

    def get(self, path: str) -> tuple[float, int]:
        """Milliseconds and bytes of one GET."""
        start = time.perf_counter()
        with self.opener.open(self.url + path, timeout=300) as response:
            body = response.read()
        return (time.perf_counter() - start) * 1000, len(body)

    def send(self, method: str, path: str, body: Any) -> tuple[float, Any]:
        """Milliseconds and JSON answer of one JSON request with the session's CSRF token."""
        request = urllib.request.Request(
            self.url + path,
            method=method,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "X-CSRFToken": self.csrf, "Referer": self.url},
        )
        start = time.perf_counter()
        with self.opener.open(request, timeout=300) as response:
            answer = json.loads(response.read())
        return (time.perf_counter() - start) * 1000, answer

    def send_get(self, path: str) -> Any:
        """The JSON answer of one GET."""
        with self.opener.open(self.url + path, timeout=300) as response:
            return json.loads(response.read())

    def pending_active(self) -> float:
        """scheduler_pending_pods{queue="active"} from /metrics."""
        text = self.opener.open(self.url + "/metrics").read().decode()
        for line in text.splitlines():
            if line.startswith("scheduler_pending_pods{") and 'queue="active"' in line:
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)
        self.log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pending", type=int, default=10000)
    parser.add_argument(
        "--unschedulable",
        type=int,
        default=None,
        help="pending pods the engine tries (default: all; the rest wait behind a scheduling gate)",
    )
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--during-retries",
        action="store_true",
        help="measure once the engine retries the pending pods (the queue's 5-minute leftover flush)",
    )
    args = parser.parse_args()
    if args.unschedulable is None:
        args.unschedulable = args.pending
    console = Console(args.nodes, args.pending, args.unschedulable)
    try:
        settled = console.settle()
        if args.during_retries:
            while (
                console._db("select count(*) from history_attempt where pod like 'bench/pending-%'")[0] < args.unschedulable + 200
            ):
                time.sleep(5)
        console.login()
        print(
            json.dumps(
                {
                    "settled_seconds": round(settled, 1),
                    "during_retries": args.during_retries,
                    "pending_active": console.pending_active(),
                    **console.history_bytes(),
                }
            ),
            flush=True,
        )
        # A finished import job for /jobs/ and /jobs/1/ (a job page while it runs polls the API instead).
        _, job = console.send("POST", "/api/bench/", {"workload": "SchedulingBasic", "nodes": 100, "initPods": 10, "pods": 200})
        while console.send_get(f"/api/jobs/{job['id']}/")["state"] not in ("done", "failed"):
            time.sleep(1)
        pending_pod = "/pods/bench/pending-00000/"
        pages = [
            "/overview/",
            "/",
            "/pods/",
            "/pods/?offset=9000",
            "/pods/?queue=unschedulable&offset=900",
            "/pods/?q=pending-0999",
            pending_pod,
            "/pods/bench/bound-00000-0/",
            "/nodes/",
            "/nodes/?sort=-cpu",
            "/nodes/?q=topology.kubernetes.io/zone=zone-b&sort=-memory&offset=1000",
            "/nodes/node-00007/",
            "/gangs/",
            "/preemption/",
            "/profiles/",
            "/thresholds/",
            "/plugin-api/",
            "/attempts/1/",
            "/jobs/",
            "/jobs/1/",
        ]
        timings: dict[str, list[float]] = {p: [] for p in pages}
        sizes: dict[str, int] = {}
        for _ in range(args.repeat):
            for path in pages:
                ms, size = console.get(path)
                timings[path].append(ms)
                sizes[path] = size
        rows = []
        for path in pages:
            row = {
                "page": path,
                "median_ms": round(statistics.median(timings[path]), 1),
                "max_ms": round(max(timings[path]), 1),
                "bytes": sizes[path],
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "pending-00000", "namespace": "bench"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]},
        }
        actions = {
            "POST /api/whatif/diff/": ("POST", "/api/whatif/diff/", {"pod": pod}),
            "PUT /api/plugin-args/LoadAwareScheduling/?dry_run=true": (
                "PUT",
                "/api/plugin-args/LoadAwareScheduling/?dry_run=true",
                {"args": {"usageThresholds": {"cpu": 80, "memory": 95}}, "profile": "koordinator"},
            ),
        }
        for label, (method, path, body) in actions.items():
            times = [console.send(method, path, body)[0] for _ in range(3)]
            print(json.dumps({"action": label, "median_ms": round(statistics.median(times), 1)}), flush=True)
        worst = max(rows, key=lambda r: r["median_ms"])
        print(
            json.dumps(
                {
                    "nodes": args.nodes,
                    "pending": args.pending,
                    "unschedulable": args.unschedulable,
                    "pages": len(rows),
                    "worst_page": worst["page"],
                    "worst_median_ms": worst["median_ms"],
                    "largest_bytes": max(r["bytes"] for r in rows),
                }
            )
        )
    finally:
        console.stop()


if __name__ == "__main__":
    main()
