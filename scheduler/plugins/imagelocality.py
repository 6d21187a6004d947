"""ImageLocality: favour nodes that already hold the pod's container images.

Ports `pkg/scheduler/framework/plugins/imagelocality/image_locality.go`. Each image present on
the node adds its size scaled by how many nodes have it (spread), the sum is clamped to
[23 MiB, 1000 MiB * containers] and mapped onto 0..100.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import numpy as np

from scheduler.api.objects import Node, Pod
from scheduler.framework import signers
from scheduler.framework.images import ImageIndex, ImageSummary, build_image_index
from scheduler.framework.interface import Handle, ScoreExtensions
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import (
    MAX_NODE_SCORE,
    CycleState,
    IntArray,
    Status,
    success,
)

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
_INDEX_KEY = (NAME, "images")


def normalized_image_name(name: str) -> str:
    """Append ":latest" when the reference has neither a tag nor a digest (`normalizedImageName`)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def node_image_names(node: Node) -> set[str]:
    """Every name under which the node reports an image, as node status lists them."""
    return {name for image in node.images for name in image.names}


def scaled_image_score(summary: ImageSummary, total_nodes: int) -> int:
    """The image size scaled by its spread over the cluster (`scaledImageScore`), as Go floats do."""
    spread = float(summary.num_nodes) / float(total_nodes)
    return int(float(summary.size) * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Clamp the summed image scores and map them onto 0..100 (`calculatePriority`)."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    # The numerator is never negative; the denominator only is for a pod without containers,
    # and then the numerator is 0.
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def _pod_images(pod: Pod) -> Iterator[str]:
    for container in pod.init_containers + pod.containers:
        yield normalized_image_name(container.image)


class ImageLocality:
    """Scores nodes by the size of the pod's images they already hold."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """The normalized image names."""
        return signers.signed((signers.IMAGE_NAMES, signers.image_names(pod, normalized_image_name)))

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def _index(self, snapshot: Snapshot) -> ImageIndex:
        return cast(ImageIndex, snapshot.cached(_INDEX_KEY, lambda: build_image_index(snapshot)))

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """One node's score; total nodes is the number of nodes in the snapshot."""
        index = self._index(self.handle.snapshot)
        present = node_image_names(node_info.node)
        total = 0
        for image in _pod_images(pod):
            if image in present and image in index.summaries:
                total += scaled_image_score(index.summaries[image], index.total_nodes)
        return calculate_priority(total, len(pod.init_containers) + len(pod.containers)), success()

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: IntArray) -> IntArray:
        """`score` for many nodes through the cached image index."""
        index = self._index(snapshot)
        sums = np.zeros(len(positions), dtype=np.int64)
        present = False
        for image in _pod_images(pod):
            summary = index.summaries.get(image)
            if summary is None:
                continue
            present = True
            scaled = scaled_image_score(summary, index.total_nodes)
            sums += np.where(index.mask(image)[positions], scaled, 0)
        if not present:
            # No node holds any of the pod's images: every sum is 0, clamped to the minimum,
            # which scores 0.
            return sums
        containers = len(pod.init_containers) + len(pod.containers)
        max_threshold = MAX_CONTAINER_THRESHOLD * containers
        clamped = np.where(sums < MIN_THRESHOLD, MIN_THRESHOLD, np.where(sums > max_threshold, max_threshold, sums))
        span = max_threshold - MIN_THRESHOLD
        numerator = MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)
        # Go truncates toward zero; the numerator is >= 0, so only the sign of span matters.
        quotient = numerator // abs(span)
        return (quotient if span > 0 else -quotient).astype(np.int64)

    def score_extensions(self) -> ScoreExtensions | None:
        """Scores are already 0..100."""
        return None


def new(args: object | None, handle: Handle) -> ImageLocality:
    """Build the plugin; it takes no args."""
    return ImageLocality(handle)
