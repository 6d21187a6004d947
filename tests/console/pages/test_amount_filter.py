"""The pages' `amount` filter shows a resource amount as the request wrote it (Quantity.String()),
as kube-scheduler-simulator shows the cluster's objects: a 512Mi request is `512Mi`, a 100M
request `100M`, never its bytes nor a rounded `95Mi`; only an amount no suffix divides (an
estimate) is rounded."""

from __future__ import annotations

import pytest

from schedconsole.pages.templatetags.dash import amount


@pytest.mark.parametrize(
    ("value", "resource", "shown"),
    [
        (512 * 2**20, "memory", "512Mi"),
        ("536870912", "memory", "512Mi"),
        (100_000_000, "memory", "100M"),
        (1536 * 2**20, "memory", "1536Mi"),
        (32 * 2**30, "memory", "32Gi"),
        (24051816858, "memory", "22.4Gi"),  # an estimate: no suffix divides it
        (104857601, "memory", "100Mi"),
        (1000, "memory", "1k"),
        (500, "cpu", "500m"),
        (4000, "cpu", "4"),
        (110, "pods", "110"),
        (None, "memory", ""),
        ("n/a", "memory", "n/a"),
    ],
)
def test_amount(value: object, resource: str, shown: str) -> None:
    assert amount(value, resource) == shown
