// The board: drag a card onto a column to move it; keys to find, move between and open cards.
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

  // Keys (templates/board/board.html lists them in its "?" dialog): "/" focuses the
  // search, j/k move between the cards shown, Enter opens the current card's task,
  // "a" opens the answer panel of a waiting card, "?" shows the keys. None of them
  // fires while the operator types, or inside the answer panel, where the
  // question's own keys are (clarification.js).
  const board = () => document.querySelector("[data-role=board]");
  const shownCards = () => Array.from(document.querySelectorAll("#kanban [data-task-id].card"))
    .filter((card) => card.offsetParent !== null);
  // The current card is remembered by its task, not by its element: a live patch
  // replaces a changed card, and the catch-up every column, and the new element
  // must be the current one still (marked again below, its focus kept).
  let currentTaskId = null;
  const currentCard = () => (currentTaskId ? document.getElementById(`task-card-${currentTaskId}`) : null);

  function mark(card) {
    card.dataset.current = "true";
    card.classList.add("is-current");
  }

  function makeCurrent(card, focus = true) {
    for (const other of document.querySelectorAll("#kanban .card[data-current=true]")) {
      if (other === card) continue;
      other.dataset.current = "false";
      other.classList.remove("is-current");
    }
    currentTaskId = card.dataset.taskId;
    mark(card);
    if (!focus) return;
    const title = card.querySelector("[data-role=card-title]");
    (title || card).focus();
    card.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  function step(by) {
    const cards = shownCards();
    if (!cards.length) return;
    const index = cards.indexOf(currentCard());
    makeCurrent(cards[index < 0 ? 0 : Math.min(cards.length - 1, Math.max(0, index + by))]);
  }

  document.addEventListener("keydown", (event) => {
    if (!board() || event.metaKey || event.ctrlKey || event.altKey || event.defaultPrevented) return;
    const target = event.target;
    if (target.matches("input, textarea, select, [contenteditable]") || target.closest("[data-role=answer-panel], dialog[open]")) return;
    const card = currentCard();
    if (event.key === "/") {
      const search = document.querySelector("[data-role=board-search]");
      if (search) { search.focus(); search.select(); event.preventDefault(); }
    } else if (event.key === "j" || event.key === "k") {
      step(event.key === "j" ? 1 : -1);
      event.preventDefault();
    } else if (event.key === "Enter" && card && target === card) {
      const title = card.querySelector("[data-role=card-title]");
      if (title) { title.click(); event.preventDefault(); }
    } else if (event.key === "a" && card) {
      const answer = card.querySelector("[data-answer-task]");
      if (answer) { answer.click(); event.preventDefault(); }
    } else if (event.key === "?") {
      const keys = document.querySelector("[data-role=board-keys]");
      if (keys && !keys.open) { keys.showModal(); event.preventDefault(); }
    }
  });

  const root = board();
  if (root) {
    new MutationObserver(() => {
      const card = currentCard();
      if (!card || card.dataset.current === "true") return;
      mark(card);
      // Its old element had the focus, which went to the page when it was replaced.
      if (document.activeElement === document.body) card.querySelector("[data-role=card-title]")?.focus({ preventScroll: true });
    }).observe(root, { childList: true, subtree: true });
  }

  // A card a click or Tab reached is the current one for j/k too.
  document.addEventListener("focusin", (event) => {
    const card = board() && event.target.closest && event.target.closest("#kanban [data-task-id].card");
    if (card && card !== currentCard()) makeCurrent(card, false);
  });
})();
