"""The suite's shared configuration: its markers and Hypothesis profiles.

Markers (pyproject's `--strict-markers` refuses any other), set per module with `pytestmark`:

- `e2e`: drives the console in headless Chromium (Debian's, through Playwright);
- `production`: starts or reaches the production stack (PostgreSQL, Redis, uvicorn, Celery workers);
- `realcluster`: runs against a real control plane (kube-apiserver and etcd);
- `slow`: takes long (a module over about 20 seconds on the 2-core machine).

`./test.sh` runs everything (CI does); the quick loop leaves the marked modules out:
`./test.sh -m "not e2e and not production and not realcluster and not slow"`.

Hypothesis profiles: `ci`, today's example counts, and `dev`, a tenth of them (property tests give
their counts through `tests.support.examples.examples`). `HYPOTHESIS_PROFILE` chooses; without it,
`ci` when `CI=true`, else `dev`.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

MARKERS = {
    "e2e": "drives the console in headless Chromium",
    "production": "needs the production stack (PostgreSQL, Redis, uvicorn, Celery workers)",
    "realcluster": "needs a real control plane (kube-apiserver, etcd)",
    "slow": "takes long; left out of the quick loop",
}

settings.register_profile("ci", settings())
settings.register_profile("dev", max_examples=10)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI", "").lower() == "true" else "dev"))


def pytest_configure(config: pytest.Config) -> None:
    for name, meaning in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")
