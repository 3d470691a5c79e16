// The board: drag a card onto a column to move it.
(function () {
  "use strict";

  // Drag a card onto a column to move it; the move buttons do the same without a mouse.
  // Drag data can come from any page (another site's dragstart sets any type), so a
  // drop is taken only as the id of a card this page shows, never as part of a URL:
  // text such as "7/delete/?" is refused rather than posted to /tasks/7/delete/.
  const TASK_TYPE = "text/x-kandev-task";
  document.addEventListener("dragstart", (event) => {
    const card = event.target.closest && event.target.closest("[data-task-id][draggable]");
    if (!card) return;
    event.dataTransfer.setData(TASK_TYPE, card.dataset.taskId);
    event.dataTransfer.effectAllowed = "move";
  });
  function dropColumn(event) {
    return event.target.closest && event.dataTransfer.types.includes(TASK_TYPE)
      ? event.target.closest("[data-step-id].column") : null;
  }
  document.addEventListener("dragover", (event) => {
    if (dropColumn(event)) event.preventDefault();
  });
  document.addEventListener("drop", (event) => {
    const column = dropColumn(event);
    if (!column) return;
    event.preventDefault();
    const taskId = event.dataTransfer.getData(TASK_TYPE);
    const card = /^[0-9]+$/.test(taskId) && document.getElementById(`task-card-${taskId}`);
    if (!card || card.dataset.taskId !== taskId) return;
    const url = column.dataset.moveUrlTemplate.replace("/0/", `/${taskId}/`);
    htmx.ajax("POST", url, { values: { step: column.dataset.stepId }, swap: "none", source: column });
  });
})();
