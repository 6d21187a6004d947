"""Assertions that a plugin's batch form (`filter_batch`, `score_batch`) equals its per-node form."""

from __future__ import annotations

from typing import Any

from scheduler.api.objects import Pod
from scheduler.framework.snapshot import Snapshot


def assert_batch_filter_agrees(plugin: Any, state: Any, pod: Pod, snapshot: Snapshot, positions: Any) -> None:
    """`filter_batch` gives, for every position, the code and reasons `filter` gives node by node."""
    from scheduler.framework.types import Code

    result = plugin.filter_batch(state, pod, snapshot, positions)
    assert len(result.codes) == len(positions)
    for i, pos in enumerate(list(positions)):
        status = plugin.filter(state, pod, snapshot.node_infos[int(pos)])
        assert Code(int(result.codes[i])) == status.code, (snapshot.names[int(pos)], status)
        if status.code != Code.SUCCESS:
            assert result.reasons(i) == status.reasons, snapshot.names[int(pos)]


def assert_batch_score_agrees(plugin: Any, state: Any, pod: Pod, snapshot: Snapshot, positions: Any) -> None:
    """`score_batch` equals `score` node by node, and NormalizeScore turns both into the same array."""
    import numpy as np

    batch = plugin.score_batch(state, pod, snapshot, positions)
    single = []
    for pos in list(positions):
        value, status = plugin.score(state, pod, snapshot.node_infos[int(pos)])
        assert status.success, status
        single.append(value)
    per_node = np.asarray(single, dtype=np.int64)
    assert batch.dtype == np.int64
    assert batch.tolist() == per_node.tolist()
    ext = plugin.score_extensions()
    if ext is not None:
        a, b = batch.copy(), per_node.copy()
        assert ext.normalize_score(state, pod, a).success
        assert ext.normalize_score(state, pod, b).success
        assert a.tolist() == b.tolist()
