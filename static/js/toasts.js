// What tells the operator something happened: toasts, desktop notifications, and the
// count of what waits on them in the tab's title.
(function () {
  "use strict";

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

  // The count of what waits on the operator (base.html#inbox-count) leads the
  // tab's title, so a background tab says it too.
  kandev.onSwap("inbox-count", () => {
    const shown = document.getElementById("inbox-count");
    const count = shown ? Number(shown.dataset.count) || 0 : 0;
    const title = document.title.replace(/^\(\d+\) /, "");
    document.title = count ? `(${count}) ${title}` : title;
  });

  // Browsers ask for desktop notifications only on a click (notification settings).
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("[data-action=ask-notification-permission]");
    if (!button || !("Notification" in window)) return;
    Notification.requestPermission().then((permission) => { button.dataset.permission = permission; });
  });
})();
