// The colour scheme (templates/base.html): loaded without defer in <head>, so
// <html data-color-scheme> is set before the first paint and a dark page never
// flashes light. The CSP allows no inline script, hence this file. The choice
// (system, light, dark) is the browser's own, kept in localStorage; "system"
// follows prefers-color-scheme, live.
(function () {
  "use strict";

  const KEY = "kandev.colorScheme";
  const CHOICES = ["system", "light", "dark"];
  const systemDark = window.matchMedia("(prefers-color-scheme: dark)");

  function choice() {
    try {
      const stored = window.localStorage.getItem(KEY);
      return CHOICES.includes(stored) ? stored : "system";
    } catch {
      return "system"; // Storage refused (private mode, policy): follow the system.
    }
  }

  function apply() {
    const chosen = choice();
    const root = document.documentElement;
    root.dataset.colorSchemeChoice = chosen;
    root.dataset.colorScheme = chosen === "system" ? (systemDark.matches ? "dark" : "light") : chosen;
    for (const button of document.querySelectorAll("[data-action=color-scheme]")) {
      button.setAttribute("aria-pressed", String(button.value === chosen));
    }
  }

  apply();
  systemDark.addEventListener("change", apply);
  document.addEventListener("DOMContentLoaded", apply);
  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-action=color-scheme]");
    if (!button) return;
    try {
      window.localStorage.setItem(KEY, button.value);
    } catch {
      // Not remembered, but still applied to this page.
      document.documentElement.dataset.colorSchemeChoice = button.value;
    }
    apply();
  });
})();
