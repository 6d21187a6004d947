"""Write a large cluster file (Nodes and Pods as `kubectl get -o yaml|json` prints them) for the load benchmark.

    .venv/bin/python benchmarks/gen_cluster.py --nodes 5000 --pods 100000 --format yaml --out var/bench/cluster.yaml

Half of the pods are bound (spec.nodeName set, status Running), half pending. Output goes under
var/ or /tmp; never commit it.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from typing import Any

import yaml


def node(i: int) -> dict[str, Any]:
    """A worker node as kubectl prints it (without managedFields)."""
    name = f"node-{i:05d}"
    alloc = {"cpu": "3920m", "ephemeral-storage": "95551679124", "hugepages-2Mi": "0", "memory": "32186376Ki", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "topology.kubernetes.io/region": "eu-west-1",
                "topology.kubernetes.io/zone": f"eu-west-1{'abc'[i % 3]}",
                "node.kubernetes.io/instance-type": "m5.xlarge",
            },
            "name": name,
            "resourceVersion": str(1000 + i),
            "uid": f"00000000-0000-4000-8000-{i:012d}",
        },
        "spec": {"podCIDR": f"10.{i // 256 % 256}.{i % 256}.0/24", "providerID": f"aws:///eu-west-1a/i-{i:017x}"},
        "status": {
            "addresses": [
                {"address": f"10.0.{i // 256 % 256}.{i % 256}", "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": alloc,
            "capacity": {**alloc, "cpu": "4", "memory": "32598016Ki"},
            "conditions": [
                {
                    "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                    "message": "kubelet is posting ready status",
                    "reason": "KubeletReady",
                    "status": "True",
                    "type": "Ready",
                },
            ],
            "images": [
                {
                    "names": [f"registry.example.com/app-{k}@sha256:{k:064x}", f"registry.example.com/app-{k}:v1"],
                    "sizeBytes": 50000000 + k,
                }
                for k in range(i % 3)
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://2.0.0",
                "kernelVersion": "6.1.0",
                "kubeProxyVersion": "v1.35.0",
                "kubeletVersion": "v1.35.0",
                "operatingSystem": "linux",
                "osImage": "Debian GNU/Linux 12",
            },
        },
    }


def pod(i: int, nodes: int) -> dict[str, Any]:
    """A Deployment's pod as kubectl prints it; every other one is bound to a node."""
    app = f"app-{i % 50}"
    name = f"{app}-7d9f8c6b5-{i:06d}"
    bound = i % 2 == 0 and nodes > 0
    spec: dict[str, Any] = {
        "containers": [
            {
                "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "PORT", "value": "8080"}],
                "image": f"registry.example.com/{app}:v1",
                "imagePullPolicy": "IfNotPresent",
                "name": "main",
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "resources": {"limits": {"memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [
                    {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access", "readOnly": True}
                ],
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
        ],
        "volumes": [
            {
                "name": "kube-api-access",
                "projected": {
                    "defaultMode": 420,
                    "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}],
                },
            }
        ],
    }
    status: dict[str, Any] = {"phase": "Pending", "qosClass": "Burstable"}
    if bound:
        spec["nodeName"] = f"node-{i % nodes:05d}"
        status = {
            "phase": "Running",
            "qosClass": "Burstable",
            "hostIP": "10.0.0.1",
            "podIP": f"10.1.{i // 256 % 256}.{i % 256}",
            "startTime": "2026-01-01T00:00:00Z",
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "generateName": f"{app}-7d9f8c6b5-",
            "labels": {"app": app, "pod-template-hash": "7d9f8c6b5"},
            "name": name,
            "namespace": f"team-{i % 20}",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "ReplicaSet",
                    "name": f"{app}-7d9f8c6b5",
                    "uid": f"11111111-0000-4000-8000-{i % 50:012d}",
                }
            ],
            "resourceVersion": str(200000 + i),
            "uid": f"22222222-0000-4000-8000-{i:012d}",
        },
        "spec": spec,
        "status": status,
    }


def document(nodes: int, pods: int) -> dict[str, Any]:
    """`kubectl get nodes,pods -A -o yaml`: one List."""
    items = [node(i) for i in range(nodes)] + [pod(i, nodes) for i in range(pods)]
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def write(path: pathlib.Path, fmt: str, nodes: int, pods: int) -> int:
    """Write the file and return its size in bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = document(nodes, pods)
    with path.open("w", encoding="utf-8") as f:
        if fmt == "json":
            json.dump(doc, f, indent=4)
        else:
            yaml.dump(doc, f, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), default_flow_style=False, sort_keys=True)
    return path.stat().st_size


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=100000)
    parser.add_argument("--format", choices=("yaml", "json"), default="yaml")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    size = write(pathlib.Path(args.out), args.format, args.nodes, args.pods)
    print(f"{args.out}: {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
