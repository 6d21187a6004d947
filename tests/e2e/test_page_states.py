"""Page states in headless Chromium, at 1440 px and at 390 px (a phone): a pod of another
scheduler, advice its own check refutes, a refused profile Apply, a benchmark shape that cannot fit,
a benchmark that ended no-progress,
the live page's drawer, outcome filter and stored rows, the overview's scales, the audit page, a pod that
came bound, the gangs' match policy, editing and resetting the simulated cluster, and
no horizontal scroll on a phone."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.conftest import login
from tests.e2e.test_dashboard import _api, shoot
from tests.support.builders import pod_doc
from tests.support.servers import ConsoleProcess

pytestmark = pytest.mark.e2e

WIDTHS = {"desktop": (1440, 900), "phone": (390, 844)}


@pytest.fixture(scope="module")
def pages(console: ConsoleProcess, browser: Any) -> dict[str, Any]:
    """A logged-in page per width; the pods the tests read are created once."""
    _api(console, "POST", "/api/pods/", pod_doc("theirs", "default", "100m", "64Mi", spec={"schedulerName": "volcano"}))
    _api(console, "POST", "/api/pods/", pod_doc("big-17", "default", "17", "1Gi", spec={"schedulerName": "koordinator"}))
    out = {}
    for name, (width, height) in WIDTHS.items():
        out[name] = login(browser, console, width, height)
    return out


def _no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{page.url} is {width} px wide"


@pytest.mark.parametrize("width", WIDTHS)
def test_a_pod_of_another_scheduler(console: ConsoleProcess, pages: dict[str, Any], width: str) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    response = page.goto(console.url + "/pods/default/theirs/")
    assert response is not None and response.status == 200  # it was a 500
    expect(page.locator("#why h2")).to_have_text("Another scheduler's pod")
    expect(page.locator("#other-scheduler")).to_contain_text("volcano")
    if width == "phone":
        _no_sideways_scroll(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_advice_its_check_refutes_says_so(console: ConsoleProcess, pages: dict[str, Any], width: str) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    page.goto(console.url + "/pods/default/big-17/")
    fit = page.locator("#why .reason[data-plugin=NodeResourcesFit] .advice.not-enough").first
    expect(fit).to_contain_text("but that alone would not be enough")
    expect(fit.locator(".then .advice.enough")).to_contain_text("usage threshold were")
    expect(fit.locator(".then .advice.enough")).to_contain_text("checked: the cycle would place it on")
    colour = fit.evaluate("e => getComputedStyle(e).color")
    assert colour == "rgb(161, 92, 7)", colour  # amber, not the green of a fix
    if width == "desktop":
        shoot(page, "pod-why")


@pytest.fixture(scope="module")
def blocked(console: ConsoleProcess, pages: dict[str, Any]) -> None:
    """Two pods the why page advises on: `shy` asks 500m more CPU than the freest untainted node has
    and must not share a node with `app=anchor` pods, one of which runs there (so asking less would
    not be enough: InterPodAffinity, checked after NodeResourcesFit, still rejects it); `gpu-wanted`
    selects the GPU nodes, which are tainted, and tolerates nothing."""
    nodes = _api(console, "GET", "/api/nodes/?limit=100")["results"]
    free = {
        n["name"]: n["allocatable"]["cpu"] - n["requested"]["cpu"]
        for n in nodes
        if not any(t["effect"] == "NoSchedule" for t in n["taints"])
    }
    most = max(free.values())
    for name in [n for n, f in free.items() if f == most]:
        anchor = pod_doc(f"anchor-{name}", "default", spec={"nodeName": name}, labels={"app": "anchor"})
        _api(console, "POST", "/api/pods/", anchor)
    away = {"labelSelector": {"matchLabels": {"app": "anchor"}}, "topologyKey": "kubernetes.io/hostname"}
    spec = {
        "preemptionPolicy": "Never",
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [away]}},
    }
    _api(console, "POST", "/api/pods/", pod_doc("shy", "default", f"{most + 500}m", "64Mi", spec=spec))
    gpu = {"preemptionPolicy": "Never", "nodeSelector": {"accelerator": "gpu"}}
    _api(console, "POST", "/api/pods/", pod_doc("gpu-wanted", "default", "100m", "64Mi", spec=gpu))


@pytest.mark.parametrize("width", WIDTHS)
def test_refuted_advice_names_the_blocker_left_and_advises_on_it(
    console: ConsoleProcess, pages: dict[str, Any], blocked: None, width: str
) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    page.goto(console.url + "/pods/default/shy/")
    fit = page.locator("#why .reason[data-plugin=NodeResourcesFit] .advice.not-enough").first
    expect(fit).to_contain_text("500m more than the most any node has free")
    expect(fit).to_contain_text(
        "but that alone would not be enough: checked, the cycle still rejects it (InterPodAffinity on 1 node)"
    )
    expect(fit.locator(".then .advice")).to_contain_text(
        "1 node rejected by InterPodAffinity: node(s) didn't match pod anti-affinity rules"
    )
    assert fit.evaluate("e => getComputedStyle(e).color") == "rgb(161, 92, 7)"  # amber
    taint = page.locator("#why .reason[data-plugin=TaintToleration] .advice")
    expect(taint.first).to_contain_text("carry the taint dedicated=gpu:NoSchedule, which it does not tolerate")
    if width == "phone":
        _no_sideways_scroll(page)
    page.goto(console.url + "/pods/default/gpu-wanted/")
    affinity = page.locator("#why .reason[data-plugin=NodeAffinity] .advice")
    expect(affinity.first).to_contain_text("45 nodes do not match its nodeSelector accelerator=gpu")
    expect(page.locator("#why .reason[data-plugin=TaintToleration] .advice").first).to_contain_text(
        "3 nodes carry the taint dedicated=gpu:NoSchedule"
    )
    if width == "phone":
        _no_sideways_scroll(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_refused_apply_keeps_the_editor_and_apply_waits_for_valid_text(
    console: ConsoleProcess, pages: dict[str, Any], width: str
) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    page.goto(console.url + "/profiles/")
    editor = page.locator("#profile-yaml")
    valid = editor.input_value()
    expect(page.locator("#validation")).to_contain_text("Valid", timeout=10000)
    expect(page.locator("#apply")).to_be_enabled()
    editor.fill(
        valid.replace("kind: KubeSchedulerConfiguration", "kind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 900")
    )
    expect(page.locator("#validation")).to_contain_text("Invalid", timeout=10000)
    expect(page.locator("#apply")).to_be_disabled()  # it stayed enabled beside "Invalid"
    page.fill("input[name=comment]", "score fewer nodes")
    page.evaluate("document.getElementById('profile-form').submit()")  # as a second tab or a stale page would
    expect(page.locator(".messages")).to_contain_text("Not applied")
    expect(page.locator("#profile-yaml")).to_have_value(editor.input_value())
    assert "percentageOfNodesToScore: 900" in editor.input_value()
    expect(page.locator("#validation")).to_contain_text("Invalid — percentageOfNodesToScore")
    expect(page.locator("input[name=comment]")).to_have_value("score fewer nodes")
    expect(page.locator("#diff .add")).to_contain_text("percentageOfNodesToScore: 900")  # it said No difference
    expect(page.locator("#apply")).to_be_disabled()
    if width == "desktop":
        shoot(page, "profiles-invalid")
    else:
        _no_sideways_scroll(page)
    editor.fill(valid)
    expect(page.locator("#validation")).to_contain_text("Valid", timeout=10000)
    expect(page.locator("#apply")).to_be_enabled()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_benchmark_form_refuses_a_shape_that_cannot_fit(console: ConsoleProcess, pages: dict[str, Any], width: str) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    page.goto(console.url + "/jobs/")
    page.select_option("#bench-form select[name=workload]", "SchedulingBasic")
    page.fill("#bench-form input[name=nodes]", "2")
    page.fill("#bench-form input[name=initPods]", "0")
    page.fill("#bench-form input[name=pods]", "1000")
    page.click("#bench-form button[type=submit]")
    expect(page.locator("#job-error")).to_contain_text("2 nodes of 4 CPU hold at most 80 pods")
    expect(page.locator("#job-error")).to_contain_text("use at least 25 nodes")
    _no_sideways_scroll(page)
    # Fits by CPU requests (400 pods), not under LoadAware's thresholds: the run bound 197 of 400.
    page.select_option("#bench-form select[name=workload]", "LoadAware")
    page.fill("#bench-form input[name=nodes]", "10")
    page.fill("#bench-form input[name=pods]", "400")
    page.click("#bench-form button[type=submit]")
    expect(page.locator("#job-error")).to_contain_text("10 nodes hold at most 197 pods under LoadAwareScheduling")
    expect(page.locator("#job-error")).to_contain_text("use at least 21 nodes")
    assert re.search(r"/jobs/$", page.url)  # nothing started
    _no_sideways_scroll(page)


AMBER = "rgb(161, 92, 7)"  # --warn


@pytest.mark.parametrize("width", WIDTHS)
def test_a_benchmark_that_ended_no_progress_says_so_in_amber(console: ConsoleProcess, pages: dict[str, Any], width: str) -> None:
    # It read "done · all measured pods taken · 10000 of 10000" beside "measured pods bound 3000".
    from playwright.sync_api import expect

    page = pages[width]
    page.goto(console.url + "/jobs/")
    page.select_option("#bench-form select[name=workload]", "cluster-copy")  # the demo's copy: big-17 fits no node
    page.click("#bench-form button[type=submit]")
    page.wait_for_url(re.compile(r"/jobs/\d+/$"))
    job_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
    expect(page.locator("#incomplete")).to_be_visible(timeout=120_000)  # the page reloads when the job ends
    job = _api(console, "GET", f"/api/jobs/{job_id}/")
    result = job["result"]
    left = result["pods"] - result["scheduled"]
    assert result["stop"] == "no-progress" and job["complete"] is False and left > 0
    line = f"done · ended no-progress: {left} measured pod{'s' if left != 1 else ''} not bound · {result['scheduled']} of {result['pods']}"
    expect(page.locator("#job-status .job-text")).to_have_text(line)
    expect(page.locator("#incomplete")).to_contain_text(f"with {result['scheduled']} of {result['pods']} measured pods bound")
    assert page.locator("#incomplete").evaluate("e => getComputedStyle(e).borderLeftColor") == AMBER
    assert page.locator("#job-status .fill").evaluate("e => getComputedStyle(e).backgroundColor") == AMBER
    assert page.locator("#job-status .job-text").evaluate("e => getComputedStyle(e).color") == AMBER  # an empty bar shows none
    bound_row = page.locator("table.figures tr", has=page.locator("th", has_text=re.compile("^measured pods bound$")))
    expect(bound_row.locator("td")).to_have_text(str(result["scheduled"]))
    assert "pods taken" not in page.inner_text("main") and "all measured pods" not in page.inner_text("main")
    _no_sideways_scroll(page)
    page.goto(console.url + "/jobs/")
    row = page.locator("#jobs tr", has=page.locator(f'a[href="/jobs/{job_id}/"]'))
    expect(row.locator(".job-text")).to_have_text(line)
    assert row.locator(".fill").evaluate("e => getComputedStyle(e).backgroundColor") == AMBER
    assert row.locator(".job-text").evaluate("e => getComputedStyle(e).color") == AMBER
    _no_sideways_scroll(page)
    shoot(page, f"jobs-no-progress-{width}")


@pytest.mark.parametrize("width", WIDTHS)
def test_live_page_drawer_groups_filter_and_stored_rows(console: ConsoleProcess, pages: dict[str, Any], width: str) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    page.goto(console.url + "/")
    stored = page.locator("#attempts tr.attempt.stored")
    expect(stored.first).to_be_visible()  # the table started empty
    expect(page.locator("#stored-note")).to_be_visible()
    page.select_option("#f-outcome", "Unschedulable")
    shown = page.locator("#attempts tr.attempt:visible")
    expect(shown.first).to_be_visible()
    assert set(shown.evaluate_all("rows => rows.map(r => r.dataset.outcome)")) == {"Unschedulable"}
    table_width = page.locator("#attempts").bounding_box()["width"]
    shown.first.click()
    drawer = page.locator("#detail")
    expect(drawer.locator("h2")).to_contain_text("attempt")
    assert page.locator("#attempts").bounding_box()["width"] == table_width  # it squeezed the table
    groups = drawer.locator(".detail-table.text tbody tr")
    expect(groups.first).to_contain_text("nodes:")
    expect(groups.first).to_contain_text(" … ")  # numbered names as ranges, as the attempt page writes them
    assert groups.count() < 10  # grouped, not one row per node of 48
    # Every column of the groups, Reasons last, lies inside the drawer (the nodes' names on one line
    # made the table 2051 px wide in a 527 px drawer: Code and Reasons were cut off).
    table = drawer.locator(".detail-table.text")
    assert table.evaluate("t => t.scrollWidth <= t.clientWidth"), table.evaluate("t => [t.scrollWidth, t.clientWidth]")
    box, reasons = drawer.bounding_box(), groups.first.locator("td").last.bounding_box()
    assert box is not None and reasons is not None
    assert box["x"] <= reasons["x"] and reasons["x"] + reasons["width"] <= box["x"] + box["width"], (box, reasons)
    expect(groups.first.locator("td").last).to_be_in_viewport()
    if width == "phone":
        _no_sideways_scroll(page)
    if width == "desktop":
        shoot(page, "live")
    page.keyboard.press("Escape")
    expect(drawer).to_be_hidden()
    page.select_option("#f-outcome", "")


@pytest.mark.parametrize("path", ["/", "/nodes/", "/overview/", "/pods/", "/audit/", "/profiles/"])
def test_no_sideways_scroll_on_a_phone(console: ConsoleProcess, pages: dict[str, Any], path: str) -> None:
    from playwright.sync_api import expect

    page = pages["phone"]
    page.goto(console.url + path)
    expect(page.locator("main")).to_be_visible()
    _no_sideways_scroll(page)  # live was 515 px, nodes 908, overview 454
    nav = page.locator("#main-nav")
    expect(nav).to_be_hidden()  # the 14 links stacked before any content
    page.click(".menu-toggle")
    expect(nav).to_be_visible()
    _no_sideways_scroll(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_overview_says_since_when_and_draws_its_scales(console: ConsoleProcess, pages: dict[str, Any], width: str) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    page.goto(console.url + "/overview/")
    expect(page.locator("#since")).to_contain_text("Counters since the engine started")
    expect(page.locator("#allocation g.colour-scale")).to_contain_text("% of allocatable requested")
    expect(page.locator("svg.series text.unit").first).to_be_attached()
    if width == "desktop":
        shoot(page, "overview")
    else:
        _no_sideways_scroll(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_attempt_links_its_pod_and_the_audit_page_lists_changes(
    console: ConsoleProcess, pages: dict[str, Any], width: str
) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    attempts = _api(console, "GET", "/api/pods/ml/train-huge-0/attempts/")["results"]
    page.goto(console.url + f"/attempts/{attempts[0]['id']}/")
    page.locator("h1 a").click()
    expect(page).to_have_url(console.url + "/pods/ml/train-huge-0/")
    page.goto(console.url + "/audit/")
    expect(page.locator("#audit")).to_contain_text("pod.create")


@pytest.mark.parametrize("width", WIDTHS)
def test_create_objects_from_yaml_and_export_the_cluster(console: ConsoleProcess, pages: dict[str, Any], width: str) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    page.goto(console.url + "/cluster/")
    editor = page.locator("#create-yaml")
    editor.fill(editor.input_value().replace("name: my-pod", f"name: made-on-{width}"))
    page.click("#create-form button[type=submit]")
    expect(page.locator("#create-result")).to_have_text("Created 1 Pod.")
    assert _api(console, "GET", f"/api/pods/default/made-on-{width}/")["name"] == f"made-on-{width}"
    page.click("#create-form button[type=submit]")  # the same again: refused by name, nothing created
    expect(page.locator("#create-result .error")).to_contain_text("already exists")
    with page.expect_download() as download:
        page.click("#export")
    assert download.value.suggested_filename == "cluster.yaml"
    if width == "phone":
        _no_sideways_scroll(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_pod_that_came_bound_and_the_gangs_match_policy(console: ConsoleProcess, pages: dict[str, Any], width: str) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    bound = [p for p in _api(console, "GET", "/api/pods/?phase=Running&limit=300")["results"] if p["node"]]
    seeded = next(p for p in bound if _api(console, "GET", f"/api/pods/{p['namespace']}/{p['name']}/attempts/")["count"] == 0)
    page.goto(console.url + f"/pods/{seeded['namespace']}/{seeded['name']}/")
    expect(page.locator("#why")).to_contain_text("it came bound")
    expect(page.locator("main")).not_to_contain_text("Its attempts below")  # then "No attempt stored yet"
    expect(page.locator("main")).not_to_contain_text("No attempt stored yet")
    if width == "phone":
        _no_sideways_scroll(page)
    page.goto(console.url + "/gangs/")
    heading = page.locator("main h2 small").first
    expect(heading).to_contain_text("match policy")  # a policy, beside the state it is not
    expect(heading.locator(".tag")).to_have_text(re.compile(r"^(satisfied|not yet satisfied)$"))
    if width == "phone":
        _no_sideways_scroll(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_pages_write_amounts_as_kubernetes_does_and_no_python_reprs(
    console: ConsoleProcess, pages: dict[str, Any], width: str
) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    for path in ("/thresholds/", "/jobs/", "/nodes/node-00/", "/pods/", "/pods/default/big-17/"):
        page.goto(console.url + path)
        expect(page.locator("main")).to_be_visible()
        text = page.locator("main").inner_text()
        assert "{'" not in text and "': " not in text, (path, "a Python dict repr")  # thresholds and jobs had them
        assert not re.search(r"cpu=\d+\.\d", text), (path, "CPU as a fraction")  # cpu=0.5 beside cpu=250m
        if width == "phone" and path in ("/nodes/node-00/", "/pods/"):
            _no_sideways_scroll(page)


def _viewer_page(console: ConsoleProcess, browser: Any, width: str) -> Any:
    """A page logged in as a user in the viewer group only (made once)."""
    console.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import Group, User\n"
        "u, made = User.objects.get_or_create(username='vera')\n"
        "u.set_password('viewer-pass-123'); u.save(); u.groups.add(Group.objects.get_or_create(name='viewer')[0])",
    )
    w, h = WIDTHS[width]
    page = browser.new_page(viewport={"width": w, "height": h})
    page.goto(console.url + "/accounts/login/")
    page.fill("input[name=username]", "vera")
    page.fill("input[name=password]", "viewer-pass-123")
    page.click("button[type=submit]")
    page.wait_for_url(console.url + "/")
    return page


@pytest.mark.parametrize("width", WIDTHS)
def test_edit_and_delete_a_pod_and_a_node_from_their_pages(
    console: ConsoleProcess, pages: dict[str, Any], browser: Any, width: str
) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    name = f"edit-me-{width}"
    _api(console, "POST", "/api/pods/", pod_doc(name, "default", "100m", "64Mi", spec={"preemptionPolicy": "Never"}))
    page.goto(console.url + f"/pods/default/{name}/")
    editor = page.locator("#edit-yaml")
    editor.fill(editor.input_value().replace("cpu: 100m", "cpu: 300m"))
    page.click("#edit-apply")
    expect(page.locator("#edit-result")).to_contain_text("Applied.")
    page.wait_for_load_state()
    expect(page.locator("#edit-yaml")).to_contain_text("cpu: 300m", timeout=10000)  # reloaded: the pod as it is now
    assert _api(console, "GET", f"/api/pods/default/{name}/")["requests"]["cpu"] == 300
    editor.fill(editor.input_value().replace(f"name: {name}", "name: renamed", 1))
    page.click("#edit-apply")
    expect(page.locator("#edit-result .error")).to_contain_text("Not applied: metadata.name: the name cannot change")
    if width == "phone":
        _no_sideways_scroll(page)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#edit-delete")
    expect(page).to_have_url(console.url + "/pods/", timeout=10000)
    assert name not in {p["name"] for p in _api(console, "GET", "/api/pods/?namespace=default&limit=1000")["results"]}

    node = f"spare-{width}"
    _api(console, "POST", "/api/import/", {"apiVersion": "v1", "kind": "List", "items": [_node(node)]})
    _api(console, "POST", "/api/pods/", pod_doc(f"on-{node}", "default", "100m", "64Mi", spec={"nodeName": node}))
    page.goto(console.url + f"/nodes/{node}/")
    editor = page.locator("#edit-yaml")
    editor.fill(editor.input_value().replace("  labels:\n", "  labels:\n    edited: 'yes'\n", 1))
    page.click("#edit-apply")
    expect(page.locator("#edit-result")).to_contain_text("Applied.")
    expect(page.locator("#edit-yaml")).to_contain_text("edited: 'yes'", timeout=10000)
    assert _api(console, "GET", f"/api/nodes/{node}/")["labels"]["edited"] == "yes"
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("#edit-delete")
    expect(page.locator("#edit-result")).to_contain_text("Not deleted.")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#edit-delete")
    expect(page.locator("#edit-result")).to_contain_text("Deleted, with 1 pod.")
    expect(page).to_have_url(console.url + "/nodes/", timeout=10000)
    if width == "phone":
        _no_sideways_scroll(page)
    audit = {e["action"] for e in _api(console, "GET", "/api/audit/?limit=50")["results"]}
    assert {"pod.replace", "pod.delete", "node.replace", "node.delete"} <= audit

    viewer = _viewer_page(console, browser, width)
    for path in ("/pods/default/theirs/", "/nodes/node-00/", "/cluster/"):
        viewer.goto(console.url + path)
        expect(viewer.locator("main")).to_be_visible()
        assert viewer.locator("#edit, #reset-cluster").count() == 0, path  # operators only
    viewer.close()


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


# Last in the module: it puts the demo cluster back as it started.
@pytest.mark.parametrize("width", WIDTHS)
def test_reset_the_cluster_after_a_confirmation(console: ConsoleProcess, pages: dict[str, Any], width: str) -> None:
    from playwright.sync_api import expect

    page = pages[width]
    _api(console, "POST", "/api/pods/", pod_doc(f"before-reset-{width}", "default", "100m", "64Mi"))
    page.goto(console.url + "/cluster/")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("#reset-cluster")
    expect(page.locator("#reset-result")).to_contain_text("Not reset.")
    assert _api(console, "GET", f"/api/pods/default/before-reset-{width}/")["name"] == f"before-reset-{width}"
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#reset-cluster")
    expect(page.locator("#reset-result")).to_contain_text("Reset: deleted", timeout=30000)
    expect(page.locator("#reset-result")).to_contain_text("48 Node")
    assert _api(console, "GET", "/api/nodes/?limit=1")["count"] == 48
    pods = {p["name"] for p in _api(console, "GET", "/api/pods/?namespace=default&limit=1000")["results"]}
    assert f"before-reset-{width}" not in pods and "theirs" not in pods
    if width == "phone":
        _no_sideways_scroll(page)
    entry = _api(console, "GET", "/api/audit/?action=cluster.reset")["results"][0]
    assert entry["user"] == "admin" and entry["after"]["created"]["Node"] == 48
