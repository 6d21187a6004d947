"""Cluster documents and engines for the Koordinator plugin tests (built through the public loader)."""

from __future__ import annotations

import pathlib
from typing import Any

import yaml

from scheduler.api.fields import parse_time
from scheduler.api.loader import load_cluster
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import load_config
from scheduler.frameworkext.extender import Extender
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import node_doc, pod_doc

NOW = "2026-01-01T00:00:00Z"


def node(name: str, cpu: str = "4", memory: str = "16Gi") -> dict[str, Any]:
    """A Node document."""
    return node_doc(name, cpu, memory, capacity=True)


def pod(
    name: str,
    cpu: str = "1",
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    node_name: str = "",
    priority: int | None = None,
    namespace: str = "default",
    owner_references: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A Pod document with one container."""
    meta = {"annotations": annotations, "labels": labels, "ownerReferences": owner_references}
    present = {key: value for key, value in meta.items() if value}
    return pod_doc(
        name, namespace, cpu, "1Gi", image="pause", node_name=node_name, priority=priority, creationTimestamp=NOW, **present
    )


def gang_pod(name: str, gang: str, min_available: int, cpu: str = "1", **annotations: str) -> dict[str, Any]:
    """A pod of an annotation gang; extra keyword annotations use `_` for `-` (waiting_time=...)."""
    ann = {"gang.scheduling.koordinator.sh/name": gang, "gang.scheduling.koordinator.sh/min-available": str(min_available)}
    for key, value in annotations.items():
        ann["gang.scheduling.koordinator.sh/" + key.replace("_", "-")] = value
    return pod(name, cpu, annotations=ann)


def reservation(name: str, cpu: str = "2", owners: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    """A Reservation document owned (by default) by pods labelled app=<name>."""
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": name, "creationTimestamp": spec.pop("created", NOW)},
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]
                }
            },
            "owners": owners if owners is not None else [{"labelSelector": {"matchLabels": {"app": name}}}],
            **spec,
        },
    }


def config(*plugins: str, args: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A one-profile configuration enabling these plugins through multiPoint."""
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"enabled": [{"name": p} for p in plugins]}},
    }
    if args:
        profile["pluginConfig"] = [{"name": name, "args": value} for name, value in args.items()]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


def engine(
    tmp: pathlib.Path, docs: list[dict[str, Any]], cfg: dict[str, Any], seed: int = 1, extra: tuple[Any, ...] = ()
) -> Scheduler:
    """A started Scheduler over these documents (not run yet); `extra`: out-of-tree (name, factory) pairs."""
    cluster_file = tmp / "cluster.yaml"
    cluster_file.write_text(yaml.safe_dump_all(docs))
    config_file = tmp / "config.yaml"
    config_file.write_text(yaml.safe_dump(cfg))
    clock = VirtualClock(parse_time(NOW, "now"))
    cluster = SimulatedCluster.from_objects(load_cluster([str(cluster_file)]), clock)
    sched = Scheduler(load_config(str(config_file)), cluster, clock, new_registry(*extra), seed=seed, extender=Extender())
    sched.start()
    return sched


def node_of(sched: Scheduler, name: str, namespace: str = "default") -> str | None:
    """Where a pod ended up (None: not bound)."""
    live = next((p for p in sched.cluster.list_pods() if p.name == name and p.namespace == namespace), None)
    return live.node_name or None if live is not None else None
