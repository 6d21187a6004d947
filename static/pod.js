// The pod page: what-if on an edited spec (no side effects) and the same spec under two profiles.
import { $, el, errorText, nest, send, table } from "./dash.js";

const editor = $("whatif-yaml");
const original = editor.defaultValue;

function outcome(entry) {
  return el("span", {}, el("b", { class: `outcome ${entry.outcome}` }, entry.outcome), entry.node ? ` on ${entry.node}` : "", ` · ${entry.feasibleNodes} feasible`);
}

function topNodes(entry) {
  const nodes = Object.keys(entry.totals).sort((a, b) => entry.totals[b] - entry.totals[a]);
  return nodes.length ? table(["Node", "Total"], nodes.map((n) => [n, entry.totals[n]])) : el("p", { class: "muted" }, "No node was scored.");
}

async function runWhatIf() {
  const out = $("whatif-result");
  out.replaceChildren(el("p", { class: "muted" }, "Running the cycle…"));
  const profile = $("whatif-profile").value;
  let body = nest("pod", editor.value) + nest("original", original);
  if (profile) body += `profile: ${JSON.stringify(profile)}\n`;
  const r = await send("POST", "/api/whatif/diff/", body, "application/yaml");
  if (!r.ok) {
    out.replaceChildren(el("p", { class: "error", role: "alert" }, errorText(r.body)));
    return;
  }
  const { result, base, diff } = r.body;
  const parts = [el("p", { class: "whatif-outcome" }, "Edited spec: ", outcome(result))];
  if (diff) {
    const rows = [["outcome", ...diff.outcome], ["node", ...diff.node.map((n) => n ?? "—")], ["feasible nodes", ...diff.feasibleNodes], ["rejected nodes", ...diff.rejectedNodes]];
    parts.push(table(["", "current spec", "edited spec"], rows.map((row) => row.map(String))));
  }
  const rejected = Object.entries(result.rejectedBy);
  if (rejected.length) parts.push(el("p", {}, "Rejected by: ", rejected.map(([p, n]) => `${p} (${n})`).join(", ")));
  if (result.message) parts.push(el("p", { class: "message" }, result.message));
  parts.push(topNodes(result));
  out.replaceChildren(...parts);
}

async function runCompare() {
  const out = $("compare-result");
  out.replaceChildren(el("p", { class: "muted" }, "Running both profiles…"));
  const a = $("compare-a").value;
  const b = $("compare-b").value;
  const body = nest("pod", editor.value) + `profiles: [${JSON.stringify(a)}, ${JSON.stringify(b)}]\n`;
  const r = await send("POST", "/api/compare/summary/", body, "application/yaml");
  if (!r.ok) {
    out.replaceChildren(el("p", { class: "error", role: "alert" }, errorText(r.body)));
    return;
  }
  const [ra, rb] = r.body.results;
  out.replaceChildren(
    el("p", {}, `${a}: `, outcome(ra)),
    el("p", {}, `${b}: `, outcome(rb)),
    el("p", { class: "muted" }, r.body.sameNode ? "Both profiles pick the same node." : "The profiles pick different nodes."),
    r.body.rows.length === 0 ? el("p", { class: "muted" }, "No node was scored (one feasible node or none): there are no scores to compare.") : table(["Node", a, b, "Δ total", "Δ per plugin"], r.body.rows.map((row) => [row.node, row.a ?? "—", row.b ?? "—", row.delta, Object.entries(row.plugins).map(([p, d]) => `${p} ${d > 0 ? "+" : ""}${d}`).join(", ")])),
  );
}

$("whatif-run").addEventListener("click", runWhatIf);
$("compare-run").addEventListener("click", runCompare);
editor.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); runWhatIf(); } });
