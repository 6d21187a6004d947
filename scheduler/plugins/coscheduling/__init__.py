"""Coscheduling: gang scheduling with PodGroups and gang annotations (Koordinator)."""
