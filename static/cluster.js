// The cluster page: create objects from YAML through POST /api/import/ (all or none).
import { $, el, errorText, send } from "./dash.js";

$("create-form")?.addEventListener("submit", async (e) => {
  e.preventDefault();
  const out = $("create-result");
  const r = await send("POST", "/api/import/", $("create-yaml").value, "application/yaml");
  if (r.ok) {
    const made = Object.entries(r.body.created).map(([kind, n]) => `${n} ${kind}`).join(", ");
    out.replaceChildren(el("span", { class: "ok" }, `Created ${made}.`), ...r.body.warnings.map((w) => el("span", { class: "muted" }, ` ${w}`)));
  } else {
    out.replaceChildren(el("span", { class: "error", role: "alert" }, errorText(r.body)));
  }
});

// Reset the simulated cluster to its starting state, after a confirmation.
$("reset-cluster")?.addEventListener("click", async () => {
  const out = $("reset-result");
  if (!confirm("Reset the simulated cluster? Every pod, node and object is deleted and the starting cluster loaded again.")) {
    out.replaceChildren(el("span", { class: "muted" }, " Not reset."));
    return;
  }
  out.replaceChildren(el("span", { class: "muted" }, " Resetting…"));
  const r = await send("POST", "/api/cluster/reset/", { confirm: true });
  const count = (byKind) => Object.entries(byKind).map(([kind, n]) => `${n} ${kind}`).join(", ") || "nothing";
  out.replaceChildren(r.ok
    ? el("span", { class: "ok" }, ` Reset: deleted ${count(r.body.deleted)}; created ${count(r.body.created)}.`)
    : el("span", { class: "error", role: "alert" }, ` Not reset: ${errorText(r.body)}`));
});
