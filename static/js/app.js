// Small behaviours htmx does not cover: live-socket state, drag and drop.
(function () {
  "use strict";

  // Expose the socket state as data-live so tests (and styles) can wait on it.
  document.addEventListener("htmx:wsOpen", (event) => {
    event.detail.elt.dataset.live = "connected";
  });
  document.addEventListener("htmx:wsClose", (event) => {
    event.detail.elt.dataset.live = "disconnected";
  });

  // Toasts say their piece and go; a streamed message is never shown twice.
  document.addEventListener("htmx:oobAfterSwap", (event) => {
    const target = event.detail.target;
    if (target && target.id === "toasts") {
      const toast = target.lastElementChild;
      if (!toast) return;
      setTimeout(() => toast.remove(), 8000);
      const title = toast.dataset.notifyTitle;
      if (title && "Notification" in window && Notification.permission === "granted") {
        new Notification(title, { body: toast.dataset.notifyBody, tag: toast.dataset.event });
      }
    }
    if (target && target.id === "timeline") {
      const seen = new Set();
      for (const item of Array.from(target.children).reverse()) {
        if (item.id && seen.has(item.id)) item.remove();
        else seen.add(item.id);
      }
    }
  });

  // Drag a card onto a column to move it; the move buttons do the same without a mouse.
  document.addEventListener("dragstart", (event) => {
    const card = event.target.closest && event.target.closest("[data-task-id][draggable]");
    if (!card) return;
    event.dataTransfer.setData("text/x-kandev-task", card.dataset.taskId);
    event.dataTransfer.effectAllowed = "move";
  });
  document.addEventListener("dragover", (event) => {
    if (event.target.closest && event.target.closest("[data-step-id].column")) {
      event.preventDefault();
    }
  });
  document.addEventListener("drop", (event) => {
    const column = event.target.closest && event.target.closest("[data-step-id].column");
    const taskId = event.dataTransfer.getData("text/x-kandev-task");
    if (!column || !taskId) return;
    event.preventDefault();
    const url = column.dataset.moveUrlTemplate.replace("/0/", `/${taskId}/`);
    htmx.ajax("POST", url, { values: { step: column.dataset.stepId }, swap: "none", source: column });
  });
})();
