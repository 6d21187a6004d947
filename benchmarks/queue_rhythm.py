"""How often an unschedulable pod is attempted while other pods come and go: the real kube-scheduler
(../shared/k8s, v1.35.4) and this engine (the `kubernetes` backend) on the same control plane and
the same event stream, one after the other.

Stream: three 4-CPU nodes; `big` asks for 8 CPUs (never fits, preemption cannot help); every
`--every` seconds a 100m pod is created and the pod created three steps earlier is deleted (grace
0), for `--seconds`. kube-scheduler's attempts are its `Attempting to schedule pod` lines (-v=3);
the engine's are its attempt records.

    python benchmarks/queue_rhythm.py --seconds 60
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from scheduler.kube.client import connect
from tests.support.builders import node_doc, pod_doc
from tests.support.controlplane import Api, ControlPlane, Kubelet, namespace, unpacked_binaries
from tests.support.engines import RemoteEngine

ENGINE_PROFILE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
}


def stream(api: Api, ns: str, seconds: float, every: float) -> dict[str, int]:
    """Create `big`, then churn small pods; how many were created and deleted."""
    api.create(pod_doc("big", ns, "8", "64Mi"))
    created = deleted = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        api.create(pod_doc(f"churn-{created}", ns, "100m", "64Mi"))
        created += 1
        if created > 3:
            body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
            api.request("DELETE", f"/api/v1/namespaces/{ns}/pods/churn-{created - 4}", body)
            deleted += 1
        time.sleep(every)  # the stream's own pace is what is measured
    return {"created": created, "deleted": deleted}


def kube_scheduler_side(plane: ControlPlane, api: Api, seconds: float, every: float) -> dict[str, Any]:
    """Run the stream under kube-scheduler at -v=3; count its attempts for `big`."""
    ns = "rhythm-kube"
    namespace(api, ns)
    log_path = plane.state / "logs" / "kube-scheduler-rhythm.log"
    args = [
        str(plane.state / "bin" / "kube-scheduler"),
        f"--kubeconfig={plane.scheduler_kubeconfig}",
        f"--authentication-kubeconfig={plane.scheduler_kubeconfig}",
        f"--authorization-kubeconfig={plane.scheduler_kubeconfig}",
        "--secure-port=0",
        "--leader-elect=false",
        "-v=3",
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(args, stdout=log, stderr=log)
        time.sleep(3)  # informers synced before the stream starts
        counts = stream(api, ns, seconds, every)
        time.sleep(2)
        proc.terminate()
        proc.wait(30)
    text = log_path.read_text(errors="replace")
    attempts = sum(1 for line in text.splitlines() if "Attempting to schedule pod" in line and f'pod="{ns}/big"' in line)
    return {**counts, "attempts_big": attempts}


def engine_side(plane: ControlPlane, api: Api, seconds: float, every: float) -> dict[str, Any]:
    """Run the stream under this engine; count its attempts for `big`."""
    ns = "rhythm-engine"
    namespace(api, ns)
    engine = RemoteEngine(connect(plane.admin_kubeconfig), ENGINE_PROFILE)
    try:
        time.sleep(3)
        counts = stream(api, ns, seconds, every)
        time.sleep(2)
        with engine.scheduler.lock:
            attempts = sum(1 for r in engine.scheduler.records if r.pod == f"{ns}/big")
    finally:
        engine.stop()
    return {**counts, "attempts_big": attempts}


def main(argv: list[str]) -> int:
    """Both sides, one after the other, on one control plane; prints one JSON line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--every", type=float, default=1.0)
    args = parser.parse_args(argv)
    state = pathlib.Path(tempfile.mkdtemp(prefix="rhythm-"))
    plane = ControlPlane(state, unpacked_binaries(state / "cache")).start()
    try:
        kubelet = Kubelet(plane.api).start()
        for i in range(3):
            kubelet.add_node(node_doc(f"node-{i}", cpu="4", memory="8Gi"))
        kube = kube_scheduler_side(plane, plane.api, args.seconds, args.every)
        ours = engine_side(plane, plane.api, args.seconds, args.every)
        kubelet.stop()
    finally:
        plane.stop()
    print(json.dumps({"seconds": args.seconds, "every": args.every, "kube-scheduler": kube, "engine": ours}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
