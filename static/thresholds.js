// Threshold sliders: preview (dry run through the real cycle) before Apply is allowed.
import { el, errorText, send, table } from "./dash.js";

function argsOf(panel) {
  const args = JSON.parse(panel.dataset.configured || "{}");
  for (const input of panel.querySelectorAll("input[type=range]")) {
    const value = Number(input.value);
    if (input.dataset.kind === "dominantResourceWeight") args.dominantResourceWeight = value;
    else args[input.dataset.kind] = { ...(args[input.dataset.kind] || {}), [input.dataset.resource]: value };
  }
  return args;
}

function showPreview(panel, body) {
  const p = body.preview;
  const n = p.nodes;
  const moved = p.pods.filter((row) => row.now !== row.after);
  panel.querySelector(".preview-result").replaceChildren(
    el("p", { class: "preview-summary" }, `Nodes within the thresholds: ${n.passingNow} now → ${n.passingAfter} after (of ${n.reported} with a NodeMetric; ${n.newlyPassing} newly pass, ${n.newlyFailing} newly fail)${n.expired ? `; ${n.expired} NodeMetric report(s) expired: stale estimates, not counted as passing` : ""}.`),
    el("p", {}, `Of the last ${p.pods.length} pods of ${p.profile}, ${p.podsChanged} would go to a different node.`),
    moved.length ? table(["Pod", "Node now", "Node after", "Feasible now → after"], moved.slice(0, 25).map((r) => [r.pod, r.now ?? "unschedulable", r.after ?? "unschedulable", `${r.feasibleNow} → ${r.feasibleAfter}`])) : el("p", { class: "muted" }, "No pod's node changes."),
  );
}

for (const panel of document.querySelectorAll(".thresholds")) {
  const status = panel.querySelector(".status");
  const apply = panel.querySelector(".apply");
  let previewed = null;
  let timer = null;

  async function preview() {
    const args = argsOf(panel);
    status.textContent = "previewing…";
    apply.disabled = true;
    const r = await send("PUT", "/api/plugin-args/LoadAwareScheduling/?dry_run=true", { args, profile: panel.dataset.profile });
    if (!r.ok) { status.textContent = ""; panel.querySelector(".preview-result").replaceChildren(el("p", { class: "error", role: "alert" }, errorText(r.body))); return; }
    previewed = JSON.stringify(args);
    status.textContent = "preview ready";
    apply.disabled = false;
    showPreview(panel, r.body);
  }

  for (const input of panel.querySelectorAll("input[type=range]")) {
    input.addEventListener("input", () => {
      input.nextElementSibling.textContent = input.dataset.kind === "usageThresholds" ? `${input.value}%` : input.value;
      apply.disabled = true;
      clearTimeout(timer);
      timer = setTimeout(preview, 400);
    });
  }
  panel.querySelector(".preview").addEventListener("click", preview);
  apply.addEventListener("click", async () => {
    const args = argsOf(panel);
    if (JSON.stringify(args) !== previewed) { await preview(); return; }
    status.textContent = "applying…";
    const r = await send("PUT", "/api/plugin-args/LoadAwareScheduling/", { args, profile: panel.dataset.profile });
    if (!r.ok) { status.textContent = errorText(r.body); return; }
    status.textContent = `applied as version ${r.body.version}`;
    apply.disabled = true;
    setTimeout(() => location.reload(), 800);
  });
}
