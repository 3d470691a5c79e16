// The composer's agent settings and slash commands (templates/sessions/task.html#composer).
//
// A prompt that starts with "/" completes the agent's commands: the list (#command-list,
// rendered by the server and re-rendered live as the agent changes its commands) shows
// those whose name starts with what follows the slash; arrow keys move, Enter or Tab
// chooses, Escape closes, a click chooses. Choosing puts "/name " at the start of the
// prompt. The textarea is preserved across live swaps and the list is not, so the list's
// state is read again after each swap.
//
// A mode or option change is sent at once (hx-trigger="change"). The page then shows what
// the agent says; a refused change (a toast, not 204) puts the control back as the server
// last rendered it (data-current, data-value).
(function () {
  "use strict";

  const PROMPT = "#prompt-input";
  // What the caret is in: "/" and the command's name so far, at the prompt's start.
  const TYPED_COMMAND = /^\/([^\s/]*)$/;
  let active = -1; // the highlighted one among those shown

  function prompt() {
    return document.querySelector(PROMPT);
  }

  function list() {
    return document.getElementById("command-list");
  }

  function typedCommand(textarea) {
    const before = textarea.value.slice(0, textarea.selectionStart);
    const match = TYPED_COMMAND.exec(before);
    return match && textarea.selectionStart === textarea.selectionEnd ? match[1].toLowerCase() : null;
  }

  function shown() {
    const commands = list();
    return commands ? [...commands.querySelectorAll("[data-command]")].filter((item) => !item.hidden) : [];
  }

  function close() {
    const commands = list();
    const textarea = prompt();
    active = -1;
    if (commands) {
      commands.hidden = true;
      commands.dataset.open = "false";
    }
    if (textarea) {
      textarea.removeAttribute("aria-controls");
      textarea.removeAttribute("aria-activedescendant");
    }
  }

  function highlight(index) {
    const items = shown();
    const textarea = prompt();
    active = items.length ? (index + items.length) % items.length : -1;
    items.forEach((item, i) => {
      item.setAttribute("aria-selected", i === active ? "true" : "false");
      item.dataset.active = i === active ? "true" : "false";
    });
    if (textarea && active >= 0) {
      textarea.setAttribute("aria-activedescendant", items[active].id);
      items[active].scrollIntoView({ block: "nearest" });
    }
  }

  // Show the commands that match what is typed, or close the list when nothing does.
  function refresh() {
    const textarea = prompt();
    const commands = list();
    if (!textarea || !commands || document.activeElement !== textarea) return close();
    const typed = typedCommand(textarea);
    if (typed === null) return close();
    const previous = shown()[active];
    let matches = 0;
    for (const item of commands.querySelectorAll("[data-command]")) {
      item.hidden = !item.dataset.command.toLowerCase().startsWith(typed);
      if (!item.hidden) matches += 1;
    }
    if (!matches) return close();
    commands.hidden = false;
    commands.dataset.open = "true";
    // A textbox has no aria-expanded: the list it controls says it is open by being shown.
    textarea.setAttribute("aria-controls", "command-list");
    const keep = previous && !previous.hidden ? shown().indexOf(previous) : 0;
    highlight(keep >= 0 ? keep : 0);
  }

  function choose(item) {
    const textarea = prompt();
    if (!textarea || !item) return;
    const rest = textarea.value.slice(textarea.selectionStart).replace(/^\S*\s?/, "");
    const inserted = `/${item.dataset.command} `;
    textarea.value = inserted + rest;
    textarea.setSelectionRange(inserted.length, inserted.length);
    textarea.focus();
    close();
  }

  document.addEventListener("input", (event) => {
    if (event.target.matches(PROMPT)) refresh();
  });
  document.addEventListener("click", (event) => {
    if (event.target.matches(PROMPT)) refresh();
  });
  document.addEventListener("focusout", (event) => {
    // A click on the list moves focus away first; mousedown below chooses before that.
    if (event.target.matches(PROMPT)) close();
  });
  document.addEventListener("mousedown", (event) => {
    const item = event.target.closest("#command-list [data-command]");
    if (!item) return;
    event.preventDefault(); // keep the focus in the prompt
    choose(item);
  });
  document.addEventListener("keydown", (event) => {
    if (!event.target.matches(PROMPT)) return;
    const commands = list();
    const open = commands && !commands.hidden;
    if (!open) {
      // Moving the caret back into "/..." opens it again.
      if (event.key === "ArrowLeft" || event.key === "ArrowRight" || event.key === "Home" || event.key === "End") {
        setTimeout(refresh);
      }
      return;
    }
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      highlight(active + (event.key === "ArrowDown" ? 1 : -1));
    } else if (event.key === "Enter" || event.key === "Tab") {
      if (event.shiftKey || event.ctrlKey || event.metaKey || event.altKey) return;
      event.preventDefault();
      choose(shown()[active]);
    } else if (event.key === "Escape") {
      event.preventDefault();
      close();
    }
  });
  // The composer was re-rendered: a new list, perhaps other commands.
  kandev.onSwap(null, () => {
    active = -1;
    refresh();
  });

  // A refused mode or option change: put the control back as the server last rendered it.
  document.addEventListener("htmx:beforeRequest", (event) => {
    const { elt, xhr } = event.detail;
    if (!elt.matches("[data-role=composer-setting]")) return;
    xhr.addEventListener("load", () => {
      if (xhr.status === 204) return;
      const mode = elt.querySelector("[data-role=session-mode]");
      if (mode && mode.isConnected) mode.value = mode.dataset.current;
      const toggle = elt.querySelector("[data-role=session-option-toggle]");
      if (toggle && toggle.isConnected) toggle.checked = toggle.dataset.value === "true";
    });
  });
})();
