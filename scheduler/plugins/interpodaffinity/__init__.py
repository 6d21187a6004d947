"""InterPodAffinity: required pod affinity/anti-affinity filtering and preferred scoring."""

from scheduler.plugins.interpodaffinity.plugin import NAME, InterPodAffinity, new

__all__ = ["NAME", "InterPodAffinity", "new"]
