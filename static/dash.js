// Small helpers shared by the dashboard's page modules.
export const $ = (id) => document.getElementById(id);

export function csrf() {
  const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c ?? "")));
  return node;
}

export function table(headers, rows) {
  return el("table", { class: "list" },
    el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", {}, c))))));
}

// The DRF error body ({"field": ["message"]} or {"detail": "..."}) as one line naming the field.
export function errorText(body) {
  if (!body || typeof body !== "object") return String(body);
  return Object.entries(body).map(([k, v]) => {
    const text = Array.isArray(v) ? v.join(" ") : typeof v === "object" ? JSON.stringify(v) : String(v);
    return text.startsWith(k) ? text : `${k}: ${text}`;
  }).join("; ");
}

// Send a request; resolves to {ok, status, body}. YAML bodies go as application/yaml.
export async function send(method, url, body, contentType = "application/json") {
  const r = await fetch(url, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": contentType, "X-CSRFToken": csrf(), Accept: "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  let parsed;
  const text = await r.text();
  try { parsed = JSON.parse(text); } catch { parsed = text; }
  return { ok: r.ok, status: r.status, body: parsed };
}

// A YAML mapping with `key:` holding the given YAML text, indented under it.
export function nest(key, yamlText) {
  return `${key}:\n${yamlText.replace(/\s+$/, "").split("\n").map((l) => `  ${l}`).join("\n")}\n`;
}
