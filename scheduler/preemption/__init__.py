"""Preemption: the generic evaluator DefaultPreemption (and other preemption plugins) build on."""

from scheduler.preemption.evaluator import (
    NOMINATING_KEY,
    NOT_HELPFUL,
    VICTIMS_KEY,
    Candidate,
    Evaluator,
    PreemptionPlugin,
    Victims,
    more_important_pod,
    pick_one_node_for_preemption,
)

__all__ = [
    "NOMINATING_KEY",
    "NOT_HELPFUL",
    "VICTIMS_KEY",
    "Candidate",
    "Evaluator",
    "PreemptionPlugin",
    "Victims",
    "more_important_pod",
    "pick_one_node_for_preemption",
]
