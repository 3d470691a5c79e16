// Small behaviours htmx does not cover: live-socket state, placing live cards and rows, drag and drop.
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

  // Live patches of board cards and task rows arrive in #live-inbox, one item per
  // changed task: either the task gone (data-live-remove) or its new card, which
  // names its list (data-live-into) and its place in it (data-sort-key). The server
  // cannot know what each page shows, so the page places the card: its old copy
  // goes wherever it was (a moved task changes column), and the card goes before
  // the first one that sorts after it — or nowhere when it sorts past the point
  // up to which this column is shown (data-through), where "Show more" will bring it.
  // A pinned item (the task page's own task in its task list) is always shown: past
  // data-through it goes last, just before "Show more", marked data-beyond="true".
  function sortKey(value) {
    return value.split(",").map(Number);
  }

  function sortsAfter(a, b) {
    const i = a.findIndex((part, index) => part !== b[index]);
    return i >= 0 && a[i] > b[i];
  }

  function applyPatch(item) {
    item.remove();
    if (item.dataset.liveRemove) {
      document.getElementById(item.dataset.liveRemove)?.remove();
      return;
    }
    document.getElementById(item.id)?.remove();
    const list = document.getElementById(item.dataset.liveInto);
    if (!list) return;
    const key = sortKey(item.dataset.sortKey);
    const end = list.querySelector(":scope > [data-through]");
    const beyond = Boolean(end && end.dataset.through && sortsAfter(key, sortKey(end.dataset.through)));
    if (item.dataset.pinned === "true") item.dataset.beyond = String(beyond);
    else if (beyond) return;
    const next = Array.from(list.children).find(
      (other) => other.dataset.sortKey && sortsAfter(sortKey(other.dataset.sortKey), key),
    );
    list.insertBefore(item, next || end);
  }

  // Observed rather than hooked into htmx, so a patch is applied however it
  // arrives (socket or response) and after everything else in the same message.
  const inbox = document.getElementById("live-inbox");
  if (inbox) {
    new MutationObserver(() => Array.from(inbox.children).forEach(applyPatch)).observe(inbox, { childList: true });
  }

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
