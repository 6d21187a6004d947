"""Where a pod may and would like to run, as its spec says: node and pod (anti-)affinity terms and
topology spread constraints, parsed with the API server's validation paths."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler.api.fields import (
    fail,
    integer,
    join,
    mapping,
    sequence,
    shown,
    string,
)
from scheduler.api.meta import ObjectMeta
from scheduler.api.selectors import (
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    Requirement,
    parse_label_selector,
    parse_node_selector,
    parse_node_selector_term,
)


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """A pod (anti-)affinity term with its namespaces resolved later against Namespace labels."""

    selector: LabelSelector
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    topology_key: str


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    """A preferred pod (anti-)affinity term and its weight (1..100)."""

    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    """A preferred node affinity term and its weight."""

    weight: int
    term: NodeSelectorTerm


@dataclass(frozen=True, slots=True)
class Affinity:
    """Node affinity, pod affinity and pod anti-affinity."""

    node_required: NodeSelector | None = None
    node_preferred: tuple[PreferredSchedulingTerm, ...] = ()
    pod_required: tuple[PodAffinityTerm, ...] = ()
    pod_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    anti_required: tuple[PodAffinityTerm, ...] = ()
    anti_preferred: tuple[WeightedPodAffinityTerm, ...] = ()


def _pod_affinity_term(raw: Any, path: str, meta: ObjectMeta) -> PodAffinityTerm:
    data = mapping(raw, path)
    selector = (
        parse_label_selector(data["labelSelector"], join(path, "labelSelector"))
        if data.get("labelSelector") is not None
        else None
    )
    # The API server merges matchLabelKeys / mismatchLabelKeys into the selector at creation.
    extra: list[Requirement] = []
    for key in sequence(data.get("matchLabelKeys"), join(path, "matchLabelKeys")):
        if isinstance(key, str) and key in meta.labels:
            extra.append(Requirement(key, "In", (meta.labels[key],)))
    for key in sequence(data.get("mismatchLabelKeys"), join(path, "mismatchLabelKeys")):
        if isinstance(key, str) and key in meta.labels:
            extra.append(Requirement(key, "NotIn", (meta.labels[key],)))
    if selector is None and extra:
        selector = LabelSelector(())
    if selector is not None and extra:
        selector = LabelSelector(selector.requirements + tuple(extra))
    ns_list = [
        string(n, join(join(path, "namespaces"), i))
        for i, n in enumerate(sequence(data.get("namespaces"), join(path, "namespaces")))
    ]
    ns_selector = (
        parse_label_selector(data["namespaceSelector"], join(path, "namespaceSelector"))
        if data.get("namespaceSelector") is not None
        else None
    )
    topology_key = string(data.get("topologyKey"), join(path, "topologyKey"))
    if not topology_key:
        fail(join(path, "topologyKey"), "can not be empty")
    # A nil selector matches nothing; we model it as a selector no labels satisfy.
    final = selector if selector is not None else LabelSelector((Requirement("", "In", ()),))
    # Empty namespaces and a nil namespaceSelector mean the pod's own namespace.
    namespaces = frozenset(ns_list) if ns_list or ns_selector is not None else frozenset([meta.namespace])
    return PodAffinityTerm(final, namespaces, ns_selector, topology_key)


def _weighted_terms(raw: Any, path: str, meta: ObjectMeta) -> tuple[WeightedPodAffinityTerm, ...]:
    out = []
    for i, item in enumerate(sequence(raw, path)):
        where = join(path, i)
        entry = mapping(item, where)
        weight = integer(entry.get("weight"), join(where, "weight"), 0) or 0
        if not 1 <= weight <= 100:
            fail(join(where, "weight"), f"must be in the range 1-100, got {weight}")
        out.append(
            WeightedPodAffinityTerm(
                weight, _pod_affinity_term(entry.get("podAffinityTerm"), join(where, "podAffinityTerm"), meta)
            )
        )
    return tuple(out)


def parse_affinity(raw: Any, path: str, meta: ObjectMeta) -> Affinity | None:
    """Parse spec.affinity."""
    if raw is None:
        return None
    data = mapping(raw, path)
    node = mapping(data.get("nodeAffinity"), join(path, "nodeAffinity"))
    npath = join(path, "nodeAffinity")
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    preferred = []
    ppath = join(npath, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, item in enumerate(sequence(node.get("preferredDuringSchedulingIgnoredDuringExecution"), ppath)):
        where = join(ppath, i)
        entry = mapping(item, where)
        weight = integer(entry.get("weight"), join(where, "weight"), 0) or 0
        if not 1 <= weight <= 100:
            fail(join(where, "weight"), f"must be in the range 1-100, got {weight}")
        preferred.append(
            PreferredSchedulingTerm(weight, parse_node_selector_term(entry.get("preference"), join(where, "preference")))
        )
    pod = mapping(data.get("podAffinity"), join(path, "podAffinity"))
    anti = mapping(data.get("podAntiAffinity"), join(path, "podAntiAffinity"))
    apath, xpath = join(path, "podAffinity"), join(path, "podAntiAffinity")
    req_key, pref_key = "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"
    return Affinity(
        node_required=parse_node_selector(required, join(npath, req_key)) if required is not None else None,
        node_preferred=tuple(preferred),
        pod_required=tuple(
            _pod_affinity_term(t, join(join(apath, req_key), i), meta)
            for i, t in enumerate(sequence(pod.get(req_key), join(apath, req_key)))
        ),
        pod_preferred=_weighted_terms(pod.get(pref_key), join(apath, pref_key), meta),
        anti_required=tuple(
            _pod_affinity_term(t, join(join(xpath, req_key), i), meta)
            for i, t in enumerate(sequence(anti.get(req_key), join(xpath, req_key)))
        ),
        anti_preferred=_weighted_terms(anti.get(pref_key), join(xpath, pref_key), meta),
    )


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    """A pod topology spread constraint."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    selector: LabelSelector | None
    min_domains: int | None
    node_affinity_policy: str
    node_taints_policy: str
    match_label_keys: tuple[str, ...]


def parse_spread_constraints(raw: Any, path: str) -> tuple[TopologySpreadConstraint, ...]:
    """Parse spec.topologySpreadConstraints."""
    out = []
    for i, item in enumerate(sequence(raw, path)):
        where = join(path, i)
        data = mapping(item, where)
        max_skew = integer(data.get("maxSkew"), join(where, "maxSkew"), 0) or 0
        if max_skew <= 0:
            fail(join(where, "maxSkew"), f"must be greater than zero, got {max_skew}")
        key = string(data.get("topologyKey"), join(where, "topologyKey"))
        if not key:
            fail(join(where, "topologyKey"), "can not be empty")
        when = string(data.get("whenUnsatisfiable"), join(where, "whenUnsatisfiable"))
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            fail(join(where, "whenUnsatisfiable"), f"unsupported value {shown(when)}; valid: DoNotSchedule, ScheduleAnyway")
        min_domains = integer(data.get("minDomains"), join(where, "minDomains"))
        if min_domains is not None and min_domains <= 0:
            fail(join(where, "minDomains"), f"must be greater than zero, got {min_domains}")
        if min_domains is not None and when != "DoNotSchedule":
            fail(join(where, "minDomains"), "can only be set when whenUnsatisfiable is DoNotSchedule")
        policies = {}
        for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = string(data.get(name), join(where, name))
            if value and value not in ("Honor", "Ignore"):
                fail(join(where, name), f"unsupported value {shown(value)}; valid: Honor, Ignore")
            policies[name] = value
        selector = (
            parse_label_selector(data["labelSelector"], join(where, "labelSelector"))
            if data.get("labelSelector") is not None
            else None
        )
        out.append(
            TopologySpreadConstraint(
                max_skew=max_skew,
                topology_key=key,
                when_unsatisfiable=when,
                selector=selector,
                min_domains=min_domains,
                node_affinity_policy=policies["nodeAffinityPolicy"] or "Honor",
                node_taints_policy=policies["nodeTaintsPolicy"] or "Ignore",
                match_label_keys=tuple(
                    string(k, join(join(where, "matchLabelKeys"), j))
                    for j, k in enumerate(sequence(data.get("matchLabelKeys"), join(where, "matchLabelKeys")))
                ),
            )
        )
    return tuple(out)
