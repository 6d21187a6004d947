"""Replay inputs shared by the replay tests and benchmarks: the openb trace's folder, a slice of it
that keeps a test short, and the bin-packing configuration compared with the default one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPENB_DATA = ROOT.parent / "shared" / "data" / "openb"
OPENB_SLICE = {"nodes": 500, "pods": 2000}
"""The first 500 nodes (310 without GPUs, then GPU nodes) and the first 2000 tasks: a few seconds a replay."""

MOST_ALLOCATED: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [
                                {"name": "cpu", "weight": 1},
                                {"name": "memory", "weight": 1},
                                {"name": "nvidia.com/gpu", "weight": 1},
                            ],
                        }
                    },
                }
            ],
        }
    ],
}
"""Bin-packing: NodeResourcesFit scores MostAllocated over cpu, memory and GPUs."""

DEFAULT: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def need_openb() -> Path:
    """The openb folder; skips without it (fails in CI, where ../shared must be there)."""
    if not (OPENB_DATA / "openb_pod_list_default.csv").is_file():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"no openb trace in {OPENB_DATA}")
        pytest.skip(f"no openb trace in {OPENB_DATA}")
    return OPENB_DATA
