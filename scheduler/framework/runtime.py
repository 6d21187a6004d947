"""The framework runtime: builds a profile's plugins from its configuration and runs them.

Building follows kube-scheduler's `NewFramework`: plugins named at any extension point or in
multiPoint are constructed once per profile with their args; each point's list comes from
its own `enabled` entries, then multiPoint is expanded into every point the plugin
implements (explicit entries override, `*` disables expansion); exactly one QueueSort and
at least one Bind are required; score weights default to 1 and must not overflow.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Pod
from scheduler.framework.feasible import FeasibleWalk, FilterFailed, FilterOutcome, guard, quoted, took
from scheduler.framework.interface import Handle, PluginFactory, implemented_points
from scheduler.framework.nodeinfo import NodeInfo, PodInfo
from scheduler.framework.snapshot import NodeList
from scheduler.framework.types import (
    MAX_NODE_SCORE,
    MAX_TOTAL_SCORE,
    MIN_NODE_SCORE,
    ClusterEvent,
    Code,
    CycleState,
    PreFilterResult,
    QueuedPodInfo,
    Status,
    error,
)

POINT_TYPE_NAMES = {
    "pre_enqueue": "PreEnqueuePlugin",
    "queue_sort": "QueueSortPlugin",
    "pre_filter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "post_filter": "PostFilterPlugin",
    "pre_score": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "pre_bind": "PreBindPlugin",
    "bind": "BindPlugin",
    "post_bind": "PostBindPlugin",
}
POINTS = tuple(POINT_TYPE_NAMES)
_YAML_POINTS = {
    **{point: point.split("_")[0] + "".join(w.title() for w in point.split("_")[1:]) for point in POINT_TYPE_NAMES},
    "multi_point": "multiPoint",
}


class FrameworkError(ValueError):
    """A profile that cannot be built (kube-scheduler refuses it at start-up)."""


log = logging.getLogger(__name__)


class Recorder:
    """Where the runtime reports durations; the metrics module provides the real one."""

    def extension_point(self, point: str, status: Code, profile: str, seconds: float) -> None:
        """One extension point ran."""

    def plugin(self, plugin: str, point: str, status: Code, seconds: float) -> None:
        """One plugin ran at an extension point (sampled)."""

    def plugin_error(self, point: str, plugin: str, exc: BaseException) -> None:
        """A plugin failed: it raised at an informational extension point (PostBind, Unreserve, a
        PostFilter transformer), or raised or answered an Error within a cycle (the cycle ends
        with an Error status); the metrics log and count it."""
        log.warning("%s plugin %s failed: %s", point, plugin, exc)


@dataclass(slots=True)
class ScoreOutcome:
    """Normalized scores per plugin (rows) and node (columns), weights and weighted totals."""

    positions: npt.NDArray[np.int64]
    plugins: list[str]
    weights: list[int]
    matrix: npt.NDArray[np.int64]
    totals: npt.NDArray[np.int64]
    error: Status | None = None
    debug_top_n: int = 0
    raw: npt.NDArray[np.int64] | None = None
    """The scores before NormalizeScore, when the cycle kept them (`CycleState.keep_raw_scores`)
    and a plugin normalized (else they are `matrix`)."""
    _order: npt.NDArray[np.intp] | None = field(default=None, repr=False, compare=False)

    def order(self) -> npt.NDArray[np.intp]:
        """Columns by total descending (ties keep evaluation order), sorted once: the top-N log and the history's score table read it."""
        if self._order is None:
            self._order = np.argsort(-self.totals, kind="stable")
        return self._order

    def top_columns(self, n: int | None) -> list[int]:
        """Column indexes by total descending (ties keep evaluation order), the first n or all."""
        return [int(j) for j in (self.order() if n is None else self.order()[:n])]

    def top_rows(self, names: list[str], n: int) -> list[dict[str, Any]]:
        """The top-n rows of weighted per-plugin scores, total descending (debugTopNScores)."""
        if n <= 0 or not self.plugins:
            return []
        cols = self.order()[:n]
        # Gather the n columns with NumPy, then build the dicts from plain lists.
        weighted = (self.matrix[:, cols] * np.asarray(self.weights, dtype=np.int64)[:, None]).T.tolist()
        nodes = [names[p] for p in self.positions[cols].tolist()]
        return [
            {"node": node, "total": total, "plugins": dict(zip(self.plugins, row, strict=True))}
            for node, total, row in zip(nodes, self.totals[cols].tolist(), weighted, strict=True)
        ]


@dataclass(slots=True)
class _Entry:
    name: str
    plugin: Any
    batch: bool = False
    weight: int = 1
    extensions: Any = None


@dataclass(slots=True)
class Framework:
    """One profile: its plugins per extension point and the code that runs them."""

    profile_name: str
    percentage_of_nodes_to_score: int | None
    plugins: dict[str, Any]
    points: dict[str, list[_Entry]]
    weights: dict[str, int]
    handle: Handle
    recorder: Recorder = field(default_factory=Recorder)
    events: list[tuple[ClusterEvent, str]] = field(default_factory=list)
    # PreFilter plugins with `before_pre_filter`, PostFilter plugins with `after_post_filter`
    # (Koordinator's scheduling transformers, frameworkext/interface.go).
    before_pre_filter: list[_Entry] = field(default_factory=list)
    after_post_filter: list[_Entry] = field(default_factory=list)
    # The profile's frameworkext.ExtendedHandle once an Extender is bound: phase hooks and
    # debug flags. None (and no hooks) costs one attribute test per extension point.
    extension: Any = None
    # Candidates walked per feasible node wanted, a decaying maximum over recent cycles that found
    # enough: sizes the first Filter chunk so that a full cluster is filtered in one pass, not two.
    walk_ratio: float = 1.0

    # ----- construction -----------------------------------------------------------------
    @classmethod
    def build(
        cls,
        profile: Any,
        registry: Mapping[str, PluginFactory],
        handle: Handle,
        recorder: Recorder | None = None,
    ) -> Framework:
        """Build a profile's framework, refusing what kube-scheduler refuses."""
        plugins_cfg = profile.plugins
        needed: list[str] = []
        for point in (*POINTS, "multi_point"):
            for ref in getattr(plugins_cfg, point).enabled:
                if ref.name not in needed:
                    needed.append(ref.name)
        instances: dict[str, Any] = {}
        for name in needed:
            factory = registry.get(name)
            if factory is None:
                point = next(
                    (p for p in (*POINTS, "multi_point") if any(r.name == name for r in getattr(plugins_cfg, p).enabled)),
                    "multi_point",
                )
                kind = POINT_TYPE_NAMES.get(point, "MultiPointPlugin")
                field_path = f"plugins.{_YAML_POINTS.get(point, point)}.enabled"
                raise FrameworkError(
                    f'{field_path}: {kind} "{name}" does not exist (known plugins: {", ".join(sorted(registry))})'
                )
            try:
                instances[name] = factory(profile.plugin_config.get(name), handle)
            except FrameworkError:
                raise
            except Exception as exc:  # a plugin refusing its args is a start-up error, named
                raise FrameworkError(f"initializing plugin {name!r} of profile {profile.scheduler_name!r}: {exc}") from exc
        implements = {name: set(implemented_points(p)) for name, p in instances.items()}
        lists: dict[str, list[str]] = {}
        for point in POINTS:
            pset = getattr(plugins_cfg, point)
            names: list[str] = []
            for ref in pset.enabled:
                if point not in implements.get(ref.name, set()):
                    raise FrameworkError(f"plugin {ref.name!r} does not extend {POINT_TYPE_NAMES[point]}")
                if ref.name in names:
                    raise FrameworkError(f"plugin {ref.name!r} already registered as {POINT_TYPE_NAMES[point]!r}")
                names.append(ref.name)
            lists[point] = _expand_multi_point(point, names, pset.disabled, plugins_cfg.multi_point.enabled, implements)
        name = profile.scheduler_name
        if len(lists["queue_sort"]) != 1:
            raise FrameworkError(
                f"only one queue sort plugin required for profile with scheduler name {name!r}, but got {len(lists['queue_sort'])}"
            )
        if not lists["bind"]:
            raise FrameworkError(f"at least one bind plugin is needed for profile with scheduler name {name!r}")
        weights = _score_weights(lists["score"], plugins_cfg.score.enabled, plugins_cfg.multi_point.enabled)
        points: dict[str, list[_Entry]] = {}
        for point, names in lists.items():
            entries = []
            for pname in names:
                plugin = instances[pname]
                entry = _Entry(pname, plugin)
                if point == "filter":
                    entry.batch = callable(getattr(plugin, "filter_batch", None))
                elif point == "score":
                    entry.batch = callable(getattr(plugin, "score_batch", None))
                    entry.weight = weights[pname]
                    entry.extensions = plugin.score_extensions()
                elif point == "pre_filter":
                    entry.extensions = plugin.pre_filter_extensions()
                entries.append(entry)
            points[point] = entries
        events: list[tuple[ClusterEvent, str]] = []
        for pname, plugin in instances.items():
            register = getattr(plugin, "events_to_register", None)
            if callable(register):
                events.extend((event, pname) for event in register())
        return cls(
            profile_name=name,
            percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
            plugins=instances,
            points=points,
            weights=weights,
            handle=handle,
            recorder=recorder or Recorder(),
            events=events,
            before_pre_filter=[e for e in points["pre_filter"] if callable(getattr(e.plugin, "before_pre_filter", None))],
            after_post_filter=[e for e in points["post_filter"] if callable(getattr(e.plugin, "after_post_filter", None))],
        )

    def plugin_names(self, point: str) -> list[str]:
        """The plugins run at an extension point, in order."""
        return [e.name for e in self.points[point]]

    def has(self, point: str) -> bool:
        """Whether any plugin runs at the extension point."""
        return bool(self.points[point])

    # ----- queueing -----------------------------------------------------------------------
    def run_pre_enqueue(self, pod: Pod) -> Status:
        """PreEnqueue: the first non-Success status gates the pod."""
        for entry in self.points["pre_enqueue"]:
            status = guard(entry.plugin.pre_enqueue, pod)
            if not status.success:
                return status.with_plugin(entry.name)
        return Status()

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """QueueSort's ordering."""
        return bool(self.points["queue_sort"][0].plugin.less(a, b))

    @property
    def sort_key(self) -> Callable[[QueuedPodInfo], tuple[Any, ...]] | None:
        """The QueueSort plugin's `sort_key` when it has one: a key whose order is `less`'s, so
        activeQ compares tuples instead of calling `less` (PrioritySort has one)."""
        return getattr(self.points["queue_sort"][0].plugin, "sort_key", None)

    # ----- PreFilter / Filter ----------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status, set[str]]:
        """PreFilter: returns the merged node restriction, the status and the plugins that rejected
        (on success, the plugins whose results restricted the nodes: upstream's `pluginsWithNodes`,
        which join the attempt's unschedulable plugins and name the nodes they left out)."""
        started = time.perf_counter()
        ext = self.extension
        if ext is not None and ext.hooks.pre_filter:
            try:
                pod = ext.hooks.run_pre_filter(ext, state, pod)
            except Exception as exc:  # a failing PreFilterPhaseHook ends the cycle with an Error
                self.recorder.extension_point("PreFilter", Code.ERROR, self.profile_name, time.perf_counter() - started)
                return None, error(str(exc)), set()
        timing = state.plugin_timings
        for entry in self.before_pre_filter:
            # Koordinator's PreFilterTransformers: may replace the pod or end the cycle first.
            t = time.perf_counter() if timing is not None else 0.0
            changed, status = _guard_pair(entry.plugin.before_pre_filter, state, pod)
            if timing is not None:
                took(timing, entry.name, "BeforePreFilter", t)
            if not status.success:
                status.with_plugin(entry.name)
                self.recorder.extension_point("PreFilter", status.code, self.profile_name, time.perf_counter() - started)
                return None, status, {entry.name} if status.rejected else set()
            if changed is not None:
                pod = changed
        nodes = self.handle.snapshot.node_infos
        result: PreFilterResult | None = None
        restricting: list[str] = []
        final = Status()
        for entry in self.points["pre_filter"]:
            t = time.perf_counter() if timing is not None else 0.0
            res, status = _guard_pair(entry.plugin.pre_filter, state, pod, nodes)
            if timing is not None:
                took(timing, entry.name, "PreFilter", t)
            if status.code == Code.SKIP:
                state.skip_filter_plugins.add(entry.name)
                continue
            if not status.success:
                status.with_plugin(entry.name)
                if status.code == Code.ERROR:
                    self.recorder.plugin_error("PreFilter", entry.name, status.error or RuntimeError(status.message))
                    status = error(f"running PreFilter plugin {quoted(entry.name)}: {status.message}")
                    status.plugin = entry.name
                final = status
                break
            if res is not None and res.node_names is not None:
                restricting.append(entry.name)
                result = res if result is None else result.merge(res)
                if not result.node_names:
                    final = Status(
                        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        (
                            f"node(s) didn't satisfy plugin(s) {_go_list(sorted(restricting))} simultaneously"
                            if len(restricting) > 1
                            else f"node(s) didn't satisfy plugin {restricting[0]}",
                        ),
                        restricting[0],
                    )
                    break
        self.recorder.extension_point("PreFilter", final.code, self.profile_name, time.perf_counter() - started)
        if final.success:
            return result, final, set(restricting)
        rejected = {final.plugin} if final.rejected and final.plugin else set()
        if final.rejected and len(restricting) > 1:
            rejected = set(restricting)
        return result, final, rejected

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """All Filter plugins on one node, stopping at the first failure (per-node forms)."""
        for entry in self.points["filter"]:
            if entry.name in state.skip_filter_plugins:
                continue
            # `_guard` inlined: this runs for every node of every preemption dry run.
            call = entry.plugin.filter
            try:
                status = call(state, pod, node_info)
            except Exception as exc:
                status = error(exc)
            else:
                if status.__class__ is not Status and not isinstance(status, Status):
                    status = error(f"plugin returned {status!r} instead of a Status")
            if status.code != Code.SUCCESS:
                status.with_plugin(entry.name)
                if status.code == Code.ERROR:
                    status = error(f"running {quoted(entry.name)} filter plugin: {status.message}")
                    status.plugin = entry.name
                return status
        return Status()

    def run_pre_filter_add_pod(self, state: CycleState, pod: Pod, to_add: PodInfo, node_info: NodeInfo) -> Status:
        """The AddPod extensions of PreFilter plugins not skipped in this cycle."""
        return self._run_pre_filter_extension("AddPod", state, pod, to_add, node_info)

    def run_pre_filter_remove_pod(self, state: CycleState, pod: Pod, to_remove: PodInfo, node_info: NodeInfo) -> Status:
        """The RemovePod extensions of PreFilter plugins not skipped in this cycle."""
        return self._run_pre_filter_extension("RemovePod", state, pod, to_remove, node_info)

    def active_filters(self, state: CycleState) -> list[tuple[str, Any]] | None:
        """(name, plugin) of the Filter plugins this cycle runs per node, in order; None when
        FilterPhaseHooks may change what they see."""
        ext = self.extension
        if ext is not None and ext.hooks.filter:
            return None
        skipped = state.skip_filter_plugins
        return [(e.name, e.plugin) for e in self.points["filter"] if e.name not in skipped]

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        """Whether some PreFilter plugin not skipped in this cycle has AddPod/RemovePod extensions."""
        skipped = state.skip_filter_plugins
        return any(e.extensions is not None and e.name not in skipped for e in self.points["pre_filter"])

    def _run_pre_filter_extension(self, kind: str, state: CycleState, pod: Pod, other: PodInfo, node_info: NodeInfo) -> Status:
        method = "add_pod" if kind == "AddPod" else "remove_pod"
        for entry in self.points["pre_filter"]:
            if entry.extensions is None or entry.name in state.skip_filter_plugins:
                continue
            status = guard(getattr(entry.extensions, method), state, pod, other, node_info)
            if not status.success:
                return error(f"running {kind} on PreFilter plugin {quoted(entry.name)}: {status.message}")
        return Status()

    def find_feasible(
        self,
        state: CycleState,
        pod: Pod,
        candidates: npt.NDArray[np.int64],
        num_to_find: int,
        per_node_override: Callable[[int], Status] | None = None,
        override_positions: frozenset[int] = frozenset(),
    ) -> FilterOutcome:
        """Filter `candidates` (rows, in evaluation order) until `num_to_find` are feasible
        (`FeasibleWalk`). Rows in `override_positions` are judged by `per_node_override` instead
        (nominated pods); so are rows a FilterPhaseHook changed, hence `per_node_override` must
        filter through `run_hooked_filter` (the Scheduler's Filter-with-nominated-pods does).
        """
        started = time.perf_counter()
        hooked: frozenset[int] = frozenset()
        ext = self.extension
        if ext is not None and ext.hooks.filter:
            # Rows a FilterPhaseHook changed are judged one by one, through `run_hooked_filter`
            # (which reuses the hook results found here): batch verdicts, taken on the snapshot
            # rows, do not apply to a replaced NodeInfo.
            try:
                hooked = ext.hook_filter_nodes(state, pod, candidates)
            except Exception as exc:  # a failing FilterPhaseHook ends the cycle with an Error
                return self._filter_error("FilterPhaseHook", exc, started, hook=True)
        entries = [e for e in self.points["filter"] if e.name not in state.skip_filter_plugins]
        walk = FeasibleWalk(
            entries,
            self.handle.snapshot,
            state,
            pod,
            candidates,
            num_to_find,
            per_node_override,
            override_positions,
            hooked,
            self.run_hooked_filter,
        )
        # The first chunk holds a little more than the nodes wanted, scaled by how many nodes
        # recent cycles walked per node wanted (most nodes fit in a busy cluster, fewer in a full one).
        first = int(num_to_find * self.walk_ratio)
        try:
            walk.run(first + first // 8 + 16)
        except FilterFailed as failed:
            return self._filter_error(failed.plugin, failed.exc, started, wrapped=failed.wrapped)
        count = len(candidates)
        if walk.found_count >= num_to_find and count > num_to_find > 0:
            self.walk_ratio = max(walk.processed / num_to_find, self.walk_ratio * 0.9)
        outcome = walk.outcome()
        self.recorder.extension_point("Filter", Code.SUCCESS, self.profile_name, time.perf_counter() - started)
        return outcome

    def _filter_error(
        self, plugin: str, exc: BaseException, started: float, hook: bool = False, wrapped: bool = False
    ) -> FilterOutcome:
        self.recorder.plugin_error("Filter", plugin, exc)
        status = error(str(exc) if hook or wrapped else f"running {quoted(plugin)} filter plugin: {exc}")
        status.plugin = plugin
        self.recorder.extension_point("Filter", Code.ERROR, self.profile_name, time.perf_counter() - started)
        empty = np.zeros(0, dtype=np.int64)
        return FilterOutcome(empty, 0, empty, np.zeros(0, np.int8), [], empty, lambda _i: (), status)

    def run_post_filter(self, state: CycleState, pod: Pod, statuses: Callable[[str], Status]) -> tuple[str | None, Status]:
        """PostFilter: the first plugin that returns Success (or Error) ends it."""
        started = time.perf_counter()
        final = Status(Code.UNSCHEDULABLE)
        messages: list[str] = []
        nominated: str | None = None
        timing = state.plugin_timings
        for entry in self.points["post_filter"]:
            t = time.perf_counter() if timing is not None else 0.0
            node, status = _guard_pair(entry.plugin.post_filter, state, pod, statuses)
            if timing is not None:
                took(timing, entry.name, "PostFilter", t)
            status.with_plugin(entry.name)
            if status.success or status.code == Code.ERROR:
                final, nominated = status, node
                break
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                final = status
                break
            if status.reasons:
                messages.extend(status.reasons)
            final = status
        if not final.success and final.code != Code.ERROR and messages and not final.reasons:
            final.reasons = tuple(messages)
        for entry in self.after_post_filter:
            # Koordinator's PostFilterTransformers: they see the outcome; what they say is dropped.
            try:
                entry.plugin.after_post_filter(state, pod, statuses, final)
            except Exception as exc:  # as PostBind: informational, never fatal to the cycle
                self.recorder.plugin_error("PostFilterTransformer", entry.name, exc)
        self.recorder.extension_point("PostFilter", final.code, self.profile_name, time.perf_counter() - started)
        return nominated, final

    # ----- PreScore / Score -------------------------------------------------------------------
    def run_score(self, state: CycleState, pod: Pod, positions: npt.NDArray[np.int64]) -> ScoreOutcome:
        """PreScore, Score, NormalizeScore and weights over the feasible rows."""
        snapshot = self.handle.snapshot
        started = time.perf_counter()
        infos = NodeList(snapshot, positions)
        timing = state.plugin_timings
        for entry in self.points["pre_score"]:
            t = time.perf_counter() if timing is not None else 0.0
            status = guard(entry.plugin.pre_score, state, pod, infos)
            if timing is not None:
                took(timing, entry.name, "PreScore", t)
            if status.code == Code.SKIP:
                state.skip_score_plugins.add(entry.name)
            elif not status.success:
                self.recorder.extension_point("PreScore", Code.ERROR, self.profile_name, time.perf_counter() - started)
                return self._score_error(
                    positions, f"running PreScore plugin {quoted(entry.name)}: {status.message}", ("PreScore", entry.name, status)
                )
        mid = time.perf_counter()
        self.recorder.extension_point("PreScore", Code.SUCCESS, self.profile_name, mid - started)
        ext = self.extension
        replaced: dict[int, NodeInfo] = {}
        if ext is not None and ext.hooks.score:
            try:
                pod, positions, replaced = self._run_score_hooks(ext, state, pod, positions)
            except Exception as exc:  # a failing ScorePhaseHook ends the cycle with an Error
                return self._score_error(positions, str(exc))
            infos = NodeList(snapshot, positions)
        entries = [e for e in self.points["score"] if e.name not in state.skip_score_plugins]
        matrix = np.zeros((len(entries), len(positions)), dtype=np.int64)
        before: dict[int, npt.NDArray[np.int64]] | None = {} if state.keep_raw_scores else None
        for row, entry in enumerate(entries):
            t = time.perf_counter() if timing is not None else 0.0
            try:
                if entry.batch:
                    raw = np.asarray(entry.plugin.score_batch(state, pod, snapshot, positions), dtype=np.int64)
                    # Nodes whose Node object a ScorePhaseHook replaced are scored per node.
                    for j, twin in replaced.items():
                        value, status = entry.plugin.score(state, pod, twin)
                        if not status.success:
                            return self._invalid_score(positions, entries, matrix, row) or self._score_error(
                                positions,
                                f"running Score plugin {quoted(entry.name)}: {status.message}",
                                ("Score", entry.name, status),
                            )
                        raw[j] = value
                else:
                    raw = np.empty(len(positions), dtype=np.int64)
                    for j, info in enumerate(infos):
                        value, status = entry.plugin.score(state, pod, replaced.get(j, info) if replaced else info)
                        if not status.success:
                            return self._invalid_score(positions, entries, matrix, row) or self._score_error(
                                positions,
                                f"running Score plugin {quoted(entry.name)}: {status.message}",
                                ("Score", entry.name, status),
                            )
                        raw[j] = value
                if entry.extensions is not None:
                    if before is not None:
                        before[row] = raw.copy()
                    status = entry.extensions.normalize_score(state, pod, raw)
                    if not status.success:
                        return self._invalid_score(positions, entries, matrix, row) or self._score_error(
                            positions,
                            f"running Normalize on Score plugin {quoted(entry.name)}: {status.message}",
                            ("Score", entry.name, status),
                        )
            except Exception as exc:
                # An earlier plugin's invalid score is the error upstream stops at first.
                return self._invalid_score(positions, entries, matrix, row) or self._score_error(
                    positions, f"running Score plugin {quoted(entry.name)}: {exc}", ("Score", entry.name, exc)
                )
            matrix[row] = raw
            if timing is not None:
                took(timing, entry.name, "Score", t)
        # The range check, once over all rows (upstream checks each plugin in turn: the first
        # row out of range names the plugin).
        invalid = self._invalid_score(positions, entries, matrix, len(entries))
        if invalid is not None:
            return invalid
        weights = [e.weight for e in entries]
        totals = (
            (matrix * np.asarray(weights, dtype=np.int64)[:, None]).sum(axis=0) if entries else np.zeros(len(positions), np.int64)
        )
        self.recorder.extension_point("Score", Code.SUCCESS, self.profile_name, time.perf_counter() - mid)
        outcome = ScoreOutcome(positions, [e.name for e in entries], weights, matrix, totals.astype(np.int64))
        if before:
            outcome.raw = matrix.copy()
            for row, scores in before.items():
                outcome.raw[row] = scores
        if ext is not None and ext.flags.top_n > 0:
            # debugTopNScores: rows are built from the arrays only when read (log, record, stream).
            outcome.debug_top_n = ext.flags.top_n
            ext.after_score(pod, outcome)
        return outcome

    def _run_score_hooks(
        self, ext: Any, state: CycleState, pod: Pod, positions: npt.NDArray[np.int64]
    ) -> tuple[Pod, npt.NDArray[np.int64], dict[int, NodeInfo]]:
        """ScorePhaseHooks: the pod and rows to score, and detached NodeInfos for replaced Node objects."""
        snapshot = self.handle.snapshot
        infos = snapshot.node_infos
        nodes = [infos[int(p)].node for p in positions]
        new_pod, new_nodes, changed = ext.hooks.run_score(ext, state, pod, nodes)
        if not changed:
            return pod, positions, {}
        rows = np.empty(len(new_nodes), dtype=np.int64)
        replaced: dict[int, NodeInfo] = {}
        for j, node in enumerate(new_nodes):
            pos = snapshot.position.get(node.name)
            if pos is None:
                raise RuntimeError(f"a ScorePhaseHook returned node {node.name!r}, which is not in the snapshot")
            rows[j] = pos
            if node is not infos[pos].node:
                twin = infos[pos].clone()
                twin.node = node
                replaced[j] = twin
        return new_pod, rows, replaced

    def run_hooked_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """One node through the FilterPhaseHooks, then every Filter plugin (per-node forms).

        What Filter-with-nominated-pods and preemption's dry runs call, so hooks apply there as
        in Koordinator's RunFilterPluginsWithNominatedPods; nominated pods are the caller's
        business. Within a cycle's walk the hook results found by `find_feasible` are reused.
        """
        ext = self.extension
        if ext is not None and ext.hooks.filter:
            try:
                pod, node_info = ext.filter_hook_result(state, pod, node_info)
            except Exception as exc:  # a failing hook is an Error status for this node
                return error(str(exc))
        return self.run_filter_plugins(state, pod, node_info)

    def _invalid_score(
        self, positions: npt.NDArray[np.int64], entries: list[Any], matrix: npt.NDArray[np.int64], rows: int
    ) -> ScoreOutcome | None:
        """The error for the first of the first `rows` plugins whose scores leave 0..100, if any."""
        if not rows or not matrix.shape[1]:
            return None
        head = matrix[:rows]
        if int(head.max()) <= MAX_NODE_SCORE and int(head.min()) >= MIN_NODE_SCORE:
            return None
        for row in range(rows):
            raw = matrix[row]
            high, low = int(raw.max()), int(raw.min())
            if high > MAX_NODE_SCORE or low < MIN_NODE_SCORE:
                bad = high if high > MAX_NODE_SCORE else low
                return self._score_error(
                    positions,
                    f"plugin {quoted(entries[row].name)} returns an invalid score {bad}, it should in the range of "
                    f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                )
        return None

    def _score_error(
        self, positions: npt.NDArray[np.int64], message: str, failed: tuple[str, str, Status | BaseException] | None = None
    ) -> ScoreOutcome:
        """The outcome of a Score phase that failed; `failed`: (point, plugin, its Error status or
        exception), logged and counted."""
        if failed is not None:
            point, plugin, what = failed
            exc = what if isinstance(what, BaseException) else (what.error or RuntimeError(what.message))
            self.recorder.plugin_error(point, plugin, exc)
        return ScoreOutcome(
            positions, [], [], np.zeros((0, len(positions)), np.int64), np.zeros(len(positions), np.int64), error(message)
        )

    # ----- Reserve / Permit / binding ----------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        """Reserve in order; the first failure is returned (the caller unreserves)."""
        for entry in self.points["reserve"]:
            status = guard(entry.plugin.reserve, state, pod, node)
            if not status.success:
                return self.plugin_failed("Reserve", entry.name, status)
        return Status()

    def run_unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        """Unreserve in reverse order."""
        for entry in reversed(self.points["reserve"]):
            try:
                entry.plugin.unreserve(state, pod, node)
            except Exception as exc:  # the other plugins still unreserve
                self.recorder.plugin_error("Unreserve", entry.name, exc)

    def run_permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, dict[str, float]]:
        """Permit: a rejection ends it; Wait collects each waiting plugin's timeout."""
        waits: dict[str, float] = {}
        for entry in self.points["permit"]:
            try:
                status, timeout = entry.plugin.permit(state, pod, node)
            except Exception as exc:
                status, timeout = error(exc), 0.0
            if status.code == Code.WAIT:
                waits[entry.name] = min(float(timeout), 15 * 60.0)
            elif not status.success:
                return self.plugin_failed("Permit", entry.name, status).with_plugin(entry.name), {}
        if waits:
            return Status(Code.WAIT), waits
        return Status(), {}

    def run_pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        """PreBind in order."""
        for entry in self.points["pre_bind"]:
            status = guard(entry.plugin.pre_bind, state, pod, node)
            if not status.success:
                return self.plugin_failed("PreBind", entry.name, status)
        return Status()

    def run_pre_bind_preflights(self, state: CycleState, pod: Pod, node: str) -> Status:
        """PreBindPreFlight (kube-scheduler 1.34): Skip when no PreBind plugin has work for this
        pod (each one's `pre_bind_preflight` says Skip); Success when one has; an Error as is. A
        PreBind plugin without the hook has work."""
        for entry in self.points["pre_bind"]:
            preflight = getattr(entry.plugin, "pre_bind_preflight", None)
            if preflight is None:
                return Status()
            status = guard(preflight, state, pod, node)
            if status.code != Code.SKIP:
                return status.with_plugin(entry.name) if not status.success else status
        return Status(Code.SKIP)

    def run_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        """Bind: the first plugin that does not Skip decides."""
        for entry in self.points["bind"]:
            status = guard(entry.plugin.bind, state, pod, node)
            if status.code == Code.SKIP:
                continue
            return status if status.success else self.plugin_failed("Bind", entry.name, status)
        return Status(Code.SKIP)

    def plugin_failed(self, point: str, plugin: str, status: Status) -> Status:
        """A plugin's failure at Reserve, Permit, PreBind or Bind as upstream returns it: a
        rejection with the plugin named; an Error logged, counted and wrapped (`running Reserve
        plugin "X": <err>`)."""
        if status.code != Code.ERROR:
            return status.with_plugin(plugin)
        self.recorder.plugin_error(point, plugin, status.error or RuntimeError(status.message))
        wrapped = error(f"running {point} plugin {quoted(plugin)}: {status.message}")
        wrapped.plugin = plugin
        return wrapped

    def run_post_bind(self, state: CycleState, pod: Pod, node: str) -> None:
        """PostBind, informational: a plugin that raises is logged and counted, the others run
        (kube-scheduler's PostBind returns nothing to fail with)."""
        for entry in self.points["post_bind"]:
            try:
                entry.plugin.post_bind(state, pod, node)
            except Exception as exc:
                self.recorder.plugin_error("PostBind", entry.name, exc)


def _guard_pair(call: Callable[..., tuple[Any, Status]], *args: Any) -> tuple[Any, Status]:
    try:
        value, status = call(*args)
    except Exception as exc:
        return None, error(exc)
    if not isinstance(status, Status):
        return None, error(f"plugin returned {status!r} instead of a Status")
    return value, status


def _go_list(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"


def _expand_multi_point(
    point: str,
    explicit: list[str],
    disabled: tuple[str, ...],
    multi: tuple[Any, ...],
    implements: Mapping[str, set[str]],
) -> list[str]:
    """Expand multiPoint plugins into one point as `expandMultiPointPlugins` orders them."""
    if "*" in disabled:
        return list(explicit)
    overrides: list[str] = []
    expanded: list[str] = []
    for ref in multi:
        if point not in implements.get(ref.name, set()) or ref.name in disabled:
            continue
        if ref.name in explicit:
            overrides.append(ref.name)
            continue
        if ref.name in expanded:
            raise FrameworkError(f"plugin {ref.name!r} already registered as {POINT_TYPE_NAMES[point]!r}")
        expanded.append(ref.name)
    first = [n for n in explicit if n in overrides]
    rest = [n for n in explicit if n not in overrides]
    return first + expanded + rest


def _score_weights(score_plugins: list[str], score_enabled: tuple[Any, ...], multi: tuple[Any, ...]) -> dict[str, int]:
    """Weights for the score plugins: the Score entry wins over multiPoint; 0 means 1."""
    weights: dict[str, int] = {}
    total = 0
    for ref in (*score_enabled, *multi):
        if ref.name not in score_plugins or ref.name in weights:
            continue
        weights[ref.name] = ref.weight or 1
        if weights[ref.name] * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise FrameworkError("total score of Score plugins could overflow")
        total += weights[ref.name] * MAX_NODE_SCORE
    for name in score_plugins:
        weights.setdefault(name, 1)
    return weights


def absent_nodes_reason(restricting: Iterable[str]) -> str:
    """The reason kube-scheduler gives nodes a PreFilter result left out (`SetAbsentNodesStatus`
    in `findNodesThatFitPod`): they count in the FailedScheduling histogram."""
    return f"node(s) didn't satisfy plugin(s) {_go_list(sorted(restricting))}"
