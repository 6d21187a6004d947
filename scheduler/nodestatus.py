"""Each node's Filter status as PostFilter reads it (kube-scheduler's `NodeToStatusReader`),
from an attempt's record."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.framework.types import Code, Status
from scheduler.records import AttemptRecord

_CODE_KEYS = {
    "Success": "SUCCESS",
    "Error": "ERROR",
    "Unschedulable": "UNSCHEDULABLE",
    "UnschedulableAndUnresolvable": "UNSCHEDULABLE_AND_UNRESOLVABLE",
    "Wait": "WAIT",
    "Skip": "SKIP",
    "Pending": "PENDING",
}


class NodeStatusReader:
    """Each node's Filter status for PostFilter (`NodeToStatusReader`); nodes that passed get Success.

    Reads the attempt's arrays directly: no per-node dict is built for thousands of failures.
    """

    __slots__ = ("_index", "_record", "_uniform")

    def __init__(self, record: AttemptRecord) -> None:
        self._record = record
        self._index: dict[str, int] | None = None
        pre = record.pre_filter_statuses
        # A PreFilter rejection gives every node the same status.
        self._uniform = next(iter(pre.values())) if pre else None

    def _status(self, entry: Mapping[str, Any]) -> Status:
        return Status(Code[_CODE_KEYS[entry["code"]]], tuple(entry["reasons"]), entry["plugin"])

    def __call__(self, node_name: str) -> Status:
        if self._uniform is not None:
            return self._status(self._uniform)
        fo = self._record.filter_outcome
        if fo is None:
            return Status()
        if self._index is None:
            names = self._record.names
            self._index = {names[p]: i for i, p in enumerate(fo.failed_positions.tolist())}
        i = self._index.get(node_name)
        if i is None:
            absent = self._record.absent_reason
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (absent,)) if absent else Status()
        return Status(Code(int(fo.failed_codes[i])), fo.all_reasons()[i], fo.failed_plugins[i])

    def rows_with_code(self, code: Code) -> npt.NDArray[np.int64]:
        """The snapshot rows whose status has this code."""
        if self._uniform is not None:
            if self._uniform["code"] != code.label:
                return np.zeros(0, dtype=np.int64)
            return np.arange(len(self._record.names), dtype=np.int64)
        fo = self._record.filter_outcome
        if fo is None:
            return np.zeros(0, dtype=np.int64)
        rows: npt.NDArray[np.int64] = fo.failed_positions[fo.failed_codes == int(code)]
        return rows

    def names_with_code(self, code: Code) -> list[str]:
        """The nodes whose status has this code (`NodesForStatusCode`, without absent nodes)."""
        if self._uniform is not None:
            return list(self._record.names) if self._uniform["code"] == code.label else []
        fo = self._record.filter_outcome
        if fo is None:
            return []
        names = self._record.names
        return [names[p] for p in fo.failed_positions[fo.failed_codes == int(code)].tolist()]

    def reasons(self) -> list[tuple[str, ...]]:
        """Every failed node's reasons."""
        fo = self._record.filter_outcome
        return fo.all_reasons() if fo is not None else []

    def reason_counts(self) -> dict[str, int]:
        """How many failed nodes gave each reason (for the FailedScheduling histogram)."""
        fo = self._record.filter_outcome
        counts = fo.reason_counts() if fo is not None else {}
        absent = self._record.absent_reason
        if absent:
            # `FitError.Error`: nodes absent from the status map count with the absent status.
            failed = len(fo.failed_positions) if fo is not None else 0
            left_out = self._record.num_all_nodes - failed
            if left_out > 0:
                counts = dict(counts)
                counts[absent] = counts.get(absent, 0) + left_out
        return counts
