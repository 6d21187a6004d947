"""Plugin args: strict decoding, v1 defaults, validation wording, the registry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

import pytest

from scheduler.api.fielderrors import FieldIssue, invalid
from scheduler.config import args as args_module
from scheduler.config.args import (
    ARGS_TYPES,
    DEFAULT_RESOURCES,
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginArgs,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    args_reader,
    checked,
    register_args_type,
)
from scheduler.config.errors import ArgsDecodeError
from tests.support.configs import error_of, parse, with_profiles

ALL_ARGS = [
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
]


@pytest.mark.parametrize("cls", ALL_ARGS, ids=[c.__name__ for c in ALL_ARGS])
def test_empty_args_decode_to_the_defaults_and_are_valid(cls: type[PluginArgs]) -> None:
    assert cls.from_dict({}, "args") == cls()
    assert cls().validate("args") == []


# Defaults from upstream pkg/scheduler/apis/config/v1/defaults.go and defaults_test.go.
DEFAULT_CASES = [
    ("preemption", DefaultPreemptionArgs, {}, DefaultPreemptionArgs(10, 100)),
    (
        "preemption keeps explicit zero",
        DefaultPreemptionArgs,
        {"minCandidateNodesPercentage": 0},
        DefaultPreemptionArgs(0, 100),
    ),
    ("inter-pod affinity", InterPodAffinityArgs, {}, InterPodAffinityArgs(1, False)),
    (
        "inter-pod affinity keeps explicit zero",
        InterPodAffinityArgs,
        {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": True},
        InterPodAffinityArgs(0, True),
    ),
    ("spread defaults to System", PodTopologySpreadArgs, {}, PodTopologySpreadArgs((), "System")),
    (
        "balanced: empty resources are cpu and memory",
        NodeResourcesBalancedAllocationArgs,
        {"resources": []},
        NodeResourcesBalancedAllocationArgs(DEFAULT_RESOURCES),
    ),
    (
        "balanced: weight 0 becomes 1",
        NodeResourcesBalancedAllocationArgs,
        {"resources": [{"name": "cpu", "weight": 0}, {"name": "nvidia.com/gpu"}]},
        NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 1), ResourceSpec("nvidia.com/gpu", 1))),
    ),
    (
        "fit: no strategy is LeastAllocated on cpu and memory",
        NodeResourcesFitArgs,
        {"ignoredResources": ["foo"]},
        NodeResourcesFitArgs(("foo",), (), ScoringStrategy("LeastAllocated", DEFAULT_RESOURCES)),
    ),
    (
        "fit: strategy without resources gets cpu and memory",
        NodeResourcesFitArgs,
        {"scoringStrategy": {"type": "MostAllocated"}},
        NodeResourcesFitArgs((), (), ScoringStrategy("MostAllocated", DEFAULT_RESOURCES)),
    ),
    (
        "fit: resource weight 0 becomes 1",
        NodeResourcesFitArgs,
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}]}},
        NodeResourcesFitArgs((), (), ScoringStrategy("MostAllocated", (ResourceSpec("cpu", 1),))),
    ),
    (
        "fit: a strategy without type keeps an empty type",
        NodeResourcesFitArgs,
        {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 2}]}},
        NodeResourcesFitArgs((), (), ScoringStrategy("", (ResourceSpec("cpu", 2),))),
    ),
    (
        "fit: requested to capacity ratio shape",
        NodeResourcesFitArgs,
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]},
            }
        },
        NodeResourcesFitArgs(
            (),
            (),
            ScoringStrategy(
                "RequestedToCapacityRatio",
                DEFAULT_RESOURCES,
                RequestedToCapacityRatioParam((UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10))),
            ),
        ),
    ),
]


@pytest.mark.parametrize(("cls", "data", "expected"), [c[1:] for c in DEFAULT_CASES], ids=[c[0] for c in DEFAULT_CASES])
def test_decoding_applies_v1_defaults(cls: type[PluginArgs], data: dict[str, Any], expected: object) -> None:
    assert cls.from_dict(data, "args") == expected


DECODE_ERROR_CASES = [
    ("unknown top field", DefaultPreemptionArgs, {"foo": 1}, 'strict decoding error: unknown field "args.foo"'),
    (
        "unknown nested field",
        NodeResourcesFitArgs,
        {"scoringStrategy": {"type": "MostAllocated", "shape": []}},
        'strict decoding error: unknown field "args.scoringStrategy.shape"',
    ),
    (
        "unknown field in a resource",
        NodeResourcesBalancedAllocationArgs,
        {"resources": [{"name": "cpu", "wieght": 1}]},
        'strict decoding error: unknown field "args.resources[0].wieght"',
    ),
    (
        "unknown field in a default constraint",
        PodTopologySpreadArgs,
        {"defaultConstraints": [{"maxSkew": 1, "topologykey": "zone"}], "defaultingType": "List"},
        'strict decoding error: unknown field "args.defaultConstraints[0].topologykey"',
    ),
    (
        "unknown field in addedAffinity",
        NodeAffinityArgs,
        {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerm": []}}},
        'strict decoding error: unknown field "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerm"',
    ),
    (
        "string where an integer belongs",
        InterPodAffinityArgs,
        {"hardPodAffinityWeight": "5"},
        'args.hardPodAffinityWeight: cannot unmarshal string "5" into int32',
    ),
    (
        "integer out of int32 range",
        DefaultPreemptionArgs,
        {"minCandidateNodesAbsolute": 2**31},
        "args.minCandidateNodesAbsolute: cannot unmarshal number 2147483648 into int32",
    ),
    (
        "boolean where a string belongs",
        NodeResourcesFitArgs,
        {"ignoredResources": [True]},
        "args.ignoredResources[0]: cannot unmarshal bool true into string",
    ),
    ("list where an object belongs", InterPodAffinityArgs, [], "args: cannot unmarshal array into object"),
]


@pytest.mark.parametrize(("cls", "data", "message"), [c[1:] for c in DECODE_ERROR_CASES], ids=[c[0] for c in DECODE_ERROR_CASES])
def test_decoding_is_strict(cls: type[PluginArgs], data: Any, message: str) -> None:
    with pytest.raises(ArgsDecodeError) as caught:
        cls.from_dict(data, "args")
    assert str(caught.value) == message


def issues_of(args: PluginArgs) -> list[str]:
    """Validation messages with upstream tests' empty root path."""
    return [i.text for i in args.validate("")]


def spread(*constraints: dict[str, Any], defaulting: str = "List") -> PodTopologySpreadArgs:
    """PodTopologySpreadArgs decoded from constraint mappings."""
    return PodTopologySpreadArgs.from_dict({"defaultConstraints": list(constraints), "defaultingType": defaulting}, "")


def fit(strategy: dict[str, Any] | None = None, **fields: Any) -> NodeResourcesFitArgs:
    """NodeResourcesFitArgs decoded from a mapping."""
    data = dict(fields)
    if strategy is not None:
        data["scoringStrategy"] = strategy
    return NodeResourcesFitArgs.from_dict(data, "")


def ratio(*points: tuple[int, int]) -> dict[str, Any]:
    """A RequestedToCapacityRatio strategy with these (utilization, score) points."""
    shape = [{"utilization": u, "score": s} for u, s in points]
    return {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": shape}}


def affinity(added: dict[str, Any]) -> NodeAffinityArgs:
    """NodeAffinityArgs decoded from an addedAffinity mapping."""
    return NodeAffinityArgs.from_dict({"addedAffinity": added}, "")


QUALIFIED_NAME_SLASHES = (
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
    "(e.g. 'example.com/MyName')"
)
NAME_PART_REGEX = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

# Cases from upstream pkg/scheduler/apis/config/validation/validation_pluginargs_test.go; the
# expected text is field.Error's rendering of the field and type that test expects.
VALIDATION_CASES: list[tuple[str, PluginArgs, list[str]]] = [
    ("preemption: valid default", DefaultPreemptionArgs(10, 100), []),
    (
        "preemption: negative percentage",
        DefaultPreemptionArgs(-1, 100),
        ["minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"],
    ),
    (
        "preemption: percentage over 100",
        DefaultPreemptionArgs(900, 100),
        ["minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]"],
    ),
    (
        "preemption: negative absolute",
        DefaultPreemptionArgs(20, -1),
        ["minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"],
    ),
    (
        "preemption: all zero",
        DefaultPreemptionArgs(0, 0),
        [
            "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
            "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage",
        ],
    ),
    (
        "preemption: both negative",
        DefaultPreemptionArgs(-1, -1),
        [
            "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
            "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
        ],
    ),
    ("inter-pod affinity: valid", InterPodAffinityArgs(10), []),
    (
        "inter-pod affinity: weight below min",
        InterPodAffinityArgs(-1),
        ["hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"],
    ),
    (
        "inter-pod affinity: weight above max",
        InterPodAffinityArgs(101),
        ["hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"],
    ),
    (
        "spread: valid config",
        spread(
            {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
        ),
        [],
    ),
    (
        "spread: maxSkew less than zero",
        spread({"maxSkew": -1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}),
        ["defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)"],
    ),
    (
        "spread: empty topology key",
        spread({"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}),
        ["defaultConstraints[0].topologyKey: Required value: can not be empty"],
    ),
    (
        "spread: topology key not a label name",
        spread({"maxSkew": 1, "topologyKey": "-zone", "whenUnsatisfiable": "DoNotSchedule"}),
        [f'defaultConstraints[0].topologyKey: Invalid value: "-zone": {NAME_PART_REGEX}'],
    ),
    (
        "spread: whenUnsatisfiable is empty",
        spread({"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": ""}),
        ["defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"],
    ),
    (
        "spread: whenUnsatisfiable contains unsupported action",
        spread({"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "unknown action"}),
        [
            (
                'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "unknown action": '
                'supported values: "DoNotSchedule", "ScheduleAnyway"'
            )
        ],
    ),
    (
        "spread: duplicated constraints",
        spread(
            {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
        ),
        ['defaultConstraints[1]: Duplicate value: "{node, DoNotSchedule}"'],
    ),
    (
        "spread: label selector present",
        spread(
            {
                "maxSkew": 1,
                "topologyKey": "key",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"a": "b"}},
            }
        ),
        ["defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"],
    ),
    ("spread: list defaulting, no constraints", spread(), []),
    ("spread: system defaulting", spread(defaulting="System"), []),
    (
        "spread: wrong defaulting type",
        spread(defaulting="unknown"),
        ['defaultingType: Unsupported value: "unknown": supported values: "System", "List"'],
    ),
    (
        "spread: system defaulting with constraints",
        spread({"maxSkew": 1, "topologyKey": "key", "whenUnsatisfiable": "DoNotSchedule"}, defaulting="System"),
        ['defaultingType: Invalid value: "System": when .defaultConstraints are not empty'],
    ),
    ("balanced: valid config", NodeResourcesBalancedAllocationArgs(DEFAULT_RESOURCES), []),
    (
        "balanced: weight other than 1",
        NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 2), ResourceSpec("memory", 1))),
        ["resources[0].weight: Invalid value: 2: must be 1"],
    ),
    (
        "balanced: repeated resources",
        NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 1), ResourceSpec("cpu", 1))),
        ['resources[1].name: Duplicate value: "cpu"'],
    ),
    ("node affinity: empty", NodeAffinityArgs(), []),
    (
        "node affinity: valid added affinity",
        affinity(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "label-1", "operator": "In", "values": ["label-1-val"]}]}]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]},
                    }
                ],
            }
        ),
        [],
    ),
    (
        "node affinity: invalid added affinity",
        affinity(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "invalid/label/key", "operator": "In", "values": ["label-1-val"]}]}
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}]
                        },
                    }
                ],
            }
        ),
        [
            (
                "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: "
                f'Invalid value: "invalid/label/key": {QUALIFIED_NAME_SLASHES}'
            ),
            (
                "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: "
                'Invalid value: []string{"node-1", "node-2"}: must have one element'
            ),
        ],
    ),
    (
        "node affinity: operator rules",
        affinity(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "a", "operator": "Near", "values": ["x"]},
                                {"key": "b", "operator": "In"},
                                {"key": "c", "operator": "Exists", "values": ["x"]},
                                {"key": "d", "operator": "Gt", "values": ["one"]},
                            ],
                            "matchFields": [{"key": "metadata.name", "operator": "Exists"}],
                        }
                    ]
                }
            }
        ),
        [
            (
                "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: "
                'Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
            ),
            (
                "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].values: "
                "Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"
            ),
            (
                "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[2].values: "
                'Invalid value: []string{"x"}: values set must be empty for exists and does not exist'
            ),
            (
                "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[3].values[0]: "
                "Invalid value: \"one\": for 'Gt', 'Lt' operators, the value must be an integer"
            ),
            (
                "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].operator: "
                'Unsupported value: "Exists": supported values: "In", "NotIn"'
            ),
        ],
    ),
    (
        "node affinity: zero-weight preferred terms are not checked",
        affinity(
            {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 0, "preference": {"matchExpressions": [{"key": "a/b/c", "operator": "In", "values": ["x"]}]}}
                ]
            }
        ),
        [],
    ),
    ("fit: defaults", NodeResourcesFitArgs(), []),
    (
        "fit: ignored resource not a label name",
        fit(ignoredResources=["example.com/aaa", "a/b/c"]),
        [f'ignoredResources[1]: Invalid value: "a/b/c": {QUALIFIED_NAME_SLASHES}'],
    ),
    (
        "fit: ignored resource group with a slash",
        fit(ignoredResourceGroups=["example.com/aaa"]),
        ["ignoredResourceGroups[0]: Invalid value: \"example.com/aaa\": resource group name can't contain '/'"],
    ),
    (
        "fit: unsupported strategy type",
        fit({"type": "Invalid"}),
        [
            (
                'scoringStrategy.type: Unsupported value: "Invalid": '
                'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
            )
        ],
    ),
    (
        "fit: resource weights out of range",
        fit({"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}, {"name": "memory", "weight": -1}]}),
        [
            "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
            "scoringStrategy.resources[1].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]",
        ],
    ),
    (
        "fit: ratio strategy without parameters",
        fit({"type": "RequestedToCapacityRatio"}),
        ["scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio"],
    ),
    (
        "fit: ratio parameters with another strategy",
        fit({"type": "MostAllocated", "requestedToCapacityRatio": {"shape": [{"utilization": 1, "score": 1}]}}),
        ["scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio"],
    ),
    (
        "fit: empty shape",
        fit({"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": []}}),
        ["scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified"],
    ),
    ("fit: valid shape", fit(ratio((0, 0), (100, 10))), []),
    (
        "fit: shape not increasing",
        fit(ratio((10, 1), (10, 2), (5, 3))),
        [
            (
                "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 10: "
                "values must be sorted in increasing order"
            )
        ],
    ),
    (
        "fit: shape points out of range",
        fit(ratio((-1, 11), (101, -1))),
        [
            "scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: -1: not in valid range [0, 100]",
            "scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
            "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 101: not in valid range [0, 100]",
            "scoringStrategy.requestedToCapacityRatio.shape[1].score: Invalid value: -1: not in valid range [0, 10]",
        ],
    ),
]


@pytest.mark.parametrize(("args", "expected"), [c[1:] for c in VALIDATION_CASES], ids=[c[0] for c in VALIDATION_CASES])
def test_validate(args: PluginArgs, expected: list[str]) -> None:
    assert issues_of(args) == expected


def test_issue_fields_are_the_paths_under_the_given_root() -> None:
    issues = DefaultPreemptionArgs(200, 100).validate("profiles[0].pluginConfig[0].args")
    assert [i.field for i in issues] == ["profiles[0].pluginConfig[0].args.minCandidateNodesPercentage"]


def test_node_affinity_keeps_raw_mapping_and_parses_terms() -> None:
    added = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
        },
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}}
        ],
    }
    args = affinity(added)
    assert args.added_affinity == added
    assert args.required is not None
    assert args.required.matches({"zone": "a"}, "n9")
    assert not args.required.matches({"zone": "b"}, "n9")
    assert [p.weight for p in args.preferred] == [5]
    assert args.preferred[0].term.matches({}, "n1")
    assert not args.preferred[0].term.matches({}, "n2")


def test_spread_default_constraints_are_parsed() -> None:
    args = spread({"maxSkew": 3, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"})
    (constraint,) = args.default_constraints
    assert (constraint.max_skew, constraint.topology_key, constraint.when_unsatisfiable) == (3, "zone", "ScheduleAnyway")
    assert constraint.selector is None
    assert (constraint.node_affinity_policy, constraint.node_taints_policy) == ("Honor", "Ignore")


def test_registry_lists_the_default_plugins_with_args() -> None:
    # Koordinator plugins register their args too (Coscheduling, Reservation, ...).
    assert {"Coscheduling", "Reservation"} <= set(ARGS_TYPES)
    assert set(ARGS_TYPES) >= {
        "DefaultPreemption",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    }


def test_register_args_type_refuses_duplicates() -> None:
    with pytest.raises(ValueError, match="already registered: DefaultPreemptionArgs"):
        register_args_type("DefaultPreemption", InterPodAffinityArgs)


@dataclass(frozen=True, slots=True)
class LoadAwareArgs:
    """A stand-in for an out-of-tree plugin's args."""

    threshold: int = 65

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly."""
        r = args_reader(data, path)
        threshold = r.integer("threshold")
        return checked(r, cls(65 if threshold is None else threshold))

    def validate(self, path: str) -> list[FieldIssue]:
        """threshold in 0..100."""
        if 0 <= self.threshold <= 100:
            return []
        return [invalid(f"{path}.threshold", self.threshold, "not in valid range [0, 100]")]


@pytest.fixture
def load_aware_registered() -> Any:
    """Register LoadAwareArgs for one test."""
    register_args_type("LoadAware", LoadAwareArgs)
    yield
    del args_module.ARGS_TYPES["LoadAware"]


@pytest.mark.usefixtures("load_aware_registered")
def test_registered_out_of_tree_args_are_decoded_defaulted_and_validated() -> None:
    enabled = {"plugins": {"multiPoint": {"enabled": [{"name": "LoadAware"}]}}}
    config = parse(with_profiles({"schedulerName": "a", **enabled}))
    assert config.profiles[0].plugin_config["LoadAware"] == LoadAwareArgs(65)
    configured = {**enabled, "pluginConfig": [{"name": "LoadAware", "args": {"threshold": 200}}]}
    error = error_of(with_profiles(configured))
    assert error.message == "profiles[0].pluginConfig[0].args.threshold: Invalid value: 200: not in valid range [0, 100]"
    unknown = {**enabled, "pluginConfig": [{"name": "LoadAware", "args": {"treshold": 1}}]}
    assert error_of(with_profiles(unknown)).message == (
        'strict decoding error: unknown field "profiles[0].pluginConfig[0].args.treshold"'
    )
