// The overview re-renders its body from the server every 5 s while the tab is visible.
const box = document.getElementById("overview");
const stamp = document.getElementById("refreshed");

async function refresh() {
  if (document.hidden) return;
  try {
    const r = await fetch(box.dataset.refresh, { credentials: "same-origin" });
    if (!r.ok) throw new Error(`${r.status}`);
    box.innerHTML = await r.text();
    stamp.textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    stamp.textContent = `refresh failed (${err.message}); retrying`;
  }
}

setInterval(refresh, 5000);
