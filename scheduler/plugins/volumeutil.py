"""Helpers the volume plugins share: reading storage objects from the cluster's listers, with
the API server's NotFound wording."""

from __future__ import annotations

from scheduler.api.storage import PersistentVolume, PersistentVolumeClaim, StorageClass
from scheduler.cluster.contract import StorageLister
from scheduler.framework.interface import Handle


class NotFound(LookupError):
    """A storage object the pod needs does not exist (`apierrors.IsNotFound`)."""


def storage_lister(handle: Handle) -> StorageLister:
    """The cluster backend, which lists PVs, claims, classes, CSINodes and CSIDrivers."""
    return handle.cluster()


def get_claim(lister: StorageLister, namespace: str, name: str) -> PersistentVolumeClaim:
    """A claim, or NotFound worded as the API server words it."""
    pvc: PersistentVolumeClaim | None = lister.get_persistent_volume_claim(namespace, name)
    if pvc is None:
        raise NotFound(f'persistentvolumeclaim "{name}" not found')
    return pvc


def get_volume(lister: StorageLister, name: str) -> PersistentVolume:
    """A PV, or NotFound."""
    pv: PersistentVolume | None = lister.get_persistent_volume(name)
    if pv is None:
        raise NotFound(f'persistentvolume "{name}" not found')
    return pv


def get_class(lister: StorageLister, name: str) -> StorageClass:
    """A StorageClass, or NotFound."""
    sc: StorageClass | None = lister.get_storage_class(name)
    if sc is None:
        raise NotFound(f'storageclass.storage.k8s.io "{name}" not found')
    return sc
