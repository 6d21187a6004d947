"""The replay routes' bodies (`/api/replays/`) as DRF serializers, for the OpenAPI schema."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from schedconsole.api.serializers import Object


class ReplayWindowSerializer(serializers.Serializer[Any]):
    """The window: seconds (openb: from the trace's start; history: since the epoch) or RFC 3339 times."""

    start = serializers.JSONField(required=False, help_text="history: default the end minus 24 hours; openb: the trace's start")
    end = serializers.JSONField(required=False, help_text="history: default now; openb: the trace's end")


class ReplayCandidateBodySerializer(serializers.Serializer[Any]):
    """A candidate: a stored profile version, or a configuration document (a draft; "default" for kube-scheduler's defaults)."""

    version = serializers.IntegerField(required=False)
    document = serializers.JSONField(required=False)
    label = serializers.CharField(required=False)  # type: ignore[assignment]  # the body field shares its name with a Field attribute


class ReplayGridSerializer(serializers.Serializer[Any]):
    """Every combination of `values` applied to `base` (a version or a document; default: the default profile)."""

    base = serializers.JSONField(required=False)
    values = serializers.DictField(
        child=serializers.ListField(child=serializers.JSONField()), help_text="{<Plugin>.weight | <Plugin>.<arg path>: [values]}"
    )


class ReplayBodySerializer(serializers.Serializer[Any]):
    """A replay to start: the trace, its window and slice, the candidates, how to cut it."""

    source = serializers.ChoiceField(["history", "openb"], required=False, help_text="default history (the console's change log)")  # type: ignore[assignment]  # the body field shares its name with a Field attribute
    window = ReplayWindowSerializer(required=False)
    nodes = serializers.IntegerField(required=False, help_text="openb: the first N nodes")
    pods = serializers.IntegerField(required=False, help_text="openb: the first N tasks")
    candidates = ReplayCandidateBodySerializer(many=True, required=False)
    grid = ReplayGridSerializer(required=False)
    segments = serializers.IntegerField(required=False, help_text="tasks per candidate, cutting the window in time (default 1)")
    samples = serializers.IntegerField(required=False, help_text="cluster samples per segment (default 48)")
    seed = serializers.IntegerField(required=False, help_text="the tie-break seed (default 1)")


class PendingSecondsSerializer(serializers.Serializer[Any]):
    """Seconds from arrival to binding (virtual time) of the pods placed."""

    p50 = serializers.FloatField()
    p90 = serializers.FloatField()
    p99 = serializers.FloatField()
    max = serializers.FloatField()
    mean = serializers.FloatField()


class HistogramSerializer(serializers.Serializer[Any]):
    """Pods per bucket: `counts[i]` waited from `edges[i]` up to the next edge."""

    edges = serializers.ListField(child=serializers.FloatField())
    counts = serializers.ListField(child=serializers.IntegerField())


class MeanEndSerializer(serializers.Serializer[Any]):
    """A share (0..1) averaged over the samples, and at the window's end."""

    mean = serializers.FloatField()
    end = serializers.FloatField()


class NodesUsedSerializer(serializers.Serializer[Any]):
    """Nodes holding at least one pod: the most at any sample, and at the end."""

    peak = serializers.IntegerField()
    end = serializers.IntegerField()


class ReplaySummarySerializer(serializers.Serializer[Any]):
    """What a candidate did to the window."""

    pods = serializers.IntegerField(help_text="pods that arrived in the window")
    placed = serializers.IntegerField()
    unschedulable = serializers.IntegerField(help_text="still pending at the window's end")
    deletedPending = serializers.IntegerField(help_text="deleted by the trace before any node took them")
    attempts = serializers.IntegerField()
    preemptions = serializers.IntegerField()
    victims = serializers.IntegerField()
    pendingSeconds = PendingSecondsSerializer()
    pendingHistogram = HistogramSerializer()
    nodesUsed = NodesUsedSerializer()
    fragmentation = MeanEndSerializer(help_text="share of free CPU on nodes where the median pending pod does not fit")
    gpuFragmentation = MeanEndSerializer(
        allow_null=True, help_text="the same for free GPUs and the median GPU pod; null without GPUs"
    )
    balance = serializers.DictField(
        child=serializers.DictField(child=serializers.FloatField()),
        help_text="{zone|nodeType: {group: mean CPU requested/allocatable}}",
    )
    stop = serializers.CharField()


class ReplayPartsSerializer(serializers.Serializer[Any]):
    """A candidate's tasks: done of total, their replay seconds, the workers that ran them."""

    done = serializers.IntegerField()
    total = serializers.IntegerField()
    seconds = serializers.FloatField()
    workers = serializers.ListField(child=serializers.CharField())


class ReplayCandidateSerializer(serializers.Serializer[Any]):
    """A candidate with its progress and, once merged, its summary and digest."""

    index = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]  # the body field shares its name with a Field attribute
    version = serializers.IntegerField(allow_null=True)
    state = serializers.ChoiceField(["queued", "done", "failed", "cancelled"])
    digest = serializers.CharField(allow_blank=True, help_text="equal for the same replay wherever it runs")
    summary = ReplaySummarySerializer(allow_null=True)
    parts = ReplayPartsSerializer()
    document = Object(help_text="the KubeSchedulerConfiguration replayed")


class DecisionSerializer(serializers.Serializer[Any]):
    """A pod's last attempt in a run: outcome, node, feasible nodes, the top 3 [node, total], the message."""

    outcome = serializers.CharField()
    node = serializers.CharField(allow_null=True)
    feasibleNodes = serializers.IntegerField()
    top = serializers.ListField(child=serializers.ListField(child=serializers.JSONField()))
    message = serializers.CharField(allow_blank=True)


class PlacedDifferentlySerializer(serializers.Serializer[Any]):
    """One pod the two runs placed differently."""

    pod = serializers.CharField()
    a = serializers.CharField(allow_null=True)
    b = serializers.CharField(allow_null=True)
    aDecision = DecisionSerializer(allow_null=True)
    bDecision = DecisionSerializer(allow_null=True)
    aAttempt = serializers.IntegerField(
        required=False, allow_null=True, help_text="recorded run: the pod's last attempt (/attempts/<id>/)"
    )


class ReplayDifferenceSerializer(serializers.Serializer[Any]):
    """Pods run `a` and run `b` placed differently: how many, and the first 100."""

    a = serializers.CharField()
    b = serializers.CharField()
    count = serializers.IntegerField()
    pods = PlacedDifferentlySerializer(many=True)


class RecordedSerializer(serializers.Serializer[Any]):
    """The recorded run within the window (history replays)."""

    pods = serializers.IntegerField()
    placed = serializers.IntegerField()


class ReplaySerializer(serializers.Serializer[Any]):
    """A replay: its params, progress, candidates side by side and the pods placed differently."""

    id = serializers.IntegerField()
    state = serializers.ChoiceField(["queued", "running", "done", "failed", "cancelled"])
    created = serializers.DateTimeField()
    user = serializers.CharField(allow_blank=True)
    params = Object()
    job = serializers.IntegerField(allow_null=True, help_text="the job on /jobs/ (progress, cancel)")
    url = serializers.CharField()
    page = serializers.CharField()
    recorded = RecordedSerializer(allow_null=True)
    candidates = ReplayCandidateSerializer(many=True)
    differences = ReplayDifferenceSerializer(many=True)


class ReplayRowCandidateSerializer(serializers.Serializer[Any]):
    """A candidate in a list."""

    label = serializers.CharField()  # type: ignore[assignment]  # the body field shares its name with a Field attribute
    state = serializers.CharField()
    digest = serializers.CharField(allow_blank=True)


class ReplayRowSerializer(serializers.Serializer[Any]):
    """A replay in a list."""

    id = serializers.IntegerField()
    state = serializers.CharField()
    created = serializers.DateTimeField()
    user = serializers.CharField(allow_blank=True)
    source = serializers.CharField()  # type: ignore[assignment]  # the body field shares its name with a Field attribute
    job = serializers.IntegerField(allow_null=True)
    page = serializers.CharField()
    candidates = ReplayRowCandidateSerializer(many=True)
