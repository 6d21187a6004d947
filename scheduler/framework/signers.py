"""Pod signatures for opportunistic batching (KEP-5598): the fragments plugins sign a pod with.

Upstream: kubernetes/kubernetes `staging/src/k8s.io/kube-scheduler/framework/signers.go` (v1.35)
and each default plugin's `SignPod`. Two pods with equal signatures get the same Filter verdicts
and scores on the same nodes in the same state. Upstream marshals the fragments to JSON and
compares bytes; here a fragment's value is a hashable, canonically ordered Python value and the
signature is the tuple of (key, value) pairs sorted by key, so equal JSON means equal tuples.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from typing import Any

from scheduler.api.objects import Pod
from scheduler.api.selectors import NodeSelectorTerm, Requirement
from scheduler.framework.types import Code, Status

Fragment = tuple[str, Hashable]
"""One `SignFragment`: its key (a v1.Pod path, as upstream names them) and its value."""

Signature = tuple[Fragment, ...]
"""A pod's `PodSignature`; None where any plugin refuses to sign."""

# Fragment keys, as upstream's `*SignerName` constants.
IMAGE_NAMES = "v1.Pod.Spec.CanonicalImageNames()"
LABELS = "v1.Pod.Labels"
NODE_NAME = "v1.Pod.Spec.NodeName"
NODE_AFFINITY = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS = "v1.Pod.Spec.HostPorts()"
RESOURCES = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME = "v1.Pod.Spec.SchedulerName"
TOLERATIONS = "v1.Pod.Spec.Tolerations"
VOLUMES = "v1.Pod.Spec.Volumes.NonSyntheticSources()"


def host_ports(pod: Pod) -> tuple[int, ...]:
    """`HostPortsSigner`: the distinct host ports of all containers, ascending."""
    ports = {p.host_port for c in (*pod.containers, *pod.init_containers) for p in c.ports if p.host_port}
    return tuple(sorted(ports))


def _requirements(reqs: tuple[Requirement, ...]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    # `NodeSelectorRequirementsSigner`: values sorted within, requirements sorted.
    return tuple(sorted((r.key, r.operator, tuple(sorted(r.values))) for r in reqs))


def _term(term: NodeSelectorTerm) -> tuple[Any, ...]:
    return (_requirements(term.match_expressions), _requirements(term.match_fields))


def node_affinity(pod: Pod) -> Hashable:
    """`NodeAffinitySigner`: required terms and weighted preferred terms, each sorted; None without node affinity."""
    aff = pod.affinity
    if aff is None or (aff.node_required is None and not aff.node_preferred):
        return None
    required = tuple(sorted(_term(t) for t in aff.node_required.terms)) if aff.node_required is not None else ()
    preferred = tuple(sorted((p.weight, _term(p.term)) for p in aff.node_preferred))
    return (required, preferred)


def node_selector(pod: Pod) -> Hashable:
    """spec.nodeSelector as sorted pairs."""
    return tuple(sorted(pod.node_selector.items()))


def tolerations(pod: Pod) -> Hashable:
    """`TolerationsSigner`: the tolerations ordered by key, then value."""
    return tuple(sorted(pod.tolerations, key=lambda t: (t.key, t.value)))


def volumes(pod: Pod) -> Hashable:
    """`VolumesSigner`: each volume's source as JSON, sorted; configMap and secret volumes are
    left out (they never change where a pod fits, and differ from pod to pod)."""
    if not pod.volumes:
        return ()
    out = []
    for vol in pod.raw.get("spec", {}).get("volumes") or ():
        source = {k: v for k, v in vol.items() if k != "name"}
        if "configMap" in source or "secret" in source:
            continue
        out.append(json.dumps(source, sort_keys=True, separators=(",", ":")))
    return tuple(sorted(out))


def image_names(pod: Pod, normalize: Any) -> Hashable:
    """The distinct normalized image names of all containers, sorted."""
    return tuple(sorted({normalize(c.image) for c in (*pod.containers, *pod.init_containers)}))


def resources(pod: Pod) -> Hashable:
    """The pod's effective requests (containers, init containers, overhead, pod-level resources)."""
    return tuple(sorted(pod.requests.items()))


def labels(pod: Pod) -> Hashable:
    """metadata.labels as sorted pairs."""
    return tuple(sorted(pod.labels.items()))


Signed = tuple[tuple[Fragment, ...], Status]
"""What a plugin's `sign_pod` returns: its fragments and Success, or no fragments and the refusal."""


def signed(*fragments: Fragment) -> Signed:
    """A plugin signs the pod with these fragments (none: the plugin adds nothing)."""
    return fragments, Status()


def refused(reason: str) -> Signed:
    """A plugin refuses to sign the pod (Unschedulable): the pod is not batched."""
    return (), Status(Code.UNSCHEDULABLE, (reason,))
