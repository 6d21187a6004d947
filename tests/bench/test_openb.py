"""The openb trace workload: CSV columns mapped onto Nodes and Pods (skips without the trace)."""

from __future__ import annotations

import pathlib

import pytest

from scheduler.bench.openb import GPU, GPU_MODEL_LABEL, TraceError, openb_nodes, openb_pods
from scheduler.bench.workloads import openb

DATA = pathlib.Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "openb"

NODES_CSV = "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,262144,0,\nn1,96000,786432,8,V100M16\n"
PODS_CSV = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "late,1000,1024,0,0,,LS,Running,50,60,50\n"
    "gpu,4000,2048,2,1000,V100M16|V100M32,LS,Running,10,60,10\n"
)


def write(tmp: pathlib.Path, nodes: str = NODES_CSV, pods: str = PODS_CSV) -> pathlib.Path:
    (tmp / "openb_node_list_all_node.csv").write_text(nodes)
    (tmp / "openb_pod_list_default.csv").write_text(pods)
    return tmp


def test_nodes_carry_cpu_memory_gpus_and_model(tmp_path: pathlib.Path) -> None:
    n0, n1 = openb_nodes(write(tmp_path))
    assert (n0.allocatable["cpu"], n0.allocatable["memory"], n0.allocatable[GPU]) == (32000, 262144 * 2**20, 0)
    assert GPU_MODEL_LABEL not in n0.labels and n1.labels[GPU_MODEL_LABEL] == "V100M16"
    assert n1.allocatable[GPU] == 8


def test_pods_in_creation_order_with_gpu_requests_and_model_affinity(tmp_path: pathlib.Path) -> None:
    gpu, late = openb_pods(write(tmp_path))
    assert (gpu.name, late.name) == ("gpu", "late")
    assert (gpu.requests["cpu"], gpu.requests["memory"], gpu.requests[GPU]) == (4000, 2048 * 2**20, 2)
    assert GPU not in late.requests
    assert gpu.affinity is not None and late.affinity is None


@pytest.mark.parametrize(
    ("nodes", "pods", "message"),
    [
        ("sn,cpu_milli\nn0,1\n", PODS_CSV, "missing column(s) memory_mib, gpu, model"),
        (NODES_CSV.replace("32000", "lots"), PODS_CSV, "row 2: cpu_milli: invalid value 'lots'"),
        (NODES_CSV, PODS_CSV.replace(",50,60,50", ",-5,60,50"), "row 2: creation_time: invalid value '-5'"),
    ],
    ids=["missing-columns", "bad-number", "negative"],
)
def test_bad_trace_names_file_row_and_column(tmp_path: pathlib.Path, nodes: str, pods: str, message: str) -> None:
    with pytest.raises(TraceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        work = openb(write(tmp_path, nodes, pods), None, None)
        assert work is None


def test_the_real_trace_loads() -> None:
    if not (DATA / "openb_pod_list_default.csv").is_file():
        pytest.skip(f"openb trace not present at {DATA}")
    work = openb(DATA, None, None)
    assert (len(work.nodes), len(work.measured)) == (1523, 8152)
