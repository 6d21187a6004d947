// The live score table: rows stream in over /ws/scores/, one per scheduling attempt.
const MAX_ROWS = 500;
const $ = (id) => document.getElementById(id);
const tbody = document.querySelector("#attempts tbody");
let paused = false;
let held = [];
let shown = 0;
let missed = 0;

function csrf() {
  const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c ?? "")));
  return node;
}

// Column labels: plugin names without the "NodeResources"/"Node"/"Pod" prefixes (full name on hover).
function short(plugin) {
  return plugin.replace(/^NodeResources(?=[A-Z])/, "").replace(/^(Node|Pod)(?=[A-Z][a-z])/, "");
}

// A plugin's milliseconds in this attempt (a sampled one): "0.12 ms" for its Score, all points on hover.
function pluginMs(timings, plugin) {
  const points = timings?.[plugin];
  if (!points) return null;
  const title = `${plugin}: ` + Object.entries(points).map(([point, ms]) => `${point} ${ms} ms`).join(", ");
  const total = Object.values(points).reduce((a, b) => a + b, 0);
  return el("small", { class: "plugin-ms", title }, `${(points.Score ?? total).toFixed(2)} ms`);
}

function scoreTable(scores, timings) {
  if (!scores || scores.length === 0) return el("span", { class: "muted" }, "—");
  const plugins = Object.keys(scores[0].plugins);
  const header = (p) => {
    const ms = pluginMs(timings, p);
    return ms ? el("th", { title: p }, short(p), el("br"), ms) : el("th", { title: p }, short(p));
  };
  const head = el("tr", {}, el("th", {}, "Node"), el("th", {}, "Score"), ...plugins.map(header));
  const rows = scores.map((s) => el("tr", {}, el("td", {}, s.node), el("td", {}, s.total), ...plugins.map((p) => el("td", {}, s.plugins[p]))));
  return el("table", { class: "mini" }, el("thead", {}, head), el("tbody", {}, ...rows));
}

function addRow(msg) {
  $("empty").hidden = true;
  const time = msg.at.slice(11, 19);
  const tr = el(
    "tr",
    { class: msg.stored ? "attempt stored" : "attempt", "data-pod": msg.pod, "data-at": msg.at, "data-outcome": msg.outcome, tabindex: "0" },
    el("td", { title: msg.at }, time),
    el("td", { class: "pod" }, msg.pod),
    el("td", {}, msg.profile),
    el("td", {}, el("span", { class: `outcome ${msg.outcome}` }, msg.outcome)),
    el("td", {}, msg.node ?? "—"),
    el("td", {}, msg.feasibleNodes),
    el("td", { class: "latency" }, latency(msg.timings), filterMs(msg.pluginTimings)),
    el("td", {}, scoreTable(msg.scores, msg.pluginTimings)),
  );
  tr.message = msg;
  applySearch(tr);
  const open = () => {
    tbody.querySelectorAll("tr.attempt.selected").forEach((r) => r.classList.remove("selected"));
    tr.classList.add("selected");  // stays marked while newer rows push it down
    openDetail(msg.pod, msg.at);
  };
  tr.addEventListener("click", open);
  tr.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
  tbody.prepend(tr);
  shown += 1;
  while (tbody.rows.length > MAX_ROWS) tbody.deleteRow(tbody.rows.length - 1);
  counts();
}

// Milliseconds per extension point, e.g. "Filter 0.4 · Score 0.9".
function latency(timings) {
  if (!timings) return "—";
  return Object.entries(timings).map(([point, ms]) => `${point} ${ms}`).join(" · ");
}

// In a sampled attempt, the Filter plugins' milliseconds, slowest first (Score times head the score columns).
function filterMs(timings) {
  if (!timings) return "";
  const rows = Object.entries(timings).filter(([, points]) => points.Filter !== undefined).sort((a, b) => b[1].Filter - a[1].Filter);
  if (!rows.length) return "";
  return el("div", { class: "plugin-ms", title: "Filter milliseconds per plugin" }, rows.slice(0, 4).map(([p, points]) => `${short(p)} ${points.Filter.toFixed(2)}`).join(" · "));
}

// Hide rows whose pod and scored nodes do not contain the search text; within shown rows, hide
// score rows of other nodes (a top-N table may hold thousands).
function outcomeShown(outcome) {
  const want = $("f-outcome").value;
  if (!want) return true;
  return want.startsWith("!") ? outcome !== want.slice(1) : outcome === want;
}

function applySearch(tr) {
  const text = $("search").value.trim();
  const msg = tr.message;
  if (!outcomeShown(msg.outcome)) {
    tr.hidden = true;
    return;
  }
  if (!text) {
    tr.hidden = false;
    tr.querySelectorAll("table.mini tbody tr").forEach((r) => { r.hidden = false; });
    return;
  }
  const podMatch = msg.pod.includes(text) || (msg.node ?? "").includes(text);
  const nodeRows = [...tr.querySelectorAll("table.mini tbody tr")];
  let nodeMatch = false;
  nodeRows.forEach((r) => {
    const hit = r.cells[0].textContent.includes(text);
    nodeMatch ||= hit;
    r.hidden = !hit && !podMatch;
  });
  tr.hidden = !podMatch && !nodeMatch;
}

function visibleMessages() {
  return [...tbody.querySelectorAll("tr.attempt")].filter((tr) => !tr.hidden).map((tr) => tr.message);
}

function download(name, type, text) {
  const a = el("a", { href: URL.createObjectURL(new Blob([text], { type })), download: name });
  document.body.append(a);
  a.click();
  a.remove();
}

function csvCell(v) {
  const s = String(v ?? "");
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

// One CSV line per visible attempt and scored node (pod, node, total, then each plugin's score).
function toCSV(messages) {
  const plugins = [...new Set(messages.flatMap((m) => (m.scores ?? []).flatMap((s) => Object.keys(s.plugins))))];
  const lines = [["at", "pod", "profile", "outcome", "node", "feasibleNodes", "scoredNode", "total", ...plugins].join(",")];
  for (const m of messages) {
    const rows = m.scores?.length ? m.scores : [null];
    for (const s of rows) {
      lines.push([m.at, m.pod, m.profile, m.outcome, m.node, m.feasibleNodes, s?.node, s?.total, ...plugins.map((p) => s?.plugins[p])].map(csvCell).join(","));
    }
  }
  return lines.join("\n") + "\n";
}

function addMissed(count) {
  missed += count;
  tbody.prepend(el("tr", { class: "missed" }, el("td", { colspan: "8" }, `${count} attempt(s) not shown: this page fell behind`)));
  counts();
}

function counts() {
  $("counts").textContent = `${shown} shown${missed ? `, ${missed} missed` : ""}${paused ? `, ${held.length} held while paused` : ""}`;
}

async function getJSON(url) {
  const r = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
  if (!r.ok) throw new Error(`${url}: ${r.status}`);
  return r.json();
}

function detailTable(headers, rows, cls = "") {
  return el("table", { class: `detail-table ${cls}`.trim() }, el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", {}, h)))), el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", {}, c))))));
}

async function openDetail(pod, at) {
  const aside = $("detail");
  aside.hidden = false;
  document.body.classList.add("detail-open");
  aside.replaceChildren(el("p", { class: "muted" }, `Loading ${pod}…`));
  const [ns, name] = pod.split("/");
  try {
    const list = await getJSON(`/api/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}/attempts/?limit=50`);
    const sec = (s) => s.slice(0, 19);
    const match = list.results.find((a) => sec(a.at) === sec(at)) ?? list.results[0];
    if (!match) throw new Error("the attempt is not stored yet");
    const a = await getJSON(`/api/attempts/${match.id}/`);
    const totals = a.totals ?? {};
    const nodes = Object.keys(totals).sort((x, y) => totals[y] - totals[x]);
    const plugins = nodes.length ? Object.keys(a.scores[nodes[0]] ?? {}) : [];
    const groups = failureGroups(a.filter ?? {});
    aside.replaceChildren(
      closeButton(),
      el("h2", {}, el("a", { href: `/pods/${a.pod}/` }, a.pod), ` · attempt ${a.attempt}`),
      el("p", {}, el("span", { class: `outcome ${a.outcome}` }, a.outcome), a.node ? ` on ${a.node}` : "", ` · ${a.profile} · ${a.feasibleNodes} feasible`),
      a.message ? el("p", { class: "message" }, a.message) : "",
      el("h3", {}, "Scores (normalized, before weights)"),
      nodes.length < (a.scoredNodes ?? 0) ? el("p", { class: "muted" }, `The ${nodes.length} highest of ${a.scoredNodes} scored nodes are kept (SCHEDCONSOLE_HISTORY_SCORE_NODES).`) : "",
      nodes.length ? detailTable(["Node", "Total (weighted)", ...plugins.map(short)], nodes.map((n) => [n, totals[n], ...plugins.map((p) => a.scores[n][p])])) : el("p", { class: "muted" }, "No node was scored."),
      el("h3", {}, "Filter"),
      groups.length ? detailTable(["Nodes", "Plugin", "Code", "Reasons"], groups.map((g) => [nodeNames(g.nodes), camelBreaks(g.plugin), camelBreaks(g.code), g.reasons]), "text") : el("p", { class: "muted" }, "Every evaluated node passed."),
      el("p", {}, el("a", { href: `/attempts/${a.id}/` }, "Open the full attempt page")),
    );
  } catch (err) {
    aside.replaceChildren(closeButton(), el("p", { class: "error" }, `Could not load the attempt: ${err.message}`));
  }
}

function closeDetail() {
  $("detail").hidden = true;
  document.body.classList.remove("detail-open");
  tbody.querySelectorAll("tr.attempt.selected").forEach((r) => r.classList.remove("selected"));
}

function closeButton() {
  const b = el("button", { type: "button", class: "close", "aria-label": "close the detail" }, "×");
  b.addEventListener("click", closeDetail);
  return b;
}

// Nodes that failed alike (plugin, code, reasons) in one row, as the attempt page groups them.
function failureGroups(filter) {
  const groups = new Map();
  for (const [node, f] of Object.entries(filter)) {
    const reasons = f.reasons.join("; ");
    const key = `${f.plugin}\u0000${f.code}\u0000${reasons}`;
    if (!groups.has(key)) groups.set(key, { plugin: f.plugin, code: f.code, reasons, nodes: [] });
    groups.get(key).nodes.push(node);
  }
  return [...groups.values()].sort((x, y) => y.nodes.length - x.nodes.length);
}

// Long CamelCase names (UnschedulableAndUnresolvable, NodeResourcesFit) may wrap between their words.
function camelBreaks(text) {
  return text.replace(/([a-z])([A-Z])/g, "$1\u200b$2");
}

// Node names as the attempt page writes them: numbered series as ranges (node-00 … node-47).
function nodeNames(nodes) {
  const series = new Map();
  const single = [];
  for (const n of nodes) {
    const m = /^(.*?)(\d+)$/.exec(n);
    if (!m) { single.push(n); continue; }
    const key = `${m[1]}\u0000${m[2].length}`;
    if (!series.has(key)) series.set(key, []);
    series.get(key).push([Number(m[2]), n]);
  }
  const parts = [];
  for (const items of series.values()) {
    items.sort((x, y) => x[0] - y[0]);
    let start = 0;
    for (let i = 1; i <= items.length; i++) {
      if (i < items.length && items[i][0] === items[i - 1][0] + 1) continue;
      const first = items[start][1], last = items[i - 1][1];
      parts.push(first === last ? first : i - start === 2 ? `${first}, ${last}` : `${first} … ${last}`);
      start = i;
    }
  }
  const names = [...parts, ...single];
  const shown = names.slice(0, 8).join(", ") + (names.length > 8 ? `, and ${names.length - 8} more` : "");
  return nodes.length > 1 ? `${nodes.length} nodes: ${shown}` : shown;
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/ws/scores/`);
  const status = $("status");
  ws.addEventListener("open", () => { status.textContent = "live"; status.dataset.state = "live"; });
  ws.addEventListener("close", () => {
    status.textContent = "disconnected — retrying"; status.dataset.state = "down";
    setTimeout(connect, 2000);
  });
  ws.addEventListener("message", (event) => {
    const msg = JSON.parse(event.data);
    if (msg.type === "attempt") {
      if (paused) { held.push(msg); counts(); } else addRow(msg);
    } else if (msg.type === "missed") addMissed(msg.count);
  });
  const sendFilter = () => {
    tbody.replaceChildren();
    ws.send(JSON.stringify({ type: "filter", profile: $("f-profile").value, namespace: $("f-namespace").value.trim(), pod: $("f-pod").value.trim() }));
  };
  $("filter-form").onsubmit = (e) => { e.preventDefault(); sendFilter(); };
  for (const tab of document.querySelectorAll("#profile-tabs button")) {
    tab.onclick = () => {
      document.querySelectorAll("#profile-tabs button").forEach((b) => b.setAttribute("aria-selected", String(b === tab)));
      $("f-profile").value = tab.dataset.profile;
      sendFilter();
    };
  }
}

$("topn-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const confirmed = $("topn-confirmed");
  const r = await fetch("/api/debug-flags/", {
    method: "PUT",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), Accept: "application/json" },
    body: JSON.stringify({ debugTopNScores: Number($("topn").value) }),
  });
  const body = await r.json();
  if (r.ok) confirmed.replaceChildren("engine: ", el("b", {}, body.debugTopNScores));
  else confirmed.replaceChildren(el("span", { class: "error" }, Object.values(body).flat().join(" ")));
});

$("timing").addEventListener("change", async () => {
  const confirmed = $("timing-confirmed");
  const r = await fetch("/api/plugin-timing/", {
    method: "PUT",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), Accept: "application/json" },
    body: JSON.stringify({ every: Number($("timing").value) }),
  });
  const body = await r.json();
  if (r.ok) confirmed.replaceChildren("engine: ", el("b", {}, body.every ? `every ${body.every}` : "off"));
  else confirmed.replaceChildren(el("span", { class: "error" }, Object.values(body).flat().join(" ")));
});

$("pause").addEventListener("click", () => {
  paused = !paused;
  $("pause").textContent = paused ? "Resume" : "Pause";
  if (!paused) { held.forEach(addRow); held = []; }
  counts();
});

$("search").addEventListener("input", () => tbody.querySelectorAll("tr.attempt").forEach(applySearch));
$("f-outcome").addEventListener("change", () => tbody.querySelectorAll("tr.attempt").forEach(applySearch));
document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !$("detail").hidden) closeDetail(); });

// The table starts with the newest stored attempts, so it is not empty until the next one.
const recent = JSON.parse($("recent-attempts").textContent);
recent.forEach(addRow);
$("stored-note").hidden = recent.length === 0;
$("export-json").addEventListener("click", () => download("attempts.json", "application/json", JSON.stringify(visibleMessages(), null, 2)));
$("export-csv").addEventListener("click", () => download("attempts.csv", "text/csv", toCSV(visibleMessages())));

connect();
