// Jobs: start an import or a benchmark, and move every running job's progress bar by polling
// /api/jobs/<id>/ until it ends (a job page then reloads to show its figures).
const $ = (id) => document.getElementById(id);

function csrf() {
  const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

function showError(text) {
  const box = $("job-error");
  if (!box) return;
  box.textContent = text;
  box.hidden = !text;
}

function render(holder, job) {
  holder.dataset.state = job.state;
  const bar = holder.querySelector(".bar");
  const fill = holder.querySelector(".fill");
  const known = job.total > 0 || job.state === "done";
  fill.style.width = `${known ? job.percent : 100}%`;
  fill.classList.toggle("busy", !known && job.state !== "failed");
  fill.classList.toggle("hot", job.state === "failed");
  fill.classList.toggle("short", job.state === "done" && !job.complete);
  bar.setAttribute("aria-valuenow", String(job.percent));
  let text = job.state + (job.phase ? ` · ${job.phase}` : "") + (job.total ? ` · ${job.done} of ${job.total}` : "");
  if (job.state === "failed" && job.error) text += ` · ${job.error.split("\n")[0]}`;
  const line = holder.querySelector(".job-text");
  line.textContent = text;
  line.classList.toggle("short", job.state === "done" && !job.complete);
}

async function follow(holder) {
  const id = holder.dataset.job;
  while (holder.isConnected) {
    const r = await fetch(`/api/jobs/${id}/`, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!r.ok) return;
    const job = await r.json();
    render(holder, job);
    if (job.state === "done" || job.state === "failed" || job.state === "cancelled") {
      if ($("job-status")) location.reload();  // the job page: show the figures
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
}

function followAll() {
  for (const holder of document.querySelectorAll(".job-progress")) {
    if (!["done", "failed", "cancelled"].includes(holder.dataset.state) && !holder.dataset.followed) {
      holder.dataset.followed = "1";
      follow(holder);
    }
  }
}

async function start(url, init) {
  showError("");
  const r = await fetch(url, { method: "POST", credentials: "same-origin", ...init, headers: { "X-CSRFToken": csrf(), Accept: "application/json", ...(init.headers ?? {}) } });
  const body = await r.json();
  if (r.status !== 202) {
    showError(Object.entries(body).map(([field, errors]) => `${field}: ${[errors].flat().join(" ")}`).join("; "));
    return;
  }
  location.href = body.page;
}

$("import-form")?.addEventListener("submit", (e) => {
  e.preventDefault();
  const file = $("import-file").files[0];
  if (!file) { showError("file: choose a YAML or JSON file first"); return; }
  const data = new FormData();
  data.append("file", file);
  start("/api/import/?background=true", { body: data });
});

$("bench-form")?.addEventListener("submit", (e) => {
  e.preventDefault();
  const body = {};
  for (const [key, value] of new FormData(e.target).entries()) if (value !== "") body[key] = key === "workload" ? value : Number(value);
  start("/api/bench/", { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
});

$("job-cancel")?.addEventListener("click", async (e) => {
  // A replay's job: queued parts are dropped, running ones stop at their next check.
  await fetch(`/api/jobs/${e.target.dataset.job}/cancel/`, { method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": csrf(), Accept: "application/json" } });
  location.reload();
});

followAll();
