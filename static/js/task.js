// The task page's forms: the follow-up prompt, cleared once the server took it, and the
// start form's scenario picker.
(function () {
  "use strict";

  // A follow-up prompt the server took (204) is cleared; one it refused keeps its text, and
  // so does one the operator changed while it was sent: that is the next prompt begun.
  // Watched from the request, not the form: the turn it opens re-renders the composer
  // over the socket, often before the answer is in, and the detached form's events
  // reach nobody; the preserved textarea is the one to clear.
  document.addEventListener("htmx:beforeRequest", (event) => {
    const { elt, xhr } = event.detail;
    if (!elt.matches("[data-role=prompt-form]")) return;
    const sent = elt.elements.prompt && elt.elements.prompt.value;
    xhr.addEventListener("load", () => {
      const prompt = document.getElementById("prompt-input");
      if (xhr.status === 204 && prompt && prompt.value === sent) prompt.value = "";
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
  syncScenarioPicker();
})();
