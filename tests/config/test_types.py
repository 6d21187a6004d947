"""Default plugins and the merge of user plugins into them."""

from __future__ import annotations

import dataclasses

import pytest

from scheduler.config.types import (
    DEFAULT_PLUGINS,
    EXTENSION_POINTS,
    PluginRef,
    Plugins,
    PluginSet,
    merge_plugins,
)


def refs(*items: str | tuple[str, int]) -> tuple[PluginRef, ...]:
    """PluginRefs from names or (name, weight) pairs."""
    return tuple(PluginRef(i) if isinstance(i, str) else PluginRef(*i) for i in items)


def test_default_plugins_are_multi_point_in_upstream_order() -> None:
    # upstream pkg/scheduler/apis/config/v1/default_plugins.go (DynamicResources left out).
    assert DEFAULT_PLUGINS.multi_point.enabled == refs(
        "SchedulingGates",
        "PrioritySort",
        "NodeUnschedulable",
        "NodeName",
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        "NodePorts",
        ("NodeResourcesFit", 1),
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        "DefaultPreemption",
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        "DefaultBinder",
    )
    other_points = [name for name, _ in EXTENSION_POINTS if name != "multi_point"]
    assert all(DEFAULT_PLUGINS.point(name) == PluginSet() for name in other_points)


def test_extension_points_name_every_plugins_field() -> None:
    assert [name for name, _ in EXTENSION_POINTS] == [f.name for f in dataclasses.fields(Plugins)]
    assert dict(EXTENSION_POINTS)["pre_enqueue"] == "preEnqueue"
    assert dict(EXTENSION_POINTS)["multi_point"] == "multiPoint"


# Cases from upstream pkg/scheduler/apis/config/v1/default_plugins_test.go (TestMergePlugins).
MERGE_CASES = [
    (
        "AppendCustomPlugin",
        Plugins(filter=PluginSet(refs("CustomPlugin"))),
        Plugins(filter=PluginSet(refs("DefaultPlugin1", "DefaultPlugin2"))),
        Plugins(filter=PluginSet(refs("DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"))),
    ),
    (
        "InsertAfterDefaultPlugins2",
        Plugins(filter=PluginSet(refs("CustomPlugin", "DefaultPlugin2"), ("DefaultPlugin2",))),
        Plugins(filter=PluginSet(refs("DefaultPlugin1", "DefaultPlugin2"))),
        Plugins(filter=PluginSet(refs("DefaultPlugin1", "CustomPlugin", "DefaultPlugin2"), ("DefaultPlugin2",))),
    ),
    (
        "InsertBeforeAllPlugins",
        Plugins(filter=PluginSet(refs("CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"), ("*",))),
        Plugins(filter=PluginSet(refs("DefaultPlugin1", "DefaultPlugin2"))),
        Plugins(filter=PluginSet(refs("CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"), ("*",))),
    ),
    (
        "ReorderDefaultPlugins",
        Plugins(filter=PluginSet(refs("DefaultPlugin2", "DefaultPlugin1"), ("*",))),
        Plugins(filter=PluginSet(refs("DefaultPlugin1", "DefaultPlugin2"))),
        Plugins(filter=PluginSet(refs("DefaultPlugin2", "DefaultPlugin1"), ("*",))),
    ),
    (
        "ApplyNilCustomPlugin",
        None,
        Plugins(filter=PluginSet(refs("DefaultPlugin1", "DefaultPlugin2"))),
        Plugins(filter=PluginSet(refs("DefaultPlugin1", "DefaultPlugin2"))),
    ),
    (
        "CustomPluginOverrideDefaultPlugin",
        Plugins(filter=PluginSet(refs(("Plugin1", 2), ("Plugin3", 3)))),
        Plugins(filter=PluginSet(refs("Plugin1", "Plugin2", "Plugin3"))),
        Plugins(filter=PluginSet(refs(("Plugin1", 2), "Plugin2", ("Plugin3", 3)))),
    ),
    (
        "OrderPreserveAfterOverride",
        Plugins(filter=PluginSet(refs(("Plugin2", 2), ("Plugin1", 1)))),
        Plugins(filter=PluginSet(refs("Plugin1", "Plugin2", "Plugin3"))),
        Plugins(filter=PluginSet(refs(("Plugin1", 1), ("Plugin2", 2), "Plugin3"))),
    ),
    (
        "RepeatedCustomPlugin",
        Plugins(filter=PluginSet(refs("Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4)))),
        Plugins(filter=PluginSet(refs("Plugin1", "Plugin2", "Plugin3"))),
        Plugins(filter=PluginSet(refs("Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2)))),
    ),
    (
        "Append custom MultiPoint plugin",
        Plugins(multi_point=PluginSet(refs("CustomPlugin"))),
        Plugins(multi_point=PluginSet(refs("DefaultPlugin1", "DefaultPlugin2"))),
        Plugins(multi_point=PluginSet(refs("DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"))),
    ),
    (
        "Append disabled Multipoint plugins",
        Plugins(
            multi_point=PluginSet(refs("CustomPlugin", "CustomPlugin2"), ("DefaultPlugin2",)),
            score=PluginSet((), ("CustomPlugin2",)),
        ),
        Plugins(multi_point=PluginSet(refs("DefaultPlugin1", "DefaultPlugin2"))),
        Plugins(
            multi_point=PluginSet(refs("DefaultPlugin1", "CustomPlugin", "CustomPlugin2"), ("DefaultPlugin2",)),
            score=PluginSet((), ("CustomPlugin2",)),
        ),
    ),
    (
        "override default MultiPoint plugins with custom value",
        Plugins(multi_point=PluginSet(refs(("DefaultPlugin", 5)))),
        Plugins(multi_point=PluginSet(refs("DefaultPlugin"))),
        Plugins(multi_point=PluginSet(refs(("DefaultPlugin", 5)))),
    ),
    (
        "disabled MultiPoint plugin in default set",
        Plugins(multi_point=PluginSet(refs("CustomPlugin"))),
        Plugins(multi_point=PluginSet(refs("DefaultPlugin"), ("DefaultPlugin2",))),
        Plugins(multi_point=PluginSet(refs("DefaultPlugin", "CustomPlugin"), ("DefaultPlugin2",))),
    ),
    (
        "disabled MultiPoint plugin in default set for specific extension point",
        Plugins(multi_point=PluginSet(refs("CustomPlugin"))),
        Plugins(multi_point=PluginSet(refs("DefaultPlugin")), score=PluginSet((), ("DefaultPlugin2",))),
        Plugins(multi_point=PluginSet(refs("DefaultPlugin", "CustomPlugin")), score=PluginSet((), ("DefaultPlugin2",))),
    ),
    (
        "multipoint with only disabled gets merged",
        Plugins(multi_point=PluginSet((), ("DefaultPlugin",))),
        Plugins(multi_point=PluginSet(refs("DefaultPlugin"))),
        Plugins(multi_point=PluginSet((), ("DefaultPlugin",))),
    ),
]


@pytest.mark.parametrize(("custom", "defaults", "expected"), [c[1:] for c in MERGE_CASES], ids=[c[0] for c in MERGE_CASES])
def test_merge_plugins(custom: Plugins | None, defaults: Plugins, expected: Plugins) -> None:
    assert merge_plugins(defaults, custom) == expected


def test_star_disables_all_defaults_of_one_point_only() -> None:
    custom = Plugins(multi_point=PluginSet(refs("MyBinder"), ("*",)), score=PluginSet(refs(("Custom", 7))))
    merged = merge_plugins(DEFAULT_PLUGINS, custom)
    assert merged.multi_point == PluginSet(refs("MyBinder"), ("*",))
    assert merged.score == PluginSet(refs(("Custom", 7)))


def test_enabled_names_are_sorted_and_unique() -> None:
    plugins = Plugins(score=PluginSet(refs("B", "A")), filter=PluginSet(refs("A", "C")))
    assert plugins.enabled_names() == ["A", "B", "C"]
