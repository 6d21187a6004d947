"""Plugin args of the default plugins (upstream `types_pluginargs.go`) and the args registry.

Each args class decodes its `pluginConfig[].args` mapping strictly with `from_dict`, applies the
v1 defaults (`pkg/scheduler/apis/config/v1/defaults.go`), and checks itself with `validate`,
which returns issues worded as `validation_pluginargs.go` words them. `Cls()` gives the defaults.
Out-of-tree plugins add their args classes with `register_args_type`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, Self, TypeVar

from scheduler.api.affinity import PreferredSchedulingTerm, TopologySpreadConstraint
from scheduler.api.fielderrors import FieldIssue, duplicate, forbidden, invalid, not_supported, required
from scheduler.api.fields import FieldError, join
from scheduler.api.names import is_qualified_name, is_valid_label_value, validate_label_name
from scheduler.api.selectors import (
    EVERYTHING,
    NodeSelector,
    NodeSelectorTerm,
    Requirement,
    parse_label_selector,
)
from scheduler.config.decode import ObjectReader
from scheduler.config.errors import ArgsDecodeError, DecodeLog
from scheduler.config.koordargs import LoadAwareSchedulingArgs, NodeNUMAResourceArgs

T = TypeVar("T")

MAX_CUSTOM_PRIORITY_SCORE = 10
SCORING_STRATEGY_TYPES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
DEFAULTING_TYPES = ("System", "List")
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_SELECTOR_OPERATORS = ("In", "NotIn")
GANG_MATCH_POLICIES = ("only-waiting", "waiting-and-running", "once-satisfied")
_GO_INT = re.compile(r"[+-]?[0-9]+")


class PluginArgs(Protocol):
    """What an args class offers: strict decoding with defaults, and validation."""

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode the args mapping found at `path`, rejecting unknown fields, applying defaults."""
        ...

    def validate(self, path: str) -> list[FieldIssue]:
        """Issues with the args, their fields named under `path`."""
        ...


def args_reader(data: object, path: str) -> ObjectReader:
    """A reader over an args mapping with its own DecodeLog; end the decoding with `checked`."""
    return ObjectReader(data, path, DecodeLog())


def checked(reader: ObjectReader, result: T) -> T:
    """Log the args' unknown fields, raise ArgsDecodeError if anything was wrong, else return result."""
    reader.finish()
    if reader.log:
        raise ArgsDecodeError(reader.log)
    return result


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A resource name and its weight in a scoring strategy."""

    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def _read_resources(reader: ObjectReader, key: str) -> tuple[ResourceSpec, ...]:
    """Resources with the v1 defaults: none means cpu and memory, weight 0 means 1."""
    specs = []
    for item in reader.children(key):
        name = item.string("name") or ""
        weight = item.integer("weight", 64) or 0
        item.finish()
        specs.append(ResourceSpec(name, weight or 1))
    return tuple(specs) or DEFAULT_RESOURCES


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    """One point of a RequestedToCapacityRatio scoring function: utilization 0..100, score 0..10."""

    utilization: int
    score: int


@dataclass(frozen=True, slots=True)
class RequestedToCapacityRatioParam:
    """The shape of the RequestedToCapacityRatio scoring function."""

    shape: tuple[UtilizationShapePoint, ...] = ()


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    """NodeResourcesFit's scoring strategy."""

    type: str = "LeastAllocated"
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


def _read_shape(reader: ObjectReader) -> RequestedToCapacityRatioParam:
    points = []
    for item in reader.children("shape"):
        points.append(UtilizationShapePoint(item.integer("utilization") or 0, item.integer("score") or 0))
        item.finish()
    reader.finish()
    return RequestedToCapacityRatioParam(tuple(points))


def _read_strategy(reader: ObjectReader) -> ScoringStrategy:
    # A strategy the user wrote keeps an empty type: upstream defaults only a missing strategy.
    kind = reader.string("type") or ""
    resources = _read_resources(reader, "resources")
    ratio = _read_shape(reader.child("requestedToCapacityRatio")) if reader.has("requestedToCapacityRatio") else None
    reader.raw("requestedToCapacityRatio")
    reader.finish()
    return ScoringStrategy(kind, resources, ratio)


def validate_function_shape(shape: tuple[UtilizationShapePoint, ...], path: str) -> list[FieldIssue]:
    """Shape points: at least one, utilization strictly increasing in 0..100, score in 0..10."""
    if not shape:
        return [required(path, "at least one point must be specified")]
    issues = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            issues.append(
                invalid(join(join(path, i), "utilization"), shape[i].utilization, "values must be sorted in increasing order")
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            issues.append(invalid(join(join(path, i), "utilization"), point.utilization, "not in valid range [0, 100]"))
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            issues.append(
                invalid(join(join(path, i), "score"), point.score, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")
            )
    return issues


def _validate_resource_weights(resources: tuple[ResourceSpec, ...], path: str) -> list[FieldIssue]:
    return [
        invalid(join(join(path, i), "weight"), r.weight, f"resource weight of {r.name} not in valid range (0, 100]")
        for i, r in enumerate(resources)
        if not 0 < r.weight <= 100
    ]


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    """Args of NodeResourcesFit: resources the filter ignores and the scoring strategy."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = ScoringStrategy()

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly; a missing scoringStrategy is LeastAllocated over cpu and memory."""

        r = args_reader(data, path)
        ignored = r.strings("ignoredResources")
        groups = r.strings("ignoredResourceGroups")
        strategy = _read_strategy(r.child("scoringStrategy")) if r.has("scoringStrategy") else ScoringStrategy()
        r.raw("scoringStrategy")
        return checked(r, cls(ignored, groups, strategy))

    def validate(self, path: str) -> list[FieldIssue]:
        """Upstream ValidateNodeResourcesFitArgs."""
        issues = []
        for i, name in enumerate(self.ignored_resources):
            issues += validate_label_name(name, join(join(path, "ignoredResources"), i))
        for i, group in enumerate(self.ignored_resource_groups):
            where = join(join(path, "ignoredResourceGroups"), i)
            if "/" in group:
                issues.append(invalid(where, group, "resource group name can't contain '/'"))
            issues += validate_label_name(group, where)
        strategy = self.scoring_strategy
        spath = join(path, "scoringStrategy")
        if strategy.type not in SCORING_STRATEGY_TYPES:
            issues.append(not_supported(join(spath, "type"), strategy.type, SCORING_STRATEGY_TYPES))
        issues += _validate_resource_weights(strategy.resources, join(spath, "resources"))
        ratio_path = join(spath, "requestedToCapacityRatio")
        if strategy.type == "RequestedToCapacityRatio":
            if strategy.requested_to_capacity_ratio is None:
                issues.append(required(ratio_path, "must be specified when type is RequestedToCapacityRatio"))
            else:
                issues += validate_function_shape(strategy.requested_to_capacity_ratio.shape, join(ratio_path, "shape"))
        elif strategy.requested_to_capacity_ratio is not None:
            issues.append(forbidden(ratio_path, "must be nil when type is not RequestedToCapacityRatio"))
        return issues


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    """Args of NodeResourcesBalancedAllocation: the resources to balance (each weight 1)."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly; no resources means cpu and memory."""
        r = args_reader(data, path)
        return checked(r, cls(_read_resources(r, "resources")))

    def validate(self, path: str) -> list[FieldIssue]:
        """Upstream ValidateNodeResourcesBalancedAllocationArgs: unique names, weight 1."""
        issues = []
        seen: set[str] = set()
        for i, resource in enumerate(self.resources):
            where = join(join(path, "resources"), i)
            if resource.name in seen:
                issues.append(duplicate(join(where, "name"), resource.name))
            seen.add(resource.name)
            if resource.weight != 1:
                issues.append(invalid(join(where, "weight"), resource.weight, "must be 1"))
        return issues


def _read_spread_constraint(r: ObjectReader) -> TopologySpreadConstraint:
    raw_selector = r.raw("labelSelector")
    selector = None
    if raw_selector is not None:
        # Any selector is forbidden here, so a malformed one needs no error of its own.
        try:
            selector = parse_label_selector(raw_selector, r.where("labelSelector"))
        except FieldError:
            selector = EVERYTHING
    constraint = TopologySpreadConstraint(
        max_skew=r.integer("maxSkew") or 0,
        topology_key=r.string("topologyKey") or "",
        when_unsatisfiable=r.string("whenUnsatisfiable") or "",
        selector=selector,
        min_domains=r.integer("minDomains"),
        node_affinity_policy=r.string("nodeAffinityPolicy") or "Honor",
        node_taints_policy=r.string("nodeTaintsPolicy") or "Ignore",
        match_label_keys=r.strings("matchLabelKeys"),
    )
    r.finish()
    return constraint


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    """Args of PodTopologySpread: cluster-level default constraints and how they are chosen."""

    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = "System"

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly; defaultingType defaults to System."""

        r = args_reader(data, path)
        constraints = tuple(_read_spread_constraint(c) for c in r.children("defaultConstraints"))
        return checked(r, cls(constraints, r.string("defaultingType") or "System"))

    def validate(self, path: str) -> list[FieldIssue]:
        """Upstream ValidatePodTopologySpreadArgs."""
        issues = []
        type_path = join(path, "defaultingType")
        if self.defaulting_type not in DEFAULTING_TYPES:
            issues.append(not_supported(type_path, self.defaulting_type, DEFAULTING_TYPES))
        elif self.defaulting_type == "System" and self.default_constraints:
            issues.append(invalid(type_path, self.defaulting_type, "when .defaultConstraints are not empty"))
        list_path = join(path, "defaultConstraints")
        for i, c in enumerate(self.default_constraints):
            issues += _constraint_issues(c, join(list_path, i))
            earlier = self.default_constraints[:i]
            if any(o.topology_key == c.topology_key and o.when_unsatisfiable == c.when_unsatisfiable for o in earlier):
                issues.append(duplicate(join(list_path, i), f"{{{c.topology_key}, {c.when_unsatisfiable}}}"))
        return issues


def _constraint_issues(c: TopologySpreadConstraint, path: str) -> list[FieldIssue]:
    issues = []
    if c.max_skew <= 0:
        issues.append(invalid(join(path, "maxSkew"), c.max_skew, "not in valid range (0, inf)"))
    key_path = join(path, "topologyKey")
    if not c.topology_key:
        issues.append(required(key_path, "can not be empty"))
    else:
        issues += validate_label_name(c.topology_key, key_path)
    when_path = join(path, "whenUnsatisfiable")
    if not c.when_unsatisfiable:
        issues.append(required(when_path, "can not be empty"))
    elif c.when_unsatisfiable not in WHEN_UNSATISFIABLE:
        issues.append(not_supported(when_path, c.when_unsatisfiable, WHEN_UNSATISFIABLE))
    if c.selector is not None:
        issues.append(
            forbidden(join(path, "labelSelector"), "constraint must not define a selector, as they deduced for each pod")
        )
    return issues


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    """Args of InterPodAffinity."""

    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly; hardPodAffinityWeight defaults to 1."""

        r = args_reader(data, path)
        weight = r.integer("hardPodAffinityWeight")
        ignore = r.boolean("ignorePreferredTermsOfExistingPods") or False
        return checked(r, cls(1 if weight is None else weight, ignore))

    def validate(self, path: str) -> list[FieldIssue]:
        """hardPodAffinityWeight must be in 0..100."""
        weight = self.hard_pod_affinity_weight
        if 0 <= weight <= 100:
            return []
        return [invalid(join(path, "hardPodAffinityWeight"), weight, "not in valid range [0, 100]")]


def _read_requirements(r: ObjectReader, key: str) -> tuple[Requirement, ...]:
    out = []
    for item in r.children(key):
        out.append(Requirement(item.string("key") or "", item.string("operator") or "", item.strings("values")))
        item.finish()
    return tuple(out)


def _read_term(r: ObjectReader) -> NodeSelectorTerm:
    term = NodeSelectorTerm(_read_requirements(r, "matchExpressions"), _read_requirements(r, "matchFields"))
    r.finish()
    return term


def _read_added_affinity(r: ObjectReader) -> tuple[NodeSelector | None, tuple[PreferredSchedulingTerm, ...]]:
    required_key = "requiredDuringSchedulingIgnoredDuringExecution"
    selector = None
    if r.has(required_key):
        node_selector = r.child(required_key)
        selector = NodeSelector(tuple(_read_term(t) for t in node_selector.children("nodeSelectorTerms")))
        node_selector.finish()
    r.raw(required_key)
    preferred = []
    for item in r.children("preferredDuringSchedulingIgnoredDuringExecution"):
        weight = item.integer("weight") or 0
        preferred.append(PreferredSchedulingTerm(weight, _read_term(item.child("preference"))))
        item.finish()
    return selector, tuple(preferred)


def _is_empty_term(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


def _label_requirement_issues(req: Requirement, path: str) -> list[FieldIssue]:
    """labels.NewRequirement's checks on a node selector expression."""
    if req.operator not in NODE_SELECTOR_OPERATORS:
        return [not_supported(join(path, "operator"), req.operator, NODE_SELECTOR_OPERATORS)]
    issues = []
    key_errors = is_qualified_name(req.key)
    if key_errors:
        issues.append(invalid(join(path, "key"), req.key, "; ".join(key_errors)))
    values_path = join(path, "values")
    values = list(req.values)
    if req.operator in ("In", "NotIn") and not values:
        issues.append(invalid(values_path, values, "for 'in', 'notin' operators, values set can't be empty"))
    elif req.operator in ("Exists", "DoesNotExist") and values:
        issues.append(invalid(values_path, values, "values set must be empty for exists and does not exist"))
    elif req.operator in ("Gt", "Lt"):
        if len(values) != 1:
            issues.append(invalid(values_path, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, value in enumerate(values):
            if not _GO_INT.fullmatch(value) or not -(2**63) <= int(value) < 2**63:
                issues.append(invalid(join(values_path, i), value, "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, value in enumerate(values):
        value_errors = is_valid_label_value(value)
        if value_errors:
            issues.append(invalid(f"{join(values_path, i)}[{value}]", value, "; ".join(value_errors)))
    return issues


def _field_requirement_issues(req: Requirement, path: str) -> list[FieldIssue]:
    """The checks nodeaffinity applies to a matchFields requirement."""
    if req.operator not in FIELD_SELECTOR_OPERATORS:
        return [not_supported(join(path, "operator"), req.operator, FIELD_SELECTOR_OPERATORS)]
    if len(req.values) != 1:
        return [invalid(join(path, "values"), list(req.values), "must have one element")]
    return []


def _term_issues(term: NodeSelectorTerm, path: str) -> list[FieldIssue]:
    issues = []
    for i, req in enumerate(term.match_expressions):
        issues += _label_requirement_issues(req, join(join(path, "matchExpressions"), i))
    for i, req in enumerate(term.match_fields):
        issues += _field_requirement_issues(req, join(join(path, "matchFields"), i))
    return issues


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    """Args of NodeAffinity: an addedAffinity every pod must also satisfy.

    `added_affinity` is the v1.NodeAffinity mapping as written; `required` and `preferred`
    are its parsed form.
    """

    added_affinity: dict[str, Any] | None = None
    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly, keeping the raw addedAffinity next to its parsed form."""

        r = args_reader(data, path)
        raw = r.raw("addedAffinity")
        if raw is None:
            return checked(r, cls())
        required_selector, preferred = _read_added_affinity(r.child("addedAffinity"))
        return checked(r, cls(raw if isinstance(raw, dict) else None, required_selector, preferred))

    def validate(self, path: str) -> list[FieldIssue]:
        """Upstream ValidateNodeAffinityArgs, through nodeaffinity's selector parsing rules."""
        issues = []
        base = join(path, "addedAffinity")
        if self.required is not None:
            terms_path = join(join(base, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms")
            for i, term in enumerate(self.required.terms):
                if not _is_empty_term(term):
                    issues += _term_issues(term, join(terms_path, i))
        # Upstream names preferred terms without `.preference`, and skips weight-0 or empty terms.
        preferred_path = join(base, "preferredDuringSchedulingIgnoredDuringExecution")
        for i, pref in enumerate(self.preferred):
            if pref.weight != 0 and not _is_empty_term(pref.term):
                issues += _term_issues(pref.term, join(preferred_path, i))
        return issues


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    """Args of DefaultPreemption: how many candidate nodes a dry run shortlists."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly; defaults 10% and 100 nodes."""

        r = args_reader(data, path)
        percentage = r.integer("minCandidateNodesPercentage")
        absolute = r.integer("minCandidateNodesAbsolute")
        return checked(r, cls(10 if percentage is None else percentage, 100 if absolute is None else absolute))

    def validate(self, path: str) -> list[FieldIssue]:
        """Percentage in 0..100, absolute >= 0, and not both zero."""
        issues = []
        percentage_path = join(path, "minCandidateNodesPercentage")
        absolute_path = join(path, "minCandidateNodesAbsolute")
        percentage, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        if not 0 <= percentage <= 100:
            issues.append(invalid(percentage_path, percentage, "not in valid range [0, 100]"))
        if absolute < 0:
            issues.append(invalid(absolute_path, absolute, "not in valid range [0, inf)"))
        if percentage == 0 and absolute == 0:
            issues.append(invalid(percentage_path, 0, "cannot be zero at the same time as minCandidateNodesAbsolute"))
            issues.append(invalid(absolute_path, 0, "cannot be zero at the same time as minCandidateNodesPercentage"))
        return issues


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    """Args of VolumeBinding: how long PreBind waits for binding, and the capacity scoring shape
    (None unless given; the StorageCapacityScoring gate supplies a default when on)."""

    bind_timeout_seconds: int = 600
    shape: tuple[UtilizationShapePoint, ...] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly; bindTimeoutSeconds defaults to 600."""
        r = args_reader(data, path)
        timeout = r.integer("bindTimeoutSeconds")
        shape = None
        if r.has("shape"):
            points = []
            for item in r.children("shape"):
                points.append(UtilizationShapePoint(item.integer("utilization") or 0, item.integer("score") or 0))
                item.finish()
            shape = tuple(points)
        r.raw("shape")
        return checked(r, cls(600 if timeout is None else timeout, shape))

    def validate(self, path: str) -> list[FieldIssue]:
        """bindTimeoutSeconds not negative; a given shape must be a valid function shape."""
        issues = []
        if self.bind_timeout_seconds < 0:
            issues.append(
                invalid(
                    join(path, "bindTimeoutSeconds"),
                    self.bind_timeout_seconds,
                    "invalid BindTimeoutSeconds, should not be a negative value",
                )
            )
        if self.shape is not None:
            issues += validate_function_shape(self.shape, join(path, "shape"))
        return issues


@dataclass(frozen=True, slots=True)
class CoschedulingArgs:
    """Args of Koordinator's Coscheduling (`CoschedulingArgs`, defaults of `SetDefaults_CoschedulingArgs`)."""

    default_timeout_seconds: float = 600.0
    controller_workers: int = 1
    skip_check_schedule_cycle: bool = False
    enable_preemption: bool = False
    aware_network_topology: bool = False
    default_match_policy: str = "once-satisfied"

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly; defaultTimeout 600s, one controller worker, match policy once-satisfied."""
        r = args_reader(data, path)
        timeout = r.duration("defaultTimeout")
        workers = r.integer("controllerWorkers", 64)
        skip = r.boolean("skipCheckScheduleCycle")
        preempt = r.boolean("enablePreemption")
        topology = r.boolean("awareNetworkTopology")
        policy = r.string("defaultMatchPolicy")
        return checked(
            r,
            cls(
                600.0 if timeout is None else timeout / 1e9,
                1 if workers is None else workers,
                bool(skip),
                bool(preempt),
                bool(topology),
                policy or "once-satisfied",
            ),
        )

    def validate(self, path: str) -> list[FieldIssue]:
        """Koordinator's ValidateCoschedulingArgs, plus the values this engine supports."""
        issues = []
        if self.default_timeout_seconds < 0:
            issues.append(
                invalid(
                    join(path, "defaultTimeout"), self.default_timeout_seconds, "coeSchedulingArgs DefaultTimeoutSeconds invalid"
                )
            )
        if self.controller_workers < 1:
            issues.append(
                invalid(join(path, "controllerWorkers"), self.controller_workers, "coeSchedulingArgs ControllerWorkers invalid")
            )
        if self.default_match_policy not in GANG_MATCH_POLICIES:
            issues.append(not_supported(join(path, "defaultMatchPolicy"), self.default_match_policy, GANG_MATCH_POLICIES))
        if self.aware_network_topology:
            issues.append(
                invalid(
                    join(path, "awareNetworkTopology"),
                    True,
                    "network-topology-aware gang scheduling is not supported by schedconsole",
                )
            )
        return issues


@dataclass(frozen=True, slots=True)
class ReservationArgs:
    """Args of Koordinator's Reservation (`ReservationArgs`, defaults of `SetDefaults_ReservationArgs`)."""

    enable_preemption: bool = False
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100
    controller_workers: int = 1
    gc_duration_seconds: int = 86400
    gc_interval_seconds: int = 60
    disable_garbage_collection: bool = False
    resync_interval_seconds: int = 60
    ignored_resources: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly; zero or absent durations take the defaults, as upstream's defaulting does."""
        r = args_reader(data, path)
        preempt = r.boolean("enablePreemption")
        pct = r.integer("minCandidateNodesPercentage")
        absolute = r.integer("minCandidateNodesAbsolute")
        workers = r.integer("controllerWorkers")
        gc = r.integer("gcDurationSeconds", 64)
        gc_interval = r.integer("gcIntervalSeconds", 64)
        no_gc = r.boolean("disableGarbageCollection")
        resync = r.integer("resyncIntervalSeconds", 64)
        ignored = r.strings("ignoredResources")
        return checked(
            r,
            cls(
                bool(preempt),
                10 if pct is None else pct,
                100 if absolute is None else absolute,
                1 if workers is None else workers,
                gc or 86400,
                gc_interval or 60,
                bool(no_gc),
                resync or 60,
                ignored,
            ),
        )

    def validate(self, path: str) -> list[FieldIssue]:
        """Koordinator's ValidateReservationArgs (field names and wording as upstream)."""
        issues = []
        if not 0 <= self.min_candidate_nodes_percentage <= 100:
            issues.append(
                invalid(
                    join(path, "MinCandidateNodesPercentage"),
                    self.min_candidate_nodes_percentage,
                    "must be in the range [0, 100]",
                )
            )
        if self.min_candidate_nodes_absolute < 0:
            issues.append(
                invalid(join(path, "MinCandidateNodesAbsolute"), self.min_candidate_nodes_absolute, "must be non-negative")
            )
        if self.gc_duration_seconds < 0:
            issues.append(invalid(join(path, "GcDuration"), self.gc_duration_seconds, "must be non-negative"))
        if self.gc_interval_seconds < 0:
            issues.append(invalid(join(path, "GcInterval"), self.gc_interval_seconds, "must be non-negative"))
        if self.resync_interval_seconds < 0:
            issues.append(invalid(join(path, "ResyncIntervalSeconds"), self.resync_interval_seconds, "must be non-negative"))
        for i, name in enumerate(self.ignored_resources):
            if "/" not in name or name.startswith("kubernetes.io/") or name.startswith("requests."):
                issues.append(
                    invalid(
                        join(join(path, "ignoredResources"), i),
                        name,
                        "must be an extended resource name (e.g. example.com/gpu); native resources cannot be ignored",
                    )
                )
        return issues


ARGS_TYPES: dict[str, type[PluginArgs]] = {
    "Coscheduling": CoschedulingArgs,
    "Reservation": ReservationArgs,
    "DefaultPreemption": DefaultPreemptionArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "LoadAwareScheduling": LoadAwareSchedulingArgs,
    "NodeNUMAResource": NodeNUMAResourceArgs,
    "NodeAffinity": NodeAffinityArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "NodeResourcesFit": NodeResourcesFitArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "VolumeBinding": VolumeBindingArgs,
}
"""Plugin name to its args class; a plugin not listed takes its args as a plain mapping."""


def register_args_type(name: str, cls: type[PluginArgs]) -> None:
    """Register the args class of an out-of-tree plugin; a name can be registered only once."""
    if name in ARGS_TYPES:
        raise ValueError(f"an args type for plugin {name!r} is already registered: {ARGS_TYPES[name].__name__}")
    ARGS_TYPES[name] = cls
