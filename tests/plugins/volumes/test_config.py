"""The volume plugins in configurations: kube-scheduler-simulator's own scheduler.yaml
(kubernetes-sigs/kube-scheduler-simulator simulator/cmd/scheduler/scheduler.yaml) and DRA."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from scheduler.config.loader import ConfigError, load_config, parse_config
from scheduler.framework.runtime import Framework
from scheduler.plugins.registry import new_registry
from tests.support.builders import make_snapshot
from tests.support.fakes import FakeHandle

SIMULATOR = pathlib.Path(__file__).with_name("simulator-scheduler.yaml")
REMOVED = ("EBSLimits", "GCEPDLimits", "AzureDiskLimits")


def test_simulator_config_with_removed_plugins_names_the_file_and_fields() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(str(SIMULATOR))
    text = str(caught.value)
    assert str(SIMULATOR) in text
    for index, name in ((8, "EBSLimits"), (9, "GCEPDLimits"), (11, "AzureDiskLimits")):
        assert (
            f'profiles[0].plugins.multiPoint.enabled[{index}]: Invalid value: "{name}": was removed from kube-scheduler' in text
        )


def test_simulator_config_without_them_builds_every_volume_plugin() -> None:
    doc = yaml.safe_load(SIMULATOR.read_text())
    enabled = doc["profiles"][0]["plugins"]["multiPoint"]["enabled"]
    doc["profiles"][0]["plugins"]["multiPoint"]["enabled"] = [p for p in enabled if p["name"] not in REMOVED]
    config = parse_config(doc, "scheduler.yaml")
    fwk = Framework.build(config.profiles[0], new_registry(), FakeHandle(make_snapshot([])))
    assert fwk.plugin_names("filter")[6:10] == ["VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"]
    assert "VolumeBinding" in fwk.plugin_names("pre_bind") and "VolumeBinding" in fwk.plugin_names("reserve")
    assert fwk.weights["VolumeBinding"] == 1


@pytest.mark.parametrize(
    "plugins",
    [{"multiPoint": {"enabled": [{"name": "DynamicResources"}]}}, {"filter": {"enabled": [{"name": "DynamicResources"}]}}],
    ids=["multiPoint", "filter"],
)
def test_dynamic_resources_is_refused_saying_it_is_out_of_scope(plugins: dict[str, object]) -> None:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}],
    }
    with pytest.raises(
        ConfigError, match=r'Invalid value: "DynamicResources": dynamic resource allocation \(DRA\) is out of scope'
    ):
        parse_config(doc, "dra.yaml")
