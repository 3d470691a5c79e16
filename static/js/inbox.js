// The inbox (templates/inbox/inbox.html): keyboard first. j/k move between the
// items still waiting, digits pick an option (clarification.js, in the selected
// question's overlay) or a permission's option, Enter sends, o opens the task.
// An item that left says why until its Dismiss is pressed.
(function () {
  "use strict";

  const page = () => document.querySelector("[data-role=inbox]");
  const waiting = () => Array.from(document.querySelectorAll("[data-role=inbox-item][data-state=waiting]"));
  const selected = () => document.querySelector("[data-role=inbox-item][data-selected=true]");

  // The selected item's pending id. The catch-up on every (re)connect renders the items
  // anew, and the selection survives it; with nothing selected, no swap selects anything,
  // so the operator's first j picks the first item whatever arrived before it.
  let selectedId = null;

  function mark(item) {
    const previous = selected();
    if (previous && previous !== item) previous.dataset.selected = "false";
    item.dataset.selected = "true";
    selectedId = item.dataset.pendingId;
  }

  function select(item) {
    mark(item);
    // The keyboard goes where clarification.js listens: the question's overlay, else the item.
    const overlay = item.querySelector("[data-role=overlay]");
    (overlay || item).focus({ preventScroll: false });
    item.scrollIntoView({ block: "nearest" });
  }

  function move(step) {
    const items = waiting();
    if (!items.length) return;
    const index = items.indexOf(selected());
    const next = index < 0 ? 0 : Math.min(items.length - 1, Math.max(0, index + step));
    select(items[next]);
  }

  function send(item) {
    const form = item.querySelector("[data-role=answer-form]");
    if (!form || form.dataset.sending === "true") return;
    const submitButton = form.querySelector("[data-role=submit]");
    if (submitButton && submitButton.disabled) return;
    form.requestSubmit(submitButton || undefined);
  }

  // Capture: Enter on a focused option sends rather than toggling it, as the inbox promises.
  document.addEventListener("keydown", (event) => {
    if (!page() || event.metaKey || event.ctrlKey || event.altKey) return;
    const typing = event.target.matches("textarea, input, select");
    const item = event.target.closest && event.target.closest("[data-role=inbox-item]");
    if (event.key === "Enter" && !event.shiftKey && item && item.dataset.state === "waiting") {
      if (event.target.matches("textarea") || event.target.matches("[data-role=answer]")) return;
      if (event.target.matches("a, [data-role=permission-option], [data-role=permission-dismiss]")) return;
      event.preventDefault();
      event.stopPropagation();
      send(item);
      return;
    }
    if (typing) return;
    if (event.key === "j" || event.key === "k") {
      move(event.key === "j" ? 1 : -1);
      event.preventDefault();
    } else if (event.key === "o") {
      const current = selected();
      if (current) window.location.assign(current.dataset.taskUrl);
    } else if (/^[1-9]$/.test(event.key)) {
      const current = selected();
      const option = current && current.dataset.kind === "permission"
        && current.querySelectorAll("[data-role=permission-option]")[Number(event.key) - 1];
      if (option) { option.click(); event.preventDefault(); }
    }
  }, true);

  document.addEventListener("click", (event) => {
    // A board card's Answer: the panel is asked for on the board's socket (a card placed
    // live was processed outside the page's socket, so it cannot send on it itself).
    const answer = event.target.closest && event.target.closest("[data-answer-task]");
    const opener = document.getElementById("answer-panel-open");
    if (answer && opener) {
      event.preventDefault();
      opener.elements.task_id.value = answer.dataset.answerTask;
      htmx.trigger(opener, "submit");
      return;
    }
    // The board's answer panel: closed, it is emptied, so nothing live lands in it until it is opened again.
    const close = event.target.closest && event.target.closest("[data-action=close-answer-panel]");
    if (close) {
      const panel = close.closest("[data-role=answer-panel]");
      panel.hidden = true;
      panel.replaceChildren();
      panel.dataset.taskId = "";
      return;
    }
    const dismiss = event.target.closest && event.target.closest("[data-action=dismiss-item]");
    if (dismiss) dismiss.closest("[data-role=inbox-item]").remove();
    const item = event.target.closest && event.target.closest("[data-role=inbox-item][data-state=waiting]");
    if (item) mark(item);
  });

  // The board's answer panel arrives from its socket: the keyboard goes to its first question or card.
  kandev.onSwap("answer-panel", () => {
    const panel = document.getElementById("answer-panel");
    const first = panel && panel.querySelector("[data-role=overlay], [data-role=permission-option]");
    if (first) first.focus();
  });

  // A swap that rendered the selected item anew selects it again; one that took it away
  // (it left) passes the selection to the first item still waiting. The keyboard follows
  // unless the operator has it somewhere else (a removed element has let go of it).
  kandev.onSwap(null, () => {
    if (!page() || selectedId === null || selected()) return;
    const items = waiting();
    const item = items.find((each) => each.dataset.pendingId === selectedId) || items[0];
    if (!item) {
      selectedId = null;
      return;
    }
    const active = document.activeElement;
    if (!active || active === document.body || !active.isConnected) select(item);
    else mark(item);
  });
})();
