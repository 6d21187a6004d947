"""Bounded, fast reading of YAML and JSON documents."""
