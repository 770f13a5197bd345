// leadmail's dashboard: the few things a page does by itself. No inline script anywhere
// (the Content-Security-Policy allows only this file).
"use strict";

// A form with data-confirm asks before it is sent (deleting, cancelling).
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});

// Elements with data-live="<url>" are refreshed from that JSON every few seconds: each
// child with data-field="<name>" takes the value of that name; polling stops once the JSON
// says "done": true.
function follow(element) {
  const url = element.dataset.live;
  const every = Number(element.dataset.every || "2000");
  const tick = async () => {
    let done = false;
    try {
      const answer = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (answer.ok) {
        const data = await answer.json();
        for (const target of element.querySelectorAll("[data-field]")) {
          const value = data[target.dataset.field];
          if (value === undefined || value === null) continue;
          if (target instanceof HTMLProgressElement) {
            target.value = Number(value);
          } else {
            target.textContent = String(value);
          }
        }
        done = Boolean(data.done);
      }
    } catch (error) {
      // The next tick tries again.
    }
    if (!done) window.setTimeout(tick, every);
  };
  window.setTimeout(tick, every);
}

document.querySelectorAll("[data-live]").forEach(follow);
