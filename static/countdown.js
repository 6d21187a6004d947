// Permit timers: each .countdown counts down from the seconds the server measured.
const started = performance.now();
const timers = [...document.querySelectorAll(".countdown")];

function tick() {
  const gone = (performance.now() - started) / 1000;
  for (const t of timers) {
    const left = Math.max(0, Number(t.dataset.seconds) - gone);
    t.textContent = left > 0 ? `${left.toFixed(0)}s left` : "timed out";
  }
}

if (timers.length) { tick(); setInterval(tick, 1000); }
