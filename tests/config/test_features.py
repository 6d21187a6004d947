"""Feature gates: defaults and `--feature-gates` parsing with component-base's rules and wording."""

from __future__ import annotations

import pytest

from scheduler.config.features import (
    KNOWN_FEATURES,
    FeatureGateError,
    FeatureGates,
    parse_feature_gates,
)

# Defaults from upstream pkg/features/kube_features.go (v1.34 versioned specs).
DEFAULT_CASES = [
    ("SchedulerAsyncPreemption", True),
    ("SchedulerQueueingHints", True),
    ("PodLevelResources", True),
    ("MatchLabelKeysInPodTopologySpread", True),
    ("SchedulerPopFromBackoffQ", True),
]


@pytest.mark.parametrize(("gate", "default"), DEFAULT_CASES, ids=[c[0] for c in DEFAULT_CASES])
def test_defaults(gate: str, default: bool) -> None:
    assert FeatureGates().enabled(gate) is default
    assert KNOWN_FEATURES[gate].default is default


# Parsing after component-base featuregate.Set (featuregate/feature_gate_test.go).
PARSE_CASES = [
    ("empty", "", {"SchedulerAsyncPreemption": True}),
    ("one off", "SchedulerAsyncPreemption=false", {"SchedulerAsyncPreemption": False}),
    (
        "several with spaces",
        " SchedulerAsyncPreemption = false , PodLevelResources=False,",
        {"SchedulerAsyncPreemption": False, "PodLevelResources": False},
    ),
    (
        "Go boolean spellings",
        "PodLevelResources=0,SchedulerPopFromBackoffQ=F",
        {"PodLevelResources": False, "SchedulerPopFromBackoffQ": False},
    ),
    ("locked gate at its default", "SchedulerQueueingHints=true", {"SchedulerQueueingHints": True}),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in PARSE_CASES], ids=[c[0] for c in PARSE_CASES])
def test_parse(text: str, expected: dict[str, bool]) -> None:
    gates = parse_feature_gates(text)
    assert {name: gates.enabled(name) for name in expected} == expected


ERROR_CASES = [
    ("unknown gate", "NoSuchGate=true", "unrecognized feature gate: NoSuchGate (known gates: "),
    (
        "not a boolean",
        "PodLevelResources=maybe",
        'invalid value of PodLevelResources=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
    ),
    ("missing value", "PodLevelResources", "missing bool value for PodLevelResources"),
    (
        "locked gate moved",
        "SchedulerQueueingHints=false",
        "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true",
    ),
]


@pytest.mark.parametrize(("text", "message"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_parse_errors_name_the_gate(text: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as caught:
        parse_feature_gates(text)
    assert str(caught.value).startswith(message)


def test_parsing_builds_on_a_base() -> None:
    base = parse_feature_gates("PodLevelResources=false")
    gates = parse_feature_gates("SchedulerAsyncPreemption=false", base)
    assert not gates.enabled("PodLevelResources")
    assert not gates.enabled("SchedulerAsyncPreemption")
    assert base.enabled("SchedulerAsyncPreemption")


def test_asking_for_an_unknown_gate_is_an_error() -> None:
    with pytest.raises(KeyError):
        FeatureGates().enabled("NoSuchGate")
