"""The dashboard in headless Chromium, one main flow per page, against a running console.

Open a pending pod and read why it waits, run a what-if that fits, compare two profiles, browse
nodes at the engine's paging, preview and apply a threshold change, roll a profile back, see a
gang blocked and a preemption's timeline, call a plugin route. Each page is screenshotted and the
screenshot checked not to be blank (var/e2e-*.png; the copies the docs show are under docs/).
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.builders import pod_doc
from tests.support.servers import ConsoleProcess

pytestmark = pytest.mark.e2e

SHOTS = Path(__file__).resolve().parents[2] / "var"
DOCS = Path(__file__).resolve().parents[2] / "docs"


def _api(console: ConsoleProcess, method: str, path: str, body: dict | None = None, timeout: float = 20) -> Any:
    request = urllib.request.Request(
        console.url + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Token {console.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def _pod(name: str, namespace: str, cpu: str, priority_class: str, **spec: Any) -> dict[str, Any]:
    return pod_doc(
        name, namespace, cpu, "1Gi", image="registry.k8s.io/pause:3.10", spec={"priorityClassName": priority_class, **spec}
    )


def shoot(page: Any, name: str) -> Path:
    """Screenshot the page and check it is not blank: many distinct colours, not one flat field."""
    from PIL import Image

    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"e2e-{name}.png"
    page.screenshot(path=str(path), full_page=False)
    with Image.open(path) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 50, f"{path.name} looks blank ({len(colours)} colours)"
    top = max(count for count, _ in colours)
    assert top < 0.97 * sum(count for count, _ in colours), f"{path.name} is one flat colour"
    if os.getenv("SCHEDCONSOLE_DOCS_SHOTS"):  # refresh the copies under docs/
        with Image.open(path) as image:
            small = image.convert("RGB").resize((840, 540), Image.Resampling.LANCZOS).quantize(colors=64)
            small.save(DOCS / f"{name}.png", optimize=True)
    return path


def test_pending_pod_why_and_whatif(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    # "low" is the lowest priority in the demo: this pod cannot preempt, it waits.
    _api(console, "POST", "/api/pods/", _pod("big-0", "shop", "6", "low"))
    page.goto(console.url + "/pods/?q=shop/big-0")
    link = page.locator("#pending a", has_text="shop/big-0")
    expect(link).to_have_count(1, timeout=10000)
    link.click()
    expect(page.locator("h1")).to_contain_text("shop/big-0")
    fit = page.locator("#why .reason[data-plugin=NodeResourcesFit]")
    expect(fit).to_contain_text("rejected by NodeResourcesFit")
    advice = fit.locator(".advice").first
    expect(advice).to_contain_text("if it asked for")
    text = advice.inner_text()
    asked = re.search(r"if it asked for (\S+)", text)
    assert asked is not None, text
    assert "checked: the cycle would place it on" in text
    shoot(page, "pod-why")

    editor = page.locator("#whatif-yaml")
    editor.fill(editor.input_value().replace("cpu: '6'", f"cpu: {asked.group(1)}"))
    page.click("#whatif-run")
    result = page.locator("#whatif-result")
    expect(result.locator(".whatif-outcome")).to_contain_text("Scheduled", timeout=10000)
    expect(result.locator("table").first).to_contain_text("Unschedulable")  # the current spec, beside it
    page.locator("#whatif").scroll_into_view_if_needed()
    shoot(page, "pod-whatif")
    # Compare needs scores: a request that many nodes can take.
    editor.fill(editor.input_value().replace(f"cpu: {asked.group(1)}", "cpu: 500m"))
    page.click("#compare-run")
    expect(page.locator("#compare-result")).to_contain_text("Δ total", timeout=10000)
    expect(page.locator("#compare-result table tbody tr").first).to_be_visible()
    shoot(page, "pod-compare")
    # Nothing changed: the pod still waits with its original request.
    assert _api(console, "GET", "/api/pods/shop/big-0/")["requests"]["cpu"] == 6000


def test_whatif_reports_bad_yaml(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(console.url + "/pods/shop/big-0/")
    page.locator("#whatif-yaml").fill("kind: Pod\nmetadata: [unclosed\n")
    page.click("#whatif-run")
    expect(page.locator("#whatif-result .error")).to_contain_text("YAML", timeout=10000)


def test_overview(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(console.url + "/overview/")
    expect(page.locator("#allocation svg.heatmap > rect")).to_have_count(3 * 48)  # cells (the colour scale is a group)
    expect(page.locator(".loadaware svg.heatmap")).to_have_count(1)
    expect(page.locator(".cards")).to_contain_text("gangs waiting")
    shoot(page, "overview")


def test_nodes_filter_sort_and_node_page(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(console.url + "/nodes/")
    page.fill("input[name=q]", "topology.kubernetes.io/zone=zone-b")
    page.select_option("select[name=sort]", "-cpu")
    page.click("form.toolbar button[type=submit]")
    rows = page.locator("#nodes tbody tr")
    expect(rows).to_have_count(16)
    expect(page.locator(".pager").first).to_contain_text("1–16 of 16")
    percents = [int(t.rstrip("%")) for t in rows.locator("td:nth-child(3) .pct").all_inner_texts()]
    assert percents == sorted(percents, reverse=True)
    shoot(page, "nodes")
    rows.first.locator("a").click()
    expect(page.locator("h1")).to_contain_text("node-")
    expect(page.locator("body")).to_contain_text("LoadAwareScheduling estimate")
    expect(page.locator("body")).to_contain_text("Pods (")
    shoot(page, "node")


def test_threshold_preview_then_apply(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(console.url + "/thresholds/")
    panel = page.locator(".thresholds[data-profile=koordinator]")
    slider = panel.locator("input[data-kind=usageThresholds][data-resource=cpu]")
    assert slider.input_value() == "65"
    apply = panel.locator("button.apply")
    expect(apply).to_be_disabled()
    slider.fill("90")
    summary = panel.locator(".preview-summary")
    expect(summary).to_contain_text("→", timeout=15000)
    before, after = map(int, re.search(r"(\d+) now → (\d+) after", summary.inner_text()).groups())
    assert after > before  # a looser threshold lets more nodes pass
    expect(apply).to_be_enabled()
    shoot(page, "thresholds")
    apply.click()
    expect(panel.locator(".status")).to_contain_text("applied as version", timeout=15000)
    page.wait_for_load_state("load")
    live = _api(console, "GET", "/api/plugin-args/")
    assert live["koordinator"]["LoadAwareScheduling"]["usageThresholds"]["cpu"] == 90
    audit = _api(console, "GET", "/api/audit/")["results"]
    assert any(a["action"] == "plugin-args.apply" and a["target"] == "LoadAwareScheduling" for a in audit)


def test_profile_validation_and_rollback(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(console.url + "/profiles/")
    versions = page.locator("#versions tbody tr")
    expect(versions).to_have_count(2)  # the initial version and the threshold change
    editor = page.locator("#profile-yaml")
    editor.fill(
        editor.input_value().replace(
            "kind: KubeSchedulerConfiguration", "kind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 900"
        )
    )
    expect(page.locator("#validation")).to_contain_text("percentageOfNodesToScore", timeout=10000)
    expect(page.locator("#diff .add")).to_contain_text("percentageOfNodesToScore: 900")
    shoot(page, "profiles-invalid")
    page.locator("button.rollback", has_text="Roll back to v1").click()
    expect(page.locator(".messages")).to_contain_text("Version 1 is active.")
    expect(page.locator("#versions tr.active")).to_contain_text("v1")
    shoot(page, "profiles")
    assert _api(console, "GET", "/api/plugin-args/")["koordinator"]["LoadAwareScheduling"]["usageThresholds"]["cpu"] == 65


def test_gangs(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(console.url + "/gangs/")
    huge = page.locator("section.gang[id='ml/train-huge']")
    expect(huge).to_contain_text("Blocked by")
    expect(huge).to_contain_text("rejected by")
    expect(page.locator("section.gang[id='ml/train-a']")).to_contain_text("bound: 4")
    shoot(page, "gangs")


def test_preemption_timeline(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    _api(console, "POST", "/api/pods/", _pod("urgent-0", "shop", "6", "critical"))
    page.goto(console.url + "/preemption/")
    story = page.locator("section.story", has_text="shop/urgent-0")
    for _ in range(20):
        if story.count():
            break
        page.wait_for_timeout(500)
        page.reload()
    # Each API call as the engine recorded it: the nomination patch, the victims' condition and delete.
    for _ in range(20):
        if "delete" in story.inner_text() and "in progress" not in story.inner_text():
            break
        page.wait_for_timeout(500)
        page.reload()
    expect(story).to_contain_text("nominatedNodeName patch")
    expect(story).to_contain_text("DisruptionTarget patch")
    expect(story.locator("tr.call", has_text="delete").first).to_contain_text("finished")
    shoot(page, "preemption")


def test_plugin_api_browser(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(console.url + "/plugin-api/")
    route = page.locator("tr.route[data-path='/apis/v1/nodes/:nodeName']")
    route.locator("input[data-param=nodeName]").fill("node-07")
    route.locator("button.call").click()
    expect(page.locator("#answer-status")).to_contain_text("→ 200")
    expect(page.locator("#answer")).to_contain_text('"name": "node-07"')
    shoot(page, "plugin-api")


def test_live_tabs_search_and_export(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(console.url + "/")
    expect(page.locator("#status")).to_have_text("live", timeout=10000)
    page.locator("#profile-tabs button[data-profile=bin-packing]").click()
    _api(console, "POST", "/api/pods/", _pod("tab-other", "shop", "100m", "low"))
    _api(console, "POST", "/api/pods/", _pod("tab-packed", "batch", "100m", "low", schedulerName="bin-packing"))
    row = page.locator("tr.attempt[data-pod='batch/tab-packed']")
    expect(row).to_have_count(1, timeout=10000)
    expect(page.locator("tr.attempt[data-pod='shop/tab-other']")).to_have_count(0)
    expect(row.locator("td.latency")).to_contain_text("Filter")
    # Per-plugin latency: time every attempt, then each plugin's milliseconds head its score column.
    page.select_option("#timing", "1")
    expect(page.locator("#timing-confirmed")).to_contain_text("every 1")
    _api(console, "POST", "/api/pods/", _pod("tab-timed", "batch", "100m", "low", schedulerName="bin-packing"))
    timed = page.locator("tr.attempt[data-pod='batch/tab-timed']")
    expect(timed).to_have_count(1, timeout=10000)
    expect(timed.locator("table.mini th .plugin-ms").first).to_contain_text(" ms")
    expect(timed.locator("td.latency .plugin-ms")).to_contain_text("Fit")
    page.fill("#search", "no-such-pod")
    expect(row).to_be_hidden()
    page.fill("#search", "tab-packed")
    expect(row).to_be_visible()
    with page.expect_download() as download:
        page.click("#export-csv")
    text = Path(download.value.path()).read_text()
    assert text.startswith("at,pod,profile,outcome,node,feasibleNodes,scoredNode,total")
    assert "batch/tab-packed" in text
    page.fill("#search", "batch/tab")
    shoot(page, "live")


def test_jobs_import_and_benchmark_progress(console: ConsoleProcess, page: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    docs = [_pod(f"bulk-{i}", "shop", "10m", "low") for i in range(200)]
    upload = tmp_path / "bulk.yaml"
    upload.write_text("\n---\n".join(json.dumps(d) for d in docs))
    page.goto(console.url + "/jobs/")
    page.set_input_files("#import-file", str(upload))
    page.click("#import-form button[type=submit]")
    expect(page.locator("h1")).to_contain_text("Import #", timeout=10000)
    expect(page.locator("#job-status")).to_contain_text("done", timeout=30000)
    expect(page.locator("#job-status")).to_contain_text("200 of 200")
    expect(page.locator("table.figures")).to_contain_text("Pod")
    page.goto(console.url + "/jobs/")
    page.select_option("#bench-form select[name=workload]", "SchedulingBasic")
    page.fill("#bench-form input[name=nodes]", "500")
    page.fill("#bench-form input[name=initPods]", "100")
    page.fill("#bench-form input[name=pods]", "4000")
    page.click("#bench-form button[type=submit]")
    expect(page.locator("h1")).to_contain_text("Bench #", timeout=10000)
    bar = page.locator("#job-status .bar")
    expect(page.locator("#job-status")).to_contain_text("measured pods", timeout=60000)
    for _ in range(100):  # a bar part-way along for the screenshot
        if float(bar.get_attribute("aria-valuenow") or "0") >= 20 or "taken" in page.locator("#job-status").inner_text():
            break
        page.wait_for_timeout(100)
    shoot(page, "job-running")
    assert 0 <= float(bar.get_attribute("aria-valuenow") or "0") <= 100
    expect(page.locator("table.figures")).to_contain_text("pods per second", timeout=120000)
    expect(page.locator("#job-status")).to_contain_text("4000 of 4000")
    shoot(page, "job-bench")
    page.goto(console.url + "/jobs/")
    expect(page.locator("#jobs")).to_contain_text("bulk.yaml")
    shoot(page, "jobs")


def test_keyboard_navigation(console: ConsoleProcess, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(console.url + "/nodes/")
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(page.locator("#nodes tbody tr").nth(1)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_contain_text("node-01")
    page.keyboard.press("g")
    page.keyboard.press("o")
    expect(page).to_have_url(console.url + "/overview/")
    page.keyboard.press("g")
    page.keyboard.press("n")
    expect(page).to_have_url(console.url + "/nodes/")
    page.keyboard.press("/")
    expect(page.locator("input[name=q]")).to_be_focused()
