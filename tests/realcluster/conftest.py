"""Fixtures of the tests against a real control plane (../shared/k8s): one control plane per
module, on ports of its own, stopped when the module ends.

Without ../shared/k8s (or etcd) the tests are skipped with the reason on a developer's machine,
and fail in CI (`CI=true`), where it must be there.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest

from tests.support.controlplane import Api, ControlPlane, Kubelet, in_ci, unavailable, unpacked_binaries


def _require_control_plane() -> None:
    reason = unavailable()
    if not reason:
        return
    if in_ci():
        pytest.fail(f"{reason}; CI needs ../shared beside the checkout (CI=true)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def k8s_binaries(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """kube-apiserver and kube-scheduler unpacked once per session."""
    _require_control_plane()
    return unpacked_binaries(tmp_path_factory.getbasetemp() / "k8s-bin")


@pytest.fixture(scope="module")
def control_plane(k8s_binaries: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """etcd and kube-apiserver for this module."""
    plane = ControlPlane(tmp_path_factory.mktemp("k8s"), k8s_binaries).start()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="module")
def api(control_plane: ControlPlane) -> Api:
    """The admin's client of this module's control plane."""
    return control_plane.api


@pytest.fixture(scope="module")
def kubelet(api: Api) -> Iterator[Kubelet]:
    """Ready nodes, and terminating pods deleted at once, for this module."""
    running = Kubelet(api).start()
    try:
        yield running
    finally:
        running.stop()
