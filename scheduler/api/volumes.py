"""The volumes a pod names, as the volume plugins read them: each one's claim, or the in-tree disk
or CSI driver it names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler.api.fields import (
    field_bool,
    field_str,
    join,
    mapping,
    sequence,
    string,
)


@dataclass(frozen=True, slots=True)
class Volume:
    """A pod volume as the volume plugins read it: its claim, or the in-tree disk it names.

    `source` is the volume's type (`persistentVolumeClaim`, `ephemeral`, `csi`,
    `gcePersistentDisk`, `awsElasticBlockStore`, `iscsi`, `rbd`, or another key as written);
    `disk` identifies the in-tree disk VolumeRestrictions compares (PD name, EBS volume id, IQN,
    or RBD pool/image), with `monitors` for RBD.
    """

    name: str
    source: str
    claim_name: str = ""
    read_only: bool = False
    disk: str = ""
    monitors: tuple[str, ...] = ()
    driver: str = ""


_IN_TREE_DISKS = {
    "gcePersistentDisk": "pdName",
    "awsElasticBlockStore": "volumeID",
    "iscsi": "iqn",
}


def parse_volumes(raw: Any, path: str) -> tuple[Volume, ...]:
    """Parse spec.volumes, keeping what the volume plugins read."""
    out = []
    for i, item in enumerate(sequence(raw, path)):
        where = join(path, i)
        data = mapping(item, where)
        name = field_str(data, "name", where)
        source = "emptyDir"
        for key in data:
            if key != "name":
                source = key
                break
        body = data.get(source)
        if type(body) is not dict:
            body = {}
        sp = join(where, source)
        read_only = field_bool(body, "readOnly", sp)
        if source == "persistentVolumeClaim":
            out.append(Volume(name, source, claim_name=string(body.get("claimName"), join(sp, "claimName")), read_only=read_only))
        elif source == "ephemeral":
            out.append(Volume(name, source))
        elif source in _IN_TREE_DISKS:
            key = _IN_TREE_DISKS[source]
            out.append(Volume(name, source, read_only=read_only, disk=string(body.get(key), join(sp, key))))
        elif source == "rbd":
            monitors = tuple(
                string(m, join(join(sp, "monitors"), j))
                for j, m in enumerate(sequence(body.get("monitors"), join(sp, "monitors")))
            )
            pool = string(body.get("pool"), join(sp, "pool"), "rbd") or "rbd"
            image = string(body.get("image"), join(sp, "image"))
            out.append(Volume(name, source, read_only=read_only, disk=f"{pool}/{image}", monitors=monitors))
        elif source == "csi":
            out.append(Volume(name, source, read_only=read_only, driver=string(body.get("driver"), join(sp, "driver"))))
        else:
            out.append(Volume(name, source))
    return tuple(out)
