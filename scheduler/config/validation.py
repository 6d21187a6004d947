"""Rules of upstream `pkg/scheduler/apis/config/validation/validation.go` over a defaulted config.

Validation runs after defaulting, as upstream's does: plugins are already merged with the
defaults and default args are already added, so field indexes are those of the merged lists.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, is_dataclass

from scheduler.api.fielderrors import FieldIssue, duplicate, invalid, required
from scheduler.api.fields import join
from scheduler.config.args import ARGS_TYPES
from scheduler.config.component import (
    ClientConnection,
    Extender,
    LeaderElection,
    validate_client_connection,
    validate_extenders,
    validate_leader_election,
)
from scheduler.config.types import EXTENSION_POINTS, Plugins, PluginSet

API_VERSION = "kubescheduler.config.k8s.io/v1"
INVALID_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
"""Plugins removed from v1: naming them is an error (upstream `invalidPluginsByVersion`)."""

UNSUPPORTED_PLUGINS = {"DynamicResources": "dynamic resource allocation (DRA) is out of scope for this scheduler; remove it"}
"""Upstream plugins this engine does not implement: naming them anywhere is an error saying so."""
_REMOVED_PLUGIN_DETAIL = (
    "was removed from kube-scheduler (the in-tree volume limit plugins are gone; NodeVolumeLimits counts "
    "attachable volumes per CSI driver); remove it"
)

_INVALID_PLUGIN_DETAIL = f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")'


@dataclass(frozen=True, slots=True)
class ProfileDraft:
    """A defaulted profile with its pluginConfig still a list, so indexes match the file."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: Plugins
    plugin_config: tuple[tuple[str, object], ...]
    written_plugins: Plugins | None = None
    """The plugins as the file wrote them (before merging with the defaults), for field paths."""


@dataclass(frozen=True, slots=True)
class ConfigDraft:
    """A defaulted configuration with every section validation looks at."""

    parallelism: int
    percentage_of_nodes_to_score: int | None
    pod_initial_backoff_seconds: int
    pod_max_backoff_seconds: int
    profiles: tuple[ProfileDraft, ...]
    leader_election: LeaderElection
    client_connection: ClientConnection
    extenders: tuple[Extender, ...]


def validate_configuration(config: ConfigDraft) -> list[FieldIssue]:
    """Every issue with the configuration, in upstream's order."""
    issues = validate_client_connection(config.client_connection, "clientConnection")
    issues += validate_leader_election(config.leader_election, "leaderElection")
    if config.parallelism <= 0:
        issues.append(invalid("parallelism", config.parallelism, "should be an integer value greater than zero"))
    if not config.profiles:
        issues.append(required("profiles"))
    names: set[str] = set()
    for i, profile in enumerate(config.profiles):
        path = join("profiles", i)
        issues += _profile_issues(profile, path)
        if profile.scheduler_name in names:
            issues.append(duplicate(join(path, "schedulerName"), profile.scheduler_name))
        names.add(profile.scheduler_name)
    issues += _queue_sort_issues(config.profiles)
    issues += _percentage_issues("percentageOfNodesToScore", config.percentage_of_nodes_to_score)
    if config.pod_initial_backoff_seconds <= 0:
        issues.append(invalid("podInitialBackoffSeconds", config.pod_initial_backoff_seconds, "must be greater than 0"))
    if config.pod_max_backoff_seconds < config.pod_initial_backoff_seconds:
        issues.append(
            invalid(
                "podMaxBackoffSeconds",
                config.pod_max_backoff_seconds,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    issues += validate_extenders(config.extenders, "extenders")
    return issues


def _percentage_issues(path: str, value: int | None) -> list[FieldIssue]:
    if value is not None and not 0 <= value <= 100:
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _profile_issues(profile: ProfileDraft, path: str) -> list[FieldIssue]:
    issues = []
    if not profile.scheduler_name:
        issues.append(required(join(path, "schedulerName")))
    issues += _percentage_issues(join(path, "percentageOfNodesToScore"), profile.percentage_of_nodes_to_score)
    # Upstream does not look at multiPoint here.
    for field_name, yaml_name in EXTENSION_POINTS:
        if field_name == "multi_point":
            continue
        enabled_path = join(join(join(path, "plugins"), yaml_name), "enabled")
        for i, plugin in enumerate(profile.plugins.point(field_name).enabled):
            if plugin.name in INVALID_PLUGINS:
                issues.append(invalid(join(enabled_path, i), plugin.name, _INVALID_PLUGIN_DETAIL))
    issues += _removed_and_unsupported_issues(profile, path)
    issues += _plugin_config_issues(profile, path)
    return issues


def _removed_and_unsupported_issues(profile: ProfileDraft, path: str) -> list[FieldIssue]:
    """multiPoint entries naming a removed plugin (upstream only fails later, when building the
    framework, without saying why), and any entry naming a plugin this engine does not offer."""
    issues: list[FieldIssue] = []
    if profile.written_plugins is None:
        return issues
    for field_name, yaml_name in EXTENSION_POINTS:
        enabled_path = join(join(join(path, "plugins"), yaml_name), "enabled")
        for i, plugin in enumerate(profile.written_plugins.point(field_name).enabled):
            if field_name == "multi_point" and plugin.name in INVALID_PLUGINS:
                issues.append(invalid(join(enabled_path, i), plugin.name, _REMOVED_PLUGIN_DETAIL))
            elif plugin.name in UNSUPPORTED_PLUGINS:
                issues.append(invalid(join(enabled_path, i), plugin.name, UNSUPPORTED_PLUGINS[plugin.name]))
    return issues


def _plugin_config_issues(profile: ProfileDraft, path: str) -> list[FieldIssue]:
    issues = []
    seen: set[str] = set()
    for j, (name, args) in enumerate(profile.plugin_config):
        where = join(join(path, "pluginConfig"), j)
        if name in seen:
            issues.append(duplicate(where, name))
        seen.add(name)
        args_type = ARGS_TYPES.get(name)
        if name in INVALID_PLUGINS:
            issues.append(invalid(where, name, _INVALID_PLUGIN_DETAIL))
        elif args_type is not None and isinstance(args, args_type):
            issues += args.validate(join(where, "args"))
    return issues


def plugin_set_document(plugin_set: PluginSet) -> dict[str, object]:
    """A PluginSet in its YAML form, for showing it in an error."""
    enabled = [{"name": p.name, "weight": p.weight} if p.weight else {"name": p.name} for p in plugin_set.enabled]
    return {"enabled": enabled, "disabled": [{"name": n} for n in plugin_set.disabled]}


def _args_document(args: object) -> object:
    if is_dataclass(args) and not isinstance(args, type):
        return asdict(args)
    return args


def _queue_sort_issues(profiles: tuple[ProfileDraft, ...]) -> list[FieldIssue]:
    """Every profile must have the first profile's queueSort plugins and queueSort args."""
    if not profiles:
        return []
    issues = []
    canon = profiles[0].plugins.queue_sort
    name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        # Upstream spells this path with a capital E.
        issues.append(
            invalid("profiles[0].plugins.queueSort.Enabled", len(canon.enabled), "only one queue sort plugin can be enabled")
        )
    canon_args = None
    for config_name, args in profiles[0].plugin_config:
        if name and config_name == name:
            canon_args = args
    for i in range(1, len(profiles)):
        current = profiles[i].plugins.queue_sort
        path = join("profiles", i)
        if current != canon:
            issues.append(
                invalid(join(path, "plugins.queueSort"), plugin_set_document(current), "must be the same for all profiles")
            )
        for config_name, args in profiles[i].plugin_config:
            if config_name == name and args != canon_args:
                issues.append(
                    invalid(join(path, "pluginConfig.args"), _args_document(args), "queueSort must be the same for all profiles")
                )
    return issues
