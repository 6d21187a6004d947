"""Object metadata (metav1.ObjectMeta) and owner references, parsed with the API server's paths."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler.api.fields import (
    fail,
    field_bool,
    field_list,
    field_str,
    field_string_map,
    field_time,
    join,
    mapping,
)


@dataclass(frozen=True, slots=True)
class OwnerReference:
    """One `metadata.ownerReferences` entry (`metav1.OwnerReference`)."""

    api_version: str
    kind: str
    name: str
    controller: bool
    uid: str = ""
    controller_written: bool | None = None
    """`controller` as written, None when absent (Koordinator's owner matching tells them apart)."""


@dataclass(frozen=True, slots=True)
class ObjectMeta:
    """The metadata fields the scheduler reads."""

    name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    owner_kinds: tuple[tuple[str, str], ...]
    creation_timestamp: float | None
    deletion_timestamp: float | None
    owner_references: tuple[OwnerReference, ...] = ()

    def controller_ref(self) -> OwnerReference | None:
        """The owner reference marked `controller: true` (`metav1.GetControllerOf`)."""
        return next((ref for ref in self.owner_references if ref.controller), None)


def parse_meta(raw: Any, path: str, namespaced: bool) -> ObjectMeta:
    """Parse metadata; a namespaced object without a namespace lives in `default`."""
    data = mapping(raw, path)
    name = field_str(data, "name", path)
    if not name:
        fail(join(path, "name"), "is required")
    namespace = field_str(data, "namespace", path, "default") or "default"
    owners = []
    references = []
    for i, ref in enumerate(field_list(data, "ownerReferences", path)):
        where = join(join(path, "ownerReferences"), i)
        ref_map = mapping(ref, where)
        owners.append((str(ref_map.get("kind", "")), str(ref_map.get("name", ""))))
        references.append(
            OwnerReference(
                api_version=field_str(ref_map, "apiVersion", where),
                kind=field_str(ref_map, "kind", where),
                name=field_str(ref_map, "name", where),
                controller=field_bool(ref_map, "controller", where),
                uid=field_str(ref_map, "uid", where),
                controller_written=ref_map.get("controller"),
            )
        )
    return ObjectMeta(
        name=name,
        namespace=namespace if namespaced else "",
        uid=field_str(data, "uid", path) or (f"uid-{namespace}-{name}" if namespaced else f"uid-{name}"),
        labels=field_string_map(data, "labels", path),
        annotations=field_string_map(data, "annotations", path),
        owner_kinds=tuple(owners),
        creation_timestamp=field_time(data, "creationTimestamp", path),
        deletion_timestamp=field_time(data, "deletionTimestamp", path),
        owner_references=tuple(references),
    )
