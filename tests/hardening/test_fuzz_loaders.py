"""Fuzzing the cluster, config and faults loaders through the command line.

Generated and mutated YAML/JSON goes to `simulate --cluster`, `--config` and `--faults` in
process: every run must end with exit code 0 or 2 (never an exception), within seconds, and
without growing memory. Bounded for CI: a fixed number of examples per loader, each capped.
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import resource
import tempfile
import time
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.cli import main
from tests.support.examples import examples

ROOT = pathlib.Path(__file__).resolve().parents[2]
TAINTS = ROOT / "examples" / "taints"
SEEDS = [
    (TAINTS / "cluster.yaml").read_text(),
    (TAINTS / "config.yaml").read_text(),
    "faults:\n- {verb: bind, pod: '*', count: 2, error: boom}\n",
]
KEYS = [
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "generateName",
    "labels",
    "spec",
    "status",
    "containers",
    "resources",
    "requests",
    "limits",
    "cpu",
    "memory",
    "pods",
    "nodeName",
    "priority",
    "priorityClassName",
    "items",
    "allocatable",
    "capacity",
    "taints",
    "tolerations",
    "key",
    "effect",
    "operator",
    "value",
    "affinity",
    "nodeSelector",
    "profiles",
    "schedulerName",
    "plugins",
    "filter",
    "score",
    "enabled",
    "disabled",
    "weight",
    "pluginConfig",
    "args",
    "faults",
    "verb",
    "pod",
    "count",
    "after",
    "delay",
    "error",
    "reason",
    "<<",
]
KINDS = [
    "Pod",
    "Node",
    "List",
    "Namespace",
    "PriorityClass",
    "PodDisruptionBudget",
    "Service",
    "KubeSchedulerConfiguration",
    "PodList",
]
SNIPPETS = [
    "&a ",
    "*a",
    "[",
    "]",
    "{",
    "}",
    ", ",
    ": ",
    "- ",
    "!!binary ",
    "!!python/object:os.system ",
    "!!set ",
    "<<: *a\n",
    "'",
    '"',
    "\t",
    "---\n",
    "...\n",
    "%YAML 1.1\n",
    "? ",
    "|\n",
    ">-\n",
    "\x00",
    "\ufeff",
    "# c\n",
    "[" * 150,
    "a: &x [1, *x]\n",
    "99999999999999999999Ei",
    "1e30",
    "-1",
    "0x",
    "1" * 5000,
    "kind: List\nitems: {}\n",
    "\n  ",
    "~",
    "yes",
    "2026-01-01",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(KINDS),
    st.sampled_from(["100m", "1Gi", "1e3", "1e30", "99999999999999999999Ei", "-1", "", "NoSchedule", "Exists", "v1", "*"]),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.sampled_from(KEYS), children, max_size=6)),
    max_leaves=30,
)
objects = st.fixed_dictionaries(
    {"apiVersion": st.sampled_from(["v1", "kubescheduler.config.k8s.io/v1"]), "kind": st.sampled_from(KINDS)},
    optional={"metadata": values, "spec": values, "status": values, "items": values, "profiles": values, "faults": values},
)


def render(docs: list[Any], as_json: bool) -> str:
    if as_json:
        return json.dumps(docs[0] if len(docs) == 1 else {"kind": "List", "items": docs})
    return yaml.safe_dump_all(docs, sort_keys=False)


@st.composite
def texts(draw: st.DrawFn) -> str:
    """A generated document set, or a seed file, then a few mutations."""
    if draw(st.booleans()):
        text = render(draw(st.lists(objects, min_size=1, max_size=3)), draw(st.booleans()))
    else:
        text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "repeat"]))
        if action == "insert":
            text = text[:at] + draw(st.sampled_from(SNIPPETS)) + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        else:
            text = text[:at] + text[at : at + 60] * draw(st.integers(2, 50)) + text[at:]
    return text


FUZZ = settings(
    max_examples=int(os.environ["FUZZ_EXAMPLES"]) if os.environ.get("FUZZ_EXAMPLES") else examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=not os.environ.get("FUZZ_EXAMPLES"),
)
BASE = ["simulate", "--now", "2026-01-01T00:00:00Z", "--seed", "1", "--scores", "none", "--max-attempts", "30"]


def run_with(flag: str, text: str, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / f"input{suffix}"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        args = (
            [*BASE, "--cluster", str(path)]
            if flag == "--cluster"
            else [*BASE, "--cluster", str(TAINTS / "cluster.yaml"), flag, str(path)]
        )
        started = time.perf_counter()
        code = main(args, io.StringIO(), io.StringIO())
        elapsed = time.perf_counter() - started
    assert code in (0, 2)
    assert elapsed < 5.0, f"{flag} took {elapsed:.1f}s"


@FUZZ
@given(texts(), st.sampled_from([".yaml", ".json"]))
def test_fuzz_cluster_files(text: str, suffix: str) -> None:
    run_with("--cluster", text, suffix)


@FUZZ
@given(texts())
def test_fuzz_config_files(text: str) -> None:
    run_with("--config", text, ".yaml")


@FUZZ
@given(texts())
def test_fuzz_faults_files(text: str) -> None:
    run_with("--faults", text, ".yaml")


def test_memory_stays_bounded_while_fuzzing() -> None:
    # Runs last in this module (pytest keeps file order): the fuzz runs above share the process.
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 1_500_000  # KiB
