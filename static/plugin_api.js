// The plugin API browser: fill a route's parameters, call it, show the JSON answer.
import { $, send } from "./dash.js";

for (const row of document.querySelectorAll("tr.route")) {
  row.querySelector(".call").addEventListener("click", async () => {
    let path = row.dataset.path;
    for (const input of row.querySelectorAll("[data-param]")) path = path.replace(`:${input.dataset.param}`, encodeURIComponent(input.value.trim()));
    const bodyBox = row.querySelector("[data-body]");
    const r = await send(row.dataset.method, path, bodyBox && bodyBox.value.trim() ? bodyBox.value : undefined, "application/json");
    $("answer-status").textContent = `${row.dataset.method} ${path} → ${r.status}`;
    $("answer").textContent = typeof r.body === "string" ? r.body : JSON.stringify(r.body, null, 2);
  });
}
