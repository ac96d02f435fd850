// While a question is being answered: show its place in the queue and its stage events, and reload the page when the answer is stored.
(function () {
  const main = document.querySelector("main[data-progress]");
  if (!main) return;
  const url = main.dataset.progress;
  const list = document.getElementById("events");
  const place = document.getElementById("position");
  async function poll() {
    let state;
    try {
      const reply = await fetch(url, { headers: { Accept: "application/json" } });
      state = await reply.json();
    } catch (err) {
      setTimeout(poll, 2000);
      return;
    }
    if (place) {
      place.textContent = state.position ? `Busy, position ${state.position} in the queue: it starts when its turn comes.` : "";
    }
    if (list) {
      list.replaceChildren(...state.events.map((e) => {
        const item = document.createElement("li");
        item.className = e.status;
        item.textContent = `${e.t.toFixed(1)} s  ${e.stage}: ${e.status}${e.detail ? " — " + e.detail : ""}`;
        return item;
      }));
    }
    if (state.running) setTimeout(poll, 700);
    else window.location.reload();
  }
  poll();
})();
