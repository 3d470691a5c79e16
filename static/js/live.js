// The live socket every page keeps: its state on the page, reconnecting soon after a drop,
// what the page says it shows when it (re)connects, and placing what arrives: messages in
// the timeline, board cards and task rows in their lists.
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
})();
