"""Load a `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration: decode, default, validate.

Decoding is strict like kube-scheduler's: unknown fields anywhere (including the args of
plugins with a registered args type) and wrongly typed values are errors. Defaults are those
of upstream `v1/defaults.go`; validation follows `validation.go` and `validation_pluginargs.go`
with their wording. Every problem found in one stage is reported in one ConfigError.

Fields the engine acts on: parallelism, percentageOfNodesToScore, podInitialBackoffSeconds,
podMaxBackoffSeconds and profiles. Fields accepted, checked and then ignored: leaderElection,
clientConnection, enableProfiling, enableContentionProfiling, extenders and
delayCacheUntilActive (one in-process scheduler; no extenders are called).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from scheduler.api.fielderrors import FieldIssue, go_quote, json_kind, type_error
from scheduler.config.args import ARGS_TYPES
from scheduler.config.component import (
    ClientConnection,
    Extender,
    LeaderElection,
    read_client_connection,
    read_extender,
    read_leader_election,
)
from scheduler.config.decode import ObjectReader
from scheduler.config.errors import ArgsDecodeError, ConfigError, DecodeLog
from scheduler.config.types import (
    DEFAULT_PLUGINS,
    EXTENSION_POINTS,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
    SchedulerConfiguration,
    merge_plugins,
)
from scheduler.config.validation import (
    API_VERSION,
    ConfigDraft,
    ProfileDraft,
    validate_configuration,
)
from scheduler.io.documents import DocumentError, load_all, looks_like_json

__all__ = ["ConfigError", "default_config", "load_config", "parse_config"]

GROUP = "kubescheduler.config.k8s.io"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0
"""Upstream's default: 0 means the adaptive percentage (50% down to 5% with cluster size)."""


def parse_text(text: str | bytes, source: str) -> object:
    """Parse YAML or JSON text; a syntax error names the file and, when known, the line.

    Keys repeated in one mapping are refused, as sigs.k8s.io/yaml does in strict mode; depth
    and alias expansion are bounded (`scheduler.io.documents`).
    """
    is_json = looks_like_json(text)
    try:
        docs = load_all(text, json_text=is_json, strict_keys=True)
    except DocumentError as exc:
        where = f"line {exc.line}, column {exc.column}: " if exc.line is not None else ""
        problem = exc.problem
        raise ConfigError(source, [], f"{where}invalid {'JSON' if is_json else 'YAML'}: {problem}") from None
    if len(docs) > 1:
        raise ConfigError(source, [], f"invalid YAML: expected one document, found {len(docs)} (separated by ---)")
    return docs[0] if docs else None


def load_config(path: str) -> SchedulerConfiguration:
    """Read, default and validate a KubeSchedulerConfiguration file (YAML or JSON)."""
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(path, [], f"cannot read the configuration file: {exc}") from exc
    return parse_config(parse_text(text, path), path)


def default_config() -> SchedulerConfiguration:
    """The configuration kube-scheduler runs with when given none: one `default-scheduler` profile."""
    return parse_config({"apiVersion": API_VERSION, "kind": KIND}, "<defaults>")


@dataclass
class _RawProfile:
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins | None = None
    plugin_config: list[tuple[str, object]] = field(default_factory=list)


@dataclass
class _RawConfig:
    parallelism: int | None
    percentage_of_nodes_to_score: int | None
    pod_initial_backoff_seconds: int | None
    pod_max_backoff_seconds: int | None
    profiles: list[_RawProfile]
    leader_election: LeaderElection
    client_connection: ClientConnection
    extenders: tuple[Extender, ...]


def parse_config(document: object, source: str) -> SchedulerConfiguration:
    """Decode, default and validate an already parsed configuration document."""
    if not isinstance(document, dict):
        raise ConfigError(source, [], f"expected a {KIND} object, got {json_kind(document)}")
    _check_type_meta(document, source)
    log = DecodeLog()
    raw = _read_config(ObjectReader(document, "", log))
    if log:
        raise ConfigError(source, log.issues(), log.message())
    draft = _apply_defaults(raw)
    issues = validate_configuration(draft)
    if issues:
        raise ConfigError(source, issues)
    return _finish(draft, source)


def _check_type_meta(document: dict[object, object], source: str) -> None:
    kind, version = document.get("kind"), document.get("apiVersion")
    for key, value in (("kind", kind), ("apiVersion", version)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(source, [type_error(key, value, "string")])
    if not kind:
        raise ConfigError(source, [FieldIssue("kind", f"Object 'Kind' is missing; set kind: {KIND}")])
    if not version:
        raise ConfigError(source, [FieldIssue("apiVersion", f"Object 'apiVersion' is missing; set apiVersion: {API_VERSION}")])
    if kind != KIND or version != API_VERSION:
        text = (
            f"no kind {go_quote(str(kind))} is registered for version {go_quote(str(version))}"
            f" (this scheduler reads apiVersion {API_VERSION}, kind {KIND})"
        )
        raise ConfigError(source, [FieldIssue("apiVersion" if kind == KIND else "kind", text)])


def _read_config(r: ObjectReader) -> _RawConfig:
    r.raw("apiVersion")
    r.raw("kind")
    raw = _RawConfig(
        parallelism=r.integer("parallelism"),
        leader_election=read_leader_election(r.child("leaderElection")),
        client_connection=read_client_connection(r.child("clientConnection")),
        percentage_of_nodes_to_score=r.integer("percentageOfNodesToScore"),
        pod_initial_backoff_seconds=r.integer("podInitialBackoffSeconds", 64),
        pod_max_backoff_seconds=r.integer("podMaxBackoffSeconds", 64),
        profiles=[_read_profile(p) for p in r.children("profiles")],
        extenders=tuple(read_extender(e) for e in r.children("extenders")),
    )
    for flag in ("enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"):
        r.boolean(flag)
    r.finish()
    return raw


def _read_profile(r: ObjectReader) -> _RawProfile:
    profile = _RawProfile(
        scheduler_name=r.string("schedulerName"),
        percentage_of_nodes_to_score=r.integer("percentageOfNodesToScore"),
        plugins=_read_plugins(r.child("plugins")) if r.has("plugins") else None,
    )
    r.raw("plugins")
    for entry in r.children("pluginConfig"):
        name = entry.string("name") or ""
        args = _decode_args(name, entry.raw("args"), entry.where("args"), r.log)
        entry.finish()
        profile.plugin_config.append((name, args))
    r.finish()
    return profile


def _read_plugin_ref(r: ObjectReader) -> PluginRef:
    ref = PluginRef(r.string("name") or "", r.integer("weight") or 0)
    r.finish()
    return ref


def _read_plugins(r: ObjectReader) -> Plugins:
    sets = {}
    for field_name, yaml_name in EXTENSION_POINTS:
        point = r.child(yaml_name)
        enabled = tuple(_read_plugin_ref(p) for p in point.children("enabled"))
        disabled = tuple(_read_plugin_ref(p).name for p in point.children("disabled"))
        point.finish()
        sets[field_name] = PluginSet(enabled, disabled)
    r.finish()
    return Plugins(**sets)


def _decode_args(name: str, raw: object, path: str, log: DecodeLog) -> object:
    """Typed args for a plugin with a registered args type, else the args as written."""
    args_type = ARGS_TYPES.get(name)
    if args_type is None:
        return {} if raw is None else raw
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        log.errors.append(type_error(path, raw, "object"))
        return args_type()
    data = dict(raw)
    problem = _args_type_meta_problem(name, data.pop("apiVersion", None), data.pop("kind", None))
    if problem:
        log.errors.append(FieldIssue(path, f"{path}: {problem}"))
        return args_type()
    try:
        return args_type.from_dict(data, path)
    except ArgsDecodeError as exc:
        log.extend(exc.log)
        return args_type()


def _args_type_meta_problem(name: str, version: object, kind: object) -> str:
    """Why the args' own apiVersion/kind do not fit the plugin (empty when they fit or are absent)."""
    want_kind = f"{name}Args"
    version_text = version if isinstance(version, str) and version else API_VERSION
    kind_text = kind if isinstance(kind, str) and kind else want_kind
    group = version_text.split("/")[0] if "/" in version_text else ""
    if group != GROUP or kind_text != want_kind:
        return f"args for plugin {name} were not of type {want_kind}.{GROUP}, got {kind_text}.{group}"
    # Koordinator's args types are also registered for the beta versions its users' configs name.
    accepted = getattr(ARGS_TYPES.get(name), "API_VERSIONS", (API_VERSION,))
    if version_text not in accepted:
        return f"no kind {go_quote(want_kind)} is registered for version {go_quote(version_text)}"
    return ""


def _apply_defaults(raw: _RawConfig) -> ConfigDraft:
    profiles = raw.profiles or [_RawProfile()]
    # Only a lone profile gets the default name; with several, each must be named.
    if len(profiles) == 1 and profiles[0].scheduler_name is None:
        profiles[0].scheduler_name = DEFAULT_SCHEDULER_NAME
    return ConfigDraft(
        parallelism=16 if raw.parallelism is None else raw.parallelism,
        percentage_of_nodes_to_score=(
            DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE if raw.percentage_of_nodes_to_score is None else raw.percentage_of_nodes_to_score
        ),
        pod_initial_backoff_seconds=1 if raw.pod_initial_backoff_seconds is None else raw.pod_initial_backoff_seconds,
        pod_max_backoff_seconds=10 if raw.pod_max_backoff_seconds is None else raw.pod_max_backoff_seconds,
        profiles=tuple(_default_profile(p) for p in profiles),
        leader_election=raw.leader_election,
        client_connection=raw.client_connection,
        extenders=raw.extenders,
    )


def _default_profile(raw: _RawProfile) -> ProfileDraft:
    plugins = merge_plugins(DEFAULT_PLUGINS, raw.plugins)
    config = list(raw.plugin_config)
    configured = {name for name, _ in config}
    # Enabled plugins with an args type and no pluginConfig get default args, in name order.
    for name in plugins.enabled_names():
        args_type = ARGS_TYPES.get(name)
        if args_type is not None and name not in configured:
            config.append((name, args_type()))
    return ProfileDraft(raw.scheduler_name or "", raw.percentage_of_nodes_to_score, plugins, tuple(config), raw.plugins)


def _finish(draft: ConfigDraft, source: str) -> SchedulerConfiguration:
    profiles = tuple(
        Profile(p.scheduler_name, p.percentage_of_nodes_to_score, p.plugins, dict(p.plugin_config)) for p in draft.profiles
    )
    return SchedulerConfiguration(
        profiles=profiles,
        percentage_of_nodes_to_score=draft.percentage_of_nodes_to_score,
        pod_initial_backoff_seconds=draft.pod_initial_backoff_seconds,
        pod_max_backoff_seconds=draft.pod_max_backoff_seconds,
        parallelism=draft.parallelism,
        source=source,
    )
