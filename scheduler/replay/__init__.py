"""Replay: what a profile change would have done to a recorded window of cluster changes.

- `trace`: the window (objects at its start, arrivals, deletions and node changes on the virtual
  clock) from the openb trace or the console's change log, and its cut into segments;
- `run`: one replay in a scratch engine under one configuration;
- `outcome`: what it did (counts, waits, fragmentation, balance, placements), merged across
  segments, summarised, digested, and compared pod by pod;
- `candidates`: a sweep's configurations from a grid of weights and args.
"""

from scheduler.replay.candidates import GridError, expand_grid
from scheduler.replay.outcome import RunOutcome, digest, merge, placement_diff, summary
from scheduler.replay.run import ReplayCancelled, replay
from scheduler.replay.trace import Trace, TraceEvent, TraceInputError, openb_trace, trace_from_changes

__all__ = [
    "GridError",
    "ReplayCancelled",
    "RunOutcome",
    "Trace",
    "TraceEvent",
    "TraceInputError",
    "digest",
    "expand_grid",
    "merge",
    "openb_trace",
    "placement_diff",
    "replay",
    "summary",
    "trace_from_changes",
]
