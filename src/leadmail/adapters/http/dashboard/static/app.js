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
// child with data-field="<name>" takes the value of that name (a <progress> also its max,
// from data-max-field); polling stops once the JSON says "done": true, and the page
// reloads then when the element has data-reload-when-done.
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
            const max = data[target.dataset.maxField || ""];
            if (max) target.max = Number(max);
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
    if (!done) {
      window.setTimeout(tick, every);
    } else if (element.dataset.reloadWhenDone) {
      window.location.reload();  // what only a finished one shows (its failed rows)
    }
  };
  window.setTimeout(tick, every);
}

document.querySelectorAll("[data-live]").forEach(follow);

// A form with data-count-url="<url>" asks that URL how many leads its inputs marked
// data-filter select, as they change (a moment after the last key), and shows the answer
// in its own data-field="count" and data-field="error" elements.
function countAudience(form) {
  const url = form.dataset.countUrl;
  const inputs = Array.from(form.querySelectorAll("[data-filter]"));
  let timer = 0;
  const ask = async () => {
    const query = new URLSearchParams();
    for (const input of inputs) {
      if (input.value.trim()) query.set(input.name, input.value.trim());
    }
    try {
      const answer = await fetch(`${url}?${query}`, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (!answer.ok) return;
      const data = await answer.json();
      for (const target of form.querySelectorAll("[data-field]")) {
        const value = data[target.dataset.field];
        if (value !== undefined && value !== null) target.textContent = String(value);
      }
    } catch (error) {
      // Asked again at the next change.
    }
  };
  for (const input of inputs) {
    input.addEventListener("input", () => {
      window.clearTimeout(timer);
      timer = window.setTimeout(ask, 300);
    });
  }
  ask();
}

document.querySelectorAll("form[data-count-url]").forEach(countAudience);
