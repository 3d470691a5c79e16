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
