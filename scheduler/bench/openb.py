"""Alibaba's openb GPU-cluster trace: its CSV files read into nodes and pending pods, and the
checked readers the bench's workload and the replay's trace (`scheduler/replay/trace.py`) share."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from scheduler.api.objects import Node, Pod, parse_node, parse_pod

NODE_PODS = "110"
"""Pods a node holds: the trace's nodes and the bench's (`workloads.make_node`)."""

OPENB_NODES = "openb_node_list_all_node.csv"
OPENB_PODS = "openb_pod_list_default.csv"
GPU = "nvidia.com/gpu"
GPU_MODEL_LABEL = "node.koordinator.sh/gpu-model"
"""The node label holding a GPU model (Koordinator's name for it); `gpu_spec` selects on it."""


class TraceError(ValueError):
    """A trace file that is missing or does not hold the expected columns."""


def read_csv(path: Path, columns: tuple[str, ...]) -> list[dict[str, str]]:
    """The rows of a trace CSV, refused with a TraceError naming the file when it is missing or lacks a column."""
    if not path.is_file():
        raise TraceError(f"{path}: not found (the openb trace's CSVs are expected there)")
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            raise TraceError(f"{path}: missing column(s) {', '.join(missing)}; found {', '.join(reader.fieldnames or [])}")
        return list(reader)


def int_field(path: Path, row: int, column: str, text: str) -> int:
    """A whole number of 0 or more from one cell (empty: 0), or a TraceError naming the row and column."""
    try:
        value = int(text or "0")
    except ValueError:
        raise TraceError(f"{path}: row {row}: {column}: invalid value {text!r}; must be a whole number") from None
    if value < 0:
        raise TraceError(f"{path}: row {row}: {column}: invalid value {text!r}; must be 0 or more")
    return value


def openb_nodes(data: Path) -> list[Node]:
    """The trace's nodes: cpu, memory and whole GPUs as allocatable, the GPU model as a label."""
    path = data / OPENB_NODES
    nodes = []
    for i, row in enumerate(read_csv(path, ("sn", "cpu_milli", "memory_mib", "gpu", "model")), start=2):
        name = row["sn"]
        alloc = {
            "cpu": f"{int_field(path, i, 'cpu_milli', row['cpu_milli'])}m",
            "memory": f"{int_field(path, i, 'memory_mib', row['memory_mib'])}Mi",
            "pods": NODE_PODS,
            GPU: str(int_field(path, i, "gpu", row["gpu"])),
        }
        labels = {"kubernetes.io/hostname": name}
        if row["model"]:
            labels[GPU_MODEL_LABEL] = row["model"]
        nodes.append(
            parse_node({"metadata": {"name": name, "labels": labels}, "status": {"allocatable": alloc, "capacity": dict(alloc)}})
        )
    return nodes


def openb_pods(data: Path) -> list[Pod]:
    """The trace's tasks as pending pods in creation order: cpu, memory, whole GPUs, and the
    acceptable GPU models (`gpu_spec`, `|`-separated) as required node affinity."""
    path = data / OPENB_PODS
    rows = read_csv(path, ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_spec", "creation_time"))
    keyed = [(int_field(path, i, "creation_time", r["creation_time"]), i, r) for i, r in enumerate(rows, start=2)]
    keyed.sort(key=lambda t: (t[0], t[1]))
    pods = []
    for _, i, row in keyed:
        requests = {
            "cpu": f"{int_field(path, i, 'cpu_milli', row['cpu_milli'])}m",
            "memory": f"{int_field(path, i, 'memory_mib', row['memory_mib'])}Mi",
        }
        spec: dict[str, Any] = {}
        gpus = int_field(path, i, "num_gpu", row["num_gpu"])
        if gpus:
            requests[GPU] = str(gpus)
        models = [m for m in row["gpu_spec"].split("|") if m]
        if models:
            term = {"matchExpressions": [{"key": GPU_MODEL_LABEL, "operator": "In", "values": models}]}
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
        name = row["name"]
        container = {
            "name": "main",
            "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": requests, "limits": {GPU: str(gpus)} if gpus else {}},
        }
        pods.append(
            parse_pod(
                {
                    "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                    "spec": {"containers": [container], **spec},
                }
            )
        )
    return pods
