"""Feature gates the engine honours, with kube-scheduler v1.34 defaults (v1.35's for the gates it added), and `--feature-gates` parsing.

Parsing follows component-base `featuregate.Set`: `A=true,B=false`, Go's boolean spellings,
unknown gates and locked (GA) gates set away from their default are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class FeatureSpec:
    """A gate's default and whether it is locked to that default (GA)."""

    default: bool
    stage: str
    locked: bool = False


KNOWN_FEATURES: Mapping[str, FeatureSpec] = MappingProxyType(
    {
        "GangScheduling": FeatureSpec(False, "Alpha"),
        "GenericWorkload": FeatureSpec(False, "Alpha"),
        "InPlacePodVerticalScaling": FeatureSpec(True, "Beta"),
        "MatchLabelKeysInPodAffinity": FeatureSpec(True, "GA", locked=True),
        "MatchLabelKeysInPodTopologySpread": FeatureSpec(True, "Beta"),
        "MatchLabelKeysInPodTopologySpreadSelectorMerge": FeatureSpec(True, "Beta"),
        "NodeInclusionPolicyInPodTopologySpread": FeatureSpec(True, "GA"),
        "OpportunisticBatching": FeatureSpec(True, "Beta"),
        "PodLevelResources": FeatureSpec(True, "Beta"),
        "SchedulerAsyncPreemption": FeatureSpec(True, "Beta"),
        "SchedulerPopFromBackoffQ": FeatureSpec(True, "Beta"),
        "SchedulerQueueingHints": FeatureSpec(True, "GA", locked=True),
        "SidecarContainers": FeatureSpec(True, "GA"),
        "StorageCapacityScoring": FeatureSpec(False, "Alpha"),
        "VolumeAttributesClass": FeatureSpec(True, "GA", locked=True),
    }
)
"""Gates this engine knows, as upstream `pkg/features/kube_features.go` sets them for v1.34;
OpportunisticBatching (beta, on), GenericWorkload and GangScheduling (alpha, off) as v1.35 adds them."""

DEPENDENCIES: Mapping[str, tuple[str, ...]] = MappingProxyType({"GangScheduling": ("GenericWorkload",)})
"""Gates that need others on (`AddDependencies` in kube_features.go)."""

_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


class FeatureGateError(ValueError):
    """A `--feature-gates` value that names an unknown gate or a value that is not a boolean."""


def _defaults() -> Mapping[str, bool]:
    return MappingProxyType({name: spec.default for name, spec in KNOWN_FEATURES.items()})


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """The state of every known gate; unset gates keep their defaults."""

    values: Mapping[str, bool] = field(default_factory=_defaults)

    def enabled(self, name: str) -> bool:
        """Whether a gate is on; asking about an unknown gate is a programming error."""
        if name not in KNOWN_FEATURES:
            raise KeyError(f"unknown feature gate {name!r}")
        return self.values.get(name, KNOWN_FEATURES[name].default)

    def with_values(self, overrides: Mapping[str, bool]) -> FeatureGates:
        """A copy with some gates set; refuses unknown gates and locked gates moved off default."""
        merged = dict(self.values)
        for name, value in overrides.items():
            spec = KNOWN_FEATURES.get(name)
            if spec is None:
                raise FeatureGateError(f"unrecognized feature gate: {name} (known gates: {', '.join(KNOWN_FEATURES)})")
            if spec.locked and value != spec.default:
                raise FeatureGateError(
                    f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked to {_go_bool(spec.default)}"
                )
            merged[name] = value
        gates = FeatureGates(MappingProxyType(merged))
        for name, needs in DEPENDENCIES.items():
            off = [dep for dep in needs if not gates.enabled(dep)]
            if gates.enabled(name) and off:
                raise FeatureGateError(f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]")
        return gates


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def _parse_bool(name: str, text: str) -> bool:
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise FeatureGateError(
        f'invalid value of {name}={text}, err: strconv.ParseBool: parsing "{text}": invalid syntax (use true or false)'
    )


def parse_feature_gates(text: str, base: FeatureGates | None = None) -> FeatureGates:
    """Parse `A=true,B=false` into FeatureGates on top of `base` (the defaults if None)."""
    overrides: dict[str, bool] = {}
    for item in text.split(","):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        overrides[name] = _parse_bool(name, value.strip())
    return (base or FeatureGates()).with_values(overrides)
