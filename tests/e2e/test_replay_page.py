"""The replay page in headless Chromium: a sweep of the openb trace (a slice) under the active
version and bin-packing started from the form, followed until both are merged, the outcomes side by
side with their charts and the pods placed differently; "apply this version" through the profiles
API (a new active version, audited); a long sweep cancelled from its page."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import PASSWORD
from tests.e2e.test_dashboard import _api, shoot
from tests.support.servers import ConsoleProcess, start_console
from tests.support.traces import MOST_ALLOCATED, need_openb

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleProcess]:
    """The embedded console (demo cluster, no trickle) reading the openb trace beside the checkout."""
    data = need_openb()
    running = start_console(
        tmp_path_factory.mktemp("var"),
        {
            "SCHEDCONSOLE_ADMIN_PASSWORD": PASSWORD,
            "SCHEDCONSOLE_REPLAY_OPENB_DATA": str(data),
            "SCHEDCONSOLE_REPLAY_WORKERS": "2",
        },
    )
    try:
        yield running
    finally:
        running.stop(20)


def test_replay_from_the_form_side_by_side_then_apply(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(console.url + "/replay/")
    page.select_option("#replay-source", "openb")
    page.fill("input[name=nodes]", "400")
    page.fill("input[name=pods]", "800")
    page.fill("input[name=samples]", "12")
    page.check("input[name=preset][value=most]")
    page.click("#replay-form button[type=submit]")
    page.wait_for_url(f"{console.url}/replay/*/")
    expect(page.locator("#replay-table code.digest")).to_have_count(2, timeout=240000)
    header = page.locator("#replay-table thead").inner_text()
    assert "v1" in header and "bin-packing" in header
    expect(page.locator("#replay-charts svg.chart")).to_have_count(7)  # 5 series (GPUs exist), histogram, nodes used
    assert "GPU fragmentation" in page.locator("#replay-charts").inner_text()
    expect(page.locator(".differences").first).to_contain_text("Placed differently: v1 → bin-packing")
    expect(page.locator(".differences tbody tr").first).to_be_visible()
    shoot(page, "replay")

    before = _api(console, "GET", "/api/profiles/")["count"]
    page.locator("button.apply[data-label=bin-packing]").click()
    expect(page.locator("#apply-result")).to_contain_text("Applied: version", timeout=20000)
    versions = _api(console, "GET", "/api/profiles/")
    assert versions["count"] == before + 1
    active = _api(console, "GET", f"/api/profiles/{next(v for v in versions['results'] if v['active'])['version']}/")
    assert active["document"]["profiles"][0]["pluginConfig"] == MOST_ALLOCATED["profiles"][0]["pluginConfig"]
    assert "replay #" in active["comment"]
    actions = [e["action"] for e in _api(console, "GET", "/api/audit/")["results"]]
    assert "replay.start" in actions and any(a.startswith("profile") for a in actions)


@pytest.mark.parametrize("where", ["replay", "jobs"])
def test_cancel_from_the_page(console: ConsoleProcess, page: Any, where: str) -> None:
    from playwright.sync_api import expect

    body = {"source": "openb", "candidates": [{"document": "default"}, {"document": MOST_ALLOCATED}], "segments": 2}
    replay = _api(console, "POST", "/api/replays/", body)
    if where == "replay":
        page.goto(console.url + replay["page"])
        page.click("#replay-cancel")
        expect(page.locator("#replay-status .job-text")).to_contain_text("cancelled", timeout=20000)
    else:
        page.goto(f"{console.url}/jobs/{replay['job']}/")
        expect(page.locator("h1")).to_contain_text(f"replay #{replay['id']}")
        page.click("#job-cancel")
        expect(page.locator("#job-status .job-text")).to_contain_text("cancelled", timeout=20000)
    assert _api(console, "GET", replay["url"])["state"] == "cancelled"
