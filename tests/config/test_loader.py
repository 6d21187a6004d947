"""Loading KubeSchedulerConfiguration files: decoding, defaults, validation and error wording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scheduler.config.args import (
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    VolumeBindingArgs,
)
from scheduler.config.errors import ConfigError
from scheduler.config.loader import default_config, load_config
from scheduler.config.types import DEFAULT_PLUGINS, PluginRef, PluginSet
from tests.support.configs import document, error_of, parse, with_profiles

DEFAULT_ARGS = {
    "DefaultPreemption": DefaultPreemptionArgs(),
    "InterPodAffinity": InterPodAffinityArgs(),
    "NodeAffinity": NodeAffinityArgs(),
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs(),
    "NodeResourcesFit": NodeResourcesFitArgs(),
    "PodTopologySpread": PodTopologySpreadArgs(),
    "VolumeBinding": VolumeBindingArgs(),
}

VALID_YAML = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 8
percentageOfNodesToScore: 35
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 20
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packing
  percentageOfNodesToScore: 100
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"""


def test_load_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(VALID_YAML)
    config = load_config(str(path))
    assert (config.parallelism, config.percentage_of_nodes_to_score) == (8, 35)
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (2, 20)
    assert config.source == str(path)
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler", "bin-packing"]
    packing = config.profile("bin-packing")
    assert packing is not None
    assert packing.percentage_of_nodes_to_score == 100
    assert packing.plugins.score == PluginSet((), ("NodeResourcesBalancedAllocation",))
    fit = packing.plugin_config["NodeResourcesFit"]
    assert isinstance(fit, NodeResourcesFitArgs)
    assert fit.scoring_strategy.type == "MostAllocated"
    assert config.profile("nobody") is None


def test_load_json_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(document(parallelism=4), indent="\t"))
    assert load_config(str(path)).parallelism == 4


def test_default_config_is_one_default_profile() -> None:
    # Defaults from upstream pkg/scheduler/apis/config/v1/defaults.go (defaults_test.go "empty config").
    config = default_config()
    assert (config.parallelism, config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (16, 1, 10)
    assert config.percentage_of_nodes_to_score == 0
    (profile,) = config.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.percentage_of_nodes_to_score is None
    assert profile.plugins == DEFAULT_PLUGINS
    assert profile.plugin_config == DEFAULT_ARGS
    assert list(profile.plugin_config) == sorted(DEFAULT_ARGS)


def test_given_args_come_first_and_defaults_fill_the_rest() -> None:
    config = parse(with_profiles({"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}))
    plugin_config = config.profiles[0].plugin_config
    assert next(iter(plugin_config)) == "PodTopologySpread"
    assert plugin_config["PodTopologySpread"] == PodTopologySpreadArgs((), "List")
    assert plugin_config["DefaultPreemption"] == DefaultPreemptionArgs()


def test_no_default_args_for_plugins_that_are_not_enabled() -> None:
    plugins = {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]}}
    config = parse(with_profiles({"plugins": plugins}))
    assert config.profiles[0].plugin_config == {}


def test_args_of_plugins_without_a_type_are_kept_as_written() -> None:
    entry = {"name": "ElasticQuota", "args": {"permitWaitingTimeSeconds": 10, "anything": {"goes": True}}}
    config = parse(with_profiles({"pluginConfig": [entry, {"name": "NoArgs"}]}))
    assert config.profiles[0].plugin_config["ElasticQuota"] == entry["args"]
    assert config.profiles[0].plugin_config["NoArgs"] == {}


def test_profile_plugins_are_merged_with_defaults() -> None:
    plugins = {
        "multiPoint": {"enabled": [{"name": "NodeAffinity", "weight": 5}, {"name": "Custom"}]},
        "score": {"disabled": [{"name": "ImageLocality"}]},
    }
    profile = parse(with_profiles({"plugins": plugins})).profiles[0]
    names = [p.name for p in profile.plugins.multi_point.enabled]
    assert names == [p.name for p in DEFAULT_PLUGINS.multi_point.enabled] + ["Custom"]
    assert profile.plugins.multi_point.enabled[5] == PluginRef("NodeAffinity", 5)
    assert profile.plugins.score == PluginSet((), ("ImageLocality",))


def test_a_lone_profile_is_named_default_scheduler() -> None:
    assert parse(with_profiles({"percentageOfNodesToScore": 10})).profiles[0].scheduler_name == "default-scheduler"


def test_the_args_own_type_meta_is_accepted() -> None:
    args = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DefaultPreemptionArgs", "minCandidateNodesAbsolute": 5}
    config = parse(with_profiles({"pluginConfig": [{"name": "DefaultPreemption", "args": args}]}))
    assert config.profiles[0].plugin_config["DefaultPreemption"] == DefaultPreemptionArgs(10, 5)


def profile(name: str, **fields: Any) -> dict[str, Any]:
    """A profile mapping."""
    return {"schedulerName": name, **fields}


def queue_sort(name: str) -> dict[str, Any]:
    """Plugins with one queueSort plugin enabled."""
    return {"queueSort": {"enabled": [{"name": name}]}}


def plugin_config(name: str, args: Any) -> dict[str, Any]:
    """A pluginConfig entry."""
    return {"name": name, "args": args}


INVALID_PLUGIN = (
    'was invalid in version "kubescheduler.config.k8s.io/v1" '
    '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
)

# Rules and wording of upstream pkg/scheduler/apis/config/validation/validation.go, cases after
# validation_test.go (TestValidateKubeSchedulerConfigurationV1).
VALIDATION_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("parallelism zero", document(parallelism=0), "parallelism: Invalid value: 0: should be an integer value greater than zero"),
    (
        "percentage over 100",
        document(percentageOfNodesToScore=101),
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
    ),
    (
        "negative percentage",
        document(percentageOfNodesToScore=-1),
        "percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
    ),
    (
        "profile percentage over 100",
        with_profiles(profile("me"), profile("other", percentageOfNodesToScore=101)),
        "profiles[1].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
    ),
    (
        "initial backoff zero",
        document(podInitialBackoffSeconds=0),
        "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
    ),
    (
        "max backoff below initial",
        document(podInitialBackoffSeconds=5, podMaxBackoffSeconds=4),
        "podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds",
    ),
    (
        "scheduler name not set with two profiles",
        with_profiles(profile("me"), {}),
        "profiles[1].schedulerName: Required value",
    ),
    (
        "repeated scheduler name",
        with_profiles(profile("default-scheduler"), profile("default-scheduler")),
        'profiles[1].schedulerName: Duplicate value: "default-scheduler"',
    ),
    (
        "different queue sort",
        with_profiles(profile("me", plugins=queue_sort("CustomSort")), profile("other", plugins=queue_sort("AnotherSort"))),
        (
            'profiles[1].plugins.queueSort: Invalid value: {"enabled":[{"name":"AnotherSort"}],"disabled":[]}: '
            "must be the same for all profiles"
        ),
    ),
    (
        "one empty queue sort",
        with_profiles(profile("me", plugins=queue_sort("CustomSort")), profile("other")),
        'profiles[1].plugins.queueSort: Invalid value: {"enabled":[],"disabled":[]}: must be the same for all profiles',
    ),
    (
        "mismatched queue sort args",
        with_profiles(
            profile("me", plugins=queue_sort("CustomSort"), pluginConfig=[plugin_config("CustomSort", {"a": 1})]),
            profile("other", plugins=queue_sort("CustomSort"), pluginConfig=[plugin_config("CustomSort", {"a": 2})]),
        ),
        'profiles[1].pluginConfig.args: Invalid value: {"a":2}: queueSort must be the same for all profiles',
    ),
    (
        "two queue sort plugins",
        with_profiles(profile("me", plugins={"queueSort": {"enabled": [{"name": "A"}, {"name": "B"}]}})),
        "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled",
    ),
    (
        "invalid plugin args",
        with_profiles(profile("me", pluginConfig=[plugin_config("DefaultPreemption", {"minCandidateNodesPercentage": 200})])),
        "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 200: not in valid range [0, 100]",
    ),
    (
        "duplicated plugin config",
        with_profiles(profile("me", pluginConfig=[{"name": "config"}, {"name": "config"}])),
        'profiles[0].pluginConfig[1]: Duplicate value: "config"',
    ),
    (
        "removed plugin enabled",
        with_profiles(profile("me", plugins={"score": {"enabled": [{"name": "EBSLimits", "weight": 2}]}})),
        f'profiles[0].plugins.score.enabled[0]: Invalid value: "EBSLimits": {INVALID_PLUGIN}',
    ),
    (
        "removed plugin configured",
        with_profiles(profile("me", pluginConfig=[{"name": "AzureDiskLimits"}])),
        f'profiles[0].pluginConfig[0]: Invalid value: "AzureDiskLimits": {INVALID_PLUGIN}',
    ),
    (
        "extender negative weight",
        document(extenders=[{"urlPrefix": "http://127.0.0.1:8081/extender", "prioritizeVerb": "prioritize", "weight": -2}]),
        "extenders[0].weight: Invalid value: -2: must have a positive weight applied to it",
    ),
    (
        "two extenders implementing bind",
        document(extenders=[{"urlPrefix": "http://a", "bindVerb": "bind"}, {"urlPrefix": "http://b", "bindVerb": "bind"}]),
        'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
    ),
    (
        "duplicate extender managed resource",
        document(
            extenders=[
                {"urlPrefix": "http://a", "managedResources": [{"name": "foo.com/bar"}]},
                {"urlPrefix": "http://b", "managedResources": [{"name": "foo.com/bar"}]},
            ]
        ),
        'extenders[1].managedResources[0].name: Invalid value: "foo.com/bar": duplicate extender managed resource name',
    ),
    (
        "invalid extended resource name",
        document(extenders=[{"urlPrefix": "http://a", "managedResources": [{"name": "kubernetes.io/foo"}]}]),
        'extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/foo": is an invalid extended resource name',
    ),
    (
        "negative client burst",
        document(clientConnection={"burst": -1}),
        "clientConnection.burst: Invalid value: -1: must be non-negative",
    ),
    (
        "lease shorter than renew deadline",
        document(leaderElection={"leaseDuration": "5s", "renewDeadline": "10s"}),
        "leaderElection.leaseDuration: Invalid value: 10s: must be greater than `RenewDeadline`",
    ),
    (
        "negative retry period",
        document(leaderElection={"retryPeriod": "-1s"}),
        "leaderElection.retryPeriod: Invalid value: -1s: must be greater than zero",
    ),
    (
        "resource lock other than leases",
        document(leaderElection={"resourceLock": "endpoints"}),
        'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"',
    ),
]


@pytest.mark.parametrize(("doc", "message"), [c[1:] for c in VALIDATION_CASES], ids=[c[0] for c in VALIDATION_CASES])
def test_validation(doc: dict[str, Any], message: str) -> None:
    error = error_of(doc)
    assert error.message == message
    assert str(error) == f"config.yaml: {message}"
    assert error.source == "config.yaml"
    assert error.field == message.split(": ")[0]


def test_negative_plugin_weights_pass_validation_as_upstream() -> None:
    # validation.go has no weight rule; the framework only guards the int64 total against overflow.
    plugins = {"score": {"enabled": [{"name": "Custom", "weight": -3}]}}
    assert parse(with_profiles({"plugins": plugins})).profiles[0].plugins.score.enabled == (PluginRef("Custom", -3),)


def test_leader_election_off_is_not_checked() -> None:
    parse(document(leaderElection={"leaderElect": False, "resourceLock": "endpoints", "retryPeriod": "-1s"}))


def test_equal_queue_sort_and_args_across_profiles_are_valid() -> None:
    same = {"plugins": queue_sort("CustomSort"), "pluginConfig": [plugin_config("CustomSort", {"a": 1})]}
    config = parse(with_profiles(profile("me", **same), profile("other", **same)))
    assert [p.scheduler_name for p in config.profiles] == ["me", "other"]


def test_several_errors_are_reported_together() -> None:
    doc = with_profiles(profile("a"), profile("a"), parallelism=-1, podInitialBackoffSeconds=0)
    error = error_of(doc)
    assert str(error) == (
        "config.yaml: [parallelism: Invalid value: -1: should be an integer value greater than zero, "
        'profiles[1].schedulerName: Duplicate value: "a", '
        "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0]"
    )
    assert [i.field for i in error.issues] == [
        "parallelism",
        "profiles[1].schedulerName",
        "podInitialBackoffSeconds",
    ]
    assert error.field == "parallelism"


def test_identical_messages_are_reported_once() -> None:
    # utilerrors.Aggregate drops repeated messages; the issues keep every occurrence.
    doc = with_profiles(profile("a", plugins=queue_sort("X")), profile("b"), profile("c"))
    error = error_of(doc)
    assert error.message == (
        '[profiles[1].plugins.queueSort: Invalid value: {"enabled":[],"disabled":[]}: must be the same for all profiles, '
        'profiles[2].plugins.queueSort: Invalid value: {"enabled":[],"disabled":[]}: must be the same for all profiles]'
    )
    same = with_profiles(profile("a"), profile("b"), extenders=[{"bindVerb": "b"}, {"bindVerb": "b"}, {"bindVerb": "b"}])
    assert error_of(same).message.count("only one extender") == 1


STRICT_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("top level", document(foo=1), "foo"),
    ("field removed in v1", document(healthzBindAddress="0.0.0.0:10251"), "healthzBindAddress"),
    ("profile", with_profiles({"schedulerName": "a", "name": "a"}), "profiles[0].name"),
    ("plugins", with_profiles({"plugins": {"scores": {}}}), "profiles[0].plugins.scores"),
    ("plugin set", with_profiles({"plugins": {"score": {"foo": []}}}), "profiles[0].plugins.score.foo"),
    (
        "plugin entry",
        with_profiles({"plugins": {"score": {"enabled": [{"name": "A", "wieght": 1}]}}}),
        "profiles[0].plugins.score.enabled[0].wieght",
    ),
    ("plugin config entry", with_profiles({"pluginConfig": [{"name": "A", "arg": {}}]}), "profiles[0].pluginConfig[0].arg"),
    (
        "args of a known plugin",
        with_profiles({"pluginConfig": [plugin_config("InterPodAffinity", {"hardPodAffinityWieght": 1})]}),
        "profiles[0].pluginConfig[0].args.hardPodAffinityWieght",
    ),
    ("leader election", document(leaderElection={"leaseDuraton": "1s"}), "leaderElection.leaseDuraton"),
    ("client connection", document(clientConnection={"QPS": 5}), "clientConnection.QPS"),
    ("extender", document(extenders=[{"urlPrefix": "http://a", "filter": "f"}]), "extenders[0].filter"),
]


@pytest.mark.parametrize(("doc", "field"), [c[1:] for c in STRICT_CASES], ids=[c[0] for c in STRICT_CASES])
def test_unknown_fields_are_rejected(doc: dict[str, Any], field: str) -> None:
    error = error_of(doc)
    assert str(error) == f'config.yaml: strict decoding error: unknown field "{field}"'
    assert error.field == field


def test_all_unknown_fields_are_listed_in_document_order() -> None:
    doc = document(b=1, profiles=[{"plugins": {"score": {"x": 1}}}], a=2)
    assert error_of(doc).message == (
        'strict decoding error: unknown field "profiles[0].plugins.score.x", unknown field "b", unknown field "a"'
    )


TYPE_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("string for int", document(parallelism="16"), 'parallelism: cannot unmarshal string "16" into int32'),
    ("float for int", document(parallelism=1.5), "parallelism: cannot unmarshal number 1.5 into int32"),
    ("int32 overflow", document(parallelism=2**31), "parallelism: cannot unmarshal number 2147483648 into int32"),
    ("bool for int", document(podMaxBackoffSeconds=True), "podMaxBackoffSeconds: cannot unmarshal bool true into int64"),
    ("string for bool", document(enableProfiling="yes"), 'enableProfiling: cannot unmarshal string "yes" into bool'),
    ("object for list", document(profiles={"schedulerName": "a"}), "profiles: cannot unmarshal object into array"),
    ("list for object", with_profiles({"plugins": []}), "profiles[0].plugins: cannot unmarshal array into object"),
    (
        "number for name",
        with_profiles({"plugins": {"filter": {"enabled": [{"name": 7}]}}}),
        "profiles[0].plugins.filter.enabled[0].name: cannot unmarshal number 7 into string",
    ),
    (
        "args not an object",
        with_profiles({"pluginConfig": [plugin_config("NodeAffinity", "all")]}),
        'profiles[0].pluginConfig[0].args: cannot unmarshal string "all" into object',
    ),
    (
        "plugin weight beyond int32",
        with_profiles({"plugins": {"score": {"enabled": [{"name": "A", "weight": 2**31}]}}}),
        "profiles[0].plugins.score.enabled[0].weight: cannot unmarshal number 2147483648 into int32",
    ),
    (
        "bad duration",
        document(leaderElection={"leaseDuration": "15"}),
        'leaderElection.leaseDuration: time: invalid duration "15"',
    ),
    (
        "args of another kind",
        with_profiles({"pluginConfig": [plugin_config("NodeAffinity", {"kind": "InterPodAffinityArgs"})]}),
        (
            "profiles[0].pluginConfig[0].args: args for plugin NodeAffinity were not of type "
            "NodeAffinityArgs.kubescheduler.config.k8s.io, got InterPodAffinityArgs.kubescheduler.config.k8s.io"
        ),
    ),
    (
        "args of an old version",
        with_profiles({"pluginConfig": [plugin_config("NodeAffinity", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"})]}),
        (
            'profiles[0].pluginConfig[0].args: no kind "NodeAffinityArgs" is registered for version '
            '"kubescheduler.config.k8s.io/v1beta3"'
        ),
    ),
]


@pytest.mark.parametrize(("doc", "message"), [c[1:] for c in TYPE_CASES], ids=[c[0] for c in TYPE_CASES])
def test_wrong_types_name_the_field(doc: dict[str, Any], message: str) -> None:
    error = error_of(doc)
    assert error.message == message
    assert error.field == message.split(": ")[0]


TYPE_META_CASES: list[tuple[str, object, str]] = [
    ("not an object", ["a"], "expected a KubeSchedulerConfiguration object, got array"),
    (
        "kind missing",
        {"apiVersion": "kubescheduler.config.k8s.io/v1"},
        "Object 'Kind' is missing; set kind: KubeSchedulerConfiguration",
    ),
    (
        "apiVersion missing",
        {"kind": "KubeSchedulerConfiguration"},
        "Object 'apiVersion' is missing; set apiVersion: kubescheduler.config.k8s.io/v1",
    ),
    (
        "old apiVersion",
        document(apiVersion="kubescheduler.config.k8s.io/v1beta2"),
        (
            'no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta2" '
            "(this scheduler reads apiVersion kubescheduler.config.k8s.io/v1, kind KubeSchedulerConfiguration)"
        ),
    ),
    (
        "wrong kind",
        document(kind="Policy"),
        (
            'no kind "Policy" is registered for version "kubescheduler.config.k8s.io/v1" '
            "(this scheduler reads apiVersion kubescheduler.config.k8s.io/v1, kind KubeSchedulerConfiguration)"
        ),
    ),
    ("kind not a string", document(kind=1), "kind: cannot unmarshal number 1 into string"),
]


@pytest.mark.parametrize(("doc", "message"), [c[1:] for c in TYPE_META_CASES], ids=[c[0] for c in TYPE_META_CASES])
def test_api_version_and_kind(doc: object, message: str) -> None:
    assert str(error_of(doc)) == f"config.yaml: {message}"


TEXT_CASES = [
    (
        "bad YAML",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: [1\n",
        "line 4, column 1: invalid YAML: did not find expected ',' or ']'",
    ),
    (
        "bad indentation",
        "apiVersion: v1\n  kind: x\n",
        "line 2, column 7: invalid YAML: mapping values are not allowed in this context",
    ),
    (
        "duplicate key",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 1\nparallelism: 2\n",
        'line 4, column 1: invalid YAML: key "parallelism" already set in map',
    ),
    ("bad JSON", '{"apiVersion": "x",\n "kind": }', "line 2, column 10: invalid JSON: Expecting value"),
    ("duplicate JSON key", '{"kind": "a", "kind": "b"}', 'line 1, column 1: invalid JSON: key "kind" already set in map'),
]


@pytest.mark.parametrize(("text", "message"), [c[1:] for c in TEXT_CASES], ids=[c[0] for c in TEXT_CASES])
def test_unparsable_files_name_the_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(str(path))
    assert str(caught.value) == f"{path}: {message}"
    assert caught.value.source == str(path)


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match=r"nope\.yaml: cannot read the configuration file: .*No such file"):
        load_config(str(missing))


def test_config_error_is_a_value_error() -> None:
    assert isinstance(error_of(document(parallelism=0)), ValueError)
