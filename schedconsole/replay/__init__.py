"""Replays: what a profile change would have done to a recorded window (docs/replay.md)."""
