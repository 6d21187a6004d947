"""The live page in headless Chromium: log in, set top-N, create a pod, see its row, open its detail."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import PASSWORD, chromium
from tests.e2e.test_dashboard import _api
from tests.support.servers import ConsoleProcess

pytestmark = pytest.mark.e2e

SHOTS = Path(__file__).resolve().parents[2] / "var"


def test_live_page_end_to_end(console: ConsoleProcess) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1500, "height": 950})
        page.goto(console.url + "/")
        expect(page).to_have_url(console.url + "/accounts/login/?next=/")
        page.fill("input[name=username]", "admin")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        expect(page.locator("#status")).to_have_text("live", timeout=10000)

        page.fill("#topn", "10")
        page.click("#topn-form button[type=submit]")
        expect(page.locator("#topn-confirmed b")).to_have_text("10")
        assert _api(console, "GET", "/api/debug-flags/", timeout=10)["debugTopNScores"] == 10

        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "e2e-web", "namespace": "shop"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "registry.k8s.io/nginx:1.27",
                        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}},
                    }
                ]
            },
        }
        _api(console, "POST", "/api/pods/", pod, timeout=10)
        row = page.locator("tr.attempt[data-pod='shop/e2e-web']")
        expect(row).to_have_count(1, timeout=10000)
        expect(row.locator("td").nth(3)).to_have_text("Scheduled")
        mini = row.locator("table.mini")
        expect(mini.locator("thead th")).to_contain_text(["Node", "Score", "TaintToleration", "Fit"])
        assert mini.locator("tbody tr").count() == 10
        page.screenshot(path=str(SHOTS / "e2e-live.png"), full_page=False)

        row.click()
        detail = page.locator("#detail")
        expect(detail.locator("h2")).to_have_text("shop/e2e-web · attempt 1", timeout=10000)
        expect(detail).to_contain_text("Scores (normalized, before weights)")
        expect(detail.locator("table.detail-table").first.locator("thead th")).to_contain_text(["Node", "Total", "Fit"])
        page.screenshot(path=str(SHOTS / "e2e-detail.png"), full_page=False)
        detail.locator("a", has_text="Open the full attempt page").click()
        expect(page.locator("h1")).to_contain_text("shop/e2e-web")
        expect(page.locator("table.scores")).to_be_visible()
        browser.close()
