"""PodTopologySpread: spread pods evenly over topology domains (upstream `podtopologyspread`)."""

from scheduler.plugins.podtopologyspread.plugin import NAME, PodTopologySpread, new

__all__ = ["NAME", "PodTopologySpread", "new"]
