"""The scheduler configuration as the engine reads it, and the default plugin set of v1.

Profiles hold their plugins already merged with DEFAULT_PLUGINS the way upstream's
`pkg/scheduler/apis/config/v1/default_plugins.go` merges them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

EXTENSION_POINTS: tuple[tuple[str, str], ...] = (
    ("pre_enqueue", "preEnqueue"),
    ("queue_sort", "queueSort"),
    ("pre_filter", "preFilter"),
    ("filter", "filter"),
    ("post_filter", "postFilter"),
    ("pre_score", "preScore"),
    ("score", "score"),
    ("reserve", "reserve"),
    ("permit", "permit"),
    ("pre_bind", "preBind"),
    ("bind", "bind"),
    ("post_bind", "postBind"),
    ("multi_point", "multiPoint"),
)
"""Python field name of each extension point of Plugins and its YAML name."""


@dataclass(frozen=True, slots=True)
class PluginRef:
    """A plugin named at an extension point, with its score weight (0 means unset)."""

    name: str
    weight: int = 0


@dataclass(frozen=True, slots=True)
class PluginSet:
    """Enabled and disabled plugins of one extension point; `*` in disabled disables all defaults."""

    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Plugins:
    """One PluginSet per extension point, plus multiPoint."""

    pre_enqueue: PluginSet = PluginSet()
    queue_sort: PluginSet = PluginSet()
    pre_filter: PluginSet = PluginSet()
    filter: PluginSet = PluginSet()
    post_filter: PluginSet = PluginSet()
    pre_score: PluginSet = PluginSet()
    score: PluginSet = PluginSet()
    reserve: PluginSet = PluginSet()
    permit: PluginSet = PluginSet()
    pre_bind: PluginSet = PluginSet()
    bind: PluginSet = PluginSet()
    post_bind: PluginSet = PluginSet()
    multi_point: PluginSet = PluginSet()

    def point(self, field_name: str) -> PluginSet:
        """The PluginSet of an extension point given its Python field name."""
        value = getattr(self, field_name)
        assert isinstance(value, PluginSet)
        return value

    def enabled_names(self) -> list[str]:
        """Every plugin enabled at any extension point, sorted (upstream's `pluginsNames`)."""
        return sorted({p.name for name, _ in EXTENSION_POINTS for p in self.point(name).enabled})


# DynamicResources (DRA) is out of scope for this engine; the config refuses it.
DEFAULT_PLUGINS = Plugins(
    multi_point=PluginSet(
        enabled=(
            PluginRef("SchedulingGates"),
            PluginRef("PrioritySort"),
            PluginRef("NodeUnschedulable"),
            PluginRef("NodeName"),
            PluginRef("TaintToleration", 3),
            PluginRef("NodeAffinity", 2),
            PluginRef("NodePorts"),
            PluginRef("NodeResourcesFit", 1),
            PluginRef("VolumeRestrictions"),
            PluginRef("NodeVolumeLimits"),
            PluginRef("VolumeBinding"),
            PluginRef("VolumeZone"),
            PluginRef("PodTopologySpread", 2),
            PluginRef("InterPodAffinity", 2),
            PluginRef("DefaultPreemption"),
            PluginRef("NodeResourcesBalancedAllocation", 1),
            PluginRef("ImageLocality", 1),
            PluginRef("DefaultBinder"),
        )
    )
)
"""The v1 default plugins, all enabled through multiPoint."""


def merge_plugin_set(defaults: PluginSet, custom: PluginSet) -> PluginSet:
    """Merge a user's PluginSet into the default one as upstream's `mergePluginSet` does.

    Disabled names (the user's, then the defaults') remove default plugins, `*` removes all;
    a user plugin naming a default replaces it in place, keeping the default order; the rest
    are appended in the user's order. When a name is enabled twice, the last entry replaces
    the default and the earlier one is appended, exactly as upstream (the framework rejects it).
    """
    disabled = custom.disabled + defaults.disabled
    last_index = {plugin.name: i for i, plugin in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for plugin in defaults.enabled:
            if plugin.name in disabled:
                continue
            if plugin.name in last_index:
                index = last_index[plugin.name]
                plugin = custom.enabled[index]
                replaced.add(index)
            enabled.append(plugin)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(tuple(enabled), disabled)


def merge_plugins(defaults: Plugins, custom: Plugins | None) -> Plugins:
    """Merge a profile's plugins into the defaults, point by point (upstream's `mergePlugins`)."""
    if custom is None:
        return defaults
    merged = {name: merge_plugin_set(defaults.point(name), custom.point(name)) for name, _ in EXTENSION_POINTS}
    return replace(defaults, **merged)


@dataclass(frozen=True, slots=True)
class Profile:
    """A scheduling profile: its name, node sampling, merged plugins and per-plugin args.

    `plugin_config` maps a plugin name to its typed, defaulted and validated args object when
    the plugin has a registered args type, else to the args mapping as written.
    """

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: Plugins
    plugin_config: dict[str, object]


@dataclass(frozen=True, slots=True)
class SchedulerConfiguration:
    """A defaulted, validated KubeSchedulerConfiguration and the file it came from."""

    profiles: tuple[Profile, ...]
    percentage_of_nodes_to_score: int | None
    pod_initial_backoff_seconds: int
    pod_max_backoff_seconds: int
    parallelism: int
    source: str

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile a pod with this `spec.schedulerName` uses, or None."""
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)


GATED_PLUGINS = (("GangScheduling", "GangScheduling"),)
"""(gate, plugin): a plugin the default multiPoint gains while its gate is on (`applyFeatureGates`)."""


def with_gated_plugins(config: SchedulerConfiguration, enabled: Callable[[str], bool]) -> SchedulerConfiguration:
    """The configuration with each gated plugin added to every profile's multiPoint, after the
    default plugins, unless the profile disables it (or `*`) or already enables it."""
    wanted = [plugin for gate, plugin in GATED_PLUGINS if enabled(gate)]
    if not wanted:
        return config
    profiles = []
    for prof in config.profiles:
        multi = prof.plugins.multi_point
        disabled = set(multi.disabled)
        enabled_names = {p.name for p in multi.enabled}
        extra = [PluginRef(name) for name in wanted if name not in enabled_names and name not in disabled and "*" not in disabled]
        if not extra:
            profiles.append(prof)
            continue
        # Upstream appends to the defaults before a profile's own plugins are merged in.
        defaults = {p.name for p in DEFAULT_PLUGINS.multi_point.enabled}
        cut = max((i + 1 for i, p in enumerate(multi.enabled) if p.name in defaults), default=0)
        refs = (*multi.enabled[:cut], *extra, *multi.enabled[cut:])
        plugins = replace(prof.plugins, multi_point=PluginSet(refs, multi.disabled))
        profiles.append(replace(prof, plugins=plugins))
    return replace(config, profiles=tuple(profiles))
