// Replay: start a sweep (the form on /replay/), follow one (/replay/<id>/ reloads as each candidate
// is merged), cancel it, and apply a candidate through the profiles API (stored, activated, audited).
const $ = (id) => document.getElementById(id);

function csrf() {
  const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

async function post(url, body) {
  const r = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "X-CSRFToken": csrf(), Accept: "application/json", "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return [r.status, await r.json()];
}

function errors(body) {
  return Object.entries(body).map(([field, e]) => `${field}: ${[e].flat().join(" ")}`).join("; ");
}

const MOST_ALLOCATED = {
  apiVersion: "kubescheduler.config.k8s.io/v1",
  kind: "KubeSchedulerConfiguration",
  profiles: [{
    schedulerName: "default-scheduler",
    pluginConfig: [{ name: "NodeResourcesFit", args: { scoringStrategy: { type: "MostAllocated", resources: [
      { name: "cpu", weight: 1 }, { name: "memory", weight: 1 }, { name: "nvidia.com/gpu", weight: 1 }] } } }],
  }],
};

function moment(text) {
  const t = text.trim();
  if (!t) return undefined;
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t;
}

function formBody(form) {
  const data = new FormData(form);
  const body = { source: data.get("source"), segments: Number(data.get("segments")), samples: Number(data.get("samples")) };
  const window = {};
  for (const key of ["start", "end"]) { const m = moment(String(data.get(key) ?? "")); if (m !== undefined) window[key] = m; }
  if (Object.keys(window).length) body.window = window;
  if (body.source === "openb") {
    for (const key of ["nodes", "pods"]) if (data.get(key)) body[key] = Number(data.get(key));
  }
  const candidates = data.getAll("version").map((v) => ({ version: Number(v) }));
  for (const preset of data.getAll("preset")) {
    candidates.push(preset === "most" ? { document: MOST_ALLOCATED, label: "bin-packing" } : { document: "default", label: "defaults" });
  }
  const draft = String(data.get("draft") ?? "").trim();
  if (draft) candidates.push({ document: JSON.parse(draft), label: "draft" });
  const grid = String(data.get("grid") ?? "").trim();
  if (grid) body.grid = { values: JSON.parse(grid) };
  body.candidates = candidates;
  return body;
}

$("replay-form")?.addEventListener("submit", async (e) => {
  e.preventDefault();
  const box = $("replay-error");
  box.hidden = true;
  let body;
  try { body = formBody(e.target); } catch (err) { box.textContent = `draft or grid: ${err.message}`; box.hidden = false; return; }
  const [status, answer] = await post("/api/replays/", body);
  if (status !== 202) { box.textContent = errors(answer); box.hidden = false; return; }
  location.href = answer.page;
});

const shown = $("replay-candidates") ? JSON.parse($("replay-candidates").textContent) : null;

async function follow(status) {
  // The job is cheap to read (the replay's body compares every candidate's placements): reload when
  // its phase says another candidate is merged, and when it ends.
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 700));
    const r = await fetch(`/api/jobs/${status.dataset.job}/`, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!r.ok) return;
    const job = await r.json();
    if (job.phase !== status.dataset.phase || job.state !== status.dataset.state) { location.reload(); return; }
  }
}

const status = $("replay-status");
if (status && !["done", "failed", "cancelled"].includes(status.dataset.state)) follow(status);

$("replay-cancel")?.addEventListener("click", async (e) => {
  const [status] = await post(`/api/jobs/${e.target.dataset.job}/cancel/`);
  if (status === 200 || status === 409) location.reload();
});

for (const button of document.querySelectorAll("button.apply")) {
  button.addEventListener("click", async () => {
    const note = $("apply-result");
    const candidate = shown[Number(button.dataset.index)];
    const [status, answer] = button.dataset.version
      ? await post(`/api/profiles/${button.dataset.version}/activate/`)
      : await post("/api/profiles/", { document: candidate.document, comment: `replay #${button.dataset.replay}: ${button.dataset.label}` });
    note.hidden = false;
    note.textContent = status < 300
      ? `Applied: version ${answer.version} is active (kept in the audit log; roll back on Profiles).`
      : `Not applied: ${errors(answer)}`;
  });
}
