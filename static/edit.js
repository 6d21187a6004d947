// Editing an object of the simulated cluster from its page (operators): Apply sends the edited YAML
// (PUT, replacing the pod or node), Delete asks first, then deletes and goes back to the list.
import { $, el, errorText, send } from "./dash.js";

const panel = $("edit");
if (panel) {
  const out = $("edit-result");
  const say = (cls, text) => out.replaceChildren(el("span", { class: cls, role: cls === "error" ? "alert" : "status" }, text));
  $("edit-apply").addEventListener("click", async () => {
    say("muted", "Applying…");
    const r = await send("PUT", panel.dataset.url, $("edit-yaml").value, "application/yaml");
    if (!r.ok) return say("error", `Not applied: ${errorText(r.body)}`);
    say("ok", "Applied.");
    setTimeout(() => location.reload(), 600); // the page shows the object as it is now
  });
  $("edit-delete").addEventListener("click", async () => {
    if (!confirm(`Delete ${panel.dataset.what}? This cannot be undone.`)) return say("muted", "Not deleted.");
    const r = await send("DELETE", panel.dataset.url);
    if (!r.ok) return say("error", `Not deleted: ${errorText(r.body)}`);
    const pods = r.body.podsDeleted ?? [];
    say("ok", `Deleted${pods.length ? `, with ${pods.length} pod${pods.length === 1 ? "" : "s"}` : ""}.`);
    setTimeout(() => { location.href = panel.dataset.gone; }, 800);
  });
}
