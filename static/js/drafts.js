// What the operator is typing survives a live swap of the part of the page it is in.
//
// The server re-renders a part (the task's details, a card) from what is saved, so a
// field the operator has edited but not yet sent would snap back to the saved value, and
// lose the focus, whenever an agent or a teammate changed something nearby: a budget
// half typed when the agent reports its usage, a box ticked in the delete form when the
// task moves. Each edited field carries its draft (and the focused one its caret) into
// its new copy; an untouched field takes what the server says. Fields are paired in
// document order by tag, type and name, so id-less checkboxes pair too. Fields marked
// hx-preserve are kept whole by htmx and need none of this; a field sent as soon as it
// changes (hx-trigger="change": an agent's mode, a toggle) is never a draft, it shows
// what the server says.
(function () {
  "use strict";

  const FIELDS = "input:not([type=hidden]):not([type=file]), textarea, select";
  let refocus = null;

  function edited(field) {
    if (field.type === "checkbox" || field.type === "radio") return field.checked !== field.defaultChecked;
    if (field instanceof HTMLSelectElement) {
      return Array.from(field.options).some((option) => option.selected !== option.defaultSelected);
    }
    return field.value !== field.defaultValue;
  }

  function samePlace(field, copy) {
    return (
      copy.tagName === field.tagName &&
      copy.type === field.type &&
      copy.name === field.name &&
      (field.type === "checkbox" || field.type === "radio" ? copy.value === field.value : true)
    );
  }

  function carry(field, copy) {
    if (field.type === "checkbox" || field.type === "radio") {
      copy.checked = field.checked;
    } else if (field instanceof HTMLSelectElement) {
      Array.from(field.options).forEach((option, i) => {
        if (copy.options[i] && copy.options[i].value === option.value) copy.options[i].selected = option.selected;
      });
    } else {
      copy.value = field.value;
    }
  }

  function caret(field) {
    // Number and date inputs have no selection to read; only their focus comes back.
    try {
      return field.selectionStart === null ? null : [field.selectionStart, field.selectionEnd];
    } catch {
      return null;
    }
  }

  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const { target, fragment } = event.detail;
    // Only a part replaced whole (its new copy, by its id): what is added beside or into
    // a list (a message, an inbox row) replaces no field.
    if (!target || !target.id || !fragment || !fragment.firstElementChild) return;
    if (fragment.firstElementChild.id !== target.id) return;
    const copies = Array.from(fragment.querySelectorAll(FIELDS));
    let next = 0;
    for (const field of target.querySelectorAll(FIELDS)) {
      // In order, skipping what the new copy added or dropped (a form that came or went).
      const at = copies.findIndex((copy, i) => i >= next && samePlace(field, copy));
      if (at < 0) continue;
      next = at + 1;
      if (field.closest("[hx-preserve], [hx-trigger~=change]")) continue;
      if (edited(field)) carry(field, copies[at]);
      if (field === document.activeElement) refocus = { copy: copies[at], range: caret(field) };
    }
  });

  kandev.onSwap(null, () => {
    if (!refocus) return;
    const { copy, range } = refocus;
    refocus = null;
    if (!copy.isConnected) return;
    copy.focus({ preventScroll: true });
    if (range) copy.setSelectionRange(range[0], range[1]);
  });
})();
