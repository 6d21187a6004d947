// The profile editor: validate with the engine as you type, show the diff against the active version.
import { $, csrf, el, errorText, send } from "./dash.js";

const editor = $("profile-yaml");
let timer = null;
let seq = 0;

async function check() {
  const mine = ++seq;
  const text = editor.value;
  const [valid, diff] = await Promise.all([
    send("POST", "/api/profiles/validate/", text, "application/yaml"),
    fetch("/profiles/diff/", { method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": csrf() }, body: new URLSearchParams({ text }) }).then((r) => r.json()),
  ]);
  if (mine !== seq) return;
  const box = $("validation");
  const apply = $("apply");
  if (valid.ok) {
    box.className = "ok";
    box.removeAttribute("role");
    box.textContent = `Valid: runs ${valid.body.profiles.join(", ")}.`;
  } else {
    box.className = "error";
    box.setAttribute("role", "alert");
    box.textContent = `Invalid — ${errorText(valid.body)}`;
  }
  // Apply only what the engine would take; a viewer's button stays disabled either way.
  if (apply.dataset.operator) {
    apply.disabled = !valid.ok;
    apply.title = valid.ok ? "" : "the editor's configuration is invalid";
  }
  $("diff").replaceChildren(...(diff.lines.length ? diff.lines.map(([kind, line]) => [el("span", { class: kind }, line), "\n"]).flat() : [el("span", { class: "muted" }, "No difference.")]));
}

editor.addEventListener("input", () => {
  clearTimeout(timer);
  $("apply").disabled = true; // until the engine has checked the new text
  timer = setTimeout(check, 350);
});
check(); // the validation line and Apply match the editor from the start (after a refused Apply too)
