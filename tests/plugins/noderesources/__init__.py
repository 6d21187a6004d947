"""Tests of the resource plugins."""
