// Web Push on the notification settings page: turn it on in this browser (subscribe, and tell the
// server), or off (tell the server, unsubscribe). The section's data-push-state says where it stands:
// unsupported, denied, off, working, on, or failed.
(() => {
  "use strict";

  const SECTION = "[data-role=push-notifications]";

  function supported() {
    return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
  }

  function csrfToken() {
    return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
  }

  function post(url, data) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(data),
    }).then((response) => {
      if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
      return response;
    });
  }

  function keyBytes(base64url) {
    const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - base64url.length % 4) % 4);
    return Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
  }

  function show(section, state) {
    section.dataset.pushState = state;
    const button = section.querySelector("[data-action=toggle-push]");
    button.textContent = state === "on" ? section.dataset.labelOff : section.dataset.labelOn;
    button.disabled = state === "unsupported" || state === "denied" || state === "working";
    button.setAttribute("aria-pressed", state === "on" ? "true" : "false");
    const status = section.querySelector("[data-role=push-status]");
    status.textContent = section.dataset[`status${state[0].toUpperCase()}${state.slice(1)}`] || "";
  }

  async function turnOn(section, registration) {
    const permission = await Notification.requestPermission();
    if (permission !== "granted") return show(section, permission === "denied" ? "denied" : "off");
    const options = { userVisibleOnly: true, applicationServerKey: keyBytes(section.dataset.vapidKey) };
    let subscription = await registration.pushManager.subscribe(options);
    try {
      try {
        await post(section.dataset.subscribeUrl, subscription.toJSON());
      } catch (error) {
        if (error.status !== 409) throw error;
        // This browser's endpoint is another operator's (who used it here before): a fresh one is this operator's.
        await subscription.unsubscribe();
        subscription = await registration.pushManager.subscribe(options);
        await post(section.dataset.subscribeUrl, subscription.toJSON());
      }
    } catch (error) {
      await subscription.unsubscribe();
      throw error;
    }
    show(section, "on");
  }

  async function turnOff(section, registration) {
    const subscription = await registration.pushManager.getSubscription();
    if (subscription) {
      await post(section.dataset.unsubscribeUrl, { endpoint: subscription.endpoint });
      await subscription.unsubscribe();
    }
    show(section, "off");
  }

  async function start(section) {
    if (section.dataset.pushBound) return;
    section.dataset.pushBound = "true";
    if (!supported()) return show(section, "unsupported");
    await navigator.serviceWorker.register(section.dataset.workerUrl, { scope: "/" });
    const registration = await navigator.serviceWorker.ready;
    const subscription = await registration.pushManager.getSubscription();
    if (subscription) {
      // Said again, in case the server forgot it (dropped as the oldest of too many); refused (409) if it
      // is another operator's, who turned push on here: off for this one until they turn it on.
      const mine = await post(section.dataset.subscribeUrl, subscription.toJSON()).then(
        () => true,
        (error) => {
          if (error.status === 409) return false;
          throw error;
        },
      );
      show(section, mine ? "on" : "off");
    } else {
      show(section, Notification.permission === "denied" ? "denied" : "off");
    }
    section.querySelector("[data-action=toggle-push]").addEventListener("click", () => {
      const wasOn = section.dataset.pushState === "on";
      show(section, "working");
      (wasOn ? turnOff : turnOn)(section, registration).catch(() => show(section, "failed"));
    });
  }

  function startAll(root) {
    const sections = root.matches && root.matches(SECTION) ? [root] : root.querySelectorAll(SECTION);
    sections.forEach((section) => start(section).catch(() => show(section, "failed")));
  }

  document.addEventListener("DOMContentLoaded", () => startAll(document));
  document.addEventListener("htmx:load", (event) => startAll(event.target));
})();
