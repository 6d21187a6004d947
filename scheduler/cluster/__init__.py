"""Cluster backends: the in-memory simulated cluster and (later) a real one through `kubernetes`."""
