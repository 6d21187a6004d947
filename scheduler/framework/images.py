"""The snapshot's images across nodes (kube-scheduler's `ImageStateSummary`, built with the snapshot
in pkg/scheduler/backend/cache/snapshot.go): each image's size and the nodes holding it. ImageLocality
scores with it; the NodeInfo REST service shows it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from scheduler.framework.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class ImageSummary:
    """An image across the cluster (`ImageStateSummary`): its size and how many nodes have it."""

    size: int
    num_nodes: int


@dataclass(slots=True)
class ImageIndex:
    """Image name -> summary and the rows of the nodes holding it, for one node generation."""

    total_nodes: int
    summaries: dict[str, ImageSummary]
    rows: dict[str, npt.NDArray[np.int64]]
    _masks: dict[str, npt.NDArray[np.bool_]] = field(default_factory=dict)

    def mask(self, name: str) -> npt.NDArray[np.bool_]:
        """Per node row, whether it holds the image (built on first use)."""
        hit = self._masks.get(name)
        if hit is None:
            hit = np.zeros(self.total_nodes, dtype=np.bool_)
            hit[self.rows[name]] = True
            self._masks[name] = hit
        return hit


def build_image_index(snapshot: Snapshot) -> ImageIndex:
    """Summarise the snapshot's node images.

    The scheduler cache keeps one size per image name, taken from the first node that reported
    it; rows are visited in insertion order to match that.
    """
    sizes: dict[str, int] = {}
    holders: dict[str, list[int]] = {}
    for row, info in enumerate(snapshot.node_infos):
        seen: set[str] = set()
        for image in info.node.images:
            for name in image.names:
                if name in seen:
                    continue
                seen.add(name)
                sizes.setdefault(name, image.size_bytes)
                holders.setdefault(name, []).append(row)
    return ImageIndex(
        total_nodes=snapshot.num_nodes,
        summaries={name: ImageSummary(sizes[name], len(rows)) for name, rows in holders.items()},
        rows={name: np.asarray(rows, dtype=np.int64) for name, rows in holders.items()},
    )
