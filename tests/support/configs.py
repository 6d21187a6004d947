"""Builders for KubeSchedulerConfiguration documents used across the config tests."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.config.errors import ConfigError
from scheduler.config.loader import parse_config
from scheduler.config.types import SchedulerConfiguration

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"


def document(**fields: Any) -> dict[str, Any]:
    """A v1 KubeSchedulerConfiguration document with the given top-level fields."""
    return {"apiVersion": API_VERSION, "kind": KIND, **fields}


def with_profiles(*profiles: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A document with these profiles."""
    return document(profiles=list(profiles), **fields)


def parse(doc: object) -> SchedulerConfiguration:
    """Parse a document as if read from config.yaml."""
    return parse_config(doc, "config.yaml")


def error_of(doc: object) -> ConfigError:
    """The ConfigError a document raises."""
    with pytest.raises(ConfigError) as caught:
        parse(doc)
    return caught.value
