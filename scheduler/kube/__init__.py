"""A real cluster: the API client and informers, the `kubernetes` backend, leader election, and the
live-cluster modes (mirror, shadow)."""
