// One listener for htmx's out-of-band swaps, shared by every behaviour that follows them:
// kandev.onSwap("toasts", handler) calls handler(target) after each swap into #toasts,
// kandev.onSwap(null, handler) after every one. Loaded first (templates/base.html), so
// handlers run in the order the scripts register them. One that throws is reported and
// the rest still run, as they did when each was a listener of its own.
(function () {
  "use strict";

  const handlers = [];

  window.kandev = {
    onSwap(id, handler) {
      handlers.push({ id, handler });
    },
  };

  document.addEventListener("htmx:oobAfterSwap", (event) => {
    const target = event.detail.target;
    for (const { id, handler } of handlers) {
      if (id !== null && (!target || target.id !== id)) continue;
      try {
        handler(target);
      } catch (error) {
        reportError(error);
      }
    }
  });
})();
