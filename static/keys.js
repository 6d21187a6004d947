// Keyboard navigation on every page: "/" focuses the search box, j/k move between rows, Enter
// opens the focused row's link, [ and ] page, and g then a letter goes to a page.
const PAGES = { o: "/overview/", l: "/", p: "/pods/", n: "/nodes/", g: "/gangs/", e: "/preemption/", f: "/profiles/", t: "/thresholds/", a: "/plugin-api/", j: "/jobs/" };
let pendingG = false;

function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

function rows() {
  return [...document.querySelectorAll("[data-row], tr.attempt")];
}

function move(step) {
  const all = rows();
  if (!all.length) return;
  const at = all.indexOf(document.activeElement);
  const next = all[Math.max(0, Math.min(all.length - 1, at + step))];
  if (!next.hasAttribute("tabindex")) next.setAttribute("tabindex", "-1");
  next.focus();
  next.scrollIntoView({ block: "nearest" });
}

document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
  if (pendingG) {
    pendingG = false;
    if (PAGES[e.key]) { location.href = PAGES[e.key]; e.preventDefault(); }
    return;
  }
  if (e.key === "g") { pendingG = true; return; }
  if (e.key === "/") {
    const box = document.querySelector("[data-search]");
    if (box) { box.focus(); e.preventDefault(); }
  } else if (e.key === "j") move(1);
  else if (e.key === "k") move(-1);
  else if (e.key === "Enter" && document.activeElement?.matches("[data-row]")) {
    document.activeElement.querySelector("a")?.click();
  } else if (e.key === "[" || e.key === "]") {
    document.querySelector(`a[data-key="${e.key}"]`)?.click();
  }
});

// Narrow screens: the page links fold behind a Menu button, so content comes first.
const menu = document.querySelector(".menu-toggle");
menu?.addEventListener("click", () => {
  const open = menu.getAttribute("aria-expanded") !== "true";
  menu.setAttribute("aria-expanded", String(open));
  document.getElementById("main-nav").classList.toggle("open", open);
});
