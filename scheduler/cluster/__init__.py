"""The cluster backend contract (errors, watch events, what the scheduler's informers see) and the
in-memory simulated cluster with its fault injection, koordlet and PV controller."""
