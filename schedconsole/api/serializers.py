"""The API's bodies as DRF serializers, for the OpenAPI schema (`/api/schema/`): every request and
response with its properties, so a client can be generated from the schema and a response checked
against it.

The engine's answers are TypedDicts (`engine.bridge.answers`, checked by mypy); `typed()` turns one
into a serializer field by field, so the schema follows the code instead of a second description
of it. Bodies built here from the database (attempts, versions, jobs, audit) have their own
serializers. Units: CPU in millicores, memory and storage in bytes, as integers.
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any, NotRequired, get_args, get_origin, get_type_hints, is_typeddict

from drf_spectacular.types import OpenApiTypes
from rest_framework import serializers

from schedconsole.engine.bridge import answers

_BASIC: dict[Any, type[serializers.Field[Any, Any, Any, Any]]] = {
    str: serializers.CharField,
    int: serializers.IntegerField,
    float: serializers.FloatField,
    bool: serializers.BooleanField,
}


def _field(hint: Any, building: frozenset[type], **kwargs: Any) -> serializers.Field[Any, Any, Any, Any]:
    """A serializer field for one type hint (nested TypedDicts become nested serializers)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is NotRequired:
        return _field(args[0], building, **kwargs, required=False)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _field(rest[0], building, **kwargs, allow_null=True)
        return serializers.JSONField(**kwargs)
    if hint in _BASIC:
        return _BASIC[hint](**kwargs)
    if origin is list or origin is tuple:
        return serializers.ListField(child=_field(args[0], building) if args else serializers.JSONField(), **kwargs)
    if origin is dict:
        if args and args[1] is not Any:
            return serializers.DictField(child=_field(args[1], building), **kwargs)
        return serializers.DictField(**kwargs)
    if is_typeddict(hint):
        if hint in building:  # a recursive shape (Advice.then): described once, then as any object
            return serializers.DictField(**kwargs)
        return typed(hint, building)(**kwargs)
    return serializers.JSONField(**kwargs)


_MADE: dict[type, type[serializers.Serializer[Any]]] = {}


def typed(td: type, building: frozenset[type] = frozenset()) -> type[serializers.Serializer[Any]]:
    """The serializer describing a TypedDict (one class per TypedDict, its component in the schema)."""
    made = _MADE.get(td)
    if made is not None:
        return made
    hints = get_type_hints(td, include_extras=True)
    required = getattr(td, "__required_keys__", frozenset(hints))
    fields: dict[str, Any] = {}
    for name, hint in hints.items():
        extra = {} if name in required or get_origin(hint) is NotRequired else {"required": False}
        fields[name] = _field(hint, building | {td}, **extra)
    meta = type("Meta", (), {"ref_name": td.__name__})
    doc = (td.__doc__ or "").strip()
    made = type(f"{td.__name__}Serializer", (serializers.Serializer[Any],), {**fields, "Meta": meta, "__doc__": doc})
    _MADE[td] = made
    return made


@cache
def paged(item: type[serializers.Serializer[Any]], name: str) -> type[serializers.Serializer[Any]]:
    """DRF's paged list body `{"count", "next", "previous", "results"}` of `item`."""
    fields = {
        "count": serializers.IntegerField(),
        "next": serializers.URLField(allow_null=True),
        "previous": serializers.URLField(allow_null=True),
        "results": item(many=True),
        "Meta": type("Meta", (), {"ref_name": name}),
    }
    return type(f"{name}Serializer", (serializers.Serializer[Any],), fields)


Object = serializers.DictField
"""A free-form JSON object (a Kubernetes document, a configuration, plugin args)."""


# ----- attempts ---------------------------------------------------------------------------------------
class FilterFailureSerializer(serializers.Serializer[Any]):
    """The first plugin that rejected a node, its code and reasons."""

    plugin = serializers.CharField()
    code = serializers.CharField()
    reasons = serializers.ListField(child=serializers.CharField())


class EntrySerializer(serializers.Serializer[Any]):
    """One scheduling attempt as `simulate --output json` writes it (a `results[]` entry)."""

    pod = serializers.CharField(help_text="namespace/name")
    profile = serializers.CharField()
    attempt = serializers.IntegerField()
    outcome = serializers.ChoiceField(["Scheduled", "Unschedulable", "Nominated", "Waiting", "Rejected", "Error"])
    node = serializers.CharField(allow_null=True)
    nominatedNode = serializers.CharField(allow_null=True)
    victims = serializers.ListField(child=serializers.CharField())
    message = serializers.CharField(allow_blank=True)
    filter = serializers.DictField(child=FilterFailureSerializer(), help_text="node -> its first failing filter")
    scores = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()), help_text="node -> plugin -> normalized score (0..100)"
    )
    totals = serializers.DictField(child=serializers.IntegerField(), help_text="node -> weighted total")
    feasibleNodes = serializers.IntegerField(required=False)
    weights = serializers.DictField(child=serializers.IntegerField(), required=False)
    rejectedBy = serializers.DictField(child=serializers.IntegerField(), required=False, help_text="plugin -> nodes rejected")


class AttemptSerializer(serializers.Serializer[Any]):
    """A stored attempt: the record's summary, and with its detail (one attempt) every node's
    filter result and the kept scores."""

    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    pod = serializers.CharField()
    profile = serializers.CharField()
    attempt = serializers.IntegerField(help_text="the pod's attempt number, counted across profile versions")
    outcome = serializers.CharField()
    node = serializers.CharField(allow_null=True)
    nominatedNode = serializers.CharField(allow_null=True)
    victims = serializers.ListField(child=serializers.CharField())
    message = serializers.CharField(allow_blank=True)
    feasibleNodes = serializers.IntegerField(allow_null=True)
    filter = serializers.DictField(child=FilterFailureSerializer(), required=False)
    filterGroups = serializers.ListField(child=serializers.DictField(), required=False)
    filterTruncated = serializers.BooleanField(required=False)
    numAllNodes = serializers.IntegerField(required=False)
    scoredNodes = serializers.IntegerField(required=False)
    timings = serializers.DictField(child=serializers.FloatField(), required=False, help_text="extension point -> seconds")
    scores = serializers.DictField(child=serializers.DictField(child=serializers.IntegerField()), required=False)
    totals = serializers.DictField(child=serializers.IntegerField(), required=False)


# ----- profiles, plugin args, flags -----------------------------------------------------------------
class ProfileVersionSerializer(serializers.Serializer[Any]):
    """A stored KubeSchedulerConfiguration version."""

    version = serializers.IntegerField()
    author = serializers.CharField(allow_null=True)
    created = serializers.DateTimeField()
    comment = serializers.CharField(allow_blank=True)
    active = serializers.BooleanField()
    document = Object(required=False, help_text="the whole KubeSchedulerConfiguration (not in lists)")


class ProfileBodySerializer(serializers.Serializer[Any]):
    """A KubeSchedulerConfiguration to store, with a comment; or the configuration itself as the body."""

    document = Object(help_text="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)")
    comment = serializers.CharField(required=False, allow_blank=True)
    activate = serializers.BooleanField(required=False, default=True)


class ValidSerializer(serializers.Serializer[Any]):
    """The configuration is valid; the profiles it would run."""

    valid = serializers.BooleanField()
    profiles = serializers.ListField(child=serializers.CharField())


class PluginArgsBodySerializer(serializers.Serializer[Any]):
    """New args for one plugin, in one profile or in every profile that runs it."""

    args = Object()
    profile = serializers.CharField(required=False)


class PluginArgsChangeSerializer(serializers.Serializer[Any]):
    """What a plugin-args change did (or, with dry_run, would do)."""

    plugin = serializers.CharField()
    profiles = serializers.ListField(child=serializers.CharField())
    before = serializers.DictField(
        child=Object(allow_null=True), help_text="profile -> the args configured before (null: the defaults)"
    )
    after = Object()
    document = Object(help_text="the whole configuration the change makes")
    runs = serializers.ListField(child=serializers.CharField())
    dryRun = serializers.BooleanField()
    preview = typed(answers.ThresholdPreview)(required=False)
    version = serializers.IntegerField(required=False)


class DebugFlagsBodySerializer(serializers.Serializer[Any]):
    """Either flag, or both."""

    debugTopNScores = serializers.IntegerField(min_value=0, required=False)
    debugFilterFailure = serializers.BooleanField(required=False)


class PluginTimingBodySerializer(serializers.Serializer[Any]):
    """Time each plugin in every Nth attempt (0: never)."""

    every = serializers.IntegerField(min_value=0)


# ----- pods, what-if ----------------------------------------------------------------------------------
class PodBodySerializer(serializers.Serializer[Any]):
    """A Pod (`apiVersion`, `kind: Pod`, `metadata`, `spec`), as JSON or YAML."""

    apiVersion = serializers.CharField(required=False)
    kind = serializers.ChoiceField(["Pod"])
    metadata = Object()
    spec = Object()


class WhatIfBodySerializer(serializers.Serializer[Any]):
    """A pod to run the scheduling cycle for, under its own profile or another."""

    pod = Object(help_text="a Pod")
    profile = serializers.CharField(required=False, allow_null=True)


class WhatIfDiffBodySerializer(WhatIfBodySerializer):
    """An edited pod beside its original."""

    original = Object(required=False, allow_null=True)


class CompareBodySerializer(serializers.Serializer[Any]):
    """A pod under two profiles."""

    pod = Object(help_text="a Pod")
    profiles = serializers.ListField(child=serializers.CharField(), min_length=2, max_length=2)


class TrimmedEntrySerializer(EntrySerializer):
    """An entry cut to its 10 best-scored nodes and 50 filter failures, with failures counted by plugin."""


class WhatIfDiffSerializer(serializers.Serializer[Any]):
    """The edited pod's entry, the original's, and what changed."""

    result = TrimmedEntrySerializer()
    base = TrimmedEntrySerializer(allow_null=True)
    diff = serializers.DictField(child=serializers.ListField(), required=False)


class ComparisonSerializer(serializers.Serializer[Any]):
    """Both entries and per-node, per-plugin deltas (b - a)."""

    profiles = serializers.ListField(child=serializers.CharField())
    results = EntrySerializer(many=True)
    sameNode = serializers.BooleanField()
    deltas = serializers.DictField(child=typed(answers.Delta)())


class CompareSummarySerializer(serializers.Serializer[Any]):
    """Both trimmed entries and the nodes either profile ranks in its top 10."""

    profiles = serializers.ListField(child=serializers.CharField())
    sameNode = serializers.BooleanField()
    results = TrimmedEntrySerializer(many=True)
    rows = typed(answers.CompareRow)(many=True)


# ----- jobs, audit, import ------------------------------------------------------------------------------
class JobSerializer(serializers.Serializer[Any]):
    """A background import or benchmark and its progress."""

    id = serializers.IntegerField()
    kind = serializers.ChoiceField(["import", "bench", "replay"], help_text="import, bench or replay")
    state = serializers.ChoiceField(["queued", "running", "done", "failed", "cancelled"])
    complete = serializers.BooleanField(help_text="done, and (a benchmark) every measured pod bound")
    phase = serializers.CharField(allow_blank=True)
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.FloatField()
    params = Object()
    result = serializers.JSONField(allow_null=True, help_text="a benchmark's figures, or what an import created")
    error = serializers.CharField(allow_blank=True, allow_null=True)
    user = serializers.CharField(allow_blank=True)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class StartedJobSerializer(JobSerializer):
    """A job just started, with where to follow it."""

    url = serializers.CharField()
    page = serializers.CharField()


class BenchBodySerializer(serializers.Serializer[Any]):
    """A generated workload's shape (unset sizes take the workload's defaults), or cluster-copy."""

    workload = serializers.ChoiceField(
        ["SchedulingBasic", "PreemptionAsync", "TopologySpreading", "Gang", "LoadAware", "cluster-copy"]
    )
    nodes = serializers.IntegerField(min_value=1, max_value=5000, required=False)
    initPods = serializers.IntegerField(min_value=0, max_value=20000, required=False)
    pods = serializers.IntegerField(min_value=1, max_value=20000, required=False)


class AuditEntrySerializer(serializers.Serializer[Any]):
    """One change: who, when, what, before and after."""

    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    user = serializers.CharField(allow_blank=True)
    action = serializers.CharField()
    target = serializers.CharField(allow_blank=True)
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)


class ImportBodySerializer(serializers.Serializer[Any]):
    """A kubectl YAML or JSON file (multipart field `file`), or the text itself as the body."""

    file = serializers.FileField()


class ErrorSerializer(serializers.Serializer[Any]):
    """DRF's error body for 401, 403, 404 and 5xx."""

    detail = serializers.CharField()


FieldErrors = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
"""DRF's 400 body: field -> messages."""


class NodeBodySerializer(serializers.Serializer[Any]):
    """A Node (`apiVersion`, `kind: Node`, `metadata`, `spec`, `status`), as JSON or YAML."""

    apiVersion = serializers.CharField(required=False)
    kind = serializers.ChoiceField(["Node"])
    metadata = Object()
    spec = Object(required=False)
    status = Object(required=False)


class ResetBodySerializer(serializers.Serializer[Any]):
    """`{"confirm": true}`: a reset deletes every object of the simulated cluster."""

    confirm = serializers.BooleanField()


class PodDocumentSerializer(serializers.Serializer[Any]):
    """A Pod document as the cluster holds it."""

    apiVersion = serializers.CharField()
    kind = serializers.CharField()
    metadata = Object()
    spec = Object()
    status = Object(required=False)


PROFILE_BODY = {"application/json": ProfileBodySerializer, "application/yaml": OpenApiTypes.OBJECT}
"""A configuration with a comment as JSON, or the KubeSchedulerConfiguration itself (JSON or YAML)."""
