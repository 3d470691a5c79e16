// Small behaviours htmx does not cover: live-socket state, placing live cards and rows, drag and drop,
// and the few handlers a strict Content-Security-Policy keeps out of the templates.
(function () {
  "use strict";

  // The live page's state, as data-live on its root (tests wait on it) and the
  // live-status pill (people see it): "connected" only once the server's
  // catch-up (always a socket's first frame) is in, so a connected page is
  // also an up-to-date one; "disconnected" from the moment the socket drops.
  function showLive(root, state) {
    root.dataset.live = state;
    const status = root.querySelector("[data-role=live-status]");
    if (status) status.dataset.state = state;
  }
  document.addEventListener("htmx:wsOpen", (event) => {
    event.detail.elt.dataset.catchingUp = "true";
  });
  document.addEventListener("htmx:wsAfterMessage", (event) => {
    const root = event.detail.elt;
    if (root.dataset.catchingUp !== "true") return;
    delete root.dataset.catchingUp;
    showLive(root, "connected");
  });
  for (const name of ["htmx:wsClose", "htmx:wsError"]) {
    document.addEventListener(name, (event) => showLive(event.detail.elt, "disconnected"));
  }

  // Reconnect within a few seconds: the extension's own backoff doubles up to
  // 64 s, so a short outage looked like a long one. Half of each delay is
  // random so pages do not all come back at once after a server restart.
  const RECONNECT_FIRST_MS = 500;
  const RECONNECT_MAX_MS = 3000;
  htmx.config.wsReconnectDelay = (retry) => {
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** retry);
    return delay / 2 + (Math.random() * delay) / 2;
  };
  // Not "at once when the tab is visible or online again": the extension's
  // retry timer cannot be cancelled and its reconnect() does not clear it, so
  // a second socket would open; the short delay above bounds the wait instead.

  // Every (re)connect says what the page shows, in the socket URL, so the
  // server's catch-up fits it: how far "Show more" has taken each list and the
  // last timeline message the page has. (The extension calls this with the
  // ws-connect URL; a page has one live socket.)
  htmx.createWebSocket = (url) => {
    const socket = new WebSocket(withPageState(url), []);
    socket.binaryType = htmx.config.wsBinaryType;
    return socket;
  };

  function withPageState(url) {
    const target = new URL(url);
    for (const end of document.querySelectorAll("[data-step-id][data-through]")) {
      if (end.dataset.through) target.searchParams.append("through", `${end.dataset.stepId}:${end.dataset.through}`);
    }
    const timeline = document.getElementById("timeline");
    if (timeline) {
      const ids = Array.from(timeline.querySelectorAll(":scope > [data-message-id]"), (item) => Number(item.dataset.messageId));
      target.searchParams.set("after", String(ids.reduce((a, b) => Math.max(a, b), 0)));
    }
    return target.href;
  }

  // Toasts say their piece and go, a few at a time: one like another already
  // shown is merged into it with a count, the oldest gives way past the limit,
  // each has a close button, and none counts down while the pointer or the
  // keyboard is on them. A notification (an agent asks, an agent finished)
  // stays until it is closed, as the operator may have been away. A question
  // for the task this page shows is no toast at all: its overlay says it.
  const TOAST_LIMIT = 3;
  const TOAST_MS = 8000;
  const toastTimers = new WeakMap();
  const toastRegion = document.getElementById("toasts");
  let toastsHeld = false;

  function scheduleToast(toast) {
    clearTimeout(toastTimers.get(toast));
    if (toastsHeld || toast.dataset.level === "notify") return;
    toastTimers.set(toast, setTimeout(() => toast.remove(), TOAST_MS));
  }

  function shownOnThisPage(toast) {
    const page = document.querySelector("[data-role=task-page]");
    return toast.dataset.event === "session.clarification_requested" && Boolean(page)
      && toast.dataset.taskId === page.dataset.taskId;
  }

  function notifyDesktop(toast) {
    const title = toast.dataset.notifyTitle;
    if (title && "Notification" in window && Notification.permission === "granted") {
      new Notification(title, { body: toast.dataset.notifyBody, tag: toast.dataset.event });
    }
  }

  function placeToast(toast) {
    if (shownOnThisPage(toast)) {
      // The overlay says it, unless the operator is looking at another tab.
      if (document.visibilityState === "hidden") notifyDesktop(toast);
      toast.remove();
      return;
    }
    notifyDesktop(toast);
    const { level, event, taskId, reason } = toast.dataset;
    toast.dataset.key = JSON.stringify([level, event, taskId, reason, toast.textContent.trim()]);
    const twin = Array.from(toastRegion.children).find((other) => other !== toast && other.dataset.key === toast.dataset.key);
    if (twin) {
      toast.remove();
      const count = Number(twin.dataset.count) + 1;
      twin.dataset.count = String(count);
      const seen = document.createElement("span");
      seen.setAttribute("aria-hidden", "true");
      seen.textContent = `\u00d7${count}`;
      const heard = document.createElement("span");
      heard.className = "sr-only";
      heard.textContent = toastRegion.dataset.countLabel.replace("__N__", count);
      const badge = twin.querySelector("[data-role=toast-count]");
      badge.replaceChildren(seen, heard);
      badge.hidden = false;
      toastRegion.append(twin);
      scheduleToast(twin);
      return;
    }
    while (toastRegion.children.length > TOAST_LIMIT) toastRegion.firstElementChild.remove();
    scheduleToast(toast);
  }

  if (toastRegion) {
    toastRegion.addEventListener("click", (event) => {
      const close = event.target.closest("[data-action=dismiss-toast]");
      if (close) close.closest("[data-role=toast]").remove();
    });
    const hold = () => {
      toastsHeld = true;
      Array.from(toastRegion.children).forEach((toast) => clearTimeout(toastTimers.get(toast)));
    };
    const resume = () => {
      toastsHeld = false;
      Array.from(toastRegion.children).forEach(scheduleToast);
    };
    toastRegion.addEventListener("mouseenter", hold);
    toastRegion.addEventListener("mouseleave", resume);
    toastRegion.addEventListener("focusin", hold);
    toastRegion.addEventListener("focusout", (event) => { if (!toastRegion.contains(event.relatedTarget)) resume(); });
    // Scrolling an element into view (focus, links, scrollIntoView) stops below the toasts.
    new ResizeObserver(() => {
      document.documentElement.style.setProperty("--toasts-height", `${toastRegion.offsetHeight}px`);
    }).observe(toastRegion);
  }

  kandev.onSwap("toasts", (region) => {
    const toast = region.lastElementChild;
    if (toast) placeToast(toast);
  });

  // New messages are appended to the timeline (templates/sessions/task.html): one the
  // page already shows keeps only its latest copy.
  kandev.onSwap("timeline", (timeline) => {
    const seen = new Set();
    for (const item of Array.from(timeline.children).reverse()) {
      if (item.id && seen.has(item.id)) item.remove();
      else seen.add(item.id);
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
    const old = document.getElementById(item.id);
    // A delete form the operator has open (its boxes perhaps ticked) stays open on the new card.
    const openDelete = old && old.querySelector("[data-role=delete-menu][open]");
    const freshDelete = item.querySelector("[data-role=delete-menu]");
    if (openDelete && freshDelete) freshDelete.replaceWith(openDelete);
    old?.remove();
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

  // A follow-up prompt the server took (204) is cleared; one it refused keeps its text.
  // Watched from the request, not the form: the turn it opens re-renders the composer
  // over the socket, often before the answer is in, and the detached form's events
  // reach nobody; the preserved textarea is the one to clear.
  document.addEventListener("htmx:beforeRequest", (event) => {
    const { elt, xhr } = event.detail;
    if (!elt.matches("[data-role=prompt-form]")) return;
    xhr.addEventListener("load", () => {
      const prompt = document.getElementById("prompt-input");
      if (xhr.status === 204 && prompt) prompt.value = "";
    });
  });

  // The start form's scenario picker belongs to the mock agent: shown (and sent) only
  // while a profile marked data-scenarios="true" is chosen. A chosen scenario is the
  // prompt, so the prompt field rests meanwhile. Synced again after every live swap,
  // since the server renders the picker for the first profile and the preserved
  // selects keep what the operator chose.
  function syncScenarioPicker() {
    const profile = document.querySelector("[data-role=start-profile]");
    const field = document.querySelector("[data-role=start-scenario-field]");
    if (!profile || !field) return;
    const scenario = field.querySelector("select");
    const option = profile.selectedOptions[0];
    const offered = Boolean(option && option.dataset.scenarios === "true");
    field.hidden = !offered;
    scenario.disabled = !offered;
    const prompt = document.querySelector("[data-role=start-prompt]");
    if (prompt) prompt.disabled = offered && scenario.value !== "";
  }
  document.addEventListener("change", (event) => {
    if (event.target.matches("[data-role=start-profile], [data-role=start-scenario]")) {
      syncScenarioPicker();
    }
  });
  document.addEventListener("htmx:afterSettle", syncScenarioPicker);
  kandev.onSwap(null, syncScenarioPicker);

  // The count of what waits on the operator (base.html#inbox-count) leads the
  // tab's title, so a background tab says it too.
  kandev.onSwap("inbox-count", () => {
    const shown = document.getElementById("inbox-count");
    const count = shown ? Number(shown.dataset.count) || 0 : 0;
    const title = document.title.replace(/^\(\d+\) /, "");
    document.title = count ? `(${count}) ${title}` : title;
  });
  syncScenarioPicker();

  // Browsers ask for desktop notifications only on a click (notification settings).
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("[data-action=ask-notification-permission]");
    if (!button || !("Notification" in window)) return;
    Notification.requestPermission().then((permission) => { button.dataset.permission = permission; });
  });
})();
